"""`citegraph copy`: embedded -> embedded for real (two store files), and the Neo4j side against a mocked driver.

The mocked driver (:class:`FakeNeo4j`) keeps what the store's statements MERGE in plain dicts and
answers the statements the store reads with (counts, keys, pages of nodes and edges), so a copy
into it and back out again can be compared with the original graph. Everything else about Neo4j
(batching inside a transaction, retries, error translation) is what the tests look at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import neo4j
import pytest
from neo4j.exceptions import ClientError, ServiceUnavailable, TransientError
from rich_graph import SIZES, fill, snapshot

import graph.copy
from api.cli.main import main
from graph import GraphStore, StoreConfig, open_store
from graph.copy import CopySettings, copy_store
from graph.errors import ConfigError, DataError, StoreError
from graph.neo4j import Neo4jStore
from graph.schema import build_schema

Row = dict[str, Any]


class FakeNeo4j:
    """A stand-in for the server behind a ``MagicMock(spec=neo4j.Driver)``: it runs the store's own statements."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[Any, Row]] = {}  # label -> key -> properties
        self.rels: dict[str, dict[tuple[Any, ...], Row]] = {}  # type -> (source, target, *identity) -> properties
        self.transactions = 0  # execute_write calls that ran their work
        self.unwinds: list[int] = []  # rows per UNWIND statement run in a write transaction
        self.failures: list[BaseException | None] = []  # raised by the next execute_write calls, in order
        self.driver = MagicMock(spec=neo4j.Driver)
        self.driver.execute_query.side_effect = self.execute_query
        tx = MagicMock(spec=neo4j.ManagedTransaction)
        tx.run.side_effect = self.run
        session = self.driver.session.return_value.__enter__.return_value
        session.execute_write.side_effect = lambda work, *args: self.execute_write(work, tx, *args)

    def store(self, batch_size: int = 2) -> Neo4jStore:
        return Neo4jStore(self.driver, build_schema(SIZES), uri="neo4j://fake:7687", batch_size=batch_size)

    def execute_write(self, work: Any, tx: Any, *args: Any) -> Any:
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            raise failure
        self.transactions += 1
        return work(tx, *args)

    # writes ----------------------------------------------------------------------------------
    def run(self, text: str, params: dict[str, Any]) -> MagicMock:
        rows = params.get("rows", [])
        self.unwinds.append(len(rows))
        created = 0
        if node := re.search(r"MERGE \(n:(\w+) \{\w+: row\.key\}\)", text):
            table = self.nodes.setdefault(node.group(1), {})
            for row in rows:
                created += row["key"] not in table
                table.setdefault(row["key"], {}).update(row["props"])
        elif rel := re.search(r"MERGE \(a\)-\[r:(\w+)", text):
            edges = self.rels.setdefault(rel.group(1), {})
            for row in rows:
                identity = (row["source"], row["target"], *sorted(row["identity"].items()))
                created += identity not in edges
                edges.setdefault(identity, dict(row["identity"])).update(row["props"])
        else:
            raise AssertionError(f"unexpected write: {text}")
        result = MagicMock(spec=neo4j.Result)
        result.consume.return_value.counters = neo4j.SummaryCounters(
            {"nodes-created": created, "relationships-created": created}
        )
        return result

    # reads and schema ------------------------------------------------------------------------
    def execute_query(self, text: str, params: dict[str, Any] | None = None, **_: Any) -> neo4j.EagerResult:
        params = params or {}
        records = [neo4j.Record(row) for row in self.answer(text, params)]
        return neo4j.EagerResult(
            records, MagicMock(spec=neo4j.ResultSummary), list(records[0].keys()) if records else []
        )

    def answer(self, text: str, params: dict[str, Any]) -> list[Row]:
        if text.startswith(("CREATE CONSTRAINT", "CREATE VECTOR INDEX")):
            return []
        if text.startswith("SHOW INDEXES"):
            config = {"vector.dimensions": SIZES.embedding}
            return [
                {"name": n, "type": "VECTOR", "labels": [n.split("_")[0].title()], "options": {"indexConfig": config}}
                for n in params["names"]
            ]
        if m := re.fullmatch(r"MATCH \(n:(\w+)\) RETURN count\(n\) AS n", text):
            return [{"n": len(self.nodes.get(m.group(1), {}))}]
        if m := re.fullmatch(r"MATCH \(\)-\[r:(\w+)\]->\(\) RETURN count\(r\) AS n", text):
            return [{"n": len(self.rels.get(m.group(1), {}))}]
        if m := re.fullmatch(r"MATCH \(n:(\w+)\) RETURN n\.\w+ AS key", text):  # every_key
            return [{"key": key} for key in self.nodes.get(m.group(1), {})]
        if m := re.match(r"UNWIND \$keys AS k\nMATCH \(n:(\w+) \{\w+: k\}\)\nRETURN n\.\w+ AS key(.*)", text, re.S):
            names = re.findall(r", n\.(\w+) AS \w+", m.group(2))  # node_keys (no columns) or nodes_by_keys
            table = self.nodes.get(m.group(1), {})
            return [{"key": k, **{n: table[k].get(n) for n in names}} for k in params["keys"] if k in table]
        if m := re.match(r"UNWIND \$keys AS k\nMATCH \(a:\w+ \{\w+: k\}\)-\[r:(\w+)\]->\(b:\w+\)\n(.*)", text, re.S):
            names = re.findall(r", r\.(\w+) AS \w+", m.group(2))
            wanted = set(params["keys"])
            edges = self.rels.get(m.group(1), {})
            return [
                {"source": key[0], "target": key[1], **{n: props.get(n) for n in names}}
                for key, props in edges.items()
                if key[0] in wanted
            ]
        raise AssertionError(f"unexpected read: {text}")


@pytest.fixture
def source(tmp_path: Path) -> Iterator[GraphStore]:
    store = fill(open_store(StoreConfig(db_path=tmp_path / "source.db", sizes=SIZES)))
    yield store
    store.close()


def open_target(path: Path) -> GraphStore:
    return open_store(StoreConfig(db_path=path, sizes=SIZES))


def settings(tmp_path: Path, **changes: Any) -> CopySettings:
    return CopySettings(**{"batch_size": 2, "progress_path": tmp_path / "copy.progress.json", **changes})


# embedded -> embedded ----------------------------------------------------------------------------
def test_copy_between_two_embedded_stores_keeps_every_property(source: GraphStore, tmp_path: Path) -> None:
    with open_target(tmp_path / "target.db") as target:
        report = copy_store(source, target, settings(tmp_path), progress=False)
        assert target.stats() == source.stats()
        assert snapshot(target) == snapshot(source)
    assert report.copied["Paper"] == 5 and report.copied["LINKS_TO"] == 3 and not report.skipped
    done = json.loads((tmp_path / "copy.progress.json").read_text())["done"]
    assert done == [*source.schema.nodes, *source.schema.rels]


def test_a_finished_copy_skips_everything_and_restart_copies_again(source: GraphStore, tmp_path: Path) -> None:
    with open_target(tmp_path / "target.db") as target:
        copy_store(source, target, settings(tmp_path), progress=False)
        again = copy_store(source, target, settings(tmp_path), progress=False)
        assert again.copied == {} and again.skipped == [*source.schema.nodes, *source.schema.rels]
        restarted = copy_store(source, target, settings(tmp_path, restart=True), progress=False)
        assert restarted.copied["CITES"] == 6 and not restarted.skipped
        assert target.stats() == source.stats()  # merged again, not duplicated


def test_an_interrupted_copy_resumes_from_the_unfinished_type(
    source: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_ingest = graph.copy.ingest
    calls: list[str] = []

    def failing_ingest(store: GraphStore, batch: Any, **kwargs: Any) -> Any:
        calls.append(batch.source)
        if batch.source == "copy:CITES" and calls.count("copy:CITES") == 2:  # CITES: the second frame fails
            raise StoreError("disk full")
        return real_ingest(store, batch, **kwargs)

    monkeypatch.setattr(graph.copy, "ingest", failing_ingest)
    with open_target(tmp_path / "target.db") as target:
        with pytest.raises(StoreError, match="disk full"):
            copy_store(source, target, settings(tmp_path), progress=False)
        done = json.loads((tmp_path / "copy.progress.json").read_text())["done"]
        assert done == [*source.schema.nodes, "WROTE", "HAS_SENTENCE"]
        assert target.count_rels("CITES") == 2  # the first frame was written

        monkeypatch.setattr(graph.copy, "ingest", real_ingest)
        resumed = copy_store(source, target, settings(tmp_path), progress=False)
        assert resumed.skipped == done and resumed.copied["CITES"] == 6
        assert snapshot(target) == snapshot(source)


def test_a_progress_file_of_another_copy_is_refused(source: GraphStore, tmp_path: Path) -> None:
    (tmp_path / "copy.progress.json").write_text(
        json.dumps({"version": 1, "source": "embedded store elsewhere.db", "target": "x", "done": ["Paper"]})
    )
    with open_target(tmp_path / "target.db") as target, pytest.raises(DataError, match="pass --restart"):
        copy_store(source, target, settings(tmp_path), progress=False)


def test_copying_a_store_onto_itself_or_across_vector_sizes_is_refused(source: GraphStore, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="the same store"):
        copy_store(source, source, settings(tmp_path), progress=False)
    with (
        open_store(StoreConfig(db_path=tmp_path / "wide.db")) as other,
        pytest.raises(ConfigError, match="vector sizes"),
    ):
        copy_store(source, other, settings(tmp_path), progress=False)


def test_cli_copy_embedded_to_embedded(
    source: GraphStore, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, size in [("EMBEDDING", SIZES.embedding), ("TAXONOMY", SIZES.taxonomy), ("POINCARE", SIZES.poincare)]:
        monkeypatch.setenv(f"CITEGRAPH_{name}_DIM", str(size))
    source_path = tmp_path / "source.db"
    expected = snapshot(source)
    source.close()  # the CLI opens it itself
    args = ["-q", "--db", str(source_path), "copy", "--from", "embedded", "--to", "embedded"]
    assert main([*args, "--to-db", str(tmp_path / "cli.db"), "--progress-file", str(tmp_path / "p.json")]) == 0
    assert re.search(r"^  CO_CITED +3 rows$", capsys.readouterr().out, re.M)
    with open_store(StoreConfig(db_path=tmp_path / "cli.db", sizes=SIZES, read_only=True)) as copied:
        assert snapshot(copied) == expected
    assert main(args) == 1  # no --to-db
    assert "--to embedded needs --to-db PATH" in capsys.readouterr().err


# embedded <-> Neo4j (mocked driver) ---------------------------------------------------------------
def test_copy_to_neo4j_writes_one_transaction_per_frame_in_unwind_batches(source: GraphStore, tmp_path: Path) -> None:
    server = FakeNeo4j()
    target = server.store(batch_size=2)
    report = copy_store(source, target, settings(tmp_path, batch_size=3), progress=False)
    frames = sum(-(-n // 3) for n in [*source.stats()["nodes"].values(), *source.stats()["relationships"].values()])
    assert server.transactions == frames  # one managed write transaction per frame of at most 3 rows
    assert max(server.unwinds) == 2 and sum(server.unwinds) == sum(report.copied.values())
    assert {label: len(rows) for label, rows in server.nodes.items()} == {
        k: n for k, n in source.stats()["nodes"].items() if n
    }
    assert server.nodes["Paper"]["p1"]["cocite_partners"] == ["p2", "p3"]  # lists travel as lists
    assert server.nodes["Sentence"]["p3#4"]["section"] == "Résumé"
    links = server.rels["LINKS_TO"]
    assert links[("p1#1", "p2#3", ("annotator", ""), ("method", "silver"))] == {
        "method": "silver",
        "annotator": "",
        "score": 0.62,
    }


def test_copy_to_neo4j_and_back_gives_the_same_graph(source: GraphStore, tmp_path: Path) -> None:
    server = FakeNeo4j()
    copy_store(source, server.store(), settings(tmp_path), progress=False)
    back = settings(tmp_path, progress_path=tmp_path / "back.progress.json")
    with open_target(tmp_path / "back.db") as target:
        report = copy_store(server.store(), target, back, progress=False)
        assert report.source == "Neo4j neo4j://fake:7687 (the server's default database)"
        assert snapshot(target) == snapshot(source)


def test_transient_failures_are_retried_with_growing_waits(source: GraphStore, tmp_path: Path) -> None:
    server = FakeNeo4j()
    # The driver gives up on a deadlock, then on a lost connection: the copy writes the frame again each time.
    server.failures = [None, TransientError("Deadlock detected"), ServiceUnavailable("connection lost")]
    waits: list[float] = []
    report = copy_store(source, server.store(), settings(tmp_path), progress=False, sleep=waits.append)
    assert report.retried == 2 and waits == [2.0, 4.0]
    assert {label: len(rows) for label, rows in server.nodes.items()} == {
        k: n for k, n in source.stats()["nodes"].items() if n
    }
    assert "2 batch(es) written again after a transient failure" in report.summary()


def test_persistent_unavailability_gives_up_and_says_how_to_resume(source: GraphStore, tmp_path: Path) -> None:
    server = FakeNeo4j()
    server.failures = [None] * 3 + [ServiceUnavailable("Couldn't connect to fake:7687")] * 4  # Paper: frames 1-3 pass
    waits: list[float] = []
    with pytest.raises(StoreError, match="copy Author: gave up after 4 attempts: cannot reach Neo4j") as caught:
        copy_store(source, server.store(), settings(tmp_path), progress=False, sleep=waits.append)
    assert "check NEO4J_URI" in str(caught.value) and "Rerun the same command to resume" in str(caught.value)
    assert waits == [2.0, 4.0, 8.0]
    assert json.loads((tmp_path / "copy.progress.json").read_text())["done"] == ["Paper"]
    resumed = copy_store(source, server.store(), settings(tmp_path), progress=False)
    assert resumed.skipped == ["Paper"] and resumed.copied["Author"] == 2


def test_a_refused_statement_is_not_retried(source: GraphStore, tmp_path: Path) -> None:
    server = FakeNeo4j()
    server.failures = [ClientError("Property values can only be of primitive types or arrays thereof")]
    waits: list[float] = []
    with pytest.raises(StoreError, match="`apply` was refused: Property values can only be") as caught:
        copy_store(source, server.store(), settings(tmp_path), progress=False, sleep=waits.append)
    assert waits == [] and isinstance(caught.value.__cause__, ClientError)
    assert not (tmp_path / "copy.progress.json").exists()  # nothing finished
