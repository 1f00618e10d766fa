"""The embedded backend: LadybugDB (the maintained fork of Kùzu), one file, no server.

Bulk writes go through COPY and LOAD FROM over typed Arrow tables, inside one explicit
transaction per :meth:`EmbeddedStore.apply`: a failure rolls everything back. Measured on this
machine's class (2 cores): COPY loads ~1M nodes/s and ~0.7M edges/s, and ``LOAD FROM ... MERGE``
updates ~0.5M nodes/s, but matching existing *edges* row by row runs at a few hundred rows/s. So
edges that already exist are never matched one by one: unchanged ones are skipped, new ones are
appended with COPY, and when existing edges change the relationship table is swapped (drop,
re-create, COPY the merged edges) inside the same transaction.

LadybugDB's errors enter at two places, opening the database and running a statement, and both
go through :func:`translate_ladybug_error`: users see a :class:`~graph.errors.StoreUnavailableError`,
:class:`~graph.errors.QueryError` or :class:`~graph.errors.StoreError` naming the store and the statement.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import logging
import os
import queue
import re
import shutil
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import ladybug
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from graph import recovery
from graph.arrow import arrow_strings, arrow_table
from graph.errors import (
    CitegraphError,
    QueryError,
    SchemaError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
)
from graph.integrity import damage_advice, non_finite_count, require_sound, require_valid
from graph.readonly import EMBEDDED_PROCEDURES, check_plan, check_read_only
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN, Kind, NodeType, Property, RelType, Schema
from graph.statements import identifier, load_statement, statement_text
from graph.store import GraphStore, WorkChange, WriteResult

log = logging.getLogger(__name__)

# A ``$skip`` from here on is checked against the statement's row count before it reaches the engine: the
# SIGSEGV of ``ORDER BY ... SKIP`` past the end (see :meth:`EmbeddedStore._clamped_skip`) needs a SKIP beyond
# ~11,900 rows in every shape tried, so smaller ones run as they are and a first page costs no count.
SKIP_COUNTED_FROM = 1_000


_DDL_TYPES = {
    Kind.STRING: "STRING",
    Kind.INT: "INT64",
    Kind.FLOAT: "DOUBLE",
    Kind.BOOL: "BOOLEAN",
    Kind.STRING_LIST: "STRING[]",
    Kind.FLOAT_LIST: "DOUBLE[]",
    Kind.VECTOR32: "FLOAT[{size}]",
    Kind.VECTOR64: "DOUBLE[{size}]",
}


def ddl_type(prop: Property) -> str:
    """LadybugDB column type of a property (fixed-size arrays for vectors)."""
    return _DDL_TYPES[prop.kind].format(size=prop.size)


def _normalise_type(text: str) -> str:
    return {"BOOL": "BOOLEAN"}.get(text.upper(), text.upper())


def _plain_type(kind: pa.DataType, *, wide: bool = False) -> pa.DataType:
    """The type a result column is handed out as: decimals become int64 (scale 0; float64 when ``wide``)
    or float64, inside lists too; every other type stays as it is."""
    if pa.types.is_decimal(kind):
        return pa.int64() if kind.scale == 0 and not wide else pa.float64()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        inner = _plain_type(kind.value_type, wide=wide)
        if inner == kind.value_type:
            return kind
        return pa.list_(inner, kind.list_size) if pa.types.is_fixed_size_list(kind) else pa.list_(inner)
    return kind


def plain_numbers(table: pa.Table) -> pa.Table:
    """``table`` with LadybugDB's INT128 columns as int64.

    The engine sums integers into INT128, which Arrow carries as ``decimal128(38, 0)`` and Python as
    ``Decimal``: ``sum(CASE ... THEN 1 ELSE 0 END)`` reached JSON as the string ``"0"`` and pandas as
    objects, where Neo4j returns the same sums as integers. A sum past the int64 range (an overflow
    error on Neo4j) comes back as a float64 rather than failing.
    """

    def schema(*, wide: bool) -> pa.Schema:
        return pa.schema([field.with_type(_plain_type(field.type, wide=wide)) for field in table.schema])

    if schema(wide=False).equals(table.schema):
        return table
    try:
        return table.cast(schema(wide=False))
    except pa.ArrowInvalid:  # an integer out of the int64 range
        return table.cast(schema(wide=True))


# A result column type that holds nodes, relationships or paths, alone or inside a list or struct.
_GRAPH_TYPE = re.compile(r"\b(NODE|REL|RECURSIVE_REL)\b")


def readable_graph_value(value: Any) -> Any:
    """``value`` of a query's row with each node, relationship and path the engine hands out as a map a user
    reads: a node as ``{"_label": ..., property: value, ...}``, a relationship as ``{"_type": ..., ...}`` (the
    properties that are set; the engine's internal offsets left out, as Neo4j's records leave out theirs), a
    path as ``{"nodes": [...], "relationships": [...]}``; lists and maps are read inside."""
    if isinstance(value, list):
        return [readable_graph_value(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "_NODES" in value and "_RELS" in value:
        return {
            "nodes": [readable_graph_value(node) for node in value["_NODES"]],
            "relationships": [readable_graph_value(rel) for rel in value["_RELS"]],
        }
    if "_LABEL" in value and "_ID" in value:
        name = "_type" if "_SRC" in value else "_label"
        properties = {
            key: readable_graph_value(item)
            for key, item in value.items()
            if key not in ("_ID", "_LABEL", "_SRC", "_DST") and item is not None
        }
        return {name: value["_LABEL"], **properties}
    return {key: readable_graph_value(item) for key, item in value.items()}


OPENING = "open"  # the `what` of translate_ladybug_error when the database itself could not be opened
POOL_FULL = "buffer pool is full"  # in the engine's error when a statement needs more page cache than it has


def translate_ladybug_error(exc: RuntimeError, *, path: Path, what: str, read_only: bool = False) -> CitegraphError:
    """The project's error for a LadybugDB failure (the engine raises ``RuntimeError`` for all of them).

    Args:
        exc: the engine's error; its first line is its message (``Binder exception: ...``).
        path: the store file, named in the message.
        what: the statement that failed (``"query"`` for a user's query), or :data:`OPENING`.
        read_only: whether the store is open read-only; a write refused there is a :class:`QueryError`.
    """
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if recovery.is_disk_full(exc) or recovery.POST_COMMIT_CHECKPOINT in message:
        return _disk_full(message, path=path, what=what)
    if what == OPENING:
        return StoreUnavailableError(f"cannot open the store at {path}: {message}; {_opening_advice(exc, path)}")
    if read_only and "read" in message.lower() and "only" in message.lower():
        return QueryError(f"the store is open read-only and `{what}` would write: {message}")
    if POOL_FULL in message:
        return StoreError(
            f"embedded store {path}: `{what}` needs more page cache than the store was given: {message}; raise "
            "CITEGRAPH_BUFFER_POOL_MIB (a streamed load also takes fewer works per batch: --chunk-works)"
        )
    return StoreError(f"embedded store {path}: `{what}` failed: {message}")


# What the engine's commit error says before the cause: "Transaction committed successfully, but the post-commit
# checkpoint failed. The committed data is durable and will be recovered on restart: <cause>", the cause sometimes
# "Checkpoint failed after its commit record may have reached storage; … Original error: <IO error>".
_IO_FAILURE = re.compile(r"IO exception: .*?" + re.escape(recovery.NO_SPACE))
_ENGINE_PREAMBLE = re.compile(r"^.*(?:recovered on restart: |Original error: )")


def _disk_full(message: str, *, path: Path, what: str) -> StoreError:
    """The error of a statement or an open that failed for want of disk space, or whose commit's checkpoint failed.

    The engine's commit error then calls the write "durable", which a full disk makes untrue: measured on a
    4 MiB tmpfs, a load whose checkpoint filled the disk was gone after recovery when nothing but the store
    file was left beside it (with ``<db>.shadow`` beside it too, once gone and once kept). So: with no engine
    file beside the store the engine has nothing to recover the write from, and the message says the store is
    as before; with some, the write is whole or absent, and ``recover`` tells which once there is room. What a
    failed statement leaves written is said by the caller that knows (a transaction rolled back, a staged copy
    removed, batches already committed).
    """
    cause = _ENGINE_PREAMBLE.sub("", message)
    full = recovery.is_disk_full(RuntimeError(message))
    free = recovery.free_space_text(path)
    doing = "opening it" if what == OPENING else f"`{what}`"
    left = recovery.companions(path)
    if recovery.POST_COMMIT_CHECKPOINT in message and not left:
        error = StoreFullError if full else StoreError
        reason = f"the disk filled up ({free})" if full else "the checkpoint failed"
        return error(
            f"embedded store {path}: {doing} failed: {reason} while the engine checkpointed this write ({cause}), "
            "and no log of it is left beside the store, so nothing of it was stored: the store is as it was "
            "before this write. Free space on that filesystem (or put the store on a larger one with --db), "
            "then rerun the command"
        )
    if recovery.POST_COMMIT_CHECKPOINT in message or (what == OPENING and full and left):
        line = recovery.checkpoint_pending_line(path, disk_full=full)
        if full:
            return StoreFullError(f"embedded store {path}: {doing} failed ({cause}): {line}", pending_recovery=True)
        return StoreError(f"embedded store {path}: {doing} failed ({cause}): {line}")
    if what == OPENING:
        return StoreFullError(
            f"cannot open the store at {path}: the disk is full ({free}): {cause}; nothing was written. Free space "
            "on that filesystem, then retry"
        )
    if what == "commit":
        return StoreFullError(
            f"embedded store {path}: `commit` failed, the disk is full ({free}): {cause}; the engine did not commit "
            "this write, so nothing of it was stored. Free space on that filesystem (or put the store on a larger "
            "one with --db), then rerun the command"
        )
    return StoreFullError(f"embedded store {path}: `{what}` failed, the disk is full ({free}): {cause}")


def _failed_file(message: str) -> str:
    """The file an engine IO error names (``… path: /x/g.db.wal fileDescriptor: 4 …``), or ``""``."""
    found = re.search(r"path: (\S+) fileDescriptor", message)
    return found[1] if found else ""


def _abandon(*handles: object) -> None:
    """Keep the engine's connection and database alive until the process ends, never closing them.

    Why: when the disk filled while the engine wrote its log (``<db>.wal``), its database's close (and its
    destructor, at the latest when the interpreter exits) throws the IO error again outside any handler, and
    the C++ runtime aborts the process (measured on a full tmpfs: "terminate called after throwing an instance of
    'lbug::common::IOException'", exit 134) — before the CLI printed what happened. An extra reference keeps
    the destructor from running; the process's exit then releases the files and the lock, and the next open
    reads the log as a killed writer left it (:mod:`graph.recovery`).
    """
    for handle in handles:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(handle))


def _out_of_memory(path: Path, what: str, exc: MemoryError) -> StoreError:
    """The engine's std::bad_alloc, most often a damaged length field asking for terabytes, as what to do."""
    return StoreError(
        f"embedded store {path}: `{what}` ran out of memory ({exc or 'bad_alloc'}); if the machine has memory to "
        f"spare, the store's file is damaged: run `citegraph --db {path} check`, then restore a copy or rebuild it "
        "(`make build`)"
    )


def _arrow(result: Any, path: Path, what: str, *chunk: int) -> pa.Table:
    """``result.get_as_arrow(*chunk)``: the engine reads the pages of the result here, so a damaged one may
    ask for more memory than there is (:func:`_out_of_memory`)."""
    try:
        table: pa.Table = result.get_as_arrow(*chunk)
    except MemoryError as exc:
        raise _out_of_memory(path, what, exc) from exc
    return _with_clean_empty_lists(table)


# Rows up to which EmbeddedStore.query reads a result as Python values (QueryResult.get_all) rather than through the
# engine's Arrow export: the export costs a few milliseconds whatever the size (measured on the bundled store: one
# paper by id 0.8 ms to run, 6.6 ms with get_as_arrow, 0.8 ms with get_all), which was most of a light GraphQL
# request's time in the store; past a few thousand rows the export is the faster one.
SMALL_RESULT_ROWS = 2_000


def _small_table(result: Any, path: Path, what: str) -> pa.Table | None:
    """A small result as an Arrow table built from its Python values (each column's type inferred, then
    checked as every result is), or None where a value does not read or convert (text that is not UTF-8 in a
    damaged page, a value Arrow cannot hold): the caller then reads it through the engine's export, whose
    checks name the damage (:func:`graph.integrity.require_sound`). A damaged length that asks for more memory
    than there is gets the export's message (:func:`_out_of_memory`)."""
    names = result.get_column_names()
    try:
        rows = result.get_all()
        return pa.table({name: pa.array([row[i] for row in rows]) for i, name in enumerate(names)})
    except MemoryError as exc:
        raise _out_of_memory(path, what, exc) from exc
    except (UnicodeDecodeError, pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        result.reset_iterator()
        return None


def _with_clean_empty_lists(table: pa.Table) -> pa.Table:
    """``table`` with every list column whose lists hold no value at all rebuilt from its nulls.

    Why: where every list of a result is null or empty (a relationship property no load has set, such as
    ``CITES.intents`` outside Semantic Scholar), the engine hands over an empty child array whose one offset
    is left uninitialised; nothing reads it, but Arrow's full validation (:func:`require_valid`) would take
    the stray number for a damaged page."""
    for index, name in enumerate(table.column_names):
        column = table.column(index)
        if not pa.types.is_list(column.type) or any(len(chunk.values) for chunk in column.chunks):
            continue
        rebuilt = [
            pa.ListArray.from_arrays(
                pa.array(np.zeros(len(chunk) + 1, dtype=np.int32)),
                pa.array([], type=column.type.value_type),
                type=column.type,
                mask=chunk.is_null(),
            )
            for chunk in column.chunks
        ]
        table = table.set_column(index, name, pa.chunked_array(rebuilt, type=column.type))
    return table


def _opening_advice(exc: BaseException, path: Path) -> str:
    """What to do about a store the engine would not open, by what the engine said."""
    failure = recovery.classify(exc)
    if failure is recovery.OpenFailure.LOCKED:
        return recovery.locked_advice(path, str(exc))
    if failure is recovery.OpenFailure.RECOVERY_PENDING:
        return (
            "a writing command was killed during a checkpoint and finishing it needs a read-write open, which "
            f"failed here; run `{recovery.recovery_command(path)}` as a user who can write the store's files"
        )
    if failure is recovery.OpenFailure.TORN_WAL:
        return (
            f"the write-ahead log {path.name}.wal ends in a torn record (a writing command was killed mid-write); "
            f"run `{recovery.recovery_command(path)}`: it keeps a copy of the log and replays what committed"
        )
    return (
        f"check that {path} is a citegraph store readable by you; if it is damaged, rebuild it "
        "(delete it and the files beside it named like it, then `make build`)"
    )


STAGING_SUFFIX = recovery.STAGING_SUFFIX  # a relationship table being rebuilt by replace_edges, before the swap
# Rows per transaction of write_node_properties. LadybugDB's COMMIT of list-property updates grows
# with the square of the rows updated in one transaction (measured: 50k papers with two 20-element
# list columns 15 s, 100k 63 s; in 10k-row transactions 100k take 12.5 s and 300k 41 s, linearly).
SET_BATCH_ROWS = 10_000
# Start nodes per lookup of the edges an upsert can match (rels_from_keys), and keys per lookup of the stored
# values a node upsert compares: bounds the parameter list and what one lookup holds (twenty edges a paper).
LOOKUP_KEYS = 5_000
# has_nodes looks the asked keys up in the key index when they number under 1/SCAN_RATIO of the stored nodes,
# and reads every stored key otherwise (measured on 636k papers: 10,000 keys looked up in 0.076 s, every key
# read in 0.09 s).
SCAN_RATIO = 20
# Page cache in MiB of the copy a streamed load writes (EmbeddedStore.staged) when CITEGRAPH_BUFFER_POOL_MIB sets
# none. A batch of 5,000 OpenAlex works (~100k CITES) needs well under it; measured: 1M edges COPYed into a table of
# 8M fit in 256 MiB.
STREAM_BUFFER_POOL_MIB = 512
# Connections of a read-only store when the caller sets none (CITEGRAPH_READ_CONNECTIONS, StoreConfig).
DEFAULT_READ_CONNECTIONS = 2
# query_keys runs the one-key statement per key up to this many keys, the list statement beyond. Measured on the
# bundled store (133k papers, 388k WROTE, 2 loaded cores): the authors of 1 paper by `p.id IN $ids` 18-30 ms (a
# scan of Paper and Author), by `p.id = $id` 0.13 ms; the citing papers of the 100 most cited papers in one
# `IN` statement 334 ms, one statement per paper 111 ms in all (1.2 ms for the most cited, 336 rows).
KEYED_LOOKUP_MAX = 200
# The memory a streamed load's deferred relationship COPYs plan for (EmbeddedStore.write_deferred): a quarter of it
# is the Arrow data of one COPY. `citegraph ingest --memory-limit` sets it.
DEFERRED_MEMORY_BYTES = 1536 * 2**20
# The engine's column compression, off. LadybugDB 0.22 stores a DOUBLE[] list's values with its floating-point
# compression (ALP: storage_info shows `FLOAT_COMPRESSION[e], n Exceptions`) when they mix short decimals with
# long ones, as co-citation probabilities do; a later SET of some nodes' lists and a checkpoint (the one after an
# autocommit COPY, a CHECKPOINT, or a close: each CLI command's) then zeroes values of other nodes, written or
# not (benchmarks/ladybug_list_property_loss.py; rerunning `compute cocitation` after CITES changed lost them).
# Uncompressed, every value is kept. Cost, measured on `ingest anthology` (docs/results/store_compression.json):
# the store 37% larger, the load no slower. Chunks a store already holds compressed stay so until rewritten.
COMPRESSION = False


class EmbeddedStore(GraphStore):
    backend = "embedded"
    dialect = "embedded"

    def __init__(
        self,
        path: Path,
        schema: Schema,
        *,
        read_only: bool = False,
        buffer_pool_mib: int = 0,
        read_connections: int = DEFAULT_READ_CONNECTIONS,
    ) -> None:
        super().__init__(schema, read_only=read_only)
        self.path = Path(path)
        self.buffer_pool_mib = buffer_pool_mib  # 0: the engine's default
        if read_connections < 1:
            raise ValueError(f"read_connections must be at least 1, got {read_connections}")
        # A read-only open holds this many connections of its one Database, each statement leasing one
        # (:meth:`_lease`): the engine runs statements of different connections at once, with the GIL released,
        # so a long statement on one does not hold up a short one on another. A read-write open keeps one
        # connection: its transactions (BEGIN … COMMIT) belong to a connection, and its writers are serial.
        self.read_concurrency = read_connections if read_only else 1
        self._pool: queue.LifoQueue[Any] | None = None
        self._leases = threading.local()  # .conn: the connection this thread leased, while it holds one
        if read_only and not self.path.exists():
            raise StoreUnavailableError(
                f"no store at {self.path}; build one first with `make build` (or `citegraph ingest all`)"
            )
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            removed = recovery.remove_build_leftovers(self.path)
            if removed:
                log.warning("%s", recovery.build_leftovers_line(self.path, removed))
        # True for the copy a staged load writes (staged()): it is discarded whole on failure, so its
        # writes need neither a transaction nor a build-and-swap of their own.
        self._direct = False
        self._spill: _RelSpill | None = None  # the edges apply_deferring spilled, until write_deferred
        self._in_transaction = False  # between _begin and _commit / _rollback
        self._log_unwritable = False  # a full disk failed a write of the engine's log: close abandons (_abandon)
        self._connect()
        self._columns: dict[str, list[str]] = {}
        if not read_only:
            self._drop_staging_tables()

    def _open(self, *, read_only: bool, tolerate_torn_wal: bool = False) -> None:
        self._db = ladybug.Database(
            str(self.path),
            read_only=read_only,
            buffer_pool_size=self.buffer_pool_mib * 2**20,
            throw_on_wal_replay_failure=not tolerate_torn_wal,
            compression=COMPRESSION,
        )
        self._conn = ladybug.Connection(self._db)
        self._pool = None
        if read_only and self.read_concurrency > 1:
            self._pool = queue.LifoQueue()
            self._pool.put(self._conn)
            for _ in range(self.read_concurrency - 1):
                self._pool.put(ladybug.Connection(self._db))

    @contextlib.contextmanager
    def _lease(self) -> Iterator[Any]:
        """A connection for this thread's statement and the reading of its result.

        Without a pool (a read-write open, or one read connection) it is the store's one connection, as
        before. With one, a connection is taken from the pool for the block (waiting while every one is
        leased: at most :attr:`read_concurrency` statements run at once) and given back after; a thread that
        already holds one (a statement that counts before it reads, :meth:`_clamped_skip`) keeps using it.
        """
        held = getattr(self._leases, "conn", None)
        pool = self._pool
        if held is not None or pool is None:
            yield held if held is not None else self._conn
            return
        conn = pool.get()
        self._leases.conn = conn
        try:
            yield conn
        finally:
            self._leases.conn = None
            pool.put(conn)

    def _connection(self) -> Any:
        """The connection this thread's statement runs on: its lease's, else the store's own."""
        held = getattr(self._leases, "conn", None)
        return held if held is not None else self._conn

    def _connect(self) -> None:
        """Open the database, repairing what a killed writer left (see :mod:`graph.recovery`)."""
        try:
            self._open(read_only=self.read_only)
            return
        except RuntimeError as exc:
            failure, first = recovery.classify(exc), exc
        try:
            if failure is recovery.OpenFailure.TORN_WAL and self.read_only:
                self._open(read_only=True, tolerate_torn_wal=True)  # reads the committed part, writes nothing
                log.warning("%s", recovery.torn_wal_read_only_line(self.path, str(first)))
            elif failure is recovery.OpenFailure.TORN_WAL:
                backup = recovery.keep_torn_wal(self.path)
                self._open(read_only=False, tolerate_torn_wal=True)
                # Checkpoint at once: records appended after the torn one would be lost by the next replay.
                self._conn.execute("CHECKPOINT")
                log.warning("%s", recovery.torn_wal_line(self.path, backup, str(first)))
            elif failure is recovery.OpenFailure.RECOVERY_PENDING and self.read_only:
                self._finish_checkpoint()
                self._open(read_only=True)
                log.warning("%s", recovery.recovery_pending_line(self.path))
            else:
                raise first
        except RuntimeError as exc:
            self._conn = None  # type: ignore[assignment]
            if exc is first or recovery.classify(exc) is recovery.OpenFailure.LOCKED:
                raise translate_ladybug_error(exc, path=self.path, what=OPENING) from exc
            if recovery.is_disk_full(exc):  # the repair itself needs room: say so, not "rebuild it"
                raise translate_ladybug_error(exc, path=self.path, what=OPENING) from exc
            error = translate_ladybug_error(first, path=self.path, what=OPENING)
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise StoreUnavailableError(f"{error} (the repair failed: {reason})") from exc

    def _finish_checkpoint(self) -> None:
        """A short read-write open, in which the engine applies the interrupted checkpoint's committed pages.

        The engine locks the store exclusively for it, so this fails while any writer is alive.
        """
        try:
            self._open(read_only=False)
        finally:
            if getattr(self, "_conn", None) is not None:
                self._conn.close()
                self._db.close()
                self._conn = None  # type: ignore[assignment]

    def _drop_staging_tables(self) -> None:
        """Drop ``<TYPE>_staging`` tables that a process killed in :meth:`_replace_edges` left behind."""
        staging = {f"{rel}{STAGING_SUFFIX}" for rel in self.schema.rels}
        for name in sorted(staging & set(self._existing_tables())):
            self._run("drop_table_if_exists", identifiers={"TABLE": name})
            log.warning(
                "%s: dropped the table %s, left by a command killed while it replaced %s edges; those edges are "
                "as they were before that command, rerun it",
                self.path,
                name,
                name.removesuffix(STAGING_SUFFIX),
            )

    def describe(self) -> str:
        return f"embedded store {self.path}"

    def close(self) -> None:
        if getattr(self, "_conn", None) is not None:
            if getattr(self, "_log_unwritable", False):
                _abandon(self._conn, self._db)
            else:
                for conn in self._pooled():
                    if conn is not self._conn:
                        conn.close()
                self._conn.close()
                self._db.close()
            self._conn = None  # type: ignore[assignment]
            self._pool = None

    def _pooled(self) -> list[Any]:
        """The pool's connections not leased now (all of them once the store's users have stopped)."""
        pool, found = getattr(self, "_pool", None), []
        while pool is not None:
            try:
                found.append(pool.get_nowait())
            except queue.Empty:
                break
        return found

    # statements ------------------------------------------------------------------------------
    def _run(
        self, name: str, params: Mapping[str, Any] | None = None, identifiers: Mapping[str, str] | None = None
    ) -> Any:
        text = statement_text(name, self.dialect, identifiers)
        if params is not None and "skip" in params:
            params = self._clamped_skip(name, params, identifiers)
        return self._execute(text, params, what=name)

    def _clamped_skip(
        self, name: str, params: Mapping[str, Any], identifiers: Mapping[str, str] | None
    ) -> Mapping[str, Any]:
        """``params`` with ``skip`` at most the statement's row count, counted only from :data:`SKIP_COUNTED_FROM`.

        LadybugDB 0.22 dies with SIGSEGV on ``ORDER BY ... SKIP s LIMIT l`` when ``s`` lies far past the last
        row (``benchmarks/ladybug_skip_crash.py``), so no ``skip`` from a caller reaches the engine unchecked:
        a large one is compared with the count of the statement's ``// counted by:`` statement and cut to it
        (``SKIP`` at the end gives the same empty page); a statement without one refuses it.
        """
        skip = params["skip"]
        if not isinstance(skip, int) or isinstance(skip, bool) or skip < 0:
            raise QueryError(f"`{name}`: skip must be a non-negative integer, got {skip!r}")
        if skip < SKIP_COUNTED_FROM:
            return params
        counter = load_statement(name, self.dialect).counted_by
        if counter is None:
            raise QueryError(
                f"`{name}`: skip {skip} is refused: the statement names no `// counted by:` statement, and a "
                f"SKIP of {SKIP_COUNTED_FROM} or more past the last row crashes the embedded engine; add the header"
            )
        wanted = load_statement(counter, self.dialect).parameters
        count_params = {key: value for key, value in params.items() if key in wanted}
        result = self._execute(statement_text(counter, self.dialect, identifiers), count_params, what=counter)
        rows = int(result.get_next()[0]) if result.has_next() else 0
        return {**params, "skip": min(skip, rows)}

    def _execute(self, text: str, params: Mapping[str, Any] | None = None, *, what: str) -> Any:
        try:
            with self._lease() as conn:
                return conn.execute(text, dict(params or {}))
        except RuntimeError as exc:
            if self._cache_can_grow(exc):
                self._grow_cache(what)
                return self._execute(text, params, what=what)
            error = translate_ladybug_error(exc, path=self.path, what=what, read_only=self.read_only)
            if isinstance(error, StoreFullError) and _failed_file(str(exc)).endswith(".wal"):
                self._log_unwritable = True  # see _abandon
            raise error from exc
        except MemoryError as exc:
            raise _out_of_memory(self.path, what, exc) from exc

    def _cache_can_grow(self, exc: RuntimeError) -> bool:
        """Whether a full page cache may be doubled and the statement run again: only in a staged copy outside
        a transaction, where the failed statement (autocommit) left nothing and the committed ones stay."""
        return (
            self._direct
            and not self._in_transaction
            and POOL_FULL in str(exc)
            and 0 < self.buffer_pool_mib * 2 <= _largest_cache_mib()
        )

    def _grow_cache(self, what: str) -> None:
        """Reopen the staged copy with twice the page cache: the bounded cache a streamed load starts with
        (:data:`STREAM_BUFFER_POOL_MIB`) trades memory for the risk that some write needs more; that write then
        costs memory instead of the load."""
        log.warning(
            "%s: `%s` needed more than a %d MiB page cache; reopened with %d MiB (CITEGRAPH_BUFFER_POOL_MIB starts "
            "there)",
            self.path,
            what,
            self.buffer_pool_mib,
            self.buffer_pool_mib * 2,
        )
        self.buffer_pool_mib *= 2
        self._reopen()

    def query(
        self, name: str, params: Mapping[str, Any] | None = None, identifiers: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        with self._lease():  # the statement and the reading of its result on one connection
            result = self._run(name, params, identifiers)
            if not result.get_column_names():  # DDL and writes return no columns
                return []
            table = _small_table(result, self.path, name) if result.get_num_tuples() <= SMALL_RESULT_ROWS else None
            if table is None:
                table = _arrow(result, self.path, name)
        table = require_sound(plain_numbers(table), store=self.describe(), what=name)
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows

    def query_keys(self, name: str, each: str, ids: Sequence[str]) -> list[dict[str, Any]]:
        """Rows of ``each`` (``= $id``: a lookup in the key's hash index) for each distinct key in key order, on
        one connection; for more than :data:`KEYED_LOOKUP_MAX` keys the rows of ``name`` (``IN $ids``: a scan of
        the label, which the engine does not turn into lookups), which cost about the same whatever the count.
        The rows are those ``name`` gives, grouped by key in key order."""
        keys = sorted(set(ids))
        if len(keys) > KEYED_LOOKUP_MAX:
            return self.query(name, {"ids": keys})
        rows: list[dict[str, Any]] = []
        with self._lease():
            for key in keys:
                rows.extend(self.query(each, {"id": key}))
        return rows

    def query_arrow(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        identifiers: Mapping[str, str] | None = None,
        *,
        verify: bool = True,
    ) -> pa.Table:
        """LadybugDB's own Arrow result (``QueryResult.get_as_arrow``), in one chunk.

        At 10M CITES rows this reads in ~2 s where ``query``'s list of dicts takes ~8-11 s
        (docs/results.md, co-citation).
        """
        with self._lease():
            result = self._run(name, params, identifiers)
            if not result.get_column_names():
                return pa.table({})
            table = _arrow(result, self.path, name, -1)  # -1: the whole result as a single chunk
        table = plain_numbers(table)
        return require_sound(table, store=self.describe(), what=name) if verify else table

    def read_only_query(self, text: str, params: Mapping[str, Any] | None = None) -> tuple[list[str], list[list[Any]]]:
        """Columns and rows of a user's query, checked by :func:`graph.readonly.check_read_only` first and
        then by the engine's plan (:func:`graph.readonly.check_plan`): the store's own read-only mode refuses
        graph writes, but not ``COPY ... TO``, ``LOAD FROM`` a path, ``INSTALL``, table functions such as
        ``clear_warnings`` or ``CHECKPOINT`` (which fails half-way on a read-only open and leaves the store
        needing a read-write open)."""
        if not self.read_only:
            raise QueryError("ad-hoc queries run only on a store opened read-only (the CLI and the server do that)")
        with self._lease():  # its checks, the statement and the reading of its rows on one connection
            return self._read_only_query(text, params)

    def _read_only_query(self, text: str, params: Mapping[str, Any] | None) -> tuple[list[str], list[list[Any]]]:
        check_read_only(text, procedures=EMBEDDED_PROCEDURES, parse=self._parse)
        check_plan(self._plan(text, params))  # the engine's own reading: only reading operators
        result = self._execute(text, params, what="query")
        if not result.get_column_names():
            return [], []
        if any(_GRAPH_TYPE.search(kind) for kind in result.get_column_data_types()):
            # the engine's Arrow export of a node or relationship column fails ("Expected 2 buffers for
            # imported type float"): such results are read row by row, each node or relationship as a map
            rows = []
            while result.has_next():
                rows.append([readable_graph_value(value) for value in result.get_next()])
            return result.get_column_names(), rows
        table = require_valid(plain_numbers(_arrow(result, self.path, "query")), store=self.describe(), what="query")
        # a query may compute a NaN itself (0.0 / 0.0), so its rows are shown; but the user is told
        bad = sum(non_finite_count(table.column(name)) for name in table.column_names)
        if bad:
            log.warning(
                "the result holds %d value(s) that are not finite (NaN or infinity); if the query did not compute "
                "them, they were read from the store: %s",
                bad,
                damage_advice(self.describe()),
            )
        return table.column_names, [list(row.values()) for row in table.to_pylist()]

    def _plan(self, text: str, params: Mapping[str, Any] | None) -> str:
        """The engine's ``EXPLAIN`` of ``text``: its physical plan as text, planned but not run."""
        result = self._execute(f"EXPLAIN {text}", params, what="query")
        lines: list[str] = []
        while result.has_next():
            lines.append(str(result.get_next()[0]))
        return "\n".join(lines)

    def _parse(self, text: str) -> None:
        """Raise the engine's parse or bind error for ``text``, without running it."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # prepare() alone is deprecated, not going away
            prepared = self._connection().prepare(text)
        if not prepared.is_success():
            failure = RuntimeError(prepared.get_error_message())
            raise translate_ladybug_error(failure, path=self.path, what="query", read_only=self.read_only) from failure

    # schema ----------------------------------------------------------------------------------
    def _existing_tables(self) -> dict[str, str]:
        return {row["name"]: row["type"] for row in self.query("show_tables")}

    def ensure_schema(self) -> None:
        tables = self._existing_tables()
        missing = [name for name in [*self.schema.nodes, *self.schema.rels] if name not in tables]
        if self.read_only:
            if missing:
                raise StoreUnavailableError(
                    f"{self.describe()} lacks tables {missing}, which this version adds; open the store for writing "
                    f"once to add them: `citegraph --db {self.path} recover` (seconds; nothing else changes)"
                )
        else:
            for node in self.schema.nodes.values():
                if node.label not in tables:
                    self._create_node_table(node)
            for rel in self.schema.rels.values():
                if rel.type not in tables:
                    self._create_rel_table(rel)
        owners: list[NodeType | RelType] = [*self.schema.nodes.values(), *self.schema.rels.values()]
        for owner in owners:
            self._check_columns(owner)

    def _create_node_table(self, node: NodeType) -> None:
        columns = ", ".join(f"{identifier(p.name)} {ddl_type(p)}" for p in node.properties)
        self._run("create_node_table", identifiers={"LABEL": node.label, "COLUMNS": columns, "KEY": node.key})

    def _create_rel_table(self, rel: RelType, *, name: str | None = None) -> None:
        """Create ``rel``'s table, under ``name`` when given (a staging table of :meth:`_replace_edges`)."""
        columns = "".join(f", {identifier(p.name)} {ddl_type(p)}" for p in rel.properties)
        self._run(
            "create_rel_table",
            identifiers={"TYPE": name or rel.type, "SOURCE": rel.source, "TARGET": rel.target, "COLUMNS": columns},
        )

    def compressed_float_lists(self) -> dict[str, int]:
        """``Label.property`` -> how many of its chunks hold float-list values compressed (storage_info's
        ``FLOAT_COMPRESSION`` on the list's ``<property>_data`` column): the chunks that LadybugDB 0.22 can zero
        after later writes and checkpoints (:data:`COMPRESSION`). A store written by this version has none; one
        written before the guard can, until it is rebuilt."""
        found: dict[str, int] = {}
        for node in self.schema.nodes.values():
            lists = {f"{p.name}_data": p.name for p in node.properties if p.kind is Kind.FLOAT_LIST}
            if not lists:
                continue
            for row in self.query("storage_info", identifiers={"TABLE": node.label}):
                prop = lists.get(row["column_name"])
                if prop is not None and str(row["compression"]).startswith("FLOAT_COMPRESSION"):
                    found[f"{node.label}.{prop}"] = found.get(f"{node.label}.{prop}", 0) + 1
        return found

    def _check_columns(self, owner: NodeType | RelType) -> None:
        """Add properties the schema gained; refuse a store whose column types differ (e.g. vector sizes)."""
        table = owner.label if isinstance(owner, NodeType) else owner.type
        stored = {
            row["name"]: _normalise_type(row["type"]) for row in self.query("table_info", identifiers={"TABLE": table})
        }
        for prop in owner.properties:
            expected = _normalise_type(ddl_type(prop))
            if prop.name not in stored:
                if self.read_only:
                    raise StoreUnavailableError(
                        f"{self.describe()}: {table} lacks `{prop.name}`, which this version adds; open the store "
                        f"for writing once to add the column: `citegraph --db {self.path} recover` (seconds)"
                    )
                self._run("add_column", identifiers={"TABLE": table, "COLUMN": prop.name, "DATATYPE": ddl_type(prop)})
                stored[prop.name] = expected
            elif stored[prop.name] != expected:
                raise SchemaError(
                    f"{self.describe()}: {table}.{prop.name} is {stored[prop.name]} but the settings say {expected}; "
                    "set CITEGRAPH_EMBEDDING_DIM / CITEGRAPH_TAXONOMY_DIM / CITEGRAPH_POINCARE_DIM to match the store, "
                    "or build a new store with --db"
                )
        unknown = [name for name in stored if name not in {p.name for p in owner.properties}]
        if unknown:
            raise SchemaError(
                f"{self.describe()}: {table} has columns {unknown} that the data model no longer has; "
                "rebuild the store (delete it and run `make build`)"
            )
        # Column order of the stored table: COPY reads positional columns.
        self._columns[table] = list(stored)

    def _table_columns(self, owner: NodeType | RelType) -> list[tuple[str, Property]]:
        table = owner.label if isinstance(owner, NodeType) else owner.type
        if table not in self._columns:
            self._check_columns(owner)
        return [(name, owner.prop(name)) for name in self._columns[table]]

    # reads used by ingest --------------------------------------------------------------------
    def has_nodes(self, label: str, keys: pd.Series) -> np.ndarray:
        """Which of ``keys`` are stored: the asked keys looked up in the key index when they are few beside the
        stored nodes (under one in :data:`SCAN_RATIO`), else every stored key read and matched with Arrow's hash
        lookup (pandas ``isin`` on pyarrow-backed strings is ~14x slower).

        Why both: a batch of a streamed load asks for ~15,000 keys, and reading every stored key for it held
        memory and time that grew with the store (1.2M papers: ~140 MB, read three times a batch); a lookup
        costs ~8 µs a key, a scan ~0.15 µs a stored node, so a large frame is still matched by the scan."""
        node = self.schema.node(label)
        needles = _keys(keys).cast(pa.large_string())
        wanted = pc.unique(needles.drop_null())
        if len(wanted) * SCAN_RATIO < self.count_nodes(label):
            identifiers = {"LABEL": label, "KEY": node.key, "NODE_COLUMNS": ""}
            found = [part.column("key") for part in self._looked_up("nodes_by_keys", wanted.to_pylist(), identifiers)]
            stored = pa.chunked_array(found, type=pa.string())
        else:
            every_key = self._run("node_keys", identifiers={"LABEL": label, "KEY": node.key})
            stored = _arrow(every_key, self.path, "node_keys").column("key")
        found_mask = pc.is_in(needles, value_set=stored.combine_chunks().cast(pa.large_string()))
        return found_mask.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)

    def read_edges(self, rel_type: str) -> pd.DataFrame:
        result = self._run("read_rels", identifiers=self._rel_identifiers(self.schema.rel(rel_type)))
        return require_sound(
            _arrow(result, self.path, "read_rels"), store=self.describe(), what="read_rels"
        ).to_pandas()

    # writes ----------------------------------------------------------------------------------
    def _begin(self) -> None:
        self._execute("BEGIN TRANSACTION", what="begin transaction")
        self._in_transaction = True

    def _commit(self) -> None:
        try:
            self._execute("COMMIT", what="commit")
        finally:
            self._in_transaction = False

    def _rollback(self) -> None:
        self._in_transaction = False
        with contextlib.suppress(RuntimeError):  # a failed statement already rolled the transaction back
            self._conn.execute("ROLLBACK")

    def _transaction(self, work: Any) -> Any:
        if self.read_only:
            raise QueryError(f"{self.describe()} is open read-only; writes need a store opened for writing")
        self._begin()
        try:
            outcome = work()
        except StoreFullError as exc:  # a statement failed: the engine rolls the transaction back
            self._rollback()
            raise StoreFullError(
                f"{exc}; the transaction was rolled back, so nothing of this write was stored. Free space on that "
                "filesystem (or put the store on a larger one with --db), then rerun the command"
            ) from exc
        except BaseException:
            self._rollback()
            raise
        try:
            self._commit()  # a full disk here: _disk_full says what the store holds
        except BaseException:
            self._rollback()
            raise
        return outcome

    def apply(self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame]) -> dict[str, WriteResult]:
        """Upsert in one transaction; a first load into an empty store is built in a new file and swapped in.

        Both are all-or-nothing. The swap exists for speed: COPY outside an explicit transaction
        skips the write-ahead log, which on the 1M-paper/10M-citation benchmark costs ~2.5 s of a
        ~13 s write (see docs/results.md).
        """
        if self._direct:
            return self._write(nodes, rels)
        if not self.read_only and self._is_empty():
            return self._build_and_swap(nodes, rels)
        return self._transaction(lambda: self._write(nodes, rels))

    def _apply_change(self, change: WorkChange) -> None:
        """Deletes (``delete_nodes``: DETACH DELETE by key) and then :meth:`_write`, in one transaction; in a
        staged copy (a streamed load) without one, the copy being all or nothing itself."""

        def work() -> None:
            for label, keys in change.deletes.items():
                if keys:
                    node = self.schema.node(label)
                    self._run("delete_nodes", {"keys": list(keys)}, {"LABEL": label, "KEY": node.key})
            self._write(
                {label: frame.drop(columns=[ORIGIN_COLUMN], errors="ignore") for label, frame in change.nodes.items()},
                {rel: frame.drop(columns=[ORIGIN_COLUMN], errors="ignore") for rel, frame in change.rels.items()},
            )

        if self._direct:
            work()
        else:
            self._transaction(work)

    def _write(
        self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame], *, defer: bool = False
    ) -> dict[str, WriteResult]:
        results: dict[str, WriteResult] = {}
        created: dict[str, pd.Series] = {}  # the keys of the nodes this write creates, by label
        self._recycle()  # what re-keying and validation read goes first
        for label, frame in nodes.items():
            results[label], created[label] = self._upsert_nodes(label, frame)
            self._recycle()
        for rel_type, frame in rels.items():
            if defer:
                results[rel_type] = self._defer_rels(rel_type, frame, created)
            else:
                results[rel_type] = self._upsert_rels(rel_type, frame, created)
                self._recycle()
        return results

    def apply_deferring(
        self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame]
    ) -> dict[str, WriteResult]:
        """:meth:`apply`, but in a staged copy the new edges are spilled to Parquet and written by
        :meth:`write_deferred` at the end of the load, each relationship table in a few large COPYs.

        Why: a COPY into a relationship table rewrites the parts of the table its edges touch (the CSR
        groups of their end nodes, spread over the whole table), so one COPY per batch of a streamed load
        cost more the more edges were stored (OpenAlex: 362 works/s at 100k works, 275 at 400k). Nodes are
        still written per batch (appended; the next batches' endpoints and aliases are checked against them).
        Outside a staged copy this is :meth:`apply`.
        """
        if not self._direct:
            return self.apply(nodes, rels)
        return self._write(nodes, rels, defer=True)

    def _defer_rels(self, rel_type: str, frame: pd.DataFrame, created: Mapping[str, pd.Series]) -> WriteResult:
        """Spill the frame's new edges; the ones stored before the load are merged now (:meth:`_upsert_rels`).

        While a load defers, the relationship tables hold only the edges stored before it, so the lookup
        finds exactly those; an edge two batches repeat is merged when the spill is written.
        """
        rel = self.schema.rel(rel_type)
        if frame.empty:
            return WriteResult(0, 0)
        keys = list(rel.key_columns)
        candidates = self._possibly_stored(rel, frame, created)
        stored = np.zeros(len(frame), dtype=bool)
        if len(candidates):
            existing = _blank_identity(
                self._edges_between(rel, candidates[SOURCE_COLUMN], candidates[TARGET_COLUMN]), rel
            )
            if not existing.empty:
                joined = frame[keys].merge(existing[keys].drop_duplicates(), on=keys, how="left", indicator=True)
                stored = (joined["_merge"] == "both").to_numpy()
        if stored.any():
            self._upsert_rels(rel_type, frame[stored], {})
            self._recycle()
        if self._spill is None:
            self._spill = _RelSpill(recovery.spill_path(self.path))
        given = [(name, prop) for name, prop in self._table_columns(rel) if name in frame.columns]
        given = [(name, prop) for name, prop in given if name not in (SOURCE_COLUMN, TARGET_COLUMN)]
        new = frame[~stored]
        table = arrow_table(new, [*self._rel_columns(rel)[:2], *given])
        identity = pd.util.hash_pandas_object(new[keys], index=False).to_numpy()
        self._spill.add(rel_type, table, identity)
        return WriteResult(created=len(new), matched=int(stored.sum()))

    def write_deferred(self, memory_bytes: int = DEFERRED_MEMORY_BYTES) -> dict[str, WriteResult]:
        """COPY the spilled edges of :meth:`apply_deferring` into their tables; what changed in the counts.

        Each table's spill is read back file by file and copied in chunks of about a quarter of
        ``memory_bytes`` of Arrow data (the load's memory setting), so memory does not grow with the
        input. An edge spilled by two batches (same ends and identity) is one edge, its values the last
        non-null ones read, as :func:`graph.ingest.ingest_stream` merges batches: found by a 64-bit hash
        of the identity per edge (8 bytes an edge, read back per table), then compared exactly. The
        returned counts move such repeats from created to matched.
        """
        spill, self._spill = self._spill, None
        if spill is None:
            return {}
        try:
            return {rel_type: self._copy_spilled(rel_type, spill, memory_bytes // 4) for rel_type in spill.types()}
        finally:
            spill.remove()

    def _copy_spilled(self, rel_type: str, spill: _RelSpill, chunk_bytes: int) -> WriteResult:
        rel = self.schema.rel(rel_type)
        suspects = spill.repeated_identities(rel_type)
        repeated: list[pd.DataFrame] = []
        pending: list[pa.Table] = []
        size = 0

        def flush() -> None:
            nonlocal pending, size
            by_columns: dict[tuple[str, ...], list[pa.Table]] = {}
            for part in pending:
                by_columns.setdefault(tuple(part.column_names), []).append(part)
            pending, size = [], 0
            for columns, parts in by_columns.items():
                self._run(
                    "copy_columns",
                    {"frame": pa.concat_tables(parts)},
                    {"TABLE": rel_type, "COLUMNS": ", ".join(columns[2:])},
                )
                del parts
            self._recycle()

        for table in spill.tables(rel_type):
            identity = table.column(_RelSpill.IDENTITY).to_numpy()
            table = table.drop_columns([_RelSpill.IDENTITY])
            if len(suspects):
                again = np.isin(identity, suspects)
                if again.any():
                    repeated.append(table.filter(pa.array(again)).to_pandas())
                    table = table.filter(pa.array(~again))
            pending.append(table)
            size += table.nbytes
            if size >= chunk_bytes:
                flush()
        merged_away = 0
        if repeated:
            frame = pd.concat(repeated, ignore_index=True)
            ends = {"_from": SOURCE_COLUMN, "_to": TARGET_COLUMN}
            frame = frame.rename(columns=ends)
            keys = list(rel.key_columns)
            merged = frame.groupby(keys, sort=False, dropna=False).last().reset_index()
            merged_away = len(frame) - len(merged)
            given = [(name, prop) for name, prop in self._table_columns(rel) if name in merged.columns]
            given = [(name, prop) for name, prop in given if name not in (SOURCE_COLUMN, TARGET_COLUMN)]
            pending.append(arrow_table(merged, [*self._rel_columns(rel)[:2], *given]))
        if pending:
            flush()
        return WriteResult(created=-merged_away, matched=merged_away)

    def _recycle(self) -> None:
        """In a staged copy (:meth:`staged`), close and open the database after each table's write.

        The engine keeps the pages and memory a statement used until the database is closed (measured on
        OpenAlex batches of 5,000 works: +300 MB per batch at 10k works stored, +900 MB at 55k), and the C
        allocator keeps what the engine frees; a load of many batches would hold the sum. Closing, trimming
        the C heap and opening again (~0.1 s) leaves one table's write in memory at a time (docs/results.md).
        Elsewhere (a transaction is open) nothing is done.
        """
        if self._direct:
            self._reopen()

    def _reopen(self) -> None:
        """Close the database, hand what it freed back to the system, and open it again."""
        self.close()
        release_freed_memory()
        self._connect()
        self._columns = {}

    def _is_empty(self) -> bool:
        return all(self.count_nodes(label) == 0 for label in self.schema.nodes)

    def _build_and_swap(
        self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame]
    ) -> dict[str, WriteResult]:
        """Write into ``<store>.building`` with autocommit COPYs, then rename it over the (empty) store."""
        with self._staged() as builder:
            return builder._write(nodes, rels)

    def staged(self) -> contextlib.AbstractContextManager[GraphStore]:
        """A copy of the store in ``<store>.building``, written without transactions and renamed over the store
        when the block ends without an error; see :meth:`_staged`. Its page cache is this store's
        (``CITEGRAPH_BUFFER_POOL_MIB``), else :data:`STREAM_BUFFER_POOL_MIB`: the copy takes a load's batches one
        at a time, and the engine's default (80% of the machine's memory) let a batch's relationship COPY hold
        more the more edges the table had."""
        if self.read_only:
            raise QueryError(f"{self.describe()} is open read-only; writes need a store opened for writing")
        return self._staged(buffer_pool_mib=self.buffer_pool_mib or STREAM_BUFFER_POOL_MIB)

    @contextlib.contextmanager
    def _staged(self, *, buffer_pool_mib: int | None = None) -> Iterator[EmbeddedStore]:
        """The store's file copied to ``<store>.building`` (an empty store is not copied: the copy starts new),
        opened for writing; renamed over the store when the block ends, removed with its engine files when it
        raises.

        All or nothing, with the memory of one write at a time: writes into the copy commit as they go
        (autocommit COPYs skip the write-ahead log), and nothing reaches the store until the rename, which
        is atomic. A kill leaves the store as it was and ``<store>.building`` behind, which the next
        read-write open removes (:func:`graph.recovery.remove_build_leftovers`); while the copy is open, the
        engine's lock on it makes that open refuse with the loading process named. The cost is a copy of
        the store's file (disk and seconds for a large store), and this object is closed meanwhile.
        """
        building = recovery.building_path(self.path)
        recovery.remove_build_leftovers(self.path)  # a stale log beside a new file would not open
        empty = self._is_empty()
        if not empty:
            self._execute("CHECKPOINT", what="checkpoint")  # the file alone then holds every committed write
        self.close()
        try:
            left = recovery.companions(self.path)
            if left:
                raise StoreError(
                    f"{self.describe()}: {', '.join(p.name for p in left)} still beside the store after closing it, "
                    f"so a copy of its file would miss writes; run `{recovery.recovery_command(self.path)}` and retry"
                )
            if not empty:
                shutil.copyfile(self.path, building)
            pool = self.buffer_pool_mib if buffer_pool_mib is None else buffer_pool_mib
            builder = EmbeddedStore(building, self.schema, buffer_pool_mib=pool)
            try:
                builder._direct = True
                builder.ensure_schema()
                yield builder
                if builder._spill is not None:
                    raise StoreError(
                        f"{self.describe()}: a staged load spilled edges that were never written (write_deferred); "
                        "nothing was stored, rerun the load"
                    )
            finally:
                if builder._spill is not None:
                    builder._spill.remove()
                builder.close()
            os.replace(building, self.path)
        except BaseException as exc:
            recovery.remove_build_leftovers(self.path)
            if recovery.is_disk_full(exc):
                raise self._staged_full(exc, building) from exc
            raise
        finally:
            self._connect()
            self._columns = {}

    def _staged_full(self, exc: BaseException, building: Path) -> StoreFullError:
        """The error of a staged write whose disk filled: the copy is gone, the store untouched; the room it needs."""
        size = self.path.stat().st_size if self.path.exists() else 0
        engine = _IO_FAILURE.search(str(exc))  # the engine's IO error, without what the copy's own store said
        cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else engine[0] if engine else str(exc)
        return StoreFullError(
            f"{self.describe()}: the disk filled up while writing the store's working copy {building.name} "
            f"({cause}); the copy was removed and the store is as it was before this command: nothing was written. "
            f"A staged write needs room for a whole copy of the store ({recovery.size_text(size)}) plus what it "
            f"adds; {recovery.free_space_text(self.path)} now. Free space (or put the store on a larger "
            "filesystem with --db), then rerun the command"
        )

    def _copy(self, table: str, frame: pa.Table) -> None:
        """COPY a frame holding every column of the table, in the table's order."""
        if frame.num_rows:
            self._run("copy_table", {"frame": frame}, {"TABLE": table})

    def _copy_given(self, owner: NodeType | RelType, frame: pd.DataFrame, *, table: str | None = None) -> None:
        """COPY only the frame's own columns; the table's other columns stay null without being written.

        Measured on the 1M-paper/10M-citation benchmark: writing absent columns as explicit nulls
        (two 384-d vectors among them) costs several CPU-seconds more than naming the given ones.
        ``table``: another table with the owner's columns (a staging table).
        """
        if frame.empty:
            return
        given = [(name, prop) for name, prop in self._table_columns(owner) if name in frame.columns]
        if isinstance(owner, RelType):
            target, ends = owner.type, self._rel_columns(owner)[:2]
            given = [(name, prop) for name, prop in given if name not in (SOURCE_COLUMN, TARGET_COLUMN)]
        else:
            target, ends = owner.label, []
        columns = ", ".join(name for name, _ in given)
        self._run(
            "copy_columns",
            {"frame": arrow_table(frame, [*ends, *given])},
            {"TABLE": table or target, "COLUMNS": columns},
        )

    def _upsert_nodes(self, label: str, frame: pd.DataFrame) -> tuple[WriteResult, pd.Series]:
        """Create the frame's new nodes and set what the others change; also the keys of the new ones."""
        node = self.schema.node(label)
        exists = self.has_nodes(label, frame[node.key])
        new, old = frame[~exists], frame[exists]
        self._copy_given(node, new)
        properties = [c for c in frame.columns if c in {p.name for p in node.properties} and c != node.key]
        matched = len(old)
        if len(old) and properties:
            old, properties = self._changing(node, old, properties)
        if len(old) and properties:
            # A null in the incoming frame means "not known here": keep what the store has.
            assignments = ", ".join(f"n.{name} = coalesce({name}, n.{name})" for name in properties)
            columns = [(node.key, node.prop(node.key))] + [(name, node.prop(name)) for name in properties]
            self._run(
                "merge_nodes",
                {"frame": arrow_table(old, columns)},
                {"LABEL": label, "KEY": node.key, "ASSIGNMENTS": assignments},
            )
        return WriteResult(created=len(new), matched=matched), new[node.key]

    def _changing(self, node: NodeType, rows: pd.DataFrame, properties: list[str]) -> tuple[pd.DataFrame, list[str]]:
        """The rows of stored nodes that bring a value the store does not hold, and the properties they change.

        Why: a SET on stored nodes makes the engine hold every node group it touches in memory, and the
        nodes a load matches again are spread over the whole table (a stub cited by every batch of an
        OpenAlex partition): merging them all grew a batch's write with the papers stored (+25 MB a batch of
        5,000 works per 5,000 works stored). Rows that only repeat what is stored are left out, and a re-run
        of a load writes nothing."""
        identifiers = {
            "LABEL": node.label,
            "KEY": node.key,
            "NODE_COLUMNS": "".join(f", n.{name} AS {name}" for name in properties),
        }
        keys = rows[node.key].astype(object).tolist()
        stored = pa.concat_tables(self._looked_up("nodes_by_keys", keys, identifiers)).to_pandas()
        stored = stored.drop_duplicates("key").set_index("key").reindex(keys)
        differs = {name: _differs(rows[name], stored[name]) for name in properties}
        changing_rows = np.logical_or.reduce(list(differs.values()))
        changed = [name for name in properties if differs[name][changing_rows].any()]
        return rows[changing_rows], changed

    def _upsert_rels(self, rel_type: str, frame: pd.DataFrame, created: Mapping[str, pd.Series]) -> WriteResult:
        """Create the frame's new edges and set what the others change. ``created``: the keys of the nodes
        this write created, by label; an edge with such an end cannot be stored yet and is not looked up."""
        rel = self.schema.rel(rel_type)
        if frame.empty:
            return WriteResult(0, 0)
        keys = list(rel.key_columns)
        candidates = self._possibly_stored(rel, frame, created)
        existing = _blank_identity(self._edges_between(rel, candidates[SOURCE_COLUMN], candidates[TARGET_COLUMN]), rel)
        if existing.empty:  # every edge is new (a first load, a streamed load's batch): no join to make
            self._copy_given(rel, frame)
            return WriteResult(created=len(frame), matched=0)
        joined = frame.merge(existing, on=keys, how="left", suffixes=("", "__stored"), indicator=True)
        is_new = (joined["_merge"] == "left_only").to_numpy()
        given = [c for c in frame.columns if c not in keys and c in {p.name for p in rel.properties}]
        changed = np.zeros(len(joined), dtype=bool)
        for name in given:
            incoming, stored = joined[name], joined[f"{name}__stored"]
            changed |= _differs(incoming, stored) & ~is_new
        if not changed.any():
            self._copy_given(rel, frame[is_new])
            return WriteResult(created=int(is_new.sum()), matched=int((~is_new).sum()))
        # Existing edges change: rebuild the table with merged values (a swap, never row-by-row matching).
        updates = frame[~is_new].set_index(keys)
        merged = _blank_identity(self.read_edges(rel_type), rel).set_index(keys)
        for name in given:
            values = updates[name]
            merged.loc[values.index[values.notna()], name] = values[values.notna()]
        merged = pd.concat([merged.reset_index(), frame[is_new]], ignore_index=True)
        self._run("drop_table", identifiers={"TABLE": rel_type})
        self._create_rel_table(rel)
        self._copy(rel_type, arrow_table(merged, self._rel_columns(rel)))
        return WriteResult(created=int(is_new.sum()), matched=int((~is_new).sum()))

    def _possibly_stored(self, rel: RelType, frame: pd.DataFrame, created: Mapping[str, pd.Series]) -> pd.DataFrame:
        """The edges of ``frame`` that may be stored already: none in an empty table, and only those between
        nodes stored before this write (``created``: the keys it created, by label; a streamed load's batch
        has almost none)."""
        if self.count_rels(rel.type) == 0:
            return frame.iloc[:0]
        fresh = np.zeros(len(frame), dtype=bool)
        for column, label in ((SOURCE_COLUMN, rel.source), (TARGET_COLUMN, rel.target)):
            if label in created and len(created[label]):
                # Arrow's hash lookup: pandas' isin on Arrow-backed strings goes through Python objects (~14x slower)
                known = _keys(created[label])
                value_set = known.combine_chunks() if isinstance(known, pa.ChunkedArray) else known
                found = pc.is_in(_keys(frame[column]), value_set=value_set)
                fresh |= found.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
        return frame[~fresh]

    def _edges_between(self, rel: RelType, sources: pd.Series, targets: pd.Series) -> pd.DataFrame:
        """Stored edges of ``rel`` from ``sources[i]`` to ``targets[i]`` for some i (columns as :meth:`read_edges`).

        The engine reads every edge leaving a few thousand sources at a time, and only the pairs asked for
        are kept. Why: a batch of a streamed load cites works of earlier batches, whose stored edges (twenty
        a work) would otherwise all be held at once, a cost that grew with the batches written."""
        identifiers = self._rel_identifiers(rel)
        keys = pd.unique(sources.dropna().astype(object)).tolist()
        asked = pa.table({SOURCE_COLUMN: _keys(sources), TARGET_COLUMN: _keys(targets)})
        parts = [_pairs_in(found, asked) for found in self._looked_up("rels_from_keys", keys, identifiers)]
        parts = [part for part in parts if part.num_rows]
        if not parts:
            return pd.DataFrame({name: pd.Series([], dtype=object) for name in self._edge_columns(rel)})
        return pa.concat_tables(parts).to_pandas()

    def _looked_up(self, name: str, keys: list[Any], identifiers: Mapping[str, str]) -> Iterator[pa.Table]:
        """The checked results of statement ``name`` for ``keys``, :data:`LOOKUP_KEYS` keys at a time."""
        for start in range(0, len(keys), LOOKUP_KEYS):
            result = self._run(name, {"keys": keys[start : start + LOOKUP_KEYS]}, identifiers)
            yield require_sound(_arrow(result, self.path, name, -1), store=self.describe(), what=name)

    def _rel_identifiers(self, rel: RelType) -> dict[str, str]:
        """The identifiers of the ``read_rels`` / ``rels_from_keys`` statements for ``rel``: its end labels and
        their keys, its type, and a column of every property."""
        return {
            "SOURCE": rel.source,
            "SOURCE_KEY": self.schema.node(rel.source).key,
            "TYPE": rel.type,
            "TARGET": rel.target,
            "TARGET_KEY": self.schema.node(rel.target).key,
            "COLUMNS": "".join(f", r.{p.name} AS {p.name}" for p in rel.properties),
        }

    @staticmethod
    def _edge_columns(rel: RelType) -> list[str]:
        return [SOURCE_COLUMN, TARGET_COLUMN, *(p.name for p in rel.properties)]

    def _rel_columns(self, rel: RelType) -> list[tuple[str, Property]]:
        # COPY takes the first two columns as endpoint keys, whatever their names.
        ends = [(SOURCE_COLUMN, Property("_from", Kind.STRING)), (TARGET_COLUMN, Property("_to", Kind.STRING))]
        return [*ends, *self._table_columns(rel)]

    def _set_node_properties(self, label: str, frame: pd.DataFrame) -> None:
        """One transaction per :data:`SET_BATCH_ROWS` rows, as the Neo4j backend writes one per batch."""
        node = self.schema.node(label)
        properties = [c for c in frame.columns if c != node.key]
        if not properties:
            return
        assignments = ", ".join(f"n.{name} = {name}" for name in properties)
        table = arrow_table(frame, [(name, node.prop(name)) for name in [node.key, *properties]])
        identifiers = {"LABEL": label, "KEY": node.key, "ASSIGNMENTS": assignments}
        for start in range(0, table.num_rows, SET_BATCH_ROWS):
            batch = table.slice(start, SET_BATCH_ROWS)
            try:
                self._transaction(lambda batch=batch: self._run("set_node_properties", {"frame": batch}, identifiers))
            except StoreFullError as exc:
                this = f"{batch.num_rows:,} ({'whole or not at all' if exc.pending_recovery else 'not written'})"
                raise StoreFullError(
                    f"{exc}. Of the {table.num_rows:,} {label} nodes this step writes ({', '.join(properties)}), "
                    f"{start:,} were written in earlier transactions, the batch of the next {this}, the rest not: "
                    "rerun the step once there is room, and it writes them all",
                    pending_recovery=exc.pending_recovery,
                ) from exc

    def _replace_edges(self, rel_type: str, frame: pd.DataFrame) -> int:
        """COPY the edges into a staging table outside any transaction, then swap it in atomically.

        The swap (drop the old table, rename the staging one) is one transaction: a reader sees the
        old edges or the new ones, and a failed COPY or swap drops the staging table and leaves the
        old edges as they were. The COPY runs outside an explicit transaction because inside one the
        engine keeps the new table's pages in the buffer pool until COMMIT (the 1M-paper benchmark's
        45.6M CO_CITED edges: RSS 7.7 -> 17.1 GiB in one transaction with the default pool,
        6.8 -> 14.2 GiB with the staging table and a 4 GiB pool; docs/results.md).
        """
        rel = self.schema.rel(rel_type)
        staging = f"{rel_type}{STAGING_SUFFIX}"

        def swap() -> None:
            self._run("drop_table", identifiers={"TABLE": rel_type})
            self._run("rename_table", identifiers={"TABLE": staging, "NAME": rel_type})

        try:
            self._run("drop_table_if_exists", identifiers={"TABLE": staging})  # left by a crash mid-COPY
            self._create_rel_table(rel, name=staging)
            try:
                self._copy_given(rel, frame, table=staging)
                self._transaction(swap)
            except BaseException:
                # the first error is the one to report; a staging table left behind is dropped by the next open
                with contextlib.suppress(StoreError):
                    self._run("drop_table_if_exists", identifiers={"TABLE": staging})
                raise
        except StoreFullError as exc:
            if exc.pending_recovery:  # the swap's commit: old or new edges, as recover will tell
                raise
            raise StoreFullError(
                f"{exc}; the {rel_type} edges are as they were before this step (the new ones were being staged in "
                f"{staging}, which the next read-write open drops if it is left). Free space on that filesystem (or "
                "put the store on a larger one with --db), then rerun the step"
            ) from exc
        self._columns.pop(rel_type, None)
        return len(frame)


class _RelSpill:
    """Relationship rows of a streamed load on disk until its end: one Parquet file per table per batch.

    Each file holds the batch's new edges as typed Arrow columns (as COPY takes them) plus
    :attr:`IDENTITY`, a 64-bit hash of the edge's ends and identity properties, by which edges that two
    batches repeat are found without holding the edges themselves.
    """

    IDENTITY = "__identity"

    def __init__(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.folder = folder
        self.files: dict[str, list[Path]] = {}

    def add(self, rel_type: str, table: pa.Table, identity: np.ndarray) -> None:
        if not table.num_rows:
            return
        files = self.files.setdefault(rel_type, [])
        path = self.folder / f"{rel_type}-{len(files):06d}.parquet"
        pq.write_table(table.append_column(self.IDENTITY, pa.array(identity, type=pa.uint64())), path)
        files.append(path)

    def types(self) -> list[str]:
        return list(self.files)

    def tables(self, rel_type: str) -> Iterator[pa.Table]:
        """The spilled tables of ``rel_type`` in the order they were spilled, one file at a time."""
        for path in self.files[rel_type]:
            yield pq.read_table(path)

    def repeated_identities(self, rel_type: str) -> np.ndarray:
        """The identity hashes that more than one spilled edge of ``rel_type`` has (nearly always none)."""
        hashes = [pq.read_table(p, columns=[self.IDENTITY]).column(0).to_numpy() for p in self.files[rel_type]]
        values, counts = np.unique(np.concatenate(hashes), return_counts=True)
        return values[counts > 1]

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _largest_cache_mib() -> int:
    """Half the machine's memory in MiB: how far :meth:`EmbeddedStore._grow_cache` may double a page cache."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**21
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): the engine's own limit applies
        return 2**20


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018  (glibc only: musl and macOS have no malloc_trim)
    except (OSError, AttributeError):
        return None
    return libc


def release_freed_memory() -> None:
    """Hand the pages the C allocator has freed back to the system (glibc's ``malloc_trim``; elsewhere nothing).

    glibc keeps freed memory for reuse: after a batch of 5,000 OpenAlex works is written and the engine
    closed, RSS stays ~150 MB higher without the trim, and the next batches add to it.
    """
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def _blank_identity(edges: pd.DataFrame, rel: RelType) -> pd.DataFrame:
    """``edges`` with null identity properties as "", as validation makes incoming ones."""
    for name in rel.identity:
        edges[name] = edges[name].where(edges[name].notna(), "")
    return edges


def _pairs_in(edges: pa.Table, asked: pa.Table) -> pa.Table:
    """The rows of ``edges`` whose (source, target) is a row of ``asked``: a semi join of the end keys alone,
    since Arrow joins carry no list columns (CITES.intents) along."""
    ends = pa.table(
        {
            SOURCE_COLUMN: edges.column(SOURCE_COLUMN).cast(pa.string()),
            TARGET_COLUMN: edges.column(TARGET_COLUMN).cast(pa.string()),
            "row": pa.array(np.arange(edges.num_rows, dtype=np.int64)),
        }
    )
    rows = ends.join(asked, keys=[SOURCE_COLUMN, TARGET_COLUMN], join_type="left semi").column("row")
    return edges.take(np.sort(rows.to_numpy()))


def _keys(values: pd.Series) -> pa.Array | pa.ChunkedArray:
    """Node keys as Arrow strings (no trip through Python objects for a pyarrow-backed column)."""
    found = arrow_strings(values)
    if found is None:
        return pa.array(values.astype(object), type=pa.string(), from_pandas=True)
    return found.cast(pa.string())  # pandas' Arrow strings may be large_string


def _differs(incoming: pd.Series, stored: pd.Series) -> np.ndarray:
    """Where ``incoming`` holds a value and ``stored`` a different one or none (lists and vectors by value; an
    incoming null never differs: it means "not known here")."""
    given, known = incoming.notna().to_numpy(), stored.notna().to_numpy()
    out = given & ~known
    both = np.flatnonzero(given & known)
    new, old = incoming.to_numpy(dtype=object)[both], stored.to_numpy(dtype=object)[both]
    listlike = (list, tuple, np.ndarray)
    if any(isinstance(value, listlike) for value in itertools.chain(new, old)):
        out[both] = [
            not np.array_equal(np.asarray(a), np.asarray(b))
            if isinstance(a, listlike) or isinstance(b, listlike)
            else bool(a != b)
            for a, b in zip(new, old)
        ]
    elif len(both):
        out[both] = (new != old).astype(bool)
    return out


__all__ = ["OPENING", "EmbeddedStore", "ddl_type", "translate_ladybug_error"]
