"""Every query and error path of the GraphQL schema, through ``schema.execute`` on the tiny graph."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest
from graphql import parse

from api.cost import SCAN_WORK, UNBOUNDED_LIST_SIZE, query_cost
from api.errors import CORRUPT_MESSAGE, MASKED_MESSAGE
from api.schema import Context, schema
from api.services import GraphService
from api.types.common import cursor_scope, encode_cursor
from graph import GraphStore
from tests.api.conftest import run


def ok(service: GraphService, query: str, variables: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    result = run(service, query, variables, **kwargs)
    assert result.errors is None, result.errors
    return result.data


def error(service: GraphService, query: str, variables: dict[str, Any] | None = None, **kwargs: Any) -> tuple[str, str]:
    result = run(service, query, variables, **kwargs)
    assert result.errors, result.data
    return result.errors[0].message, result.errors[0].extensions["code"]


def ids(connection: dict[str, Any]) -> list[str]:
    return [edge["node"]["id"] for edge in connection["edges"]]


# papers and authors ---------------------------------------------------------------------------
def test_paper_with_authors_and_citations(service: GraphService) -> None:
    query = '{ paper(id: "p1") { title year authors { name } citations { totalCount edges { node { id } } } citedBy { edges { node { id title } } } } }'
    paper = ok(service, query)["paper"]
    assert paper["title"] == "Statistical machine translation" and paper["year"] == 2001
    assert [a["name"] for a in paper["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert sorted(ids(paper["citations"])) == ["p2", "p3"] and paper["citations"]["totalCount"] == 2
    assert paper["citedBy"]["edges"] == [{"node": {"id": "p4", "title": "Neural machine translation"}}]


def test_unknown_paper_is_null(service: GraphService) -> None:
    assert ok(service, '{ paper(id: "nope") { id } }') == {"paper": None}


def test_a_stub_shows_its_reference_string_and_no_title(service: GraphService, rich_store: Any) -> None:
    from graph import GraphBatch, ingest

    ref = "A. Author. Lattice parsing. Proc. X, 1999."
    stub = pd.DataFrame({"id": ["doi:10.1/x"], "stub": [True], "reference": [ref]})
    ingest(rich_store, GraphBatch("stub", nodes={"Paper": stub}))
    paper = ok(service, '{ paper(id: "doi:10.1/x") { title stub reference } }')["paper"]
    assert paper == {"title": None, "stub": True, "reference": ref}
    assert ok(service, '{ paper(id: "p1") { reference } }')["paper"] == {"reference": None}


def test_citations_page_forward_with_cursors(service: GraphService) -> None:
    """p4 cites p1, p2, p3: pages of one walk the whole list once, in order."""
    query = 'query($after: String) { paper(id: "p4") { citations(first: 1, after: $after) { totalCount pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node { id } } } } }'
    seen, after, pages = [], None, 0
    while True:
        page = ok(service, query, {"after": after})["paper"]["citations"]
        assert page["totalCount"] == 3 and page["pageInfo"]["hasPreviousPage"] == (after is not None)
        seen += ids(page)
        pages += 1
        after = page["pageInfo"]["endCursor"]
        if not page["pageInfo"]["hasNextPage"]:
            break
    assert pages == 3 and sorted(seen) == ["p1", "p2", "p3"] and len(set(seen)) == 3
    # a cursor past the end gives an empty page, not an error
    past = ok(service, query, {"after": encode_cursor(10, cursor_scope("Paper.citations", paper="p4"))})["paper"]
    past = past["citations"]
    assert past["edges"] == [] and past["pageInfo"]["endCursor"] is None


def test_search_filters_by_year_and_counts(service: GraphService) -> None:
    data = ok(
        service, '{ papers(search: "Translation", yearMin: 2002, first: 5) { totalCount edges { node { id } } } }'
    )
    assert sorted(ids(data["papers"])) == ["p4", "p5"] and data["papers"]["totalCount"] == 2


def test_search_pages_and_skips_the_count_unless_asked(service: GraphService) -> None:
    first = ok(
        service,
        '{ papers(search: "translation", first: 2) { pageInfo { endCursor hasNextPage } edges { node { id } } } }',
    )
    assert first["papers"]["pageInfo"]["hasNextPage"] is True
    service.round_trips = 0
    query = '{ papers(search: "translation", first: 2, after: "%s") { totalCount edges { node { id } } } }'
    second = ok(service, query % first["papers"]["pageInfo"]["endCursor"])
    assert len(ids(second["papers"])) == 1 and second["papers"]["totalCount"] == 3
    assert not set(ids(first["papers"])) & set(ids(second["papers"]))
    assert service.round_trips == 3  # the page, the count, the papers
    service.round_trips = 0
    ok(service, '{ papers(search: "translation", first: 2) { edges { node { id } } } }')
    assert service.round_trips == 2  # no count query when totalCount is not selected


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("query", "forged"),
    [
        # the case: an offset of a wider search (base64 "offset:12000"), then other forged offsets
        ('{ papers(search: "machine translation", first: 2, after: "%s") { totalCount } }', _b64("offset:12000")),
        ('{ papers(category: "cs.CL", after: "%s") { totalCount } }', _b64("offset:500000")),
        ('{ papers(search: "translation", after: "%s") { totalCount } }', _b64("offset:99999")),
        ('{ paper(id: "p1") { citedBy(after: "%s") { totalCount } } }', _b64("offset:20000")),
        ('{ papers(search: "translation", after: "%s") { totalCount } }', "AAAAAAAAAAEAAAAAAAAAAAAAAAAAAAAA"),
    ],
)
def test_forged_cursors_are_refused_before_the_store(service: GraphService, query: str, forged: str) -> None:
    service.round_trips = 0
    message, code = error(service, query % forged)
    assert code == "BAD_USER_INPUT" and "not a cursor" in message and "first page" in message
    if query.startswith("{ papers"):
        assert service.round_trips == 0  # the search never reached the store


def test_a_cursor_works_only_on_the_list_it_came_from(service: GraphService) -> None:
    """The endCursor of one search pages that search, and is refused by another (other text, category or
    years) and by the same field of another paper."""
    query = '{ papers(search: "translation", first: 1) { pageInfo { endCursor } } }'
    cursor = ok(service, query)["papers"]["pageInfo"]["endCursor"]
    page = '{ papers(search: "translation", first: 1, after: "' + cursor + '") { edges { node { id } } } }'
    assert len(ids(ok(service, page)["papers"])) == 1
    for other in (
        '{ papers(search: "machine translation", after: "%s") { totalCount } }',
        '{ papers(search: "translation", category: "cs.CL", after: "%s") { totalCount } }',
        '{ papers(search: "translation", yearMin: 2000, after: "%s") { totalCount } }',
    ):
        assert error(service, other % cursor)[0].startswith("`after` is not a cursor")
    cited = '{ paper(id: "%s") { citations(first: 1, after: $after) { pageInfo { endCursor } } } }'
    issued = ok(service, "query($after: String) " + cited % "p4", {"after": None})
    cursor = issued["paper"]["citations"]["pageInfo"]["endCursor"]
    assert ok(service, "query($after: String) " + cited % "p4", {"after": cursor})["paper"] is not None
    assert "not a cursor" in error(service, "query($after: String) " + cited % "p5", {"after": cursor})[0]


def test_search_by_category(service: GraphService) -> None:
    data = ok(service, '{ papers(category: "cs.CL") { edges { node { id } } } }')
    assert sorted(ids(data["papers"])) == ["p1", "p4"]
    data = ok(service, '{ papers(category: "cs.CL", search: "neural") { totalCount edges { node { id } } } }')
    assert ids(data["papers"]) == ["p4"] and data["papers"]["totalCount"] == 1


def test_author_with_papers(service: GraphService) -> None:
    author = ok(service, '{ author(id: "a1") { name papers { totalCount edges { node { id year } } } } }')["author"]
    assert author["name"] == "Ada Lovelace" and author["papers"]["totalCount"] == 2
    assert ids(author["papers"]) == ["p4", "p1"]  # newest first
    assert ok(service, '{ author(id: "nobody") { name } }') == {"author": None}


def test_sentences_and_their_citations(service: GraphService) -> None:
    query = '{ paper(id: "p1") { hasFullText sentences(first: 2) { totalCount pageInfo { hasNextPage } edges { node { id sid section text mentions { paper { id } marker } } } } } }'
    paper = ok(service, query)["paper"]
    assert paper["hasFullText"] is True and paper["sentences"]["totalCount"] == 3
    assert paper["sentences"]["pageInfo"]["hasNextPage"] is True
    first, second = (e["node"] for e in paper["sentences"]["edges"])
    assert first == {"id": "p1#0", "sid": 0, "section": "abstract", "text": "We translate.", "mentions": []}
    assert second["mentions"] == [
        {"paper": {"id": "p2"}, "marker": "(Brown, 1993)"},
        {"paper": {"id": "p3"}, "marker": None},
    ]


def test_paper_without_full_text_says_so(service: GraphService) -> None:
    paper = ok(service, '{ paper(id: "p2") { hasFullText sentences { totalCount edges { cursor } } } }')["paper"]
    assert paper == {"hasFullText": False, "sentences": {"totalCount": 0, "edges": []}}


def test_paper_categories_and_coordinates(service: GraphService) -> None:
    query = '{ paper(id: "p4") { categories { category { code name } score inferred } taxonomy poincare } }'
    paper = ok(service, query)["paper"]
    assert paper["categories"] == [
        {"category": {"code": "cs.CL", "name": "Computation and Language"}, "score": 0.8, "inferred": True},
        {"category": {"code": "cs.LG", "name": "Machine Learning"}, "score": 0.5, "inferred": True},
    ]
    assert paper["taxonomy"] is None and paper["poincare"] is None  # nothing computed yet


def test_nested_lists_batch_their_store_round_trips(service: GraphService) -> None:
    """Authors of every cited paper load in one query, not one per paper (no N+1)."""
    result = ok(
        service, '{ paper(id: "p4") { citations { edges { node { id authors { name } categories { score } } } } } }'
    )
    assert len(result["paper"]["citations"]["edges"]) == 3
    # paper(p4), its citations, the cited papers (one batch), their authors, their category assignments and
    # those categories (one batch each): six, however many papers p4 cites
    assert service.round_trips == 6


def test_cocited_papers_ranked_by_measure(service: GraphService) -> None:
    query = '{ paper(id: "p2") { coCited(measure: JACCARD) { paper { id } count jaccard association } } }'
    assert ok(service, query)["paper"]["coCited"] == [
        {"paper": {"id": "p3"}, "count": 2, "jaccard": 1.0, "association": 1.5},
        {"paper": {"id": "p1"}, "count": 1, "jaccard": 0.5, "association": 1.5},
    ]
    service.round_trips = 0
    result = ok(
        service, '{ paper(id: "p4") { citations { edges { node { id coCited(first: 2) { paper { id } } } } } } }'
    )
    assert len(result["paper"]["citations"]["edges"]) == 3 and service.round_trips == 4


# taxonomy -----------------------------------------------------------------------------------------
def test_category_with_acm_mapping(service: GraphService) -> None:
    query = '{ category(code: "cs.CL") { code name fused poincare acmClasses { taxonomyClass { id name level parent { id } } score inferred } } }'
    category = ok(service, query)["category"]
    assert category["name"] == "Computation and Language" and category["fused"] is None and category["poincare"] is None
    assert category["acmClasses"] == [
        {
            "taxonomyClass": {
                "id": "1998:I.2.7",
                "name": "Natural Language Processing",
                "level": 3,
                "parent": {"id": "1998:I.2"},
            },
            "score": 1.0,
            "inferred": False,
        }
    ]
    assert ok(service, '{ category(code: "xx.YY") { code } }') == {"category": None}


def test_taxonomy_tree(service: GraphService) -> None:
    query = '{ taxonomy(scheme: "1998") { __typename ... on Taxonomy { scheme size roots { id children { id children { id fused poincare } } } classes(first: 2) { totalCount edges { node { id parentId } } } } } }'
    tree = ok(service, query)["taxonomy"]
    assert tree["__typename"] == "Taxonomy" and tree["size"] == 3
    assert tree["roots"] == [
        {
            "id": "1998:I",
            "children": [{"id": "1998:I.2", "children": [{"id": "1998:I.2.7", "fused": None, "poincare": None}]}],
        }
    ]
    assert tree["classes"]["totalCount"] == 3
    assert tree["classes"]["edges"] == [
        {"node": {"id": "1998:I", "parentId": None}},
        {"node": {"id": "1998:I.2", "parentId": "1998:I"}},
    ]


def test_arxiv_taxonomy_nests_by_archive(service: GraphService) -> None:
    tree = ok(service, '{ taxonomy(scheme: "arxiv") { ... on Taxonomy { roots { id children { id } } } } }')["taxonomy"]
    assert tree["roots"] == [{"id": "cs", "children": [{"id": "cs.CL"}, {"id": "cs.LG"}]}]


def test_unknown_taxonomy_is_not_found_with_known_schemes(service: GraphService) -> None:
    data = ok(
        service,
        '{ taxonomy(scheme: "2099") { __typename ... on NotFound { kind id message } } taxonomies { scheme size } }',
    )
    assert data["taxonomy"]["__typename"] == "NotFound" and data["taxonomy"]["kind"] == "Taxonomy"
    assert "1998" in data["taxonomy"]["message"] and "arxiv" in data["taxonomy"]["message"]
    assert data["taxonomies"] == [{"scheme": "1998", "size": 3}, {"scheme": "arxiv", "size": 3}]


# network views ------------------------------------------------------------------------------------
EGO = """query($id: ID!, $depth: Int! = 1, $direction: Direction! = BOTH, $limit: Int! = 50, $co: Boolean! = false) {
  egoNetwork(paperId: $id, depth: $depth, direction: $direction, limit: $limit, includeCoCitation: $co) {
    __typename
    ... on EgoNetwork { seed truncated reached nodes { id label year cluster clusterLabel hops } edges { source target kind weight association } }
    ... on NotFound { kind id message }
  }
}"""


def test_ego_network_depth_one_both_directions(service: GraphService) -> None:
    network = ok(service, EGO, {"id": "p1"})["egoNetwork"]
    assert network["__typename"] == "EgoNetwork" and network["seed"] == "p1" and network["truncated"] is False
    assert [(n["id"], n["hops"]) for n in network["nodes"]] == [("p1", 0), ("p2", 1), ("p4", 1), ("p3", 1)]
    assert network["nodes"][0]["label"] == "Statistical machine translation"
    assert {n["id"]: n["cluster"] for n in network["nodes"]} == {"p1": 0, "p2": 0, "p3": 0, "p4": None}
    clusters = {c["id"]: c["label"] for c in ok(service, "{ clusters { id label } }")["clusters"]}
    assert network["nodes"][1]["clusterLabel"] == clusters[0]  # the cluster's label, as `clusters` gives it
    # the induced citations among the four papers, weighted by citing contexts
    assert sorted((e["source"], e["target"], e["weight"]) for e in network["edges"]) == [
        ("p1", "p2", 1.0),
        ("p1", "p3", 2.0),
        ("p4", "p1", 3.0),
        ("p4", "p2", 1.0),
        ("p4", "p3", 1.0),
    ]
    assert {e["kind"] for e in network["edges"]} == {"CITES"}


def test_ego_network_directions_depth_and_cocitation(service: GraphService) -> None:
    out = ok(service, EGO, {"id": "p4", "direction": "OUT"})["egoNetwork"]
    assert sorted(n["id"] for n in out["nodes"]) == ["p1", "p2", "p3", "p4"]
    inward = ok(service, EGO, {"id": "p4", "direction": "IN", "depth": 2})["egoNetwork"]
    assert [n["id"] for n in inward["nodes"]] == ["p4", "p5"]
    deep = ok(service, EGO, {"id": "p1", "depth": 2, "co": True})["egoNetwork"]
    assert [(n["id"], n["hops"]) for n in deep["nodes"]][-1] == ("p5", 2)
    cocited = sorted((e["source"], e["target"], e["weight"]) for e in deep["edges"] if e["kind"] == "CO_CITED")
    assert cocited == [("p1", "p2", 1.0), ("p1", "p3", 1.0), ("p2", "p3", 2.0)]
    assert all(e["association"] == 1.5 for e in deep["edges"] if e["kind"] == "CO_CITED")


def test_ego_network_truncation_is_flagged(service: GraphService) -> None:
    network = ok(service, EGO, {"id": "p1", "depth": 2, "limit": 2})["egoNetwork"]
    assert network["truncated"] is True and network["reached"] == 4
    assert [n["id"] for n in network["nodes"]] == ["p1", "p2", "p4"]
    kept = {"p1", "p2", "p4"}
    assert all(e["source"] in kept and e["target"] in kept for e in network["edges"])


def test_ego_network_unknown_paper_and_bad_arguments(service: GraphService) -> None:
    missing = ok(service, EGO, {"id": "nope"})["egoNetwork"]
    assert missing == {"__typename": "NotFound", "kind": "Paper", "id": "nope", "message": "no paper has id 'nope'"}
    assert error(service, EGO, {"id": "p1", "depth": 3}) == ("`depth` must be 1 or 2, got 3", "BAD_USER_INPUT")
    message, code = error(service, EGO, {"id": "p1", "limit": 0})
    assert code == "BAD_USER_INPUT" and "`limit` must be between 1 and 50" in message


COCITATIONS = """query($paper: ID, $cluster: Int, $measure: CoCitationMeasure! = ASSOCIATION, $min: Int! = 1, $first: Int! = 20) {
  coCitations(paperId: $paper, clusterId: $cluster, measure: $measure, minCount: $min, first: $first) {
    __typename
    ... on CoCitationList { measure pairs { source { id } target { id } count jaccard } }
    ... on NotFound { kind id }
  }
}"""


def test_cocitations_of_a_paper(service: GraphService) -> None:
    data = ok(service, COCITATIONS, {"paper": "p2", "measure": "JACCARD"})["coCitations"]
    assert data["measure"] == "JACCARD"
    assert [(p["source"]["id"], p["target"]["id"], p["count"], p["jaccard"]) for p in data["pairs"]] == [
        ("p2", "p3", 2, 1.0),
        ("p2", "p1", 1, 0.5),
    ]
    strong = ok(service, COCITATIONS, {"paper": "p2", "min": 2})["coCitations"]
    assert [p["target"]["id"] for p in strong["pairs"]] == ["p3"]


def test_cocitations_in_a_cluster(service: GraphService) -> None:
    data = ok(service, COCITATIONS, {"cluster": 0, "measure": "COUNT", "first": 2})["coCitations"]
    assert [(p["source"]["id"], p["target"]["id"], p["count"]) for p in data["pairs"]] == [
        ("p2", "p3", 2),
        ("p1", "p2", 1),
    ]


def test_cocitations_not_found_and_argument_errors(service: GraphService) -> None:
    assert ok(service, COCITATIONS, {"paper": "nope"})["coCitations"] == {
        "__typename": "NotFound",
        "kind": "Paper",
        "id": "nope",
    }
    assert ok(service, COCITATIONS, {"cluster": 7})["coCitations"] == {
        "__typename": "NotFound",
        "kind": "Cluster",
        "id": "7",
    }
    assert (
        error(service, COCITATIONS, {"paper": "p1", "cluster": 0})[0]
        == "give at most one of `paperId` and `clusterId` (neither: the whole store)"
    )
    assert error(service, COCITATIONS, {"paper": "p1", "min": 0})[1] == "BAD_USER_INPUT"


def test_clusters_with_labels_and_sizes(service: GraphService) -> None:
    clusters = ok(service, "{ clusters { id label terms labels(method: LLR) size topPapers { id } } }")["clusters"]
    assert len(clusters) == 1
    assert clusters[0]["id"] == 0 and clusters[0]["size"] == 3
    # shown: the top terms of the papers citing the members by log-likelihood ratio (CiteSpace's label);
    # `terms` stay the members' own title terms
    assert clusters[0]["label"] == ", ".join(clusters[0]["labels"][:3]) and "alignment" in clusters[0]["terms"]
    assert sorted(p["id"] for p in clusters[0]["topPapers"]) == ["p1", "p2", "p3"]


def test_clusters_empty_before_compute(store: Any) -> None:
    assert ok(GraphService(store), "{ clusters { id } }") == {"clusters": []}


# explore ------------------------------------------------------------------------------------------
def test_explore_queries_are_listed_with_parameters(service: GraphService) -> None:
    listed = {
        q["name"]: q
        for q in ok(
            service, "{ exploreQueries { name description parameters { name type required minimum } columns } }"
        )["exploreQueries"]
    }
    assert {"coauthors", "most_cited_papers", "top_cocited_pairs"} <= set(listed)
    assert listed["coauthors"]["parameters"] == [
        {"name": "author_id", "type": "string", "required": True, "minimum": None},
        {"name": "limit", "type": "int", "required": False, "minimum": 1},
    ]
    assert listed["top_cocited_pairs"]["parameters"][0] == {
        "name": "min_count",
        "type": "int",
        "required": True,
        "minimum": 1,
    }
    assert listed["coauthors"]["columns"] == ["coauthor_id", "name", "shared_papers"]


EXPLORE = """query($name: String!, $params: JSON) {
  explore(name: $name, params: $params) {
    __typename
    ... on ExploreRows { name columns rows rowCount truncated }
    ... on InvalidArgument { argument message }
    ... on NotFound { kind id message }
  }
}"""


def test_explore_runs_a_named_query(service: GraphService) -> None:
    rows = ok(service, EXPLORE, {"name": "coauthors", "params": {"author_id": "a1"}})["explore"]
    assert rows["__typename"] == "ExploreRows" and rows["truncated"] is False
    assert rows["rows"] == [{"coauthor_id": "a2", "name": "Alan Turing", "shared_papers": 1}]
    cited = ok(
        service, EXPLORE, {"name": "most_cited_papers", "params": {"year_min": 1990, "year_max": 2010, "limit": 2}}
    )
    assert [r["id"] for r in cited["explore"]["rows"]] == ["p2", "p3"]


def test_explore_caps_rows(service: GraphService) -> None:
    rows = ok(
        service, EXPLORE, {"name": "citation_neighbourhood", "params": {"paper_id": "p1", "limit": 3}}, max_results=3
    )
    assert rows["explore"]["rowCount"] == 3


@pytest.mark.parametrize(
    ("params", "argument", "fragment"),
    [
        ({}, "author_id", "needs `author_id`"),
        ({"author_id": "a1", "cypher": "MATCH (n) DETACH DELETE n"}, "cypher", "takes no parameter 'cypher'"),
        ({"author_id": 7}, "author_id", "must be a string"),
        ({"author_id": "a1", "limit": "5"}, "limit", "must be an integer"),
        ({"author_id": "a1", "limit": True}, "limit", "must be an integer"),
        ({"author_id": "a1", "limit": 0}, "limit", "between 1 and 50"),
        ({"author_id": "a1", "limit": 10**30}, "limit", "between 1 and 50"),
        ({"author_id": "x" * 501}, "author_id", "at most 500"),
    ],
)
def test_explore_rejects_parameters_that_do_not_fit(
    service: GraphService, params: dict[str, Any], argument: str, fragment: str
) -> None:
    result = ok(service, EXPLORE, {"name": "coauthors", "params": params})["explore"]
    assert (
        result["__typename"] == "InvalidArgument" and result["argument"] == argument and fragment in result["message"]
    )


def test_explore_minimum_from_the_header(service: GraphService) -> None:
    result = ok(service, EXPLORE, {"name": "top_cocited_pairs", "params": {"min_count": 0}})["explore"]
    assert result["__typename"] == "InvalidArgument" and "between 1 and" in result["message"]


def test_explore_never_runs_arbitrary_cypher(service: GraphService) -> None:
    for name in ["MATCH (n) RETURN n", "../count_nodes", "explore/coauthors", "count_nodes"]:
        result = ok(service, EXPLORE, {"name": name, "params": {}})["explore"]
        assert result["__typename"] == "NotFound" and result["kind"] == "ExploreQuery"
    not_an_object = ok(service, EXPLORE, {"name": "coauthors", "params": [1, 2]})["explore"]
    assert not_an_object["__typename"] == "InvalidArgument" and not_an_object["argument"] == "params"


# limits and errors --------------------------------------------------------------------------------
def test_stats(service: GraphService) -> None:
    counts = {(c["kind"], c["label"]): c["count"] for c in ok(service, "{ stats { kind label count } }")["stats"]}
    assert counts[("node", "Paper")] == 5 and counts[("relationship", "CITES")] == 6


def test_completeness(service: GraphService, rich_store: GraphStore) -> None:
    """The rich graph: five titled papers, three sentences (p1's); two papers and one sentence embedded."""
    dim = rich_store.schema.sizes.embedding
    vectors = list(np.full((2, dim), 0.05, np.float32))
    rich_store.write_node_properties("Paper", "id", pd.DataFrame({"id": ["p2", "p5"], "embedding": vectors}))
    rich_store.write_node_properties("Sentence", "id", pd.DataFrame({"id": ["p1#0"], "embedding": vectors[:1]}))
    before = service.round_trips
    rows = ok(service, "{ completeness { property have of fraction } }")["completeness"]
    assert rows == [
        {"property": "Paper.embedding", "have": 2, "of": 5, "fraction": 0.4},
        {"property": "Paper.taxonomy", "have": 0, "of": 5, "fraction": 0.0},
        {"property": "Paper.poincare", "have": 0, "of": 5, "fraction": 0.0},
        {"property": "Sentence.embedding", "have": 1, "of": 3, "fraction": pytest.approx(1 / 3)},
    ]
    assert rows == [{"property": c.property, **c.as_dict()} for c in rich_store.completeness()]
    assert service.round_trips - before == 2  # two count statements, whatever the store's size


def test_completeness_costs_what_stats_costs() -> None:
    """Both count every node (SCAN_WORK) into short lists without a length argument (UNBOUNDED_LIST_SIZE)."""
    gql = schema._schema
    stats = query_cost(gql, parse("{ stats { kind label count } }"), max_results=200)
    completeness = query_cost(gql, parse("{ completeness { property have of fraction } }"), max_results=200)
    assert completeness == stats == SCAN_WORK + UNBOUNDED_LIST_SIZE


def test_first_is_capped_with_a_client_message(service: GraphService) -> None:
    message, code = error(service, '{ papers(search: "translation", first: 1000) { totalCount } }', max_results=50)
    assert "between 1 and 50" in message and code == "BAD_USER_INPUT"


SEARCH_X = cursor_scope("Query.papers", search="x", year_min=None, year_max=None, category=None)


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("{ papers { totalCount } }", "give `search`"),
        ('{ papers(search: "   ") { totalCount } }', "give `search`"),
        ('{ papers(search: "%s") { totalCount } }' % ("x" * 201), "at most 200"),
        ('{ papers(search: "x", yearMin: -5) { totalCount } }', "`yearMin` must be a year"),
        ('{ papers(search: "x", after: "bm90IGEgY3Vyc29y") { totalCount } }', "not a cursor"),
        # The cursor is signed with this process's key: a fixed id keeps collection the same in every process.
        pytest.param(
            '{ papers(search: "x", after: "' + encode_cursor(10**9, SEARCH_X) + '") { totalCount } }',
            "not a cursor",
            id="offset-past-the-total",
        ),
        ('{ paper(id: "p1") { citations(first: 0) { totalCount } } }', "between 1 and 50"),
        ("{ clusters(first: 51) { id } }", "between 1 and 50"),
    ],
)
def test_bad_arguments_are_client_errors(service: GraphService, query: str, fragment: str) -> None:
    message, code = error(service, query)
    assert code == "BAD_USER_INPUT" and fragment in message


def test_parse_and_validation_errors_are_coded(service: GraphService) -> None:
    assert error(service, "{ paper(id: ")[1] == "GRAPHQL_PARSE_FAILED"
    assert error(service, "{ paper(id: 1) { nonsense } }")[1] == "GRAPHQL_VALIDATION_FAILED"
    assert error(service, "{ papers(search: 3) { totalCount } }")[1] == "GRAPHQL_VALIDATION_FAILED"
    assert (
        error(service, '{ paper(id: "p1") { citations(first: 99999999999) { totalCount } } }')[1]
        == "GRAPHQL_VALIDATION_FAILED"
    )


def test_depth_limit(service: GraphService) -> None:
    deep = '{ paper(id: "p5") { ' + "citations { edges { node { " * 4 + "id" + " } } }" * 4 + " } }"
    message, code = error(service, deep)
    assert "exceeds maximum operation depth" in message and code == "QUERY_TOO_COMPLEX"


def test_alias_and_token_limits(service: GraphService) -> None:
    aliases = "{ " + " ".join(f'a{i}: paper(id: "p1") {{ id }}' for i in range(16)) + " }"
    assert error(service, aliases)[1] == "QUERY_TOO_COMPLEX"
    tokens = '{ paper(id: "p1") { ' + "id " * 2100 + "} }"
    assert error(service, tokens)[1] == "QUERY_TOO_COMPLEX"


def test_internal_errors_are_masked_and_coded(service: GraphService, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("Binder exception: MATCH (p:Paper) secret internals")

    monkeypatch.setattr(service, "search", broken)
    message, code = error(service, '{ papers(search: "x") { totalCount } }')
    assert message == MASKED_MESSAGE and code == "INTERNAL_SERVER_ERROR"
    assert "secret" not in message and "MATCH" not in message


def test_a_damaged_value_read_from_the_store_is_a_coded_error_without_the_path(service: GraphService) -> None:
    """A NaN where no step writes one (a damaged store file) stops the request with STORE_CORRUPT, never as data."""
    service.store._execute(  # type: ignore[attr-defined]
        "MATCH (a:Paper)-[c:CO_CITED]->(b:Paper) WHERE a.id = 'p2' SET c.jaccard = 0.0 / 0.0", what="test"
    )
    message, code = error(service, '{ paper(id: "p2") { coCited(measure: JACCARD) { paper { id } jaccard } } }')
    assert code == "STORE_CORRUPT" and message == CORRUPT_MESSAGE
    assert str(service.store.path) not in message  # type: ignore[attr-defined]


def test_slow_requests_time_out(service: GraphService, monkeypatch: pytest.MonkeyPatch) -> None:
    real = service.papers

    def slow(ids: list[str]) -> Any:
        time.sleep(0.5)
        return real(ids)

    monkeypatch.setattr(service, "papers", slow)

    async def timed() -> tuple[Any, float]:
        started = time.monotonic()
        context = Context.create(service, 50, timeout_s=0.1)
        result = await schema.execute('{ paper(id: "p1") { title } }', context_value=context)
        return result, time.monotonic() - started

    result, elapsed = asyncio.run(timed())
    assert result.errors and result.errors[0].extensions["code"] == "TIME_BUDGET_EXCEEDED"
    assert "0.1 s time budget" in result.errors[0].message
    assert elapsed < 0.4  # answered at the deadline, not when the store call ended (0.5 s)
