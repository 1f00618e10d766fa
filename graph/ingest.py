"""Ingest: canonical tables -> validation -> one atomic write, with every record accounted for.

``records in = stored + rejected``, per table, always. Rejects come from two places: the loader
(a line that is not JSON, a file that is not UTF-8: :attr:`GraphBatch.rejects`) and validation
(missing key, wrong type, dangling endpoint, duplicate). With ``on_error="fail"`` (the default)
any reject stops the load before anything is written; with ``"skip"`` the rest is loaded. Either
way the rejects are written to a report (JSON Lines: table, origin, reason).

Re-running an ingest gives the same graph: nodes merge on their key (a null keeps the stored
value), edges merge on their identity, and the backend applies the batch in one transaction.

A source too large for one batch in memory is read as a sequence of batches and written with
:func:`ingest_stream`, with the same promise: every batch is written, or none.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.aliases import resolve_stored_ids
from graph.errors import ConfigError, Reject, ValidationError
from graph.schema import Schema
from graph.store import GraphStore, WriteResult
from graph.validate import first_reject, validate_nodes, validate_rels
from graph.works import merge_works

log = logging.getLogger(__name__)

ON_ERROR = ("fail", "skip")
# What a streamed load's held-back edge writes plan to use, in MiB (`citegraph ingest --memory-limit`).
MEMORY_LIMIT_MIB = 1536
_BATCH, _REPEAT = "__batch", "__repeat"  # working columns of _combined, never written


@dataclass
class GraphBatch:
    """Canonical tables from one source, ready to ingest (see :mod:`graph.schema` for columns)."""

    source: str  # e.g. "anthology"; names the rejects report
    nodes: dict[str, pd.DataFrame] = field(default_factory=dict)  # label -> table
    rels: dict[str, pd.DataFrame] = field(default_factory=dict)  # relationship type -> table
    rejects: list[Reject] = field(default_factory=list)  # records the loader could not even parse


@dataclass(frozen=True)
class TableCount:
    records: int  # records in (including those the loader could not parse)
    created: int
    matched: int  # already in the store (properties merged)
    rejected: int

    @property
    def stored(self) -> int:
        return self.created + self.matched


@dataclass
class IngestReport:
    source: str
    tables: dict[str, TableCount]
    rejects: list[Reject]
    seconds: float
    rejects_path: Path | None = None
    merged_ids: int = 0  # paper ids of the batch that named stored papers under other keys (graph.aliases)
    merged_stubs: int = 0  # stored ref: stubs merged into the records of their works (graph.works.merge_works)

    @property
    def records(self) -> int:
        return sum(t.records for t in self.tables.values())

    @property
    def stored(self) -> int:
        return sum(t.stored for t in self.tables.values())

    @property
    def rejected(self) -> int:
        return sum(t.rejected for t in self.tables.values())

    def summary(self) -> str:
        total = f"{self.records} records in = {self.stored} stored + {self.rejected} rejected"
        lines = [f"{self.source}: {total} ({self.seconds:.1f}s)"]
        for name, c in self.tables.items():
            lines.append(
                f"  {name:<14} in {c.records:>9}  new {c.created:>9}  existing {c.matched:>9}  rejected {c.rejected:>6}"
            )
        if self.merged_ids:
            lines.append(
                f"  {self.merged_ids} paper id(s) named papers already stored under another key: merged into them"
            )
        if self.merged_stubs:
            lines.append(
                f"  {self.merged_stubs} stored stub(s) of cited works merged into the records of those works "
                "(their citations moved, their keys now aliases)"
            )
        if self.rejects_path is not None and self.rejects:
            lines.append(f"  rejects written to {self.rejects_path}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "records": self.records,
            "stored": self.stored,
            "rejected": self.rejected,
            "seconds": round(self.seconds, 3),
            "tables": {name: {**vars(c), "stored": c.stored} for name, c in self.tables.items()},
            "rejects_path": str(self.rejects_path) if self.rejects_path else None,
            "merged_ids": self.merged_ids,
            "merged_stubs": self.merged_stubs,
        }


def write_rejects(rejects: list[Reject], path: Path) -> None:
    """One JSON object per line: table, origin, reason."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for reject in rejects:
            out.write(json.dumps({"table": reject.table, "origin": reject.origin, "reason": reject.reason}) + "\n")


def validate_batch(
    store: GraphStore, batch: GraphBatch
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame], list[Reject]]:
    """Clean node and relationship tables and every reject, without writing anything."""
    rejects = list(batch.rejects)
    nodes: dict[str, pd.DataFrame] = {}
    for label, frame in batch.nodes.items():
        nodes[label], found = validate_nodes(frame.reset_index(drop=True), store.schema.node(label))
        rejects += found
    keys = {label: pd.Index(frame[store.schema.node(label).key]) for label, frame in nodes.items()}
    rels: dict[str, pd.DataFrame] = {}
    for rel_type, frame in batch.rels.items():
        rels[rel_type], found = validate_rels(frame, store.schema.rel(rel_type), keys, store.has_nodes)
        rejects += found
    return nodes, rels, rejects


def _rekeyed_onto_stored_papers(store: GraphStore, batch: GraphBatch) -> tuple[GraphBatch, set[str], dict[str, str]]:
    """A copy of ``batch`` whose paper ids name the stored papers they are aliases of (:mod:`graph.aliases`),
    the ids that were re-keyed, and the stored stubs to merge into the batch's records once it is written."""
    nodes, rels = dict(batch.nodes), dict(batch.rels)
    rekeying = resolve_stored_ids(store, nodes, rels)
    return GraphBatch(batch.source, nodes, rels, list(batch.rejects)), set(rekeying.rekeyed), rekeying.stub_merges


def _merge_stubs(store: GraphStore, stub_merges: dict[str, str], written: dict[str, pd.DataFrame]) -> int:
    """Merge each stored stub into the record of its work (:func:`graph.works.merge_works`), for the records
    that were written (a rejected record merges nothing); how many were merged.

    Each merge is its own transaction after the batch's: a failure between them leaves the batch written and
    the stub apart, and running the load again finds the stub through the record's alias and merges it."""
    papers = written.get("Paper")
    stored = set(papers["id"]) if papers is not None and "id" in papers else set()
    merged = 0
    for stub, record in sorted(stub_merges.items()):
        if record in stored and merge_works(store, stub, record).changed:
            merged += 1
    return merged


def _check_on_error(on_error: str) -> None:
    if on_error not in ON_ERROR:
        raise ConfigError(f"--on-error is {on_error!r}; expected one of {', '.join(ON_ERROR)}")


def _rejects_path(source: str, rejects_dir: Path | None) -> Path | None:
    safe_name = re.sub(r"[^A-Za-z0-9._-]+", "_", source)  # e.g. "jsonl:my corpus" -> "jsonl_my_corpus"
    return rejects_dir / f"{safe_name}.rejects.jsonl" if rejects_dir is not None else None


def _report_rejects(source: str, rejects: list[Reject], rejects_path: Path | None, on_error: str) -> None:
    """Write the rejects report (or remove a stale one); raise :class:`ValidationError` when failing on them."""
    if rejects_path is not None:
        if rejects:
            write_rejects(rejects, rejects_path)
        elif rejects_path.exists():
            rejects_path.unlink()  # a clean re-run leaves no stale report behind
    if rejects and on_error == "fail":
        where = f"; all of them are listed in {rejects_path}" if rejects_path else ""
        raise ValidationError(
            f"{source}: {len(rejects)} record(s) rejected, nothing was written; first: {first_reject(rejects)}{where}. "
            "Fix the input, or rerun with --on-error skip to load the rest and keep the rejects report",
            rejects,
        )


def ingest(
    store: GraphStore,
    batch: GraphBatch,
    *,
    on_error: str = "fail",
    rejects_dir: Path | None = None,
    merge_known_ids: bool = True,
) -> IngestReport:
    """Validate ``batch`` and write it to ``store`` atomically; see the module docstring.

    ``merge_known_ids``: re-key paper ids that name stored papers under another key onto them
    (:mod:`graph.aliases`); a copy between stores, whose keys are already resolved, passes False.
    """
    _check_on_error(on_error)
    started = time.perf_counter()
    merged_ids: set[str] = set()
    stub_merges: dict[str, str] = {}
    if merge_known_ids:
        batch, merged_ids, stub_merges = _rekeyed_onto_stored_papers(store, batch)
    nodes, rels, rejects = validate_batch(store, batch)
    rejects_path = _rejects_path(batch.source, rejects_dir)
    _report_rejects(batch.source, rejects, rejects_path, on_error)
    written = store.apply(nodes, rels) if (nodes or rels) else {}
    merged_stubs = _merge_stubs(store, stub_merges, nodes) if stub_merges else 0
    tables = _counted({}, nodes, rels, written, rejects)
    report = IngestReport(
        batch.source, tables, rejects, time.perf_counter() - started, rejects_path, len(merged_ids), merged_stubs
    )
    log.debug("%s", report.summary())
    return report


def _counted(
    tables: dict[str, TableCount],
    nodes: dict[str, pd.DataFrame],
    rels: dict[str, pd.DataFrame],
    written: dict[str, WriteResult],
    rejects: list[Reject],
) -> dict[str, TableCount]:
    """``tables`` plus one write's counts: records in, created, matched and rejected per table."""
    rejected = Counter(r.table for r in rejects)
    counts = dict(tables)
    for name in dict.fromkeys([*nodes, *rels, *rejected]):
        frame = nodes.get(name, rels.get(name))
        result = written.get(name, WriteResult(0, 0))
        n = len(frame) if frame is not None else 0
        before = counts.get(name, TableCount(0, 0, 0, 0))
        counts[name] = TableCount(
            before.records + n + rejected[name],
            before.created + result.created,
            before.matched + result.matched,
            before.rejected + rejected[name],
        )
    return counts


def ingest_stream(
    store: GraphStore,
    source: str,
    batches: Iterable[GraphBatch],
    *,
    on_error: str = "fail",
    rejects_dir: Path | None = None,
    merge_known_ids: bool = True,
    memory_limit_mib: int = MEMORY_LIMIT_MIB,
) -> IngestReport:
    """Validate and write a source read as a sequence of batches, all of them or none; see :func:`ingest`.

    Each batch is re-keyed onto the store (:mod:`graph.aliases`), validated and written in turn, so a
    batch resolves ids and endpoints against what the batches before it wrote, and only one batch
    is in memory at a time. They are written into :meth:`GraphStore.staged` (the embedded store: a
    copy of its file, renamed over it at the end): an error, a kill, or a reject with
    ``on_error="fail"`` leaves the store as it was. Rejects are counted and reported over the whole
    load; with ``"fail"`` the batches after the first reject are still read, so that the report
    lists every reject, and then nothing is kept. A backend without staging (Neo4j) gets the
    batches combined into one (a key read twice keeps its last known values, as writing the batches
    in turn would) and written in one transaction by :func:`ingest`.

    Counts add up over the batches: a node that two batches carry (a stub cited from both) is
    counted in each.

    Nodes are written batch by batch; new edges are held back (:meth:`GraphStore.apply_deferring`: the
    embedded store spills them to Parquet) and written after the last batch, each relationship table in a
    few large COPYs planned for ``memory_limit_mib`` (``citegraph ingest --memory-limit``), so a batch costs
    the same however many edges the batches before it wrote. An edge that two batches carry is one edge
    (counted as created once and matched once), as when the batches were written in turn.
    """
    _check_on_error(on_error)
    staged = store.staged()
    if staged is None:
        return ingest(
            store,
            _combined(store.schema, source, batches),
            on_error=on_error,
            rejects_dir=rejects_dir,
            merge_known_ids=merge_known_ids,
        )
    started = time.perf_counter()
    rejects: list[Reject] = []
    merged_ids: set[str] = set()
    stub_merges: dict[str, str] = {}
    written_records: list[str] = []  # keys of the records written, for the stub merges
    merged_stubs = 0
    tables: dict[str, TableCount] = {}
    rejects_path = _rejects_path(source, rejects_dir)
    with staged as target:
        for n, batch in enumerate(batches, start=1):
            if merge_known_ids:
                batch, rekeyed, merges = _rekeyed_onto_stored_papers(target, batch)
                merged_ids |= rekeyed
                for stub, record in merges.items():
                    stub_merges.setdefault(stub, record)
            nodes, rels, found = validate_batch(target, batch)
            if stub_merges and "Paper" in nodes:
                written_records += [key for key in nodes["Paper"]["id"] if key in set(stub_merges.values())]
            del batch  # only the clean tables are written: one copy of a batch in memory, not two
            rejects += found
            # On "fail" the rest is still written into the copy (discarded below): later batches are then
            # validated against the same store as when nothing is rejected, and so reject the same records.
            written = target.apply_deferring(nodes, rels) if (nodes or rels) else {}
            tables = _counted(tables, nodes, rels, written, found)
            del nodes, rels  # before the next batch is read
            log.debug("%s: batch %d written, %d rejects so far", source, n, len(rejects))
        if not (rejects and on_error == "fail"):  # else nothing is kept: the spill is dropped with the copy
            for name, change in target.write_deferred(memory_limit_mib * 2**20).items():
                count = tables[name]
                tables[name] = TableCount(
                    count.records, count.created + change.created, count.matched + change.matched, count.rejected
                )
            if stub_merges:  # into the copy, after every edge is in: all of it or none
                merged_stubs = _merge_stubs(target, stub_merges, {"Paper": pd.DataFrame({"id": written_records})})
        _report_rejects(source, rejects, rejects_path, on_error)  # raising here leaves the store as it was
    report = IngestReport(
        source, tables, rejects, time.perf_counter() - started, rejects_path, len(merged_ids), merged_stubs
    )
    log.debug("%s", report.summary())
    return report


def _combined(schema: Schema, source: str, batches: Iterable[GraphBatch]) -> GraphBatch:
    """One batch of ``batches``: per key (per edge identity), the last non-null value of each column."""
    nodes: dict[str, list[pd.DataFrame]] = {}
    rels: dict[str, list[pd.DataFrame]] = {}
    rejects: list[Reject] = []
    for batch in batches:
        for tables, into in ((batch.nodes, nodes), (batch.rels, rels)):
            for name, frame in tables.items():
                into.setdefault(name, []).append(frame)
        rejects += batch.rejects

    def last_known(frames: list[pd.DataFrame], keys: list[str]) -> pd.DataFrame:
        if len(frames) == 1:
            return frames[0]
        frame = pd.concat([f.assign(**{_BATCH: n}) for n, f in enumerate(frames)], ignore_index=True)
        if not set(keys) <= set(frame.columns):
            return frame.drop(columns=_BATCH)
        keyed = frame[keys].notna().all(axis=1)  # rows without a key stay as they are, for validation to reject
        rows = frame[keyed]
        # A key twice within one batch stays twice (validation rejects the repeat); across batches rows merge.
        rows = rows.assign(**{_REPEAT: rows.groupby([*keys, _BATCH], sort=False).cumcount()})
        merged = rows.groupby([*keys, _REPEAT], sort=False).last().reset_index()
        return pd.concat([merged, frame[~keyed]], ignore_index=True).drop(columns=[_BATCH, _REPEAT])

    return GraphBatch(
        source,
        nodes={label: last_known(frames, [schema.node(label).key]) for label, frames in nodes.items()},
        rels={t: last_known(frames, list(schema.rel(t).key_columns)) for t, frames in rels.items()},
        rejects=rejects,
    )


__all__ = [
    "MEMORY_LIMIT_MIB",
    "ON_ERROR",
    "GraphBatch",
    "IngestReport",
    "TableCount",
    "ingest",
    "ingest_stream",
    "validate_batch",
    "write_rejects",
]
