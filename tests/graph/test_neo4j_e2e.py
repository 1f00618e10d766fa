"""The Neo4j backend against a real server: idempotent ingest, atomic batches, write-back, edge replacement.

Needs ``NEO4J_URI`` (and ``NEO4J_PASSWORD``, optionally ``NEO4J_USER`` / ``NEO4J_DATABASE``); run with
``pytest -m neo4j``. The database must start empty: these tests replace every CO_CITED edge and
delete every node of the data model's labels when they finish, and drop and re-create the vector
indexes ``paper_embedding_vector`` / ``sentence_embedding_vector``, so point them at a scratch database.

Besides the store's own behaviour (ingest, write-back, edge replacement, read-only refusals), they
copy the graph of tests/rich_graph.py embedded -> Neo4j -> embedded and compare every property, and
run every recipe of cypher/explore/ on both backends and compare the rows.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tiny_graph import tiny_batch

from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from graph.copy import CopySettings, copy_store
from graph.errors import QueryError, SchemaError, StoreError, ValidationError
from graph.neo4j import Neo4jStore

pytestmark = pytest.mark.neo4j

# Test-only cleanup, with the labels as a parameter: the store has no "delete everything" on purpose.
WIPE = "MATCH (n) WHERE any(label IN labels(n) WHERE label IN $labels) DETACH DELETE n"


def _config(**changes: object) -> StoreConfig:
    if not os.environ.get("NEO4J_URI"):
        pytest.skip("NEO4J_URI is not set; these tests need a scratch Neo4j database (see the module docstring)")
    return dataclasses.replace(StoreConfig.from_env(backend="neo4j"), **changes)  # type: ignore[arg-type]


@pytest.fixture
def neo4j_store() -> Iterator[Neo4jStore]:
    """An empty Neo4j store with small UNWIND batches (so every write spans several), wiped afterwards."""
    store = open_store(_config(batch_size=2))
    assert isinstance(store, Neo4jStore)
    stats = store.stats()
    if any(n for counts in stats.values() for n in counts.values()):
        store.close()
        pytest.skip(f"{store.describe()} is not empty ({stats}); point NEO4J_DATABASE at a scratch database")
    try:
        yield store
    finally:
        store.driver.execute_query(WIPE, {"labels": list(store.schema.nodes)}, database_=store.database)
        store.close()


def test_ingest_twice_gives_identical_stats(neo4j_store: Neo4jStore) -> None:
    report = ingest(neo4j_store, tiny_batch())
    assert report.tables["Paper"].created == 5 and report.tables["CITES"].created == 6
    first = neo4j_store.stats()
    assert (
        first["nodes"]["Paper"] == 5 and first["relationships"]["CITES"] == 6 and first["relationships"]["WROTE"] == 3
    )
    edges = neo4j_store.read_edges("CITES").sort_values(["source", "target"]).reset_index(drop=True)

    again = ingest(neo4j_store, tiny_batch())
    assert neo4j_store.stats() == first
    assert all(count.created == 0 and count.matched == count.records for count in again.tables.values())
    pd.testing.assert_frame_equal(
        edges, neo4j_store.read_edges("CITES").sort_values(["source", "target"]).reset_index(drop=True)
    )


def test_null_keeps_the_stored_value(neo4j_store: Neo4jStore) -> None:
    ingest(neo4j_store, tiny_batch())
    ingest(
        neo4j_store,
        GraphBatch("partial", nodes={"Paper": pd.DataFrame({"id": ["p1"], "title": [None], "venue": ["ACL"]})}),
    )
    row = neo4j_store.query("paper_by_ids", {"ids": ["p1"]})[0]
    assert row["title"] == "Statistical machine translation" and row["venue"] == "ACL" and row["year"] == 2001


def test_failing_batch_leaves_the_store_unchanged(neo4j_store: Neo4jStore) -> None:
    ingest(neo4j_store, tiny_batch())
    before = neo4j_store.stats()
    # Validation would reject a list with a null; apply() directly lets the server refuse it, in the
    # third UNWIND batch of Paper rows, after two batches and nothing else have already run.
    papers = pd.DataFrame(
        {"id": ["p6", "p7", "p8", "p9", "p10"], "cocite_probs": [[0.5], [0.25], [0.1], [0.2], [0.5, None]]}
    )
    cites = pd.DataFrame({"source": ["p6", "p7"], "target": ["p1", "p2"]})
    with pytest.raises(StoreError) as caught:
        neo4j_store.apply({"Paper": papers}, {"CITES": cites})
    assert "merge_nodes" in str(caught.value)
    assert neo4j_store.stats() == before
    assert neo4j_store.has_nodes("Paper", pd.Series(["p6", "p1"])).tolist() == [False, True]


def test_links_to_identity_keeps_one_edge_per_method(neo4j_store: Neo4jStore) -> None:
    sentences = pd.DataFrame({"id": ["c#1", "r#5"], "paper_id": ["c", "r"], "sid": [1, 5], "text": ["cites", "cited"]})
    links = pd.DataFrame(
        {
            "source": ["c#1"] * 3,
            "target": ["r#5"] * 3,
            "method": ["gold", "silver", "gold"],
            "annotator": ["A", None, "B"],
            "score": [1.0, 0.8, 1.0],
        }
    )
    for _ in range(2):
        ingest(neo4j_store, GraphBatch("links", nodes={"Sentence": sentences}, rels={"LINKS_TO": links}))
    assert neo4j_store.count_rels("LINKS_TO") == 3


def test_write_node_properties_and_replace_edges(neo4j_store: Neo4jStore) -> None:
    ingest(neo4j_store, tiny_batch())
    vectors = np.eye(5, neo4j_store.schema.sizes.embedding, dtype=np.float32)
    frame = pd.DataFrame({"id": ["p1", "p2", "p3", "p4", "p5"], "embedding": list(vectors), "cluster": [0, 1, 1, 0, 2]})
    assert neo4j_store.write_node_properties("Paper", "id", frame) == 5
    neo4j_store.write_node_properties("Paper", "id", pd.DataFrame({"id": ["p2"], "cluster": [None]}))  # nulls replace
    columns, rows = neo4j_store.read_only_query(
        "MATCH (p:Paper) RETURN p.id AS id, p.cluster AS cluster, p.embedding[1] AS e1 ORDER BY id"
    )
    assert columns == ["id", "cluster", "e1"]
    assert [r[1] for r in rows] == [0, None, 1, 0, 2] and rows[1][2] == pytest.approx(1.0)
    with pytest.raises(SchemaError, match="match no node"):
        neo4j_store.write_node_properties("Paper", "id", pd.DataFrame({"id": ["nope"], "cluster": [1]}))

    pairs = pd.DataFrame({"source": ["p2", "p1", "p1"], "target": ["p3", "p2", "p3"], "count": [2, 1, 1]})
    assert neo4j_store.replace_edges("CO_CITED", pairs) == 3
    assert neo4j_store.replace_edges("CO_CITED", pairs.head(1)) == 1  # replaces, never duplicates
    assert neo4j_store.count_rels("CO_CITED") == 1
    with pytest.raises(ValidationError):
        neo4j_store.replace_edges("CO_CITED", pd.DataFrame({"source": ["p2"], "target": ["ghost"]}))
    edges = neo4j_store.read_edges("CO_CITED")
    assert edges[["source", "target", "count"]].values.tolist() == [["p2", "p3", 2]]


def test_read_only_query_refuses_a_write_on_the_server(neo4j_store: Neo4jStore) -> None:
    ingest(neo4j_store, tiny_batch())
    columns, rows = neo4j_store.read_only_query(
        "MATCH (p:Paper) WHERE p.year > $y RETURN p.id AS id ORDER BY id", {"y": 2003}
    )
    assert columns == ["id"] and rows == [["p4"], ["p5"]]
    for text in ("CREATE (p:Paper {id: 'x'})", "MATCH (p:Paper) SET p.title = 'x' RETURN p.id"):
        with pytest.raises(QueryError, match="read-only"):
            neo4j_store.read_only_query(text)
    assert neo4j_store.count_nodes("Paper") == 5


def test_read_only_store_reads_and_refuses_writes(neo4j_store: Neo4jStore) -> None:
    ingest(neo4j_store, tiny_batch())
    with open_store(_config(read_only=True)) as reader:
        assert reader.stats() == neo4j_store.stats()
        with pytest.raises(QueryError, match="read-only"):
            ingest(reader, tiny_batch())


# Issue #10: schema objects, copy in both directions, and the cookbook on both backends ---------------
DROP_VECTOR_INDEXES = ["DROP INDEX paper_embedding_vector IF EXISTS", "DROP INDEX sentence_embedding_vector IF EXISTS"]
UNORDERED_UNION_RECIPES = {"citation_paths"}
# Every recipe of cypher/explore/ with parameters that find something in tests/rich_graph.py.
RECIPES: list[tuple[str, dict[str, object]]] = [
    ("ego_network", {"paper_id": "p4", "limit": 20}),
    ("citation_paths", {"from_id": "p5", "to_id": "p2", "limit": 5}),
    ("papers_citing_both", {"paper_a": "p2", "paper_b": "p3", "limit": 5}),
    ("top_cocited_pairs_in_years", {"year_min": 1990, "year_max": 2010, "min_count": 1, "limit": 10}),
    ("cocitation_cluster", {"paper_id": "p1", "limit": 10}),
    ("linked_sentences", {"sentence_id": "p1#1"}),
    ("taxonomy_neighbours", {"class_id": "1998:I.2", "limit": 10}),
    ("category_acm_neighbours", {"code": "cs.CL", "limit": 10}),
    ("most_cited_papers", {"year_min": 1990, "year_max": 2010, "limit": 5}),
    ("coauthors", {"author_id": "a1", "limit": 5}),
    ("papers_of_author", {"author_id": "a1", "limit": 5}),
    ("acm_subtree", {"class_id": "1998:I", "limit": 5}),
    ("arxiv_acm_mapping", {"code": "cs.CL"}),
    ("citation_neighbourhood", {"paper_id": "p1", "limit": 10}),
    ("top_cocited_pairs", {"min_count": 1, "limit": 5}),
    ("cocitation_neighbourhood", {"paper_id": "p2", "limit": 5}),
    ("cluster_bridges", {"cluster_a": 0, "cluster_b": 1, "limit": 5}),
    ("cocitation_over_time", {"paper_a": "p2", "paper_b": "p3"}),
]


def test_ensure_schema_is_idempotent_and_creates_vector_indexes(neo4j_store: Neo4jStore) -> None:
    neo4j_store.ensure_schema()  # a second time: IF NOT EXISTS everywhere
    names = [index.name for index in neo4j_store.vector_indexes()]
    rows = neo4j_store.query("show_indexes", {"names": names})
    assert sorted(row["name"] for row in rows) == sorted(names)
    for row in rows:
        assert row["type"] == "VECTOR" and row["properties"] == ["embedding"]
        config = row["options"]["indexConfig"]
        assert config["vector.dimensions"] == neo4j_store.schema.sizes.embedding
        assert config["vector.similarity_function"].lower() == "cosine"


@pytest.fixture
def rich_neo4j(neo4j_store: Neo4jStore) -> Iterator[Neo4jStore]:
    """The scratch database opened with tests/rich_graph.py's small vector sizes (its vector indexes rebuilt)."""
    from rich_graph import SIZES

    for text in DROP_VECTOR_INDEXES:
        neo4j_store.driver.execute_query(text, database_=neo4j_store.database)
    store = open_store(_config(batch_size=2, sizes=SIZES))
    assert isinstance(store, Neo4jStore)
    try:
        yield store
    finally:
        store.driver.execute_query(WIPE, {"labels": list(store.schema.nodes)}, database_=store.database)
        for text in DROP_VECTOR_INDEXES:  # the default sizes' indexes come back with the next store
            store.driver.execute_query(text, database_=store.database)
        store.close()


@pytest.fixture
def rich_embedded(tmp_path: Path) -> Iterator[GraphStore]:
    from rich_graph import SIZES, fill

    store = fill(open_store(StoreConfig(db_path=tmp_path / "rich.db", sizes=SIZES)))
    yield store
    store.close()


def test_copy_embedded_to_neo4j_and_back(rich_neo4j: Neo4jStore, rich_embedded: GraphStore, tmp_path: Path) -> None:
    from rich_graph import SIZES, snapshot

    there = copy_store(rich_embedded, rich_neo4j, CopySettings(batch_size=3, progress_path=tmp_path / "a.json"))
    assert rich_neo4j.stats() == rich_embedded.stats() and not there.skipped
    assert snapshot(rich_neo4j) == snapshot(rich_embedded)
    assert rich_neo4j.completeness() == rich_embedded.completeness()  # the count statements on both dialects
    with open_store(StoreConfig(db_path=tmp_path / "back.db", sizes=SIZES)) as back:
        copy_store(rich_neo4j, back, CopySettings(batch_size=3, progress_path=tmp_path / "b.json"))
        assert snapshot(back) == snapshot(rich_embedded)


def _comparable(value: object) -> object:
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, Decimal):
        return float(value)
    return value


@pytest.mark.parametrize(("name", "params"), RECIPES, ids=[name for name, _ in RECIPES])
def test_cookbook_gives_the_same_rows_on_both_backends(
    rich_neo4j: Neo4jStore, rich_embedded: GraphStore, tmp_path: Path, name: str, params: dict[str, object]
) -> None:
    from rich_graph import SIZES

    copy_store(rich_embedded, rich_neo4j, CopySettings(progress_path=tmp_path / "p.json"), progress=False)
    text = (Path(__file__).resolve().parents[2] / "cypher" / "explore" / f"{name}.cypher").read_text()
    rich_embedded.close()
    with open_store(StoreConfig(db_path=tmp_path / "rich.db", sizes=SIZES, read_only=True)) as reader:
        columns, rows = reader.read_only_query(text, params)
    neo_columns, neo_rows = rich_neo4j.read_only_query(text, params)
    assert neo_columns == columns
    if name in UNORDERED_UNION_RECIPES:  # each part of the UNION ALL is ordered, the parts come in any order
        hops = columns.index("hops")
        rows, neo_rows = sorted(rows, key=lambda r: r[hops]), sorted(neo_rows, key=lambda r: r[hops])
    assert [_comparable(r) for r in neo_rows] == [_comparable(r) for r in rows]
    assert rows or name == "cluster_bridges", f"{name} found nothing: the comparison compared nothing"
