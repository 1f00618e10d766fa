"""Unit tests of the Neo4j backend against a mocked driver: batching, rows, refusals, error translation.

Mocks stand in for the server only here, where the behaviour under test is what the store sends
and how it reacts to driver errors; the real round trip is in test_neo4j_e2e.py (needs NEO4J_URI).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from unittest.mock import MagicMock, patch

import neo4j
import numpy as np
import pandas as pd
import pytest
from neo4j.exceptions import AuthError, ClientError, CypherSyntaxError, ServiceUnavailable, TransientError
from neo4j.graph import Graph, Path

import cypher
from graph import StoreConfig
from graph.errors import (
    ConfigError,
    QueryError,
    SchemaError,
    StoreError,
    StoreUnavailableError,
    TransientStoreError,
)
from graph.neo4j import Neo4jStore, constraint_name, readable_graph_value, vector_index_name
from graph.schema import ABSTRACT_SECTION, VectorSizes, build_schema

URI = "neo4j://graph.example:7687"
PASSWORD = "s3cret-pw"
SCHEMA = build_schema(VectorSizes(embedding=4, taxonomy=4, poincare=2))


@dataclass
class FakeServer:
    """What the mocked driver saw, and the keys it pretends to hold."""

    existing: set[str] = field(default_factory=set)  # node keys / edge sources already stored
    runs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # tx.run calls
    results: list[MagicMock] = field(default_factory=list)  # what each tx.run returned
    query_type: str = "r"  # summary.query_type of an EXPLAIN
    deletes_left: list[int] = field(default_factory=lambda: [2, 1, 0])  # delete_rels_batch answers
    indexes: dict[str, dict[str, Any]] = field(default_factory=dict)  # SHOW INDEXES rows by name

    def run(self, text: str, params: dict[str, Any]) -> MagicMock:
        self.runs.append((text, params))
        result = MagicMock(spec=neo4j.Result)
        rows = params.get("rows", [])
        fresh = sum(1 for row in rows if row.get("key", row.get("source")) not in self.existing)
        result.consume.return_value.counters = neo4j.SummaryCounters(
            {"nodes-created": fresh, "relationships-created": fresh}
        )
        if "DELETE" in text:
            result.single.return_value = neo4j.Record({"deleted": self.deletes_left.pop(0)})
        self.results.append(result)
        return result

    def execute_query(self, text: str, params: dict[str, Any] | None = None, **_: Any) -> neo4j.EagerResult:
        params = params or {}
        summary = MagicMock(spec=neo4j.ResultSummary)
        summary.query_type = self.query_type
        if text.startswith("CREATE VECTOR INDEX"):  # IF NOT EXISTS: an existing index stays as it is
            name, label, prop = re.findall(r"INDEX (\w+) IF NOT EXISTS\nFOR \(n:(\w+)\) ON \(n\.(\w+)\)", text)[0]
            config = {"vector.dimensions": params["dimensions"], "vector.similarity_function": params["similarity"]}
            row = {"name": name, "type": "VECTOR", "labels": [label], "properties": [prop]}
            self.indexes.setdefault(name, {**row, "options": {"indexConfig": config}})
            return neo4j.EagerResult([], summary, [])
        if text.startswith("SHOW INDEXES"):
            records = [neo4j.Record(self.indexes[n]) for n in params["names"] if n in self.indexes]
            return neo4j.EagerResult(records, summary, ["name", "type", "labels", "properties", "options"])
        if "keys" in params:
            records = [neo4j.Record({"key": k}) for k in params["keys"] if k in self.existing]
            return neo4j.EagerResult(records, summary, ["key"])
        return neo4j.EagerResult([neo4j.Record({"n": 3})], summary, ["n"])


def make_store(
    batch_size: int = 2, read_only: bool = False, existing: Iterable[str] = ()
) -> tuple[Neo4jStore, MagicMock, FakeServer]:
    server = FakeServer(existing=set(existing))
    driver = MagicMock(spec=neo4j.Driver)
    driver.execute_query.side_effect = server.execute_query
    tx = MagicMock(spec=neo4j.ManagedTransaction)
    tx.run.side_effect = server.run
    session = driver.session.return_value.__enter__.return_value
    session.execute_write.side_effect = lambda work, *args, **kwargs: work(tx, *args, **kwargs)
    session.execute_read.side_effect = lambda work, *args, **kwargs: work(tx, *args, **kwargs)
    store = Neo4jStore(driver, SCHEMA, uri=URI, database="citations", batch_size=batch_size, read_only=read_only)
    return store, driver, server


def papers(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(n)],
            "title": [f"Paper {i}" if i % 2 else None for i in range(n)],
            "year": [2000 + i for i in range(n)],
            "_origin": [f"papers.jsonl:{i}" for i in range(n)],
        }
    )


# writes ------------------------------------------------------------------------------------------
def test_apply_runs_unwind_batches_in_one_write_transaction() -> None:
    store, driver, server = make_store(batch_size=2, existing={"p0", "p3"})
    results = store.apply({"Paper": papers(5)}, {})
    session = driver.session.return_value.__enter__.return_value
    assert session.execute_write.call_count == 1
    assert [len(params["rows"]) for _, params in server.runs] == [2, 2, 1]
    assert all(text.startswith("UNWIND $rows AS row\nMERGE (n:Paper {id: row.key})") for text, _ in server.runs)
    assert (results["Paper"].created, results["Paper"].matched) == (3, 2)
    driver.session.assert_called_with(database="citations")


def test_apply_writes_nodes_before_edges_and_consumes_every_result() -> None:
    store, driver, server = make_store(batch_size=2)
    cites = pd.DataFrame({"source": ["p0", "p1", "p2"], "target": ["p1", "p2", "p0"], "n_contexts": [1, None, 3]})
    results = store.apply({"Paper": papers(3)}, {"CITES": cites})
    assert [("MERGE (n:Paper" in text, "MERGE (a)-[r:CITES]->(b)" in text) for text, _ in server.runs] == [
        (True, False),
        (True, False),
        (False, True),
        (False, True),
    ]
    assert all(result.consume.call_count == 1 for result in server.results)
    assert results["CITES"].created == 3
    assert driver.session.return_value.__enter__.return_value.execute_write.call_count == 1


def test_node_rows_carry_only_known_properties_as_plain_values() -> None:
    store, _, server = make_store(batch_size=10)
    frame = papers(2).assign(embedding=[np.arange(4, dtype=np.float32), None], cluster=[np.int64(7), None])
    store.apply({"Paper": frame}, {})
    rows = server.runs[0][1]["rows"]
    assert rows[0] == {"key": "p0", "props": {"year": 2000, "embedding": [0.0, 1.0, 2.0, 3.0], "cluster": 7}}
    assert rows[1] == {"key": "p1", "props": {"title": "Paper 1", "year": 2001}}  # nulls left out: stored values stay
    assert type(rows[0]["props"]["year"]) is int and type(rows[0]["props"]["embedding"][1]) is float


def test_links_to_merges_on_its_identity_properties() -> None:
    store, _, server = make_store()
    links = pd.DataFrame(
        {
            "source": ["c#1", "c#1"],
            "target": ["r#5", "r#5"],
            "method": ["gold", "silver"],
            "annotator": ["A", None],
            "score": [1.0, None],
            "_origin": ["links.tsv:1", "links.tsv:2"],
        }
    )
    store.apply({}, {"LINKS_TO": links})
    text, params = server.runs[0]
    assert "MERGE (a)-[r:LINKS_TO {method: row.identity.method, annotator: row.identity.annotator}]->(b)" in text
    assert "MATCH (a:Sentence {id: row.source})" in text and "MATCH (b:Sentence {id: row.target})" in text
    assert params["rows"] == [
        {"source": "c#1", "target": "r#5", "identity": {"method": "gold", "annotator": "A"}, "props": {"score": 1.0}},
        {"source": "c#1", "target": "r#5", "identity": {"method": "silver", "annotator": ""}, "props": {}},
    ]


def test_types_without_identity_merge_one_edge_per_pair() -> None:
    store, _, server = make_store()
    store.apply({}, {"CITES": pd.DataFrame({"source": ["p1"], "target": ["p2"]})})
    text, params = server.runs[0]
    assert "MERGE (a)-[r:CITES]->(b)" in text
    assert params["rows"] == [{"source": "p1", "target": "p2", "identity": {}, "props": {}}]


def test_failure_inside_the_transaction_names_the_statement() -> None:
    store, _, server = make_store()
    original = server.run

    def run(text: str, params: dict[str, Any]) -> MagicMock:
        if "MERGE (a)" in text:
            raise ClientError("Collections containing null values can not be stored in properties.")
        return original(text, params)

    server_tx = store.driver.session.return_value.__enter__.return_value  # type: ignore[attr-defined]
    tx = MagicMock(spec=neo4j.ManagedTransaction)
    tx.run.side_effect = run
    server_tx.execute_write.side_effect = lambda work, *args: work(tx, *args)
    with pytest.raises(StoreError, match="`merge_rels` was refused: Collections containing null") as caught:
        store.apply({"Paper": papers(2)}, {"CITES": pd.DataFrame({"source": ["p0"], "target": ["p1"]})})
    assert isinstance(caught.value.__cause__, ClientError)


def test_write_node_properties_writes_nulls_in_one_transaction_per_batch() -> None:
    store, driver, server = make_store(batch_size=2, existing={"p0", "p1", "p2"})
    frame = pd.DataFrame({"id": ["p0", "p1", "p2"], "cluster": [1, None, 2]})
    assert store.write_node_properties("Paper", "id", frame) == 3
    session = driver.session.return_value.__enter__.return_value
    assert session.execute_write.call_count == 2
    rows = [row for _, params in server.runs for row in params["rows"]]
    assert rows == [
        {"key": "p0", "props": {"cluster": 1}},
        {"key": "p1", "props": {"cluster": None}},  # a recomputation removes the old value
        {"key": "p2", "props": {"cluster": 2}},
    ]
    assert all("SET n += row.props" in text and "MATCH (n:Paper {id: row.key})" in text for text, _ in server.runs)


def test_replace_edges_deletes_until_none_left_then_merges_in_one_transaction() -> None:
    store, driver, server = make_store(batch_size=2, existing={"p0", "p1", "p2"})
    pairs = pd.DataFrame({"source": ["p0", "p1", "p0"], "target": ["p1", "p2", "p2"], "count": [2, 1, 1]})
    assert store.replace_edges("CO_CITED", pairs) == 3
    assert driver.session.return_value.__enter__.return_value.execute_write.call_count == 1
    kinds = ["delete" if "DELETE" in text else "merge" for text, _ in server.runs]
    assert kinds == ["delete", "delete", "delete", "merge", "merge"]
    assert server.runs[0][1] == {"batch": 2}
    assert server.runs[3][1]["rows"][0] == {"source": "p0", "target": "p1", "identity": {}, "props": {"count": 2}}


def test_read_only_store_refuses_writes_before_reaching_the_driver() -> None:
    store, driver, _ = make_store(read_only=True)
    with pytest.raises(QueryError, match="read-only"):
        store.apply({"Paper": papers(1)}, {})
    driver.session.assert_not_called()


# schema ------------------------------------------------------------------------------------------
def test_ensure_schema_creates_one_key_constraint_per_label() -> None:
    store, driver, _ = make_store()
    store.ensure_schema()
    driver.verify_connectivity.assert_called_once()
    texts = [call.args[0] for call in driver.execute_query.call_args_list if "CONSTRAINT" in call.args[0]]
    assert len(texts) == len(SCHEMA.nodes)
    assert "CREATE CONSTRAINT paper_id_unique IF NOT EXISTS FOR (n:Paper) REQUIRE n.id IS UNIQUE" in texts
    assert any("arxiv_category_code_unique" in text and "n.code IS UNIQUE" in text for text in texts)
    assert all(call.kwargs["database_"] == "citations" for call in driver.execute_query.call_args_list)


def test_ensure_schema_creates_cosine_vector_indexes_sized_by_the_schema() -> None:
    store, driver, server = make_store()
    store.ensure_schema()
    calls = [call for call in driver.execute_query.call_args_list if "VECTOR INDEX" in call.args[0]]
    assert [call.args[0].splitlines()[0] for call in calls] == [
        "CREATE VECTOR INDEX paper_embedding_vector IF NOT EXISTS",
        "CREATE VECTOR INDEX sentence_embedding_vector IF NOT EXISTS",
    ]
    assert (
        "FOR (n:Paper) ON (n.embedding)" in calls[0].args[0] and "FOR (n:Sentence) ON (n.embedding)" in calls[1].args[0]
    )
    assert all(call.args[1] == {"dimensions": 4, "similarity": "cosine"} for call in calls)  # SCHEMA: embedding=4
    assert all(call.kwargs["routing_"] == neo4j.RoutingControl.WRITE for call in calls)
    assert all(call.kwargs["database_"] == "citations" for call in calls)
    assert "`vector.dimensions`: toInteger($dimensions)" in calls[0].args[0]
    shown = [call for call in driver.execute_query.call_args_list if call.args[0].startswith("SHOW INDEXES")]
    assert len(shown) == 1 and shown[0].kwargs["routing_"] == neo4j.RoutingControl.READ
    store.ensure_schema()  # idempotent: the same statements again, nothing refused
    assert sorted(server.indexes) == ["paper_embedding_vector", "sentence_embedding_vector"]


def test_ensure_schema_refuses_a_vector_index_of_other_dimensions() -> None:
    store, _, server = make_store()
    server.indexes["paper_embedding_vector"] = {
        "name": "paper_embedding_vector",
        "type": "VECTOR",
        "labels": ["Paper"],
        "properties": ["embedding"],
        "options": {"indexConfig": {"vector.dimensions": 384, "vector.similarity_function": "cosine"}},
    }
    with pytest.raises(SchemaError, match="has 384 dimensions but the settings say 4; set CITEGRAPH_EMBEDDING_DIM"):
        store.ensure_schema()


def test_ensure_schema_refuses_a_non_vector_index_of_the_same_name() -> None:
    store, _, server = make_store()
    server.indexes["sentence_embedding_vector"] = {
        "name": "sentence_embedding_vector",
        "type": "RANGE",
        "labels": ["Sentence"],
        "properties": ["embedding"],
        "options": {"indexConfig": {}},
    }
    with pytest.raises(SchemaError, match="not a vector index on :Sentence\\(embedding\\); drop it"):
        store.ensure_schema()


def test_server_without_vector_indexes_is_told_to_upgrade() -> None:
    store, driver, server = make_store()
    original = server.execute_query

    def execute_query(text: str, params: dict[str, Any] | None = None, **kwargs: Any) -> neo4j.EagerResult:
        if text.startswith("CREATE VECTOR INDEX"):
            raise CypherSyntaxError("Invalid input 'VECTOR'")
        return original(text, params, **kwargs)

    driver.execute_query.side_effect = execute_query
    with pytest.raises(StoreError, match=r"vector indexes need Neo4j 5\.13 or later") as caught:
        store.ensure_schema()
    assert isinstance(caught.value.__cause__.__cause__, CypherSyntaxError)  # type: ignore[union-attr]


def test_vector_index_names() -> None:
    assert vector_index_name("Paper", "embedding") == "paper_embedding_vector"
    assert [(i.label, i.property, i.dimensions) for i in make_store()[0].vector_indexes()] == [
        ("Paper", "embedding", 4),
        ("Sentence", "embedding", 4),
    ]


def test_transient_failure_after_driver_retries_is_a_transient_store_error() -> None:
    store, driver, _ = make_store()
    session = driver.session.return_value.__enter__.return_value
    session.execute_write.side_effect = TransientError("Deadlock detected while trying to acquire locks")
    with pytest.raises(
        TransientStoreError,
        match="`apply` failed after retries: Deadlock detected while trying to acquire locks; try again",
    ):
        store.apply({"Paper": papers(1)}, {})


def test_ensure_schema_read_only_only_checks_the_connection() -> None:
    store, driver, _ = make_store(read_only=True)
    store.ensure_schema()
    driver.execute_query.assert_not_called()
    driver.verify_connectivity.assert_called_once()


def test_constraint_names_are_snake_case() -> None:
    assert constraint_name("Paper", "id") == "paper_id_unique"
    assert constraint_name("AcmClass", "id") == "acm_class_id_unique"


# reads -------------------------------------------------------------------------------------------
def test_has_nodes_batches_unique_keys_and_returns_a_mask() -> None:
    store, driver, _ = make_store(batch_size=2, existing={"p1", "p4"})
    keys = pd.Series(["p1", "p2", "p1", "p3", "p4", None], index=[10, 11, 12, 13, 14, 15])
    mask = store.has_nodes("Paper", keys)
    assert mask.dtype == bool and mask.tolist() == [True, False, True, False, True, False]
    sent = [call.args[1]["keys"] for call in driver.execute_query.call_args_list]
    assert sent == [["p1", "p2"], ["p3", "p4"]]
    for call in driver.execute_query.call_args_list:
        assert call.kwargs["routing_"] == neo4j.RoutingControl.READ and call.kwargs["database_"] == "citations"
        assert "UNWIND $keys AS k\nMATCH (n:Paper {id: k})" in call.args[0]


def test_counts_are_read_queries() -> None:
    store, driver, _ = make_store()
    assert store.count_nodes("Paper") == 3
    call = driver.execute_query.call_args
    assert (
        call.args[0] == "MATCH (n:Paper) RETURN count(n) AS n" and call.kwargs["routing_"] == neo4j.RoutingControl.READ
    )


def test_completeness_sums_the_paper_parts_from_read_queries() -> None:
    """The shared statements go out as they are, with the abstract section as a parameter; the two rows
    of ``paper_completeness`` (text of their own, abstract rebuilt from sentences) are summed."""
    store, driver, _ = make_store()
    summary = MagicMock(spec=neo4j.ResultSummary)
    paper_columns = ["with_text", "embedding", "taxonomy", "poincare"]
    answers = {
        cypher.load("paper_completeness", "neo4j").text: neo4j.EagerResult(
            [neo4j.Record(dict(zip(paper_columns, row))) for row in ([100, 40, 30, 20], [5, 1, 0, 0])],
            summary,
            paper_columns,
        ),
        cypher.load("sentence_completeness", "neo4j").text: neo4j.EagerResult(
            [neo4j.Record({"with_text": 900, "embedding": 90})], summary, ["with_text", "embedding"]
        ),
    }
    driver.execute_query.side_effect = lambda text, params, **_: answers[text]
    rows = store.completeness()
    assert [(c.property, c.have, c.of) for c in rows] == [
        ("Paper.embedding", 41, 105),
        ("Paper.taxonomy", 30, 105),
        ("Paper.poincare", 20, 105),
        ("Sentence.embedding", 90, 900),
    ]
    calls = driver.execute_query.call_args_list
    assert [call.args[1] for call in calls] == [{"section": ABSTRACT_SECTION}, {}]
    assert all(call.kwargs["routing_"] == neo4j.RoutingControl.READ for call in calls)


@pytest.mark.parametrize("query_type", ["w", "rw", "s"])
def test_read_only_query_refuses_anything_but_a_read(query_type: str) -> None:
    store, driver, server = make_store()
    server.query_type = query_type
    with pytest.raises(QueryError, match="`citegraph cypher` runs read-only queries"):
        store.read_only_query("MATCH (p:Paper) SET p.title = $t", {"t": "x"})
    assert driver.execute_query.call_args.args[0] == "EXPLAIN MATCH (p:Paper) SET p.title = $t"
    driver.session.assert_not_called()  # the query itself never ran


def test_read_only_query_runs_a_read_in_a_read_access_session() -> None:
    store, driver, _ = make_store()
    result = MagicMock(spec=neo4j.Result)
    result.__iter__.return_value = iter(
        [neo4j.Record({"id": "p1", "year": 2001}), neo4j.Record({"id": "p2", "year": None})]
    )
    result.keys.return_value = ("id", "year")
    tx = MagicMock(spec=neo4j.ManagedTransaction)
    tx.run.return_value = result
    session = driver.session.return_value.__enter__.return_value
    session.execute_read.side_effect = lambda work: work(tx)
    columns, rows = store.read_only_query("MATCH (p:Paper) RETURN p.id AS id, p.year AS year", {"limit": 2})
    assert columns == ["id", "year"] and rows == [["p1", 2001], ["p2", None]]
    assert driver.execute_query.call_args.kwargs["routing_"] == neo4j.RoutingControl.READ
    driver.session.assert_called_once_with(database="citations", default_access_mode=neo4j.READ_ACCESS)
    tx.run.assert_called_once_with("MATCH (p:Paper) RETURN p.id AS id, p.year AS year", {"limit": 2})
    session.execute_write.assert_not_called()


def test_query_arrow_converts_records_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """query_arrow streams records into Arrow batches; a batch of nulls takes the other batches' type."""
    import graph.neo4j as module

    monkeypatch.setattr(module, "ARROW_BATCH_ROWS", 2)
    store, driver, _ = make_store()
    records = [
        neo4j.Record({"citing": "p1", "cited": None}),
        neo4j.Record({"citing": "p2", "cited": None}),
        neo4j.Record({"citing": "p3", "cited": "p1"}),
    ]
    result = MagicMock(spec=neo4j.Result)
    result.__iter__.return_value = iter(records)
    result.keys.return_value = ("citing", "cited")
    tx = MagicMock(spec=neo4j.ManagedTransaction)
    tx.run.return_value = result
    session = driver.session.return_value.__enter__.return_value
    session.execute_read.side_effect = lambda work: work(tx)
    table = store.query_arrow("citation_codes")
    assert table.column_names == ["citing", "cited"]
    assert table.to_pylist() == [r.data() for r in records]
    assert str(table.schema.field("cited").type) == "string"  # not null: the second batch decided
    assert "RETURN a.id AS citing, b.id AS cited" in tx.run.call_args.args[0]
    driver.session.assert_called_once_with(database="citations", default_access_mode=neo4j.READ_ACCESS)


def test_query_arrow_of_an_empty_result_keeps_the_columns() -> None:
    store, driver, _ = make_store()
    result = MagicMock(spec=neo4j.Result)
    result.__iter__.return_value = iter([])
    result.keys.return_value = ("citing", "cited")
    tx = MagicMock(spec=neo4j.ManagedTransaction)
    tx.run.return_value = result
    driver.session.return_value.__enter__.return_value.execute_read.side_effect = lambda work: work(tx)
    table = store.query_arrow("citation_codes")
    assert table.column_names == ["citing", "cited"] and table.num_rows == 0


# errors ------------------------------------------------------------------------------------------
def test_unreachable_server_says_what_to_check() -> None:
    store, driver, _ = make_store()
    original = ServiceUnavailable("Couldn't connect to graph.example:7687")
    driver.execute_query.side_effect = original
    with pytest.raises(StoreUnavailableError) as caught:
        store.count_nodes("Paper")
    message = str(caught.value)
    assert f"cannot reach Neo4j at {URI}" in message and "check NEO4J_URI and that the server is running" in message
    assert caught.value.__cause__ is original


def test_refused_credentials_say_what_to_check_and_hide_the_password() -> None:
    driver = MagicMock(spec=neo4j.Driver)
    original = AuthError("The client is unauthorized due to authentication failure.")
    driver.verify_connectivity.side_effect = original
    config = StoreConfig(backend="neo4j", neo4j_uri=URI, neo4j_password=PASSWORD)
    with patch("graph.neo4j.GraphDatabase.driver", return_value=driver) as connect:
        store = Neo4jStore.from_config(config, SCHEMA)
    connect.assert_called_once_with(URI, auth=("neo4j", PASSWORD))
    with pytest.raises(StoreUnavailableError) as caught:
        store.ensure_schema()
    message = str(caught.value)
    assert "check NEO4J_USER / NEO4J_PASSWORD" in message and PASSWORD not in message
    assert caught.value.__cause__ is original
    driver.execute_query.assert_not_called()  # no constraint attempted without a connection


def test_syntax_error_in_a_statement_names_it() -> None:
    store, driver, _ = make_store()
    original = CypherSyntaxError("Invalid input 'RETURN'")
    driver.execute_query.side_effect = original
    with pytest.raises(QueryError, match="statement `count_nodes` is not valid Neo4j Cypher: Invalid input") as caught:
        store.count_nodes("Paper")
    assert caught.value.__cause__ is original


def test_syntax_error_in_a_user_query_is_a_query_error() -> None:
    store, driver, _ = make_store()
    driver.execute_query.side_effect = CypherSyntaxError("Invalid input 'RETRUN'")
    with pytest.raises(QueryError, match="the query is not valid Cypher: Invalid input 'RETRUN'"):
        store.read_only_query("MATCH (n) RETRUN n")


def test_describe_names_uri_and_database_never_the_password() -> None:
    config = StoreConfig(backend="neo4j", neo4j_uri=URI, neo4j_password=PASSWORD, neo4j_database="citations")
    with patch("graph.neo4j.GraphDatabase.driver", return_value=MagicMock(spec=neo4j.Driver)):
        store = Neo4jStore.from_config(config, SCHEMA)
    assert store.describe() == f"Neo4j {URI} (database citations)"
    assert (store.backend, store.dialect, store.batch_size) == ("neo4j", "neo4j", config.batch_size)
    assert PASSWORD not in repr(vars(store))


def test_uri_with_credentials_is_refused() -> None:
    config = StoreConfig(backend="neo4j", neo4j_uri=f"bolt://neo4j:{PASSWORD}@graph.example:7687")
    with pytest.raises(ConfigError, match="NEO4J_URI must not carry credentials") as caught:
        Neo4jStore.from_config(config, SCHEMA)
    assert PASSWORD not in str(caught.value)


def test_close_closes_the_driver_once() -> None:
    store, driver, _ = make_store()
    with store:
        pass
    store.close()
    driver.close.assert_called_once()
    with pytest.raises(StoreError, match="closed"):
        store.count_nodes("Paper")


def test_a_users_query_gets_nodes_relationships_and_paths_as_the_embedded_store_gives_them() -> None:
    """`citegraph cypher "... RETURN p"` prints a node as a map with its label on both backends."""
    graph = Graph()
    a = graph.relationship_type("CITES")
    p1 = neo4j.graph.Node(graph, "n1", 1, ["Paper"], {"id": "p1", "year": 2020})
    p2 = neo4j.graph.Node(graph, "n2", 2, ["Paper"], {"id": "p2"})
    cites = a(graph, "r1", 3, {"dataset": "jsonl"})
    cites._start_node, cites._end_node = p1, p2
    assert readable_graph_value(p1) == {"_label": "Paper", "id": "p1", "year": 2020}
    assert readable_graph_value([cites]) == [{"_type": "CITES", "dataset": "jsonl"}]
    path = readable_graph_value({"path": Path(p1, cites)})["path"]
    assert [n["id"] for n in path["nodes"]] == ["p1", "p2"] and path["relationships"][0]["_type"] == "CITES"
