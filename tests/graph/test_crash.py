"""What a killed writing command leaves beside an embedded store, and how the next open deals with it.

Each state is made the way a ``kill -9`` makes it: a subprocess writes and leaves with ``os._exit``
(no close, no checkpoint), at the point the kill would hit. The interrupted checkpoint is the state a
kill during ``CHECKPOINT`` leaves (the log renamed to ``<db>.wal.checkpoint``, an empty shadow file),
built by renaming, because a kill lands inside a checkpoint only by chance; ``benchmarks/kill_harness.py``
makes the same states with real kills.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_graph import tiny_batch

from graph import GraphStore, StoreConfig, StoreUnavailableError, ingest, open_store
from graph.recovery import TORN_SUFFIX, recovery_command

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


def _python(code: str, *args: str, expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS)]))
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    if expect is not None:
        assert done.returncode == expect, done.stderr[-2000:]
    return done


def _read(store: GraphStore, text: str) -> list[list[object]]:
    return store.read_only_query(text)[1]


def _title(path: Path, paper: str) -> object:
    with open_store(StoreConfig(db_path=path, read_only=True)) as store:
        return _read(store, f"MATCH (p:Paper) WHERE p.id = '{paper}' RETURN p.title")[0][0]


# Two committed transactions, then the process dies before closing: the store is <db> + <db>.wal.
WRITE_AND_DIE = """
import os, sys
from graph import StoreConfig, open_store
store = open_store(StoreConfig(db_path=sys.argv[1]))
for paper, title in (("p1", "first"), ("p2", "second")):
    store._transaction(lambda: store._execute(
        "MATCH (p:Paper) WHERE p.id = $id SET p.title = $t", {"id": paper, "t": title}, what="test"))
os._exit(0)
"""


@pytest.fixture
def loaded(store_path: Path) -> Path:
    """A closed store holding :func:`tiny_batch`."""
    with open_store(StoreConfig(db_path=store_path)) as store:
        ingest(store, tiny_batch())
    return store_path


def _files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))


# a first load killed mid-way ------------------------------------------------------------------------
KILL_FIRST_LOAD = """
import os, sys
from tiny_graph import tiny_batch
from graph import StoreConfig, ingest, open_store
from graph.embedded import EmbeddedStore
real = EmbeddedStore._write
def die(self, nodes, rels):
    os._exit(9)  # killed once <db>.building has its tables, before the COPYs end
EmbeddedStore._write = die
ingest(open_store(StoreConfig(db_path=sys.argv[1])), tiny_batch())
"""


def test_a_first_load_killed_mid_way_does_not_block_the_next_ingest(
    store_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _python(KILL_FIRST_LOAD, str(store_path), expect=9)
    assert {"graph.db.building", "graph.db.building.wal"} <= set(_files(store_path))
    with caplog.at_level(logging.WARNING, logger="graph"), open_store(StoreConfig(db_path=store_path)) as store:
        ingest(store, tiny_batch())
        assert store.count_nodes("Paper") == 5 and store.count_rels("CITES") == 6
    assert _files(store_path) == ["graph.db"]
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(lines) == 1 and "graph.db.building.wal" in lines[0] and "killed" in lines[0]
    assert "\n" not in lines[0]


def test_a_read_only_open_leaves_the_files_of_a_killed_first_load_alone(store_path: Path) -> None:
    open_store(StoreConfig(db_path=store_path)).close()
    _python(KILL_FIRST_LOAD, str(store_path), expect=9)
    before = _files(store_path)
    with open_store(StoreConfig(db_path=store_path, read_only=True)) as store:
        assert store.count_nodes("Paper") == 0
    assert _files(store_path) == before


HOLD = """
import sys, time
from graph import StoreConfig, open_store
store = open_store(StoreConfig(db_path=sys.argv[1]))
print("open", flush=True)
time.sleep(60)
"""


def _holding(path: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS)]))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
    return holder


def test_a_first_load_still_running_is_not_taken_for_leftovers(store_path: Path) -> None:
    building = store_path.with_name(store_path.name + ".building")
    holder = _holding(building)  # a live process writing <db>.building
    try:
        with pytest.raises(StoreUnavailableError, match=rf"process {holder.pid} .*loading it for the first time"):
            open_store(StoreConfig(db_path=store_path))
        assert building.exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_a_locked_store_names_the_process_that_holds_it(loaded: Path) -> None:
    holder = _holding(loaded)
    try:
        with pytest.raises(StoreUnavailableError) as caught:
            open_store(StoreConfig(db_path=loaded))
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    message = str(caught.value)
    assert f"process {holder.pid} (`" in message and "wait for it to finish" in message
    assert "another citegraph process" not in message


def test_a_store_that_cannot_be_opened_for_another_reason_blames_no_process(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("not a database\n" * 1000)
    with pytest.raises(StoreUnavailableError) as caught:
        open_store(StoreConfig(db_path=bogus, read_only=True))
    assert "process" not in str(caught.value) and "rebuild it" in str(caught.value)


# a staging table left by a kill -------------------------------------------------------------------
def test_a_staging_table_left_by_a_kill_is_dropped_by_the_next_read_write_open(
    loaded: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from graph.embedded import STAGING_SUFFIX

    with open_store(StoreConfig(db_path=loaded)) as store:
        store._execute(  # type: ignore[attr-defined]  # what a process killed mid-COPY leaves behind
            f"CREATE REL TABLE CO_CITED{STAGING_SUFFIX}(FROM Paper TO Paper, count INT64)", what="test"
        )
    tables = "CALL show_tables() RETURN name"
    with open_store(StoreConfig(db_path=loaded, read_only=True)) as store:
        assert [f"CO_CITED{STAGING_SUFFIX}"] in _read(store, tables)  # a reader changes nothing
    with caplog.at_level(logging.WARNING, logger="graph"):
        open_store(StoreConfig(db_path=loaded)).close()
    with open_store(StoreConfig(db_path=loaded, read_only=True)) as store:
        assert [f"CO_CITED{STAGING_SUFFIX}"] not in _read(store, tables)
    assert any(f"CO_CITED{STAGING_SUFFIX}" in r.getMessage() for r in caplog.records)


# a torn write-ahead log ---------------------------------------------------------------------------
def _tear(path: Path) -> Path:
    """Two committed transactions in the log, the last few bytes of the second cut off."""
    _python(WRITE_AND_DIE, str(path))
    wal = path.with_name(path.name + ".wal")
    with wal.open("r+b") as log_file:
        log_file.truncate(wal.stat().st_size - 6)
    return wal


def test_a_torn_wal_is_read_up_to_the_torn_record_by_a_read_only_open(
    loaded: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wal = _tear(loaded)
    size = wal.stat().st_size
    with caplog.at_level(logging.WARNING, logger="graph"):
        assert _title(loaded, "p1") == "first"  # committed before the torn one
        assert _title(loaded, "p2") != "second"  # the torn transaction
    assert wal.stat().st_size == size and not list(loaded.parent.glob(f"*{TORN_SUFFIX}*"))  # nothing written
    assert any(recovery_command(loaded) in r.getMessage() for r in caplog.records)


def test_a_torn_wal_is_repaired_by_a_read_write_open_keeping_a_copy(
    loaded: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wal = _tear(loaded)
    size = wal.stat().st_size
    with caplog.at_level(logging.WARNING, logger="graph"):
        open_store(StoreConfig(db_path=loaded)).close()
    (backup,) = loaded.parent.glob(f"*{TORN_SUFFIX}*")
    assert backup.stat().st_size == size
    assert _title(loaded, "p1") == "first" and _title(loaded, "p2") != "second"
    lines = [r.getMessage() for r in caplog.records if "torn" in r.getMessage()]
    assert len(lines) == 1 and backup.name in lines[0]
    caplog.clear()
    with open_store(StoreConfig(db_path=loaded)) as store:  # opens cleanly from now on, and takes writes
        ingest(store, tiny_batch())
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# a checkpoint interrupted by a kill ---------------------------------------------------------------
def _interrupt_checkpoint(path: Path) -> None:
    """The files a kill during CHECKPOINT leaves: the frozen log and an empty shadow file."""
    _python(WRITE_AND_DIE, str(path))
    path.with_name(path.name + ".wal").rename(path.with_name(path.name + ".wal.checkpoint"))
    path.with_name(path.name + ".shadow").touch()


def test_an_interrupted_checkpoint_does_not_block_read_only_opens(
    loaded: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _interrupt_checkpoint(loaded)
    with caplog.at_level(logging.WARNING, logger="graph"):
        assert _title(loaded, "p2") == "second"  # the checkpoint held both transactions
    assert _files(loaded) == ["graph.db"]
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(lines) == 1 and "checkpoint" in lines[0] and "killed" in lines[0]


def test_an_interrupted_checkpoint_on_files_it_cannot_write_says_which_command_finishes_it(
    loaded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graph.embedded import EmbeddedStore

    _interrupt_checkpoint(loaded)
    real_open = EmbeddedStore._open

    def read_only_files(self: EmbeddedStore, *, read_only: bool, tolerate_torn_wal: bool = False) -> None:
        if not read_only:  # what the engine answers on a read-only file system
            raise RuntimeError(f"IO exception: Cannot open file {self.path}: Read-only file system")
        real_open(self, read_only=read_only, tolerate_torn_wal=tolerate_torn_wal)

    monkeypatch.setattr(EmbeddedStore, "_open", read_only_files)
    with pytest.raises(StoreUnavailableError) as caught:
        open_store(StoreConfig(db_path=loaded, read_only=True))
    message = str(caught.value)
    assert "checkpoint recovery is pending" in message and recovery_command(loaded) in message
    assert "another citegraph process" not in message


def test_the_recovery_command_repairs_an_interrupted_checkpoint(loaded: Path) -> None:
    _interrupt_checkpoint(loaded)
    done = _python("import sys; from api.cli import main; sys.exit(main())", "--db", str(loaded), "recover")
    assert "nothing left to repair" in done.stdout
    assert _files(loaded) == ["graph.db"] and _title(loaded, "p2") == "second"


@pytest.mark.slow
def test_the_kill_harness_finds_every_store_openable_and_every_rerun_identical(tmp_path: Path) -> None:
    """A handful of real SIGKILLs into a first load, a later load and compute cocitation."""
    out = tmp_path / "kill_harness.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "kill_harness.py"), "--kills", "6", "--papers", "60",
         "--stages", "first-load,later-load,cocitation", "--work", str(tmp_path / "work"), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["kills"] == 6 and report["summary"]["failures"] == []
    rows = {(r["system"], r["metric"]): r["value"] for r in report["tables"][0]["rows"]}
    for stage in ("first-load", "later-load", "cocitation"):
        kills = rows[(stage, "kills")]
        assert kills == 2 and rows[(stage, "rerun = clean run")] == kills
        assert rows[(stage, "opens read-write")] == kills


@pytest.mark.slow
@pytest.mark.shared_data
def test_the_kill_harness_finds_the_index_and_the_reranker_whole_after_kills(tmp_path: Path, data_dir: Path) -> None:
    """Real SIGKILLs into `compute index` and `train reranker` on a cut of ScisummNet: every file beside the
    store loads and is the older one or the new one, and the rerun's files equal a clean run's."""
    out = tmp_path / "kill_harness.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "kill_harness.py"), "--kills", "2", "--stages", "index,reranker",
         "--scisummnet-every", "100", "--work", str(tmp_path / "work"), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=1800, check=False,
        env=dict(os.environ, CITEGRAPH_DATA=str(data_dir)),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["kills"] == 2 and report["summary"]["failures"] == []
    rows = {(r["system"], r["metric"]): r["value"] for r in report["tables"][0]["rows"]}
    for stage in ("index", "reranker"):  # a kill due after the command ended is tried again, so the split may vary
        kills = rows[(stage, "kills")]
        assert rows[(stage, "files load, old or new")] == rows[(stage, "rerun = clean run")] == kills
