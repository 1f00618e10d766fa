"""What a co-citation dashboard asks GraphQL: the store's top pairs (filtered, paged), the documents behind a pair,
per-year counts, partners in a year range, author and source search, and readable labels for stubs.

The tiny graph (tests/tiny_graph.py): p1 (2001) cites p2, p3; p4 (2004) cites p1, p2, p3; p5 (2005) cites p4.
Co-cited pairs: (p2, p3) by p1 and p4; (p1, p2) and (p1, p3) by p4.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from test_graphql import error, ok

from api.services import GraphService
from graph import GraphBatch, ingest

PAIRS = """query($measure: CoCitationMeasure! = COUNT, $min: Int! = 1, $ymin: Int, $ymax: Int, $first: Int! = 10,
  $after: String) {
  coCitationPairs(measure: $measure, minCount: $min, yearMin: $ymin, yearMax: $ymax, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { source { id } target { id } count label } }
  }
}"""


def pairs(data: dict[str, Any]) -> list[tuple[frozenset[str], int]]:
    return [
        (frozenset((e["node"]["source"]["id"], e["node"]["target"]["id"])), e["node"]["count"]) for e in data["edges"]
    ]


def test_store_wide_top_pairs_with_filters(service: GraphService) -> None:
    data = ok(service, PAIRS)["coCitationPairs"]
    assert data["totalCount"] == 3 and not data["pageInfo"]["hasNextPage"]
    assert pairs(data) == [(frozenset({"p2", "p3"}), 2), (frozenset({"p1", "p2"}), 1), (frozenset({"p1", "p3"}), 1)]
    strong = ok(service, PAIRS, {"min": 2})["coCitationPairs"]
    assert pairs(strong) == [(frozenset({"p2", "p3"}), 2)] and strong["totalCount"] == 1
    # only p4 (2004) counts in 2003..2010: every pair once
    late = ok(service, PAIRS, {"ymin": 2003, "ymax": 2010})["coCitationPairs"]
    assert sorted(count for _, count in pairs(late)) == [1, 1, 1] and late["totalCount"] == 3
    # only p1 (2001) in 2000..2002: (p2, p3) once, below minCount 2
    assert ok(service, PAIRS, {"ymin": 2000, "ymax": 2002, "min": 2})["coCitationPairs"]["edges"] == []
    early = ok(service, PAIRS, {"ymin": 2000, "ymax": 2002})["coCitationPairs"]
    assert pairs(early) == [(frozenset({"p2", "p3"}), 1)]
    edge = data["edges"][0]["node"]
    assert (
        edge["label"] == "Word alignment models + Phrase tables"
        or edge["label"] == "Phrase tables + Word alignment models"
    )


def test_store_wide_pairs_page_in_a_stable_order(service: GraphService) -> None:
    for measure in ("COUNT", "ASSOCIATION", "COSINE", "JACCARD"):
        whole = pairs(ok(service, PAIRS, {"measure": measure})["coCitationPairs"])
        paged, after = [], None
        while True:
            page = ok(service, PAIRS, {"measure": measure, "first": 1, "after": after})["coCitationPairs"]
            paged += pairs(page)
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
        assert paged == whole and len(whole) == 3, measure
    # coCitations without a paper or a cluster: the same first page
    listed = ok(
        service,
        "{ coCitations(measure: COUNT) { ... on CoCitationList { pairs { source { id } target { id } count } } } }",
    )
    assert [
        (frozenset((p["source"]["id"], p["target"]["id"])), p["count"]) for p in listed["coCitations"]["pairs"]
    ] == pairs(ok(service, PAIRS)["coCitationPairs"])


def test_documents_behind_each_pair_equal_a_direct_count(service: GraphService) -> None:
    query = """{ coCitationPairs(measure: COUNT) { edges { node { source { id } target { id } count
      citedBy(first: 10) { totalCount edges { node { id year } } } countsByYear { year count } } } } }"""
    cites = service.store.read_edges("CITES")
    cited_by: dict[str, set[str]] = {}
    for source, target in zip(cites["source"], cites["target"]):
        cited_by.setdefault(target, set()).add(source)
    edges = ok(service, query)["coCitationPairs"]["edges"]
    assert len(edges) == 3
    for edge in edges:
        node = edge["node"]
        both = cited_by[node["source"]["id"]] & cited_by[node["target"]["id"]]
        citers = [e["node"]["id"] for e in node["citedBy"]["edges"]]
        assert set(citers) == both and node["citedBy"]["totalCount"] == len(both) == node["count"]
        years = [e["node"]["year"] for e in node["citedBy"]["edges"]]
        assert years == sorted(years, reverse=True)  # newest first
        assert sum(c["count"] for c in node["countsByYear"]) == len(both)
    p2_p3 = next(e["node"] for e in edges if {e["node"]["source"]["id"], e["node"]["target"]["id"]} == {"p2", "p3"})
    assert p2_p3["countsByYear"] == [{"year": 2001, "count": 1}, {"year": 2004, "count": 1}]
    paged = ok(
        service,
        '{ coCitations(paperId: "p2", measure: COUNT, first: 1) { ... on CoCitationList { pairs { citedBy(first: 1) '
        "{ pageInfo { hasNextPage endCursor } edges { node { id } } } } } } }",
    )["coCitations"]["pairs"][0]["citedBy"]
    assert [e["node"]["id"] for e in paged["edges"]] == ["p4"] and paged["pageInfo"]["hasNextPage"]


def test_cocited_min_count_and_years(service: GraphService) -> None:
    query = """query($min: Int! = 1, $ymin: Int, $ymax: Int) { paper(id: "p2") {
      coCited(measure: COUNT, minCount: $min, yearMin: $ymin, yearMax: $ymax) { paper { id label } count association } } }"""
    everything = ok(service, query)["paper"]["coCited"]
    assert [(c["paper"]["id"], c["count"]) for c in everything] == [("p3", 2), ("p1", 1)]
    assert [c["paper"]["id"] for c in ok(service, query, {"min": 2})["paper"]["coCited"]] == ["p3"]
    late = ok(service, query, {"ymin": 2003})["paper"]["coCited"]
    assert [(c["paper"]["id"], c["count"]) for c in late] == [("p1", 1), ("p3", 1)]
    assert late[1]["association"] == everything[0]["association"]  # strengths stay the stored all-years values
    assert ok(service, query, {"ymax": 2000})["paper"]["coCited"] == []
    message, code = error(service, query, {"ymin": 2005, "ymax": 2001})
    assert code == "BAD_USER_INPUT" and "`yearMin` (2005) is after `yearMax` (2001)" in message
    cocitations = ok(
        service,
        '{ coCitations(paperId: "p2", measure: COUNT, yearMin: 2003) { ... on CoCitationList { pairs { target { id } count } } } }',
    )["coCitations"]["pairs"]
    assert [(p["target"]["id"], p["count"]) for p in cocitations] == [("p1", 1), ("p3", 1)]
    assert error(service, "{ coCitations(clusterId: 0, yearMin: 2000) { __typename } }")[1] == "BAD_USER_INPUT"


def test_author_search_and_their_papers(service: GraphService) -> None:
    query = """query($after: String) { authors(search: "A", first: 1, after: $after) {
      totalCount pageInfo { hasNextPage endCursor } edges { node { id name papers { edges { node { id label } } } } } } }"""
    first = ok(service, query)["authors"]
    assert first["totalCount"] == 2 and first["pageInfo"]["hasNextPage"]
    node = first["edges"][0]["node"]
    assert node["id"] == "a1" and [e["node"]["id"] for e in node["papers"]["edges"]] == [
        "p4",
        "p1",
    ]  # most papers first
    second = ok(service, query, {"after": first["pageInfo"]["endCursor"]})["authors"]
    assert [e["node"]["id"] for e in second["edges"]] == ["a2"] and not second["pageInfo"]["hasNextPage"]
    assert ok(service, '{ authors(search: "turing") { edges { node { name } } } }')["authors"]["edges"] == [
        {"node": {"name": "Alan Turing"}}
    ]
    assert error(service, '{ authors(search: " ") { totalCount } }')[1] == "BAD_USER_INPUT"


def test_source_search_and_its_papers(service: GraphService) -> None:
    venues = pd.DataFrame({"id": ["p1", "p4", "p5"], "venue": ["Proc. ACL", "Proc. ACL", "Comput. Linguist."]})
    ingest(service.store, GraphBatch("venues", nodes={"Paper": venues}))
    query = (
        '{ sources(search: "acl") { totalCount edges { node { name paperCount papers { edges { node { id } } } } } } }'
    )
    data = ok(service, query)["sources"]
    assert data["totalCount"] == 1
    node = data["edges"][0]["node"]
    assert (node["name"], node["paperCount"]) == ("Proc. ACL", 2)
    assert {e["node"]["id"] for e in node["papers"]["edges"]} == {"p1", "p4"}
    both = ok(service, '{ sources(search: "c") { edges { node { name paperCount } } } }')["sources"]["edges"]
    assert [e["node"]["name"] for e in both] == ["Proc. ACL", "Comput. Linguist."]


def test_stubs_read_by_their_labels(service: GraphService) -> None:
    stubs = pd.DataFrame(
        {
            "id": ["ref:goosf1947", "ref:smithj2001"],
            "stub": [True, True],
            "label": ["Goos F, 1947, Ann Phys-Berlin 1:333", None],
            "reference": ["GOOS F, 1947, ANN PHYS-BERLIN, V1, P333", "SMITH J, 2001, J CHEM PHYS, V5, P12"],
        }
    )
    cites = pd.DataFrame({"source": ["p5", "p5"], "target": ["ref:goosf1947", "ref:smithj2001"]})
    ingest(service.store, GraphBatch("stubs", nodes={"Paper": stubs}, rels={"CITES": cites}))
    query = '{ paper(id: "p5") { label citations { edges { node { id label title reference } } } } }'
    paper = ok(service, query)["paper"]
    assert paper["label"] == "Attention for translation"
    labels = {e["node"]["id"]: e["node"]["label"] for e in paper["citations"]["edges"]}
    assert labels == {
        "p4": "Neural machine translation",
        "ref:goosf1947": "Goos F, 1947, Ann Phys-Berlin 1:333",
        "ref:smithj2001": "SMITH J, 2001, J CHEM PHYS, V5, P12",
    }
    ego = ok(service, '{ egoNetwork(paperId: "p5") { ... on EgoNetwork { nodes { id label } } } }')["egoNetwork"]
    assert {n["id"]: n["label"] for n in ego["nodes"]}["ref:goosf1947"] == "Goos F, 1947, Ann Phys-Berlin 1:333"
    clusters = ok(service, "{ clusters { label labelFrom } }")["clusters"]
    assert clusters and all(c["label"] and not c["label"].startswith("cluster ") for c in clusters)


def test_new_lists_count_towards_the_query_cost(service: GraphService) -> None:
    query = """{ coCitationPairs(first: 50) { edges { node { citedBy(first: 50) { edges { node {
      coCited(first: 50) { paper { id } } } } } countsByYear(first: 50) { year } } } } }"""
    message, code = error(service, query)
    assert code == "QUERY_TOO_COMPLEX" and "over this server's limit" in message
    assert error(service, '{ authors(search: "a", first: 51) { totalCount } }')[1] == "BAD_USER_INPUT"


def test_one_pair_by_its_two_papers_as_a_map_edge_asks(service: GraphService) -> None:
    """A clicked map edge: the pair (either order) with its strengths, per-year counts and the documents behind it,
    equal to the same pair in ``coCitationPairs``; NotFound for papers that are not co-cited or not known."""
    query = """query($a: ID!, $b: ID!) { coCitationPair(source: $a, target: $b) { __typename
      ... on CoCitationPair { source { id } target { id } count association cosine jaccard label
        countsByYear { year count } citedBy(first: 1) { totalCount edges { node { id } } } }
      ... on NotFound { kind message } } }"""
    listed = """{ coCitationPairs(measure: COUNT) { edges { node { source { id } target { id } count association
      cosine jaccard countsByYear { year count } citedBy(first: 1) { totalCount edges { node { id } } } } } } }"""
    p2_p3 = next(
        e["node"]
        for e in ok(service, listed)["coCitationPairs"]["edges"]
        if {e["node"]["source"]["id"], e["node"]["target"]["id"]} == {"p2", "p3"}
    )
    for a, b in (("p2", "p3"), ("p3", "p2")):
        pair = ok(service, query, {"a": a, "b": b})["coCitationPair"]
        assert pair["__typename"] == "CoCitationPair" and (pair["source"]["id"], pair["target"]["id"]) == (a, b)
        for field in ("count", "association", "cosine", "jaccard", "countsByYear", "citedBy"):
            assert pair[field] == p2_p3[field], field
        assert pair["count"] == 2 and pair["citedBy"]["totalCount"] == 2
    apart = ok(service, query, {"a": "p4", "b": "p5"})["coCitationPair"]
    assert apart["__typename"] == "NotFound" and apart["kind"] == "CoCitationPair"
    assert "'p4' and 'p5' are not co-cited" in apart["message"] and "coCited" in apart["message"]
    unknown = ok(service, query, {"a": "p2", "b": "nope"})["coCitationPair"]
    assert unknown["__typename"] == "NotFound" and unknown["kind"] == "Paper" and "'nope'" in unknown["message"]
