"""``mapNetwork``: the science map of a unit, its filters, its errors and its cost.

The tiny graph (tests/tiny_graph.py): p1 (2001) cites p2, p3; p4 (2004) cites p1, p2, p3; p5 (2005) cites p4.
Co-cited pairs: (p2, p3) by p1 and p4; (p1, p2) and (p1, p3) by p4. Citing documents per work: p2 and p3 two,
p1 and p4 one.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from graphql import parse
from test_graphql import error, ok

from api.cost import SCAN_WORK, query_cost
from api.schema import schema
from api.services import GraphService
from gnn.mapping import networks

MAP = """query($unit: MapUnit! = REFERENCES, $min: Int = 2, $measure: MapMeasure = COUNT, $top: Int = 500,
  $ymin: Int, $ymax: Int, $seed: ID, $cluster: Int, $freq: Int = 1) {
  mapNetwork(unit: $unit, minCount: $min, measure: $measure, top: $top, yearMin: $ymin, yearMax: $ymax, seed: $seed,
             clusterId: $cluster, minFreq: $freq) {
    unit truncated
    nodes { id label weight year avgYear cluster clusterLabel burstStrength betweenness sigma }
    edges { source target count strength }
  }
}"""


def network(service: GraphService, **variables: Any) -> dict[str, Any]:
    return ok(service, MAP, variables)["mapNetwork"]


def links(data: dict[str, Any]) -> dict[frozenset[str], tuple[int, float]]:
    return {frozenset((e["source"], e["target"])): (e["count"], e["strength"]) for e in data["edges"]}


def test_reference_map_from_the_stored_cocitations(service: GraphService) -> None:
    data = network(service)  # minCount 2: only (p2, p3)
    assert data["unit"] == "REFERENCES" and not data["truncated"]
    assert [n["id"] for n in data["nodes"]] == ["p2", "p3"]  # equal weights: by id
    assert [n["weight"] for n in data["nodes"]] == [2, 2]
    assert links(data) == {frozenset({"p2", "p3"}): (2, 2.0)}
    p2 = data["nodes"][0]
    assert p2["label"] == "Word alignment models" and p2["year"] == 1993
    assert p2["avgYear"] == pytest.approx((2001 + 2004) / 2)  # the years of p1 and p4, which cite it
    every = network(service, min=1)
    assert [n["id"] for n in every["nodes"]] == ["p2", "p3", "p1"]  # p4 is co-cited with nothing
    assert links(every) == {
        frozenset({"p2", "p3"}): (2, 2.0),
        frozenset({"p1", "p2"}): (1, 1.0),
        frozenset({"p1", "p3"}): (1, 1.0),
    }
    assert [e["count"] for e in every["edges"]] == [2, 1, 1]  # strongest first


def test_top_seed_and_cluster_cut_the_map(service: GraphService) -> None:
    top = network(service, min=1, top=2)
    assert [n["id"] for n in top["nodes"]] == ["p2", "p3"] and top["truncated"]
    assert links(top) == {frozenset({"p2", "p3"}): (2, 2.0)}
    seeded = network(service, min=1, seed="p1")
    assert [n["id"] for n in seeded["nodes"]] == ["p1", "p2", "p3"]  # the seed first
    assert len(seeded["edges"]) == 3
    service.store.apply({"Alias": pd.DataFrame({"id": ["doi:10.1/p1"], "kind": ["doi"]})}, {})
    service.store.apply({}, {"ALIAS_OF": pd.DataFrame({"source": ["doi:10.1/p1"], "target": ["p1"]})})
    assert network(service, min=1, seed="doi:10.1/p1")["nodes"][0]["id"] == "p1"  # any id of the work
    cluster = network(service, min=1)["nodes"][0]["cluster"]
    assert cluster is not None
    members = network(service, min=1, cluster=cluster)["nodes"]
    assert members and {n["cluster"] for n in members} == {cluster}
    assert all(n["clusterLabel"] for n in members)


def test_year_window_counts_citing_documents_of_those_years(service: GraphService) -> None:
    # 2003..2010: p4 (cites p1, p2, p3) and p5 (cites p4); N = 2 citing documents, every s = 1
    late = network(service, min=1, ymin=2003, ymax=2010, measure="ASSOCIATION")
    assert links(late) == {
        frozenset({"p1", "p2"}): (1, 2.0),
        frozenset({"p1", "p3"}): (1, 2.0),
        frozenset({"p2", "p3"}): (1, 2.0),
    }
    assert {n["id"]: n["weight"] for n in late["nodes"]} == {"p1": 1, "p2": 1, "p3": 1}
    assert all(n["avgYear"] == 2004 for n in late["nodes"])
    early = network(service, min=1, ymax=2002, measure="COSINE")  # p1 alone: (p2, p3) once
    assert links(early) == {frozenset({"p2", "p3"}): (1, 1.0)}


def test_bad_arguments_are_user_errors(service: GraphService, monkeypatch: pytest.MonkeyPatch) -> None:
    message, code = error(service, MAP, {"seed": "nope"})
    assert code == "BAD_USER_INPUT" and "'nope'" in message
    message, code = error(service, MAP, {"top": 5001})
    assert code == "BAD_USER_INPUT" and "5000" in message
    message, code = error(service, MAP, {"ymin": 2005, "ymax": 2001})
    assert code == "BAD_USER_INPUT"
    monkeypatch.delitem(networks.UNIT_BUILDERS, networks.MapUnit.KEYWORDS, raising=False)
    message, code = error(service, MAP, {"unit": "KEYWORDS"})
    assert code == "BAD_USER_INPUT" and "KEYWORDS" in message and "REFERENCES" in message


def test_cost_grows_with_top() -> None:
    def cost(top: int) -> int | None:
        text = f"{{ mapNetwork(top: {top}) {{ nodes {{ id }} edges {{ source }} }} }}"
        return query_cost(schema._schema, parse(text), max_results=50)

    assert cost(10) == SCAN_WORK + 1 + 10 + 10
    assert cost(5000) == SCAN_WORK + 1 + 5000 + 5000  # top, not max_results, sizes the lists
    assert cost(10**6) == cost(5000)  # clamped; the resolver refuses it


def test_other_units_dispatch_to_their_builders(service: GraphService) -> None:
    # Ada Lovelace (a1) wrote p1 and p4, Alan Turing (a2) p1 with her: one co-authored document
    data = network(service, unit="COAUTHORS", min=1)
    assert data["unit"] == "COAUTHORS"
    assert [(n["id"], n["label"], n["weight"]) for n in data["nodes"]] == [
        ("a1", "Ada Lovelace", 2),
        ("a2", "Alan Turing", 1),
    ]
    assert links(data) == {frozenset({"a1", "a2"}): (1, 1.0)}
    assert data["nodes"][0]["avgYear"] == pytest.approx((2001 + 2004) / 2) and data["nodes"][0]["year"] is None
    message, code = error(service, MAP, {"unit": "COAUTHORS", "cluster": 0})
    assert code == "BAD_USER_INPUT" and "no clusters" in message


def test_first_year_is_the_first_citation_in_the_window(service: GraphService) -> None:
    """CiteSpace's timeline position: p2 (published 1993) is first cited by p1 in 2001, and, from 2003 on, by p4."""
    query = "query($ymin: Int) { mapNetwork(minCount: 1, yearMin: $ymin) { nodes { id year firstYear } } }"
    every = {n["id"]: (n["year"], n["firstYear"]) for n in ok(service, query)["mapNetwork"]["nodes"]}
    assert every["p2"] == (1993, 2001) and every["p1"][1] == 2004
    late = {n["id"]: n["firstYear"] for n in ok(service, query, {"ymin": 2003})["mapNetwork"]["nodes"]}
    assert late["p2"] == 2004
    authors = ok(service, "{ mapNetwork(unit: AUTHORS, minCount: 1) { nodes { firstYear avgYear } } }")
    for node in authors["mapNetwork"]["nodes"]:  # the first of the years the mean is taken over
        assert node["firstYear"] is None or node["firstYear"] <= node["avgYear"]


def test_min_freq_leaves_out_nodes_of_fewer_citing_documents(service: GraphService) -> None:
    # weights: p2 and p3 cited by two documents, p1 by one; minFreq 2 drops p1 and its two links
    data = network(service, min=1, freq=2)
    assert [n["id"] for n in data["nodes"]] == ["p2", "p3"]
    assert links(data) == {frozenset({"p2", "p3"}): (2, 2.0)}
    assert network(service, min=1, freq=3)["nodes"] == []
    message, code = error(service, MAP, {"freq": 0})
    assert code == "BAD_USER_INPUT" and "minFreq" in message
