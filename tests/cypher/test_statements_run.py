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
    "copy_table": {"frame": pa.table({"id": ["a9"], "name": ["New Author"]})},
    "copy_columns": {"frame": pa.table({"id": ["a8"]})},
    "merge_nodes": {"frame": pa.table({"id": ["p1", "p9"], "title": ["T1", "T9"]})},
    "set_node_properties": {"frame": pa.table({"id": ["p1"], "title": ["T1"]})},
    "paper_by_ids": {"ids": ["p1"]}, "cocited_with": {"ids": ["p1"]},
    "authors_of_papers": {"ids": ["p1"]},
    "cited_papers": {"ids": ["p1"]},
    "citing_papers": {"ids": ["p2"]},
    "node_keys": {"keys": ["p1"]},
    "search_papers_by_title": {"text": "translation", "year_min": 0, "year_max": 9999, "limit": 5},
    "explore/most_cited_papers": {"year_min": 1990, "year_max": 2010, "limit": 5},
    "explore/coauthors": {"author_id": "a1", "limit": 5},
    "explore/papers_of_author": {"author_id": "a1", "limit": 5},
    "explore/acm_subtree": {"class_id": "1998:I.2", "limit": 5},
    "explore/arxiv_acm_mapping": {"code": "cs.CL"},
    "explore/citation_neighbourhood": {"paper_id": "p1", "limit": 10},
    "cocitation_nodes": {"ids": ["p2", "p3"]},
    "explore/top_cocited_pairs": {"min_count": 1, "limit": 5},
    "explore/cocitation_neighbourhood": {"paper_id": "p2", "limit": 5},
    "explore/cluster_bridges": {"cluster_a": 0, "cluster_b": 1, "limit": 5},
    "explore/cocitation_over_time": {"paper_a": "p2", "paper_b": "p3"},
}
# What some explore queries must return on the tiny graph (the others return nothing there).
EXPECTED = {
    "explore/coauthors": [{"coauthor_id": "a2", "name": "Alan Turing", "shared_papers": 1}],
    "explore/citation_neighbourhood": [
        {"id": "p2", "title": "Word alignment models", "year": 1993, "hops": 1},
        {"id": "p3", "title": "Phrase tables", "year": 1999, "hops": 1},
        {"id": "p4", "title": "Neural machine translation", "year": 2004, "hops": 1},
        {"id": "p5", "title": "Attention for translation", "year": 2005, "hops": 2},
    ],
    # p2 and p3 are co-cited by p1 (2001) and p4 (2004); the CO_CITED queries need `compute cocitation` first
    # (tests/gnn/test_cocitation.py runs them on a computed graph).
    "explore/cocitation_over_time": [{"year": 2001, "citing_papers": 1}, {"year": 2004, "citing_papers": 1}],
}
# The same for statements without ORDER BY: compared as sorted lists of rows.
EXPECTED_ANY_ORDER = {
    "citation_pairs": [
        {"citing_id": s, "cited_id": t}
        for s, t in [("p1", "p2"), ("p1", "p3"), ("p4", "p1"), ("p4", "p2"), ("p4", "p3"), ("p5", "p4")]
    ],
    "cocitation_nodes": [
        {"id": "p2", "title": "Word alignment models", "year": 1993, "n_cited": None, "cluster": None},
        {"id": "p3", "title": "Phrase tables", "year": 1999, "n_cited": None, "cluster": None},
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
    with pytest.raises(QueryError):
        cypher.check_identifier("Paper) DETACH DELETE (n")
    with pytest.raises(QueryError, match="needs identifiers"):
        cypher.render(cypher.load("count_nodes"), {})
    with pytest.raises(QueryError, match="no Cypher statement"):
        cypher.load("drop_everything")
