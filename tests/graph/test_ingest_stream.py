"""A source written as a sequence of batches (``graph.ingest.ingest_stream``): all of them or none.

The batches here split the tiny graph so that later ones point at nodes that earlier ones wrote
(WROTE to an author of batch 1, CITES to papers of batch 1 and 2). A kill is made the way the crash
tests make one: a subprocess writes and leaves with ``os._exit`` at the point the kill would hit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from tiny_graph import tiny_batch

from graph import GraphBatch, GraphStore, StoreConfig, ValidationError, ingest, ingest_stream, open_store
from graph.embedded import STREAM_BUFFER_POOL_MIB
from graph.errors import Reject, StoreError

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


def split_batches() -> list[GraphBatch]:
    """The tiny graph in three batches: p1-p2 with both authors, then p3-p4, then p5.

    As a loader that streams writes them: batch 1 has p3, which p1 cites, as a row of its id only (a
    stub that batch 2 fills in); batch 3 names p2 again with nothing known (a null keeps the stored value).
    """
    whole = tiny_batch()
    papers, cites, wrote = whole.nodes["Paper"], whole.rels["CITES"], whole.rels["WROTE"]
    parts = (["p1", "p2"], ["p3", "p4"], ["p5"])
    batches = []
    for n, ids in enumerate(parts):
        nodes = {"Paper": papers[papers["id"].isin(ids)].reset_index(drop=True)}
        if n == 0:
            nodes["Author"] = whole.nodes["Author"]
        rels = {
            "CITES": cites[cites["source"].isin(ids)].reset_index(drop=True),
            "WROTE": wrote[wrote["target"].isin(ids)].reset_index(drop=True),
        }
        batches.append(GraphBatch("tiny", nodes=nodes, rels={k: v for k, v in rels.items() if len(v)}))
    for n, extra in ((0, "p3"), (2, "p2")):
        batches[n].nodes["Paper"] = pd.concat(
            [batches[n].nodes["Paper"], pd.DataFrame({"id": [extra], "title": [None]})], ignore_index=True
        )
    return batches


def _rows(store: GraphStore) -> dict[str, list[tuple[object, ...]]]:
    out: dict[str, list[tuple[object, ...]]] = {}
    for label in ("Paper", "Author"):
        frame = pd.concat(store.iter_nodes(label, 100), ignore_index=True)
        out[label] = sorted(map(tuple, frame.astype(object).where(frame.notna(), None).to_numpy().tolist()))
    for rel in ("CITES", "WROTE"):
        frame = store.read_edges(rel)
        out[rel] = sorted(map(tuple, frame.astype(object).where(frame.notna(), None).to_numpy().tolist()))
    return out


def test_batches_give_the_graph_of_one_batch(tmp_path: Path) -> None:
    with (
        open_store(StoreConfig(db_path=tmp_path / "one.db")) as one,
        open_store(StoreConfig(db_path=tmp_path / "many.db")) as many,
    ):
        ingest(one, tiny_batch())
        report = ingest_stream(many, "tiny", split_batches())
        assert many.stats() == one.stats()
        assert _rows(many) == _rows(one)
    assert report.rejected == 0 and report.tables["Paper"].records == 7  # p2 and p3 twice: in full, and id only
    assert report.tables["CITES"].created == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.db", "one.db"]  # no copy left beside it


def test_batches_into_a_store_that_holds_data_keep_it(store: GraphStore) -> None:
    extra = GraphBatch("more", nodes={"Paper": pd.DataFrame({"id": ["p9"], "title": ["Kept"], "year": [1990]})})
    ingest(store, extra)
    ingest_stream(store, "tiny", split_batches())  # the store is copied, written, and swapped in
    assert store.count_nodes("Paper") == 6 and store.count_rels("CITES") == 6
    papers = pd.concat(store.iter_nodes("Paper", 100), ignore_index=True).set_index("id")
    assert papers.loc["p9", "title"] == "Kept" and papers.loc["p4", "title"] == "Neural machine translation"


@pytest.mark.parametrize(("configured", "expected"), [(0, STREAM_BUFFER_POOL_MIB), (64, 64)])
def test_the_copy_a_stream_writes_has_a_bounded_page_cache(tmp_path: Path, configured: int, expected: int) -> None:
    """The engine's default cache is 80% of the machine: the copy gets the configured one, else a bound."""
    with open_store(StoreConfig(db_path=tmp_path / "g.db", buffer_pool_mib=configured)) as store:
        with store.staged() as copy:  # type: ignore[union-attr]
            assert copy.buffer_pool_mib == expected  # type: ignore[attr-defined]
            written = copy.apply({"Paper": pd.DataFrame({"id": ["p1"]})}, {})
        assert written["Paper"].created == 1 and store.count_nodes("Paper") == 1
        assert store.buffer_pool_mib == configured  # type: ignore[attr-defined]


POOL_FULL_ERROR = (
    "Buffer manager exception: Unable to allocate memory! The buffer pool is full and no memory could be freed!"
)


def _cache_fills_once(store: GraphStore) -> None:
    """The store's next statement fails as when the page cache is full (the engine then runs no part of it)."""
    from unittest.mock import MagicMock

    real = store._conn  # type: ignore[attr-defined]
    failing = MagicMock(wraps=real)
    failing.execute.side_effect = RuntimeError(POOL_FULL_ERROR)
    failing.close.side_effect = real.close
    store._conn = failing  # type: ignore[attr-defined]


def test_a_full_page_cache_in_the_streamed_copy_is_doubled_and_the_statement_run_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with open_store(StoreConfig(db_path=tmp_path / "g.db", buffer_pool_mib=64)) as store:
        with store.staged() as copy:  # type: ignore[union-attr]
            copy.apply({"Paper": pd.DataFrame({"id": ["p1"]})}, {})
            _cache_fills_once(copy)
            assert copy.count_nodes("Paper") == 1  # run again, after the reopening
            assert copy.buffer_pool_mib == 128  # type: ignore[attr-defined]
            assert copy.apply({"Paper": pd.DataFrame({"id": ["p2"]})}, {})["Paper"].created == 1
        assert store.count_nodes("Paper") == 2
    assert "needed more than a 64 MiB page cache; reopened with 128 MiB" in caplog.text


def test_a_full_page_cache_elsewhere_is_an_error_that_says_what_to_raise(tmp_path: Path) -> None:
    with open_store(StoreConfig(db_path=tmp_path / "g.db", buffer_pool_mib=64)) as store:
        _cache_fills_once(store)  # not a staged copy: its transaction would be lost by reopening
        with pytest.raises(StoreError, match=r"needs more page cache.*raise CITEGRAPH_BUFFER_POOL_MIB"):
            store.apply({"Paper": pd.DataFrame({"id": ["p1"]})}, {})


def _failing(batches: list[GraphBatch], after: int) -> Iterator[GraphBatch]:
    for n, batch in enumerate(batches):
        if n == after:
            raise OSError("the input went away")
        yield batch


def test_an_error_mid_way_leaves_the_store_as_it_was(store: GraphStore, store_path: Path) -> None:
    before = _rows(store)
    with pytest.raises(OSError, match="went away"):
        ingest_stream(store, "tiny", _failing([*split_batches(), *split_batches()], after=4))
    assert _rows(store) == before  # batches 1-4 went into the copy, which is gone
    assert sorted(p.name for p in store_path.parent.iterdir() if p.name.startswith(store_path.name)) == [
        store_path.name
    ]


def test_on_error_fail_writes_nothing_and_counts_every_reject(empty_store: GraphStore, tmp_path: Path) -> None:
    batches = split_batches()
    batches[0].rejects.append(Reject("Paper", "part.jsonl:2", "line is not JSON"))
    batches[2].rejects.append(Reject("Paper", "part.jsonl:9", "line is not JSON"))
    with pytest.raises(ValidationError, match="2 record"):
        ingest_stream(empty_store, "tiny", batches, rejects_dir=tmp_path / "rejects")
    assert empty_store.count_nodes("Paper") == 0
    assert len((tmp_path / "rejects" / "tiny.rejects.jsonl").read_text().splitlines()) == 2

    report = ingest_stream(empty_store, "tiny", split_batches()[:1] + batches[1:], on_error="skip")
    assert report.rejected == 1 and empty_store.count_nodes("Paper") == 5


def test_a_dangling_endpoint_is_found_against_what_earlier_batches_wrote(empty_store: GraphStore) -> None:
    batches = split_batches()
    batches[2].rels["CITES"] = pd.DataFrame({"source": ["p5", "p5"], "target": ["p4", "p404"]})
    report = ingest_stream(empty_store, "tiny", batches, on_error="skip")
    assert [r.table for r in report.rejects] == ["CITES"] and "p404" in report.rejects[0].reason
    assert empty_store.count_rels("CITES") == 6  # p5 -> p4 found p4 in the store, written by batch 2


def test_a_backend_without_staging_gets_one_combined_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graph.embedded import EmbeddedStore

    with open_store(StoreConfig(db_path=tmp_path / "one.db")) as one:
        ingest(one, tiny_batch())
        expected = _rows(one)
    monkeypatch.setattr(EmbeddedStore, "staged", lambda self: None)
    with open_store(StoreConfig(db_path=tmp_path / "combined.db")) as combined:
        report = ingest_stream(combined, "tiny", split_batches())
        assert _rows(combined) == expected  # p2's stub row did not blank its title: the last known value won
    assert report.tables["Paper"].records == 5
    batches = split_batches()
    batches[1].nodes["Paper"] = pd.concat([batches[1].nodes["Paper"]] * 2, ignore_index=True)  # p3, p4 twice
    with open_store(StoreConfig(db_path=tmp_path / "repeats.db")) as repeats:
        report = ingest_stream(repeats, "tiny", batches, on_error="skip")
    assert report.rejected == 2 and all("duplicate" in r.reason for r in report.rejects)  # as one batch rejects them


KILL_MID_STREAM = """
import os, sys
from test_ingest_stream import split_batches
from graph import StoreConfig, ingest_stream, open_store
def batches():
    for n, batch in enumerate(split_batches()):
        if n == 2:
            os._exit(9)  # killed after two batches went into the copy
        yield batch
ingest_stream(open_store(StoreConfig(db_path=sys.argv[1])), "tiny", batches())
"""


def test_a_kill_mid_load_leaves_the_store_as_it_was(store: GraphStore, store_path: Path) -> None:
    before, stats = _rows(store), store.stats()
    store.close()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS), str(TESTS / "graph")]))
    done = subprocess.run(
        [sys.executable, "-c", KILL_MID_STREAM, str(store_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 9, done.stderr[-2000:]
    assert (store_path.parent / f"{store_path.name}.building").exists()  # the copy the kill left
    with open_store(StoreConfig(db_path=store_path)) as reopened:  # removes it, with a warning
        assert reopened.stats() == stats and _rows(reopened) == before
    assert not (store_path.parent / f"{store_path.name}.building").exists()


def test_an_edge_two_batches_carry_is_one_edge_with_the_last_known_values(tmp_path: Path) -> None:
    """New edges are held back until the last batch (spilled to disk) and copied then: one repeated across
    batches is still one edge, as when each batch was written in turn, and the spill is gone afterwards."""
    papers = pd.DataFrame({"id": ["p1", "p2", "p3"], "title": ["One", "Two", "Three"]})
    first = pd.DataFrame({"source": ["p1", "p1"], "target": ["p2", "p3"], "dataset": ["s2", "s2"]})
    again = pd.DataFrame(
        {"source": ["p1"], "target": ["p2"], "dataset": ["s2"], "influential": [True], "n_contexts": [3]}
    )
    batches = [
        GraphBatch("s2", nodes={"Paper": papers}, rels={"CITES": first}),
        GraphBatch("s2", rels={"CITES": again}),
    ]
    with open_store(StoreConfig(db_path=tmp_path / "g.db")) as store:
        report = ingest_stream(store, "s2", batches)
        edges = store.read_edges("CITES").set_index(["source", "target"])
    assert len(edges) == 2
    assert edges.loc[("p1", "p2"), "influential"] == True  # noqa: E712  (a numpy bool)
    assert edges.loc[("p1", "p2"), "n_contexts"] == 3 and pd.isna(edges.loc[("p1", "p3"), "n_contexts"])
    counted = report.tables["CITES"]
    assert (counted.records, counted.created, counted.matched) == (3, 2, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.db"]  # no copy and no spill left beside it


def test_a_failed_stream_leaves_no_spill_behind(tmp_path: Path) -> None:
    with open_store(StoreConfig(db_path=tmp_path / "g.db")) as store:
        with pytest.raises(OSError, match="the input went away"):
            ingest_stream(store, "tiny", _failing(split_batches(), after=2))
        assert store.count_nodes("Paper") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.db"]


def test_a_stream_ingested_twice_gives_the_same_graph_and_matches_every_edge(tmp_path: Path) -> None:
    """Idempotent with edges held back: the second load finds every edge stored (looked up per batch) and
    spills none, so nothing is added."""
    with open_store(StoreConfig(db_path=tmp_path / "g.db")) as store:
        ingest_stream(store, "tiny", split_batches())
        before, stats = _rows(store), store.stats()
        again = ingest_stream(store, "tiny", split_batches())
        assert _rows(store) == before and store.stats() == stats
    assert (again.tables["CITES"].created, again.tables["CITES"].matched) == (0, 6)
    assert (again.tables["WROTE"].created, again.tables["WROTE"].matched) == (0, again.tables["WROTE"].records)
