"""What a killed writing command leaves beside an embedded store, and how opening the store deals with it.

A LadybugDB store ``<db>`` is one file; while it is open for writing, and after a crash, companions sit
beside it: ``<db>.wal`` (the write-ahead log) and, during a checkpoint, ``<db>.shadow``,
``<db>.wal.checkpoint`` and ``<db>.checkpoint.*.lock``. citegraph adds ``<db>.building`` (a first load is
built in a new file and renamed over the empty store, see :meth:`graph.embedded.EmbeddedStore.apply`), with
companions of its own, and ``<TYPE>_staging`` relationship tables (edges being replaced).

What a ``kill -9`` can leave, and what :class:`~graph.embedded.EmbeddedStore` does when it next opens the store:

=================================  ===========================================  ===========================================
left behind                        read-write open                              read-only open
=================================  ===========================================  ===========================================
``<db>.building`` and companions   removed, one warning line                    left alone (the store is the empty one)
``<TYPE>_staging`` table           dropped, one warning line                    left alone (the old edges are intact)
a torn WAL tail (the engine:       the log is copied to ``<db>.wal.torn-<UTC>``,  the committed part is read, nothing is
"Reading past the end of the       replayed up to the torn record (a write      written; the warning names the command
file", "Checksum verification      that never committed) and checkpointed       that repairs the files
failed")
an interrupted checkpoint          the engine finishes it                       finished by a short read-write open
("checkpoint recovery is pending")                                              (below), one warning line
=================================  ===========================================  ===========================================

**Why a read-only open may finish a checkpoint.** The engine refuses every read-only open until a
read-write open has applied the checkpoint's committed pages, so without a write nothing can read the
store. The short read-write open is safe: the engine takes an exclusive lock on ``<db>`` for it, so it
fails (and this module names the process) if any writer is alive, which includes a writer still
checkpointing; and it applies only pages of a checkpoint whose log had committed, so the graph's
contents do not change. Where the files are not writable the open fails and the message gives
the command to run as a user who can write them. A torn log, by contrast, can be read without writing,
so a read-only open never rewrites it.

``citegraph --db <db> recover`` does the repairs a read-write open does, then closes the store.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import time
from enum import Enum
from pathlib import Path

log = logging.getLogger(__name__)

BUILDING_SUFFIX = ".building"  # <db>.building: a first load, built in a new file and renamed over <db>
STAGING_SUFFIX = "_staging"  # <TYPE>_staging: a relationship table being rebuilt, before the swap
TORN_SUFFIX = ".wal.torn-"  # <db>.wal.torn-<UTC time>: a copy of a torn write-ahead log, kept before the repair
# The engine's files beside a store file (the WAL, and those of a checkpoint in progress).
ENGINE_COMPANIONS = (".wal", ".shadow", ".wal.checkpoint", ".checkpoint.intent.lock", ".checkpoint.apply.lock")


def recovery_command(path: Path) -> str:
    """The command that repairs what a crash left beside the store ``path`` (a read-write open, then close)."""
    return f"citegraph --db {path} recover"


class OpenFailure(Enum):
    """Why the engine refused to open a store, read from its message."""

    LOCKED = "locked"  # another process has the store open for writing
    TORN_WAL = "torn_wal"  # the write-ahead log ends in a record a killed process did not finish writing
    RECOVERY_PENDING = "recovery_pending"  # a checkpoint was interrupted; a read-write open finishes it
    OTHER = "other"


def classify(exc: BaseException) -> OpenFailure:
    text = str(exc)
    if "Could not set lock" in text:
        return OpenFailure.LOCKED
    if "checkpoint recovery is pending" in text:
        return OpenFailure.RECOVERY_PENDING
    if ("Reading past the end of the file" in text and ".wal" in text) or (
        "Checksum verification failed" in text and "WAL" in text
    ):
        return OpenFailure.TORN_WAL
    return OpenFailure.OTHER


def companions(path: Path) -> list[Path]:
    """The engine's files beside ``path`` that exist now."""
    return [p for p in (path.with_name(path.name + s) for s in ENGINE_COMPANIONS) if p.exists()]


def building_path(path: Path) -> Path:
    return path.with_name(path.name + BUILDING_SUFFIX)


SPILL_SUFFIX = ".spill"  # <db>.building.spill/: a streamed load's relationship rows, copied in at its end


def spill_path(path: Path) -> Path:
    """The folder where the staged copy ``path`` (a ``<db>.building``) spills its relationship rows."""
    return path.with_name(path.name + SPILL_SUFFIX)


# Who holds a store ---------------------------------------------------------------------------------
def lock_holder(path: Path, message: str = "") -> int | None:
    """The process that holds the engine's write lock on ``path``, or None when none does.

    The engine names it in its error (``Lock is held by PID 123``); otherwise ``/proc/locks`` is read
    (Linux), matching the file's inode. Our own process is never reported.
    """
    named = re.search(r"held by PID (\d+)", message)
    if named:
        return int(named.group(1))
    try:
        inode = os.stat(path).st_ino
        lines = Path("/proc/locks").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 3443 fe:00:2163190 0 EOF" (a blocked waiter has "->" after the number)
        if "->" in fields or len(fields) < 6 or fields[3] != "WRITE":
            continue
        pid, device_inode = fields[4], fields[5]
        if device_inode.rsplit(":", 1)[-1] == str(inode) and int(pid) != os.getpid():
            return int(pid)
    return None


def describe_process(pid: int) -> str:
    """``process 123 (`citegraph compute cocitation`)``, or without the command where it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"process {pid}"
    words = [w for w in raw.decode("utf-8", "replace").split("\0") if w]
    if len(words) >= 3 and words[1] == "-m":  # python -m api.cli ...: show the module's arguments
        words = [words[2], *words[3:]]
    command = " ".join(" ".join(words).split())  # one line, whatever the arguments hold
    return f"process {pid} (`{command[:120]}{'…' if len(command) > 120 else ''}`)"


def locked_advice(path: Path, message: str) -> str:
    """What to do when the engine reports the store ``path`` locked."""
    pid = lock_holder(path, message)
    if pid is None:
        return "another process has it open for writing; wait for that process to finish, then retry"
    return f"{describe_process(pid)} has it open for writing; wait for it to finish (or stop it), then retry"


# Leftovers of a killed first load ------------------------------------------------------------------
def remove_build_leftovers(path: Path) -> list[Path]:
    """Remove ``<path>.building`` and its engine files left by a killed first load; the paths removed.

    Raises :class:`~graph.errors.StoreUnavailableError` when a live process is building it (the engine's
    lock on ``<path>.building`` is held): that load is running, not left behind.
    """
    from graph.errors import StoreUnavailableError

    building = building_path(path)
    found = [p for p in [building, *companions(building), spill_path(building)] if p.exists()]
    if not found:
        return []
    pid = lock_holder(building) if building.exists() else None
    if pid is not None:
        raise StoreUnavailableError(
            f"cannot open the store at {path}: {describe_process(pid)} is loading it for the first time "
            f"(into {building.name}); wait for it to finish (or stop it), then retry"
        )
    for leftover in found:
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)
    return found


def build_leftovers_line(path: Path, removed: list[Path]) -> str:
    names = ", ".join(p.name for p in removed)
    return (
        f"{path}: removed {names}, left by a first load that was killed before it finished; "
        "the store is as before that load, rerun it"
    )


# A torn write-ahead log ----------------------------------------------------------------------------
def keep_torn_wal(path: Path) -> Path:
    """Copy ``<path>.wal`` to ``<path>.wal.torn-<UTC time>`` before the engine discards its torn tail."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    backup = path.with_name(f"{path.name}{TORN_SUFFIX}{stamp}")
    shutil.copy2(path.with_name(path.name + ".wal"), backup)
    return backup


def torn_wal_line(path: Path, backup: Path, message: str) -> str:
    return (
        f"{path}: the write-ahead log ended in a torn record ({message.splitlines()[0]}), left by a writing "
        f"command that was killed mid-write; replayed every committed transaction and dropped the torn tail "
        f"(the log as it was is kept in {backup.name}); rerun the command that was killed"
    )


def torn_wal_read_only_line(path: Path, message: str) -> str:
    return (
        f"{path}: the write-ahead log ends in a torn record ({message.splitlines()[0]}), left by a writing "
        f"command that was killed mid-write; reading the committed transactions only. Repair the files with "
        f"`{recovery_command(path)}` (or any writing command), then rerun the command that was killed"
    )


def recovery_pending_line(path: Path) -> str:
    return (
        f"{path}: finished a checkpoint that a killed writing command had interrupted (the data is unchanged) "
        "before opening it read-only"
    )


# A full disk -----------------------------------------------------------------------------------------
NO_SPACE = "No space left on device"  # the engine's IO errors end with strerror(ENOSPC)
POST_COMMIT_CHECKPOINT = (
    "post-commit checkpoint failed"  # the engine's commit error when the checkpoint after it failed
)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is the filesystem running out of space: an ``OSError`` with ``ENOSPC`` (Python's own
    writes: a copy of the store, a file beside it) or the engine's ``RuntimeError`` ending in strerror(ENOSPC)."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    return NO_SPACE in str(exc)


def size_text(n_bytes: int) -> str:
    """``1.5 MiB`` / ``12 KiB`` / ``0 bytes``: a size as a message gives it."""
    if n_bytes >= 2**20:
        return f"{n_bytes / 2**20:.1f} MiB"
    if n_bytes >= 2**10:
        return f"{n_bytes // 2**10} KiB"
    return f"{n_bytes} bytes"


def free_space_text(path: Path) -> str:
    """``3.2 MiB free on the filesystem of /data`` (the folder of ``path``), or that it could not be read."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # a folder the failed write was to create
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return f"the free space on the filesystem of {folder} could not be read"
    return f"{size_text(free)} free on the filesystem of {folder}"


def pending_checkpoint_bytes(path: Path) -> int:
    """The size of what an unfinished checkpoint left beside ``path`` (``<db>.shadow``, the logs): the pages
    finishing it writes into the store's file, so about the room that needs (the engine says no more)."""
    return sum(p.stat().st_size for p in companions(path) if p.exists())


def checkpoint_pending_line(path: Path, *, disk_full: bool) -> str:
    """What to do when the engine's checkpoint after a commit failed (the disk filled, or another cause): the
    engine calls the write "durable", but on a full disk the commit record may not have reached it (the
    engine's own words: "may have reached storage"), so the outcome is known only after recovery."""
    held = pending_checkpoint_bytes(path)
    what = f"the disk filled up ({free_space_text(path)})" if disk_full else "the checkpoint failed"
    room = f" (the checkpoint's files beside it hold {size_text(held)}: leave at least that much free)" if held else ""
    free = f"Free space on that filesystem{room}, run" if disk_full else "Run"
    return (
        f"{what} while the engine checkpointed a write into {path}. That write is all or nothing, but whether the "
        "store holds it is known only once the checkpoint is finished, and until then no command can open the "
        f"store. {free} `{recovery_command(path)}` (it finishes the checkpoint and prints what the store holds), "
        "then rerun the command that failed: writes are idempotent, so one that did commit is not stored twice. "
        "The store is not damaged: do not delete it"
    )
