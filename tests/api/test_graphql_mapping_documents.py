"""``mapEdgeDocuments`` (the documents behind a link of a map, every unit) and ``mapUnits`` (what a store can map).

The rich store (tests/api/conftest.py) has the tiny graph: p1 (2001) cites p2, p3; p4 (2004) cites p1, p2, p3;
p5 (2005) cites p4; authors but no keywords, affiliations or countries. The Web of Science sample
(``$CITEGRAPH_DATA/formats/wos/savedrecs.txt``) has every unit: there each link's documents must number its count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graphql import parse
from test_graphql import error, ok

from api.cost import SCAN_WORK, query_cost
from api.schema import schema
from api.services import GraphService
from graph import StoreConfig, ingest, open_store

DOCUMENTS = """query($unit: MapUnit!, $source: ID!, $target: ID!, $ymin: Int, $ymax: Int, $first: Int! = 10,
  $after: String) {
  mapEdgeDocuments(unit: $unit, source: $source, target: $target, yearMin: $ymin, yearMax: $ymax, first: $first,
                   after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { id year } }
  }
}"""
MAP = """query($unit: MapUnit!) {
  mapNetwork(unit: $unit, minCount: 1, top: 200) { edges { source target count } }
}"""
UNITS = "{ mapUnits { unit built links command } }"


def documents(service: GraphService, unit: str, source: str, target: str, **more: Any) -> dict[str, Any]:
    return ok(service, DOCUMENTS, {"unit": unit, "source": source, "target": target, **more})["mapEdgeDocuments"]


def ids(page: dict[str, Any]) -> list[str]:
    return [e["node"]["id"] for e in page["edges"]]


def test_reference_link_documents_are_the_papers_citing_both(service: GraphService) -> None:
    page = documents(service, "REFERENCES", "p2", "p3")
    assert (ids(page), page["totalCount"]) == (["p4", "p1"], 2)  # newest first
    assert ids(documents(service, "REFERENCES", "p3", "p2")) == ["p4", "p1"]  # either end first
    assert ids(documents(service, "REFERENCES", "p2", "p3", ymin=2003)) == ["p4"]  # the map's citing window
    assert documents(service, "REFERENCES", "p2", "p5")["totalCount"] == 0  # not linked
    first = documents(service, "REFERENCES", "p2", "p3", first=1)
    assert ids(first) == ["p4"] and first["pageInfo"]["hasNextPage"]
    rest = documents(service, "REFERENCES", "p2", "p3", first=1, after=first["pageInfo"]["endCursor"])
    assert ids(rest) == ["p1"] and not rest["pageInfo"]["hasNextPage"]


def test_author_and_coupling_link_documents(service: GraphService) -> None:
    """Every link of the AUTHORS, SOURCES, COAUTHORS and COUPLING maps has as many documents as its count."""
    for unit in ("AUTHORS", "SOURCES", "COAUTHORS", "COUPLING"):
        edges = ok(service, MAP, {"unit": unit})["mapNetwork"]["edges"]
        for edge in edges:
            page = documents(service, unit, edge["source"], edge["target"])
            assert page["totalCount"] == edge["count"], (unit, edge, page)
    # p1 and p4 are coupled by the works both cite: p2 and p3
    assert sorted(ids(documents(service, "COUPLING", "p1", "p4"))) == ["p2", "p3"]


def test_units_without_their_relationships_are_not_built(service: GraphService) -> None:
    units = {u["unit"]: u for u in ok(service, UNITS)["mapUnits"]}
    assert list(units) == [
        "REFERENCES",
        "AUTHORS",
        "SOURCES",
        "COAUTHORS",
        "INSTITUTIONS",
        "COUNTRIES",
        "KEYWORDS",
        "COUPLING",
    ]
    for name in ("REFERENCES", "AUTHORS", "SOURCES", "COUPLING", "COAUTHORS"):
        assert units[name]["built"] and units[name]["links"] > 0 and units[name]["command"] is None
    for name in ("INSTITUTIONS", "COUNTRIES", "KEYWORDS"):
        assert not units[name]["built"] and units[name]["links"] == 0
        assert "citegraph ingest" in units[name]["command"]


def test_bad_years_are_user_errors_and_the_cost_is_a_scan(service: GraphService) -> None:
    message, code = error(
        service, DOCUMENTS, {"unit": "AUTHORS", "source": "a", "target": "b", "ymin": 2010, "ymax": 2000}
    )
    assert code == "BAD_USER_INPUT" and "year" in message.lower()
    text = '{ mapEdgeDocuments(unit: AUTHORS, source: "a", target: "b", first: 10) { edges { node { id } } } }'
    assert query_cost(schema._schema, parse(text), max_results=50) == SCAN_WORK + 1 + 10 + 10


@pytest.fixture(scope="module")
def wos_service(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Any:
    from gnn.cocitation.compute import compute_cocitation
    from loaders import wos

    sample = data_dir / "formats" / "wos" / "savedrecs.txt"
    if not sample.is_file():
        pytest.skip(f"the Web of Science sample is not at {sample}")
    store = open_store(StoreConfig(db_path=tmp_path_factory.mktemp("wos") / "graph.db"))
    ingest(store, wos.load(sample))
    compute_cocitation(store)
    yield GraphService(store)
    store.close()


def test_every_units_link_documents_number_its_count_on_the_wos_sample(wos_service: GraphService) -> None:
    units = {u["unit"]: u for u in ok(wos_service, UNITS)["mapUnits"]}
    assert all(u["built"] for u in units.values()), units  # the sample has references, authors, C1, keywords
    for unit in units:
        edges = ok(wos_service, MAP, {"unit": unit})["mapNetwork"]["edges"]
        assert edges, unit
        for edge in edges[:4] + edges[-2:]:  # the strongest and the weakest links
            page = documents(wos_service, unit, edge["source"], edge["target"], first=50)
            assert page["totalCount"] == edge["count"], (unit, edge, page["totalCount"])
            assert len(ids(page)) == min(50, edge["count"])
