"""Every statement the embedded backend can load is executed against a fixture store.

Each runs inside a transaction that is rolled back, so DDL and writes leave the fixture intact.
Shared statements and embedded-dialect ones are covered here; the Neo4j dialect is linted by
test_statements_lint.py.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pyarrow as pa
import pytest

import cypher
from graph import GraphStore
from graph.errors import QueryError
from graph.statements import identifier

IDENTIFIERS = {
    "LABEL": "Paper",
    "KEY": "id",
    "TYPE": "CITES",
    "SOURCE": "Paper",
    "TARGET": "Paper",
    "SOURCE_KEY": "id",
    "TARGET_KEY": "id",
    "TABLE": "CITES",
    "COLUMN": "note",
    "DATATYPE": "STRING",
    "NAME": "paper_id_unique",
    "COLUMNS": ", r.n_contexts AS n_contexts",
    "NODE_COLUMNS": ", n.title AS title",
    "ASSIGNMENTS": "n.title = title",
}
# Statements whose identifiers need other samples than the defaults above.
OVERRIDES: dict[str, dict[str, str]] = {
    "create_node_table": {"LABEL": "Scratch", "COLUMNS": "id STRING, title STRING"},
    "create_rel_table": {"TYPE": "SCRATCH_REL", "COLUMNS": ", weight DOUBLE"},
    "table_info": {"TABLE": "Paper"},
    "copy_table": {"TABLE": "Author"},
    "copy_columns": {"TABLE": "Author", "COLUMNS": "id"},
}
PARAMS: dict[str, dict[str, Any]] = {
    "copy_table": {"frame": pa.table({"id": ["a9"], "name": ["New Author"], "orcid": [None], "openalex_id": ["A9"]})},
    "copy_columns": {"frame": pa.table({"id": ["a8"]})},
    "merge_nodes": {"frame": pa.table({"id": ["p1", "p9"], "title": ["T1", "T9"]})},
    "set_node_properties": {"frame": pa.table({"id": ["p1"], "title": ["T1"]})},
    "paper_by_ids": {"ids": ["p1"]},
    "paper_stub_flags": {"ids": ["p1", "nope"]},
    "paper_match_facts": {"ids": ["p1", "nope"]},
    "papers_by_aliases": {"ids": ["doi:10.1/x"]},
    "papers_by_external_ids": {"dois": ["10.1/x"], "arxiv_ids": []},
    "cocited_with": {"ids": ["p1"]},
    "authors_of_papers": {"ids": ["p1"]},
    "cited_papers": {"ids": ["p1"]},
    "citing_papers": {"ids": ["p2"]},
    "authors_of_paper": {"id": "p1"},
    "cited_papers_of_paper": {"id": "p1"},
    "citing_papers_of_paper": {"id": "p2"},
    "node_keys": {"keys": ["p1"]},
    "search_papers_by_title": {"text": "translation", "year_min": 0, "year_max": 9999, "skip": 0, "limit": 5},
    "explore/most_cited_papers": {"year_min": 1990, "year_max": 2010, "limit": 5},
    "explore/coauthors": {"author_id": "a1", "limit": 5},
    "explore/papers_of_author": {"author_id": "a1", "limit": 5},
    "explore/acm_subtree": {"class_id": "1998:I.2", "limit": 5},
    "explore/arxiv_acm_mapping": {"code": "cs.CL"},
    "explore/citation_neighbourhood": {"paper_id": "p1", "limit": 10},
    "cocitation_nodes": {"ids": ["p2", "p3"]},
    "map_reference_nodes": {"ids": ["p2"]},
    "cocite_cluster_members": {"cluster": 0},
    "top_cocitations": {"measure": "association", "min_count": 1, "skip": 0, "limit": 5},
    "count_cocitations": {"min_count": 1},
    "top_cocitations_in_years": {
        "measure": "count",
        "min_count": 1,
        "year_min": 1990,
        "year_max": 2010,
        "skip": 0,
        "limit": 10,
    },
    "count_cocitations_in_years": {"min_count": 1, "year_min": 1990, "year_max": 2010},
    "citers_of_pairs": {"ids": ["p1", "p2", "p3"]},
    "cocited_in_years": {"ids": ["p2"], "year_min": 2000, "year_max": 2003},
    "search_authors": {"text": "a", "skip": 0, "limit": 5},
    "count_authors_by_name": {"text": "a"},
    "search_sources": {"text": "acl", "skip": 0, "limit": 5},
    "count_sources_by_name": {"text": "acl"},
    "papers_of_sources": {"names": ["ACL"]},
    "first_authors": {"ids": ["p1", "p4"]},
    "explore/top_cocited_pairs": {"min_count": 1, "limit": 5},
    "explore/top_cocited_pairs_by_measure": {"measure": "cosine", "min_count": 1, "limit": 5},
    "explore/cocitation_neighbourhood_in_years": {
        "paper_id": "p2",
        "year_min": 2000,
        "year_max": 2010,
        "min_count": 1,
        "limit": 5,
    },
    "explore/authors_by_name": {"text": "LOVE", "limit": 5},
    "explore/sources_by_name": {"text": "acl", "limit": 5},
    "explore/papers_in_source": {"venue": "ACL", "limit": 5},
    "explore/cocitation_neighbourhood": {"paper_id": "p2", "limit": 5},
    "explore/cluster_bridges": {"cluster_a": 0, "cluster_b": 1, "limit": 5},
    "explore/cocitation_over_time": {"paper_a": "p2", "paper_b": "p3"},
    "explore/historiograph": {"limit": 3},
    "explore/keyword_cooccurrence": {"kind": "author", "year_min": 1990, "year_max": 2010, "min_count": 1, "limit": 5},
    "keyword_nodes": {"ids": ["author:x"]},
    "historiograph_labels": {"ids": ["p1", "nope"]},
    # The GraphQL API's statements (api/services.py).
    "papers_of_authors": {"ids": ["a1"]},
    "author_by_ids": {"ids": ["a1", "nope"]},
    "categories_of_papers": {"ids": ["p1"]},
    "arxiv_categories_by_codes": {"codes": ["cs.CL"]},
    "arxiv_category_coordinates": {"codes": ["cs.CL"]},
    "acm_class_coordinates": {"ids": ["1998:I.2"]},
    "paper_coordinates": {"ids": ["p1"]},
    "acm_classes_of_scheme": {"scheme": "1998"},
    "acm_mappings_of_categories": {"codes": ["cs.CL"]},
    "acm_classes_by_ids": {"ids": ["1998:I.2"]},
    "sentences_of_papers": {"ids": ["p1"]},
    "papers_mentioned_by_sentences": {"ids": ["p1#1"]},
    "citance_links_to_papers": {"ids": ["p1"]},
    "citations_among": {"ids": ["p1", "p2", "p4"]},
    "cocitations_among": {"ids": ["p2", "p3"]},
    "cocitation_pairs_of_cluster": {"cluster": 0, "measure": "count", "min_count": 1, "limit": 5},
    "count_papers_by_title": {"text": "translation", "year_min": 2002, "year_max": 9999},
    "search_papers_in_category": {
        "category": "cs.CL",
        "text": "",
        "year_min": 0,
        "year_max": 9999,
        "skip": 0,
        "limit": 5,
    },
    "count_papers_in_category": {"category": "cs.CL", "text": "", "year_min": 0, "year_max": 9999},
    "every_key": {},
    "nodes_by_keys": {"keys": ["p2", "p1", "nope"]},
    "rels_from_keys": {"keys": ["p4", "p5"]},
    "explore/ego_network": {"paper_id": "p1", "limit": 20},
    "explore/citation_paths": {"from_id": "p5", "to_id": "p2", "limit": 5},
    "explore/papers_citing_both": {"paper_a": "p2", "paper_b": "p3", "limit": 5},
    "explore/top_cocited_pairs_in_years": {"year_min": 2000, "year_max": 2003, "min_count": 1, "limit": 5},
    "explore/cocitation_cluster": {"paper_id": "p2", "limit": 10},
    "explore/linked_sentences": {"sentence_id": "p1#1"},
    "explore/taxonomy_neighbours": {"class_id": "1998:I.2", "limit": 5},
    "explore/category_acm_neighbours": {"code": "cs.CL", "limit": 5},
    # Retrieval (gnn/index.py, gnn/enricher.py).
    "paper_embeddings_by_ids": {"ids": ["p1"]},
    "enrich_references": {"ids": ["p4", "p1", "p5"], "known_until": 2004},
    "enrich_cocited_until": {"ids": ["p2"], "known_until": 2003},
    "paper_completeness": {"section": "Abstract"},
}
TITLES = {
    "p1": "Statistical machine translation",
    "p2": "Word alignment models",
    "p3": "Phrase tables",
    "p4": "Neural machine translation",
    "p5": "Attention for translation",
}
# What some explore queries must return on the tiny graph (the others return nothing there).
EXPECTED = {
    "explore/coauthors": [{"coauthor_id": "a2", "name": "Alan Turing", "shared_papers": 1}],
    "explore/citation_neighbourhood": [
        {"id": "p2", "label": "Word alignment models", "title": "Word alignment models", "year": 1993, "hops": 1},
        {"id": "p3", "label": "Phrase tables", "title": "Phrase tables", "year": 1999, "hops": 1},
        {
            "id": "p4",
            "label": "Neural machine translation",
            "title": "Neural machine translation",
            "year": 2004,
            "hops": 1,
        },
        {
            "id": "p5",
            "label": "Attention for translation",
            "title": "Attention for translation",
            "year": 2005,
            "hops": 2,
        },
    ],
    # p2 and p3 are co-cited by p1 (2001) and p4 (2004); the CO_CITED queries need `compute cocitation` first
    # (tests/gnn/test_cocitation.py runs them on a computed graph).
    "explore/cocitation_over_time": [{"year": 2001, "citing_papers": 1}, {"year": 2004, "citing_papers": 1}],
    # The cookbook on the tiny graph (tests/cypher/test_cookbook.py runs every recipe on a richer one).
    "explore/ego_network": [
        {"source": a, "target": b, "n_contexts": n, "touches_paper": t}
        | {"source_title": TITLES[a], "target_title": TITLES[b]}
        | {"source_label": TITLES[a], "target_label": TITLES[b]}
        for a, b, n, t in [
            ("p1", "p2", 1, True),
            ("p1", "p3", 2, True),
            ("p4", "p1", 3, True),
            ("p4", "p2", 1, False),
            ("p4", "p3", 1, False),
        ]
    ],
    "explore/papers_citing_both": [
        {"id": "p4", "title": TITLES["p4"], "label": TITLES["p4"], "year": 2004, "venue": None},
        {"id": "p1", "title": TITLES["p1"], "label": TITLES["p1"], "year": 2001, "venue": None},
    ],
    "nodes_by_keys": [{"key": "p2", "title": TITLES["p2"]}, {"key": "p1", "title": TITLES["p1"]}],
}
# The same for statements without ORDER BY: compared as sorted lists of rows.
EXPECTED_ANY_ORDER = {
    "citations_among": [
        {"source": "p1", "target": "p2", "n_contexts": 1},
        {"source": "p4", "target": "p1", "n_contexts": 3},
        {"source": "p4", "target": "p2", "n_contexts": 1},
    ],
    "count_papers_by_title": [{"n": 2}],
    "papers_of_authors": [
        {"author_id": "a1", "paper_id": "p4", "rank_key": 2004},
        {"author_id": "a1", "paper_id": "p1", "rank_key": 2001},
    ],
    "citation_pairs": [
        {"citing_id": s, "cited_id": t}
        for s, t in [("p1", "p2"), ("p1", "p3"), ("p4", "p1"), ("p4", "p2"), ("p4", "p3"), ("p5", "p4")]
    ],
    "every_key": [{"key": f"p{i}"} for i in range(1, 6)],
    "rels_from_keys": [
        {"source": s, "target": t, "n_contexts": n}
        for s, t, n in [("p4", "p1", 3), ("p4", "p2", 1), ("p4", "p3", 1), ("p5", "p4", 1)]
    ],
    # p5 (2005) is newer than known_until: its reference to p4 does not count
    "enrich_references": [
        {"citing_id": s, "cited_id": t}
        for s, t in [("p1", "p2"), ("p1", "p3"), ("p4", "p1"), ("p4", "p2"), ("p4", "p3")]
    ],
    # only p1 (2001) co-cites by 2003: p2 with p3
    "enrich_cocited_until": [{"paper_id": "p2", "other_id": "p3", "count": 1}],
    "cocited_in_years": [{"paper_id": "p2", "other_id": "p3", "count": 1}],
    "explore/authors_by_name": [
        {"id": "a1", "name": "Ada Lovelace", "papers": 2, "first_year": 2001, "last_year": 2004}
    ],
    "paper_years": [{"id": f"p{i}", "year": y} for i, y in zip(range(1, 6), [2001, 1993, 1999, 2004, 2005])],
    # the tiny graph's loader sets no stub flag: every paper counts as a record of the collection
    "paper_years_stubs": [
        {"id": f"p{i}", "year": y, "stub": None} for i, y in zip(range(1, 6), [2001, 1993, 1999, 2004, 2005])
    ],
    "historiograph_labels": [{"id": "p1", "title": "Statistical machine translation", "label": None}],
    # every tiny paper has a title and none has a vector yet (tests/graph/test_completeness.py computes some)
    "paper_completeness": [
        {"with_text": 5, "embedding": 0, "taxonomy": 0, "poincare": 0},  # text of their own
        {"with_text": 0, "embedding": 0, "taxonomy": 0, "poincare": 0},  # an abstract rebuilt from sentences only
    ],
    "sentence_completeness": [{"with_text": 0, "embedding": 0}],
    "cocitation_nodes": [
        {
            "id": "p2",
            "label": "Word alignment models",
            "title": "Word alignment models",
            "year": 1993,
            "n_cited": None,
            "cluster": None,
        },
        {
            "id": "p3",
            "label": "Phrase tables",
            "title": "Phrase tables",
            "year": 1999,
            "n_cited": None,
            "cluster": None,
        },
    ],
}


def embedded_statements() -> list[str]:
    return sorted({*cypher.names(), *cypher.names("embedded"), *cypher.names("explore")})


def test_every_file_has_a_header_and_loads() -> None:
    for dialect in cypher.DIALECTS:
        for name in {*cypher.names(), *cypher.names(dialect)}:
            statement = cypher.load(name, dialect)
            assert statement.header.startswith("//") and statement.text


@pytest.mark.parametrize("name", embedded_statements())
def test_statement_runs_on_the_embedded_store(store: GraphStore, name: str) -> None:
    statement = cypher.load(name, "embedded")
    identifiers = {**IDENTIFIERS, **OVERRIDES.get(name, {})}
    text = cypher.render(statement, {k: identifiers[k] for k in statement.placeholders})
    conn = store._conn  # type: ignore[attr-defined]
    conn.execute("BEGIN TRANSACTION")
    try:
        result = conn.execute(text, PARAMS.get(name, {}))
        rows = result.get_as_arrow().to_pylist() if result.get_column_names() else []
    finally:
        with contextlib.suppress(RuntimeError):  # a failing statement already rolled back
            conn.execute("ROLLBACK")
    assert store.count_nodes("Paper") == 5  # rolled back
    if name in EXPECTED:
        assert rows == EXPECTED[name]
    if name in EXPECTED_ANY_ORDER:
        assert sorted(rows, key=repr) == sorted(EXPECTED_ANY_ORDER[name], key=repr)


def test_identifiers_are_checked() -> None:
    with pytest.raises(cypher.StatementError):
        cypher.check_identifier("Paper) DETACH DELETE (n")
    with pytest.raises(cypher.StatementError, match="needs identifiers"):
        cypher.render(cypher.load("count_nodes"), {})
    with pytest.raises(cypher.StatementError, match="no Cypher statement"):
        cypher.load("drop_everything")


def test_the_store_translates_statement_errors_keeping_their_message(store: GraphStore) -> None:
    with pytest.raises(QueryError, match="no Cypher statement named 'drop_everything'") as caught:
        store.query("drop_everything")
    assert isinstance(caught.value.__cause__, cypher.StatementError)
    with pytest.raises(QueryError, match="needs identifiers"):
        store.query("count_nodes")
    with pytest.raises(QueryError, match="is not a plain identifier"):
        identifier("Paper) DETACH DELETE (n")


@pytest.mark.parametrize(
    ("name", "key"),
    [("authorships", ("author_id", "paper_id")), ("citations_with_years", ("citing_id", "cited_id"))],
)
def test_bulk_reads_behind_the_reranker_cache_come_back_in_one_order(store: GraphStore, name: str, key: tuple) -> None:
    # the tiny graph stores p4→p2 before p4→p1, and an unordered read of CITES returns them so
    rows = [tuple(r[k] for k in key) for r in store.query(name)]
    assert rows == sorted(rows) and len(rows) == len(set(rows)) > 2
