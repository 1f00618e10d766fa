"""A store on a filesystem that fills up: every writing path says what was written and what to do.

Each test mounts a 16 MiB tmpfs (it needs root; elsewhere it is skipped with the reason), puts a store on
it, and fills the rest with a filler file before a write: an ingest in one transaction, the copy a first load
or a streamed load writes (``staged``), a compute step's property write-back. The messages must name the
store and the free space, never call a write durable that the next open does not have, and the store must be
as it was before the write (or, where the engine left a checkpoint unfinished, hold the whole write or none
of it once ``citegraph recover`` ran with room on the disk).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tiny_graph import tiny_batch

from api.cli.main import main
from graph import GraphBatch, StoreConfig, StoreFullError, ingest, ingest_stream, open_store
from graph.recovery import BUILDING_SUFFIX, companions

TINY_PAPERS = 5  # tiny_batch's papers


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs under ``tmp_path``, unmounted afterwards."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root on Linux")
    folder = tmp_path / "small"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def _fill(folder: Path, leave: int) -> Path:
    """A filler file that leaves about ``leave`` bytes free on ``folder``'s filesystem."""
    filler = folder / "filler"
    with filler.open("wb") as out:
        out.write(b"\0" * max(0, shutil.disk_usage(folder).free - leave))
    return filler


def _papers(n: int) -> GraphBatch:
    ids = [f"w{i}" for i in range(n)]
    frame = pd.DataFrame({"id": ids, "title": [f"a study of topic {i} " * 8 for i in range(n)], "year": 2001})
    return GraphBatch("many", nodes={"Paper": frame}, rels={})


def _count(db: Path) -> int:
    with open_store(StoreConfig(db_path=db, read_only=True)) as store:
        return store.count_nodes("Paper")


def _tiny_store(folder: Path) -> Path:
    db = folder / "g.db"
    with open_store(StoreConfig(db_path=db)) as store:
        ingest(store, tiny_batch())
    return db


def test_an_ingest_that_fills_the_disk_says_nothing_was_stored(
    small_fs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _tiny_store(small_fs)
    export = tmp_path / "many.jsonl"
    export.write_text(
        "".join(json.dumps({"type": "paper", "id": f"w{i}", "title": f"topic {i} " * 10}) + "\n" for i in range(1000)),
        encoding="utf-8",
    )
    monkeypatch.setenv("CITEGRAPH_REJECTS", str(tmp_path / "rejects"))
    filler = _fill(small_fs, 0)
    assert main(["--db", str(db), "-q", "ingest", "jsonl", str(export)]) == 1  # a store error, not an internal one
    err = capsys.readouterr().err
    assert str(db) in err and "0 bytes free" in err and "nothing of it was stored" in err
    assert "durable" not in err and "internal error" not in err
    filler.unlink()
    assert _count(db) == TINY_PAPERS  # as before, and opened without any repair


def test_a_checkpoint_the_disk_interrupts_is_finished_by_recover_once_there_is_room(
    small_fs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _tiny_store(small_fs)
    filler = _fill(small_fs, 1_600_000)  # room for the (uncompressed) log, not for the checkpoint's shadow pages
    with open_store(StoreConfig(db_path=db)) as store, pytest.raises(StoreFullError) as caught:
        ingest(store, _papers(5000))
    assert caught.value.pending_recovery and companions(db)
    message = str(caught.value)
    assert "all or nothing" in message and f"citegraph --db {db} recover" in message and "durable" not in message
    # While the disk is full, recover repairs what it can without room and says what the store then holds (a
    # read-only open checked), or says what it could not repair and fails; never "nothing left" with a repair due.
    code = main(["--db", str(db), "recover"])
    captured = capsys.readouterr()
    if code == 0:
        assert "nothing left to repair" in captured.out and not companions(db)
        assert f"Paper {_count(db):,}" in captured.out
    else:
        assert "no space left" in captured.err.lower() and "do not delete it" in captured.err
    filler.unlink()
    assert main(["--db", str(db), "recover"]) == 0
    out = capsys.readouterr().out
    papers = _count(db)
    assert papers in (TINY_PAPERS, TINY_PAPERS + 5000)  # the whole write or none of it
    assert f"Paper {papers:,}" in out and not companions(db)


def test_recover_exits_non_zero_while_the_disk_keeps_a_checkpoint_from_finishing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The engine's answer when finishing a checkpoint needs room the disk lacks (seen on a full tmpfs)."""
    from graph.embedded import EmbeddedStore

    db = _tiny_store(tmp_path)
    (tmp_path / "g.db.shadow").write_bytes(b"\0" * 8192)  # a checkpoint's pages, not yet applied
    full = f"IO exception: Cannot write to file. path: {db} fileDescriptor: 3 offsetToWrite: 4825088 numBytesToWrite: "
    full += "4096 numBytesWritten: -1. Error: No space left on device"

    def no_room(self: EmbeddedStore, *, read_only: bool, tolerate_torn_wal: bool = False) -> None:
        raise RuntimeError(full)

    monkeypatch.setattr(EmbeddedStore, "_open", no_room)
    assert main(["--db", str(db), "recover"]) == 1
    err = capsys.readouterr().err
    assert "nothing left to repair" not in err and "the checkpoint's files beside it hold 8 KiB" in err
    assert "Free space on that filesystem" in err and "do not delete it" in err and "rebuild" not in err


def test_a_staged_copy_that_fills_the_disk_is_removed_and_the_store_kept(small_fs: Path) -> None:
    db = _tiny_store(small_fs)
    size = db.stat().st_size
    filler = _fill(small_fs, size // 2)  # the store's copy cannot fit
    with open_store(StoreConfig(db_path=db)) as store, pytest.raises(StoreFullError) as caught:
        ingest_stream(store, "many", iter([_papers(100)]))
    message = str(caught.value)
    assert "working copy" in message and "nothing was written" in message and "free on the filesystem" in message
    assert not list(small_fs.glob(f"*{BUILDING_SUFFIX}*"))
    filler.unlink()
    assert _count(db) == TINY_PAPERS


def test_a_first_load_that_fills_the_disk_leaves_the_empty_store(small_fs: Path) -> None:
    db = small_fs / "g.db"
    with open_store(StoreConfig(db_path=db)) as store:
        store.ensure_schema()
    filler = _fill(small_fs, 300_000)
    with open_store(StoreConfig(db_path=db)) as store, pytest.raises(StoreFullError, match="nothing was written"):
        ingest(store, _papers(20_000))  # built in <db>.building and renamed over the store
    assert not list(small_fs.glob(f"*{BUILDING_SUFFIX}*"))
    filler.unlink()
    assert _count(db) == 0


def test_a_write_back_that_fills_the_disk_says_how_many_nodes_were_written(small_fs: Path) -> None:
    db = small_fs / "g.db"
    n = 1000
    with open_store(StoreConfig(db_path=db)) as store:
        ingest(store, _papers(n))
    filler = _fill(small_fs, 0)
    vectors = np.random.default_rng(0).random((n, 384), dtype=np.float32)
    frame = pd.DataFrame({"id": [f"w{i}" for i in range(n)], "embedding": list(vectors)})
    with open_store(StoreConfig(db_path=db)) as store, pytest.raises(StoreFullError) as caught:
        store.write_node_properties("Paper", "id", frame)
    message = str(caught.value)
    assert f"Of the {n:,} Paper nodes" in message and "0 were written in earlier transactions" in message
    assert "durable" not in message and str(db) in message
    filler.unlink()
    with open_store(StoreConfig(db_path=db, read_only=True)) as store:
        embedded = {row.property: row.have for row in store.completeness()}
    assert embedded["Paper.embedding"] == 0  # the batch that failed wrote nothing


def test_a_compute_step_that_fills_the_disk_leaves_the_edges_it_replaces(
    small_fs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _tiny_store(small_fs)
    filler = _fill(small_fs, 0)
    assert main(["--db", str(db), "-q", "compute", "cocitation"]) == 1
    err = capsys.readouterr().err
    assert str(db) in err and "the disk is full" in err and "CO_CITED edges are as they were before this step" in err
    assert "durable" not in err and "internal error" not in err
    filler.unlink()
    with open_store(StoreConfig(db_path=db, read_only=True)) as store:
        assert store.count_rels("CO_CITED") == 0 and store.count_nodes("Paper") == TINY_PAPERS


def test_recover_fails_when_the_engine_leaves_its_checkpoint_files_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-write open that closes without finishing the checkpoint is no repair: recover must not say it is."""
    import api.cli.data as data

    db = _tiny_store(tmp_path)
    real_open = data.open_store

    def open_leaving_a_shadow(config: StoreConfig) -> object:
        store = real_open(config)
        if not config.read_only:
            close = store.close

            def close_and_leave() -> None:
                close()
                db.with_name(db.name + ".shadow").write_bytes(b"\0" * 4096)

            store.close = close_and_leave  # type: ignore[method-assign]
        return store

    monkeypatch.setattr(data, "open_store", open_leaving_a_shadow)
    assert main(["--db", str(db), "recover"]) == 1
    err = capsys.readouterr().err
    assert "g.db.shadow (4 KiB) are still beside it" in err and "run `citegraph --db" in err


def test_a_full_disk_beside_the_store_is_a_one_line_error_not_an_internal_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    import api.cli.data as data

    target = tmp_path / "g.db.index" / "vectors.npy"

    def full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr(data, "cmd_recover", full)
    assert main(["--db", str(tmp_path / "g.db"), "recover"]) == 1
    err = capsys.readouterr().err
    assert f"the disk is full: writing {target} failed" in err and "free on the filesystem of" in err
    assert "internal error" not in err
