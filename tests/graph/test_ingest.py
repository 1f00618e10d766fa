from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tiny_graph import tiny_batch

from graph import GraphBatch, GraphStore, StoreConfig, ValidationError, ingest, open_store
from graph.errors import Reject, SchemaError, StoreError


def test_ingest_counts_every_record(empty_store: GraphStore) -> None:
    report = ingest(empty_store, tiny_batch())
    assert report.records == report.stored + report.rejected == 5 + 2 + 3 + 6
    assert report.tables["Paper"].created == 5
    assert empty_store.stats()["relationships"]["CITES"] == 6


def test_ingest_twice_gives_the_same_graph(empty_store: GraphStore) -> None:
    ingest(empty_store, tiny_batch())
    first = empty_store.stats()
    edges = empty_store.read_edges("CITES").sort_values(["source", "target"]).reset_index(drop=True)
    report = ingest(empty_store, tiny_batch())
    assert empty_store.stats() == first
    assert report.tables["Paper"].created == 0 and report.tables["Paper"].matched == 5
    assert report.tables["CITES"].created == 0 and report.tables["CITES"].matched == 6
    again = empty_store.read_edges("CITES").sort_values(["source", "target"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(edges, again)


def test_bad_record_in_fail_mode_leaves_store_unchanged(store: GraphStore, tmp_path: Path) -> None:
    before = store.stats()
    bad = GraphBatch(
        "bad",
        nodes={
            "Paper": pd.DataFrame(
                {"id": ["p6", "p7"], "year": [2006, "n.d."], "_origin": ["new.jsonl:1", "new.jsonl:2"]}
            )
        },
        rels={"CITES": pd.DataFrame({"source": ["p6"], "target": ["p1"]})},
    )
    with pytest.raises(ValidationError) as caught:
        ingest(store, bad, rejects_dir=tmp_path)
    message = str(caught.value)
    assert "new.jsonl:2" in message and "`year` is 'n.d.', expected an integer" in message
    assert "--on-error skip" in message and "nothing was written" in message
    assert store.stats() == before
    assert (tmp_path / "bad.rejects.jsonl").exists()


def test_skip_mode_loads_the_rest_and_reports_rejects(store: GraphStore, tmp_path: Path) -> None:
    batch = GraphBatch(
        "mixed",
        nodes={"Paper": pd.DataFrame({"id": ["p6", "p7", "p6", ""], "year": [2006, "n.d.", 2007, 1]})},
        rels={"CITES": pd.DataFrame({"source": ["p6", "p6", "p6"], "target": ["p1", "ghost", "p1"]})},
        rejects=[Reject("Paper", "new.jsonl:9", "line is not JSON: Expecting value")],
    )
    report = ingest(store, batch, on_error="skip", rejects_dir=tmp_path)
    assert report.tables["Paper"].records == 5 and report.tables["Paper"].rejected == 4
    assert report.tables["Paper"].created == 1
    assert report.tables["CITES"].records == 3 and report.tables["CITES"].created == 1
    lines = [json.loads(line) for line in (tmp_path / "mixed.rejects.jsonl").read_text().splitlines()]
    reasons = " | ".join(r["reason"] for r in lines)
    assert len(lines) == report.rejected == 6
    assert (
        "not JSON" in reasons
        and "duplicate Paper `id`" in reasons
        and "'ghost' is neither in this load nor in the store" in reasons
    )
    assert store.count_nodes("Paper") == 6


def test_failure_during_write_rolls_back_everything(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    before = store.stats()

    def explode(*_: object) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(store, "_upsert_rels", explode)
    batch = GraphBatch(
        "half",
        nodes={"Paper": pd.DataFrame({"id": ["p8"]})},
        rels={"CITES": pd.DataFrame({"source": ["p8"], "target": ["p1"]})},
    )
    with pytest.raises(StoreError):
        ingest(store, batch)
    monkeypatch.undo()
    assert store.stats() == before  # the Paper copied before the failure is gone too


def test_null_keeps_the_stored_value(store: GraphStore) -> None:
    ingest(
        store, GraphBatch("partial", nodes={"Paper": pd.DataFrame({"id": ["p1"], "title": [None], "venue": ["ACL"]})})
    )
    row = store.query("paper_by_ids", {"ids": ["p1"]})[0]
    assert row["title"] == "Statistical machine translation" and row["venue"] == "ACL"


def _parameters_of(statement: str, store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The parameters of every run of the embedded store's named ``statement`` from now on, as the list fills."""
    runs: list[dict[str, Any]] = []
    run = store._run  # type: ignore[attr-defined]

    def recording(name: str, parameters: dict | None = None, identifiers: dict | None = None) -> object:
        if name == statement:
            runs.append(dict(parameters or {}))
        return run(name, parameters, identifiers)

    monkeypatch.setattr(store, "_run", recording)
    return runs


def test_only_stored_nodes_a_batch_changes_are_written(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    merges = _parameters_of("merge_nodes", store, monkeypatch)
    ingest(store, tiny_batch())  # every value as stored: nothing to set
    assert merges == []
    year = store.query("paper_by_ids", {"ids": ["p2"]})[0]["year"]
    changes = pd.DataFrame({"id": ["p1", "p2", "p3"], "title": ["A new title", None, None], "year": [None, year, 1888]})
    ingest(store, GraphBatch("edits", nodes={"Paper": changes}))
    # p2 repeats its year and has no title: left out
    assert [m["frame"].column("id").to_pylist() for m in merges] == [["p1", "p3"]]
    rows = {row["id"]: row for row in store.query("paper_by_ids", {"ids": ["p1", "p2", "p3"]})}
    assert rows["p1"]["title"] == "A new title" and rows["p3"]["year"] == 1888 and rows["p2"]["year"] == year


def test_edges_with_an_end_created_by_the_write_are_not_looked_up(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    lookups = _parameters_of("rels_from_keys", store, monkeypatch)
    papers = pd.DataFrame({"id": ["p6", "p7"], "title": ["New one", "New two"]})
    cites = pd.DataFrame({"source": ["p6", "p7", "p1", "p1"], "target": ["p1", "p6", "p7", "p2"]})
    report = ingest(store, GraphBatch("more", nodes={"Paper": papers}, rels={"CITES": cites}))
    # only p1 -> p2 joins two papers stored before: it is the one stored edge
    assert [list(lookup["keys"]) for lookup in lookups] == [["p1"]]
    assert report.tables["CITES"].created == 3 and report.tables["CITES"].matched == 1
    assert store.stats()["relationships"]["CITES"] == 6 + 3


def test_membership_is_looked_up_by_key_for_few_keys_and_scanned_for_many(
    empty_store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = [f"p{i}" for i in range(100)]
    ingest(empty_store, GraphBatch("many", nodes={"Paper": pd.DataFrame({"id": stored})}))
    lookups = _parameters_of("nodes_by_keys", empty_store, monkeypatch)
    few = pd.Series(["p3", None, "ghost", "p3", "p99"])  # 3 distinct keys, 20 x 3 < 100 stored: looked up
    assert empty_store.has_nodes("Paper", few).tolist() == [True, False, False, True, True]
    assert [sorted(lookup["keys"]) for lookup in lookups] == [["ghost", "p3", "p99"]]
    many = pd.Series([*stored[:40], "ghost"])  # 41 x 20 >= 100: every stored key is read instead
    assert empty_store.has_nodes("Paper", many).tolist() == [True] * 40 + [False]
    assert len(lookups) == 1


def test_changed_edge_properties_are_updated_without_duplicates(store: GraphStore) -> None:
    cites = pd.DataFrame({"source": ["p1", "p5"], "target": ["p2", "p1"], "n_contexts": [7, 1]})
    report = ingest(store, GraphBatch("again", rels={"CITES": cites}))
    assert (report.tables["CITES"].created, report.tables["CITES"].matched) == (1, 1)
    edges = store.read_edges("CITES").set_index(["source", "target"])
    assert len(edges) == 7 and edges.loc[("p1", "p2"), "n_contexts"] == 7 and edges.loc[("p4", "p1"), "n_contexts"] == 3


def test_links_to_identity_keeps_one_edge_per_method(empty_store: GraphStore) -> None:
    sentences = pd.DataFrame({"id": ["c#1", "r#5"], "paper_id": ["c", "r"], "sid": [1, 5], "text": ["cites", "cited"]})
    links = pd.DataFrame(
        {
            "source": ["c#1", "c#1", "c#1"],
            "target": ["r#5"] * 3,
            "method": ["gold", "silver", "gold"],
            "annotator": ["A", None, "B"],
            "score": [1.0, 0.8, 1.0],
        }
    )
    ingest(empty_store, GraphBatch("links", nodes={"Sentence": sentences}, rels={"LINKS_TO": links}))
    ingest(empty_store, GraphBatch("links", nodes={"Sentence": sentences}, rels={"LINKS_TO": links}))
    assert empty_store.count_rels("LINKS_TO") == 3


def test_write_node_properties_and_replace_edges(store: GraphStore) -> None:
    vectors = np.eye(5, 384, dtype=np.float32)
    frame = pd.DataFrame({"id": ["p1", "p2", "p3", "p4", "p5"], "embedding": list(vectors), "cluster": [0, 1, 1, 0, 2]})
    assert store.write_node_properties("Paper", "id", frame) == 5
    store.write_node_properties(
        "Paper", "id", pd.DataFrame({"id": ["p2"], "cluster": [None]})
    )  # write-back nulls replace
    _, rows = _read(store, "MATCH (p:Paper) RETURN p.id, p.cluster, p.embedding[1] ORDER BY p.id")
    assert [r[1] for r in rows] == [0, None, 1, 0, 2] and rows[0][2] == pytest.approx(1.0)
    with pytest.raises(SchemaError, match="match no node"):
        store.write_node_properties("Paper", "id", pd.DataFrame({"id": ["nope"], "cluster": [1]}))
    pairs = pd.DataFrame({"source": ["p2"], "target": ["p3"], "count": [2], "cosine": [1.0]})
    assert store.replace_edges("CO_CITED", pairs) == 1
    assert store.replace_edges("CO_CITED", pairs) == 1
    assert store.count_rels("CO_CITED") == 1
    with pytest.raises(ValidationError):
        store.replace_edges("CO_CITED", pd.DataFrame({"source": ["p2"], "target": ["ghost"]}))
    assert store.count_rels("CO_CITED") == 1


def test_node_properties_are_written_in_batches_and_a_rerun_completes_a_broken_write(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graph import embedded

    monkeypatch.setattr(embedded, "SET_BATCH_ROWS", 2)  # five papers: batches of 2, 2 and 1
    ids = ["p1", "p2", "p3", "p4", "p5"]
    frame = pd.DataFrame(
        {
            "id": ids,
            "cocite_partners": [[f"p{(k + 1) % 5 + 1}", "p1"][: 1 + k % 2] for k in range(5)],
            "cocite_probs": [[0.5 + k / 10, 0.5 - k / 10][: 1 + k % 2] for k in range(5)],
        }
    )
    real_run = embedded.EmbeddedStore._run
    calls = {"set": 0}

    def fail_on_the_third_batch(self: embedded.EmbeddedStore, name: str, *args: object, **kwargs: object) -> object:
        if name == "set_node_properties":
            calls["set"] += 1
            if calls["set"] == 3:
                raise StoreError("disk full")
        return real_run(self, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(embedded.EmbeddedStore, "_run", fail_on_the_third_batch)
    with pytest.raises(StoreError, match="disk full"):
        store.write_node_properties("Paper", "id", frame)
    monkeypatch.setattr(embedded.EmbeddedStore, "_run", real_run)
    _, rows = _read(store, "MATCH (p:Paper) RETURN p.id, p.cocite_partners ORDER BY p.id")
    assert [r[1] is not None for r in rows] == [True, True, True, True, False]  # two batches committed
    assert store.write_node_properties("Paper", "id", frame) == 5  # the rerun writes every batch
    _, rows = _read(store, "MATCH (p:Paper) RETURN p.id, p.cocite_partners, p.cocite_probs ORDER BY p.id")
    assert [r[1] for r in rows] == frame["cocite_partners"].tolist()
    for stored, written in zip([r[2] for r in rows], frame["cocite_probs"]):
        assert stored == pytest.approx(written)


def test_a_failed_edge_replacement_leaves_the_old_edges_and_no_staging_table(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graph.embedded import STAGING_SUFFIX, EmbeddedStore

    pairs = pd.DataFrame({"source": ["p2", "p1"], "target": ["p3", "p4"], "count": [2, 1]})
    store.replace_edges("CO_CITED", pairs)
    real_copy = EmbeddedStore._copy_given

    def copy_then_fail(self: EmbeddedStore, owner: object, frame: pd.DataFrame, *, table: str | None = None) -> None:
        real_copy(self, owner, frame, table=table)  # type: ignore[arg-type]  # the staging table gets the rows
        raise StoreError("disk full")  # the engine failing late in the COPY

    monkeypatch.setattr(EmbeddedStore, "_copy_given", copy_then_fail)
    with pytest.raises(StoreError, match="disk full"):
        store.replace_edges("CO_CITED", pd.DataFrame({"source": ["p5"], "target": ["p1"], "count": [9]}))
    monkeypatch.undo()
    _, rows = _read(store, "MATCH (a)-[r:CO_CITED]->(b) RETURN a.id, b.id, r.count ORDER BY a.id")
    assert rows == [["p1", "p4", 1], ["p2", "p3", 2]]
    _, tables = _read(store, "CALL show_tables() RETURN name")
    assert f"CO_CITED{STAGING_SUFFIX}" not in {t[0] for t in tables}


def test_a_staging_table_left_by_a_crash_is_replaced(store: GraphStore) -> None:
    from graph.embedded import STAGING_SUFFIX

    store._execute(  # type: ignore[attr-defined]  # what a process killed mid-COPY leaves behind
        f"CREATE REL TABLE CO_CITED{STAGING_SUFFIX}(FROM Paper TO Paper, count INT64)", what="test"
    )
    pairs = pd.DataFrame({"source": ["p2"], "target": ["p3"], "count": [2]})
    assert store.replace_edges("CO_CITED", pairs) == 1
    _, rows = _read(store, "MATCH (a)-[r:CO_CITED]->(b) RETURN a.id, b.id, r.count")
    assert rows == [["p2", "p3", 2]]
    assert store.stats()["relationships"]["CO_CITED"] == 1


def _read(store: GraphStore, text: str) -> tuple[list[str], list[list[object]]]:
    result = store._execute(text, what="test")  # type: ignore[attr-defined]
    table = result.get_as_arrow()
    return table.column_names, [list(r.values()) for r in table.to_pylist()]


def test_unknown_column_is_a_schema_error(empty_store: GraphStore) -> None:
    with pytest.raises(SchemaError, match="colour"):
        ingest(empty_store, GraphBatch("x", nodes={"Paper": pd.DataFrame({"id": ["a"], "colour": ["red"]})}))


def test_store_with_other_vector_sizes_is_refused(store_path: Path) -> None:
    open_store(StoreConfig(db_path=store_path)).close()
    from graph.schema import VectorSizes

    with pytest.raises(SchemaError, match="CITEGRAPH_EMBEDDING_DIM"):
        open_store(StoreConfig(db_path=store_path, sizes=VectorSizes(embedding=768)))


def test_read_only_store_refuses_writes(store: GraphStore, store_path: Path) -> None:
    store.close()
    reader = open_store(StoreConfig(db_path=store_path, read_only=True))
    try:
        _, rows = reader.read_only_query("MATCH (p:Paper) WHERE p.year > $y RETURN p.id ORDER BY p.id", {"y": 2003})
        assert rows == [["p4"], ["p5"]]
        from graph.errors import QueryError

        with pytest.raises(QueryError, match="read-only"):
            reader.read_only_query("CREATE (p:Paper {id: 'x'})")
        with pytest.raises(QueryError):
            ingest(reader, tiny_batch())
    finally:
        reader.close()


def test_first_load_failure_leaves_the_empty_store_usable(
    empty_store: GraphStore, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first load is built in a new file and swapped in; a failure leaves no trace."""
    from graph.embedded import EmbeddedStore

    def explode(*_: object) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(EmbeddedStore, "_upsert_rels", explode)
    with pytest.raises(StoreError, match="disk full"):
        ingest(empty_store, tiny_batch())
    monkeypatch.undo()
    assert not store_path.with_name(store_path.name + ".building").exists()
    assert empty_store.count_nodes("Paper") == 0
    ingest(empty_store, tiny_batch())  # the store is still open and takes the load
    assert empty_store.count_nodes("Paper") == 5 and empty_store.count_rels("CITES") == 6
