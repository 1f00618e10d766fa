"""Ingest: canonical tables -> validation -> one atomic write, with every record accounted for.

``records in = stored + rejected``, per table, always. Rejects come from two places: the loader
(a line that is not JSON, a file that is not UTF-8: :attr:`GraphBatch.rejects`) and validation
(missing key, wrong type, dangling endpoint, duplicate). With ``on_error="fail"`` (the default)
any reject stops the load before anything is written; with ``"skip"`` the rest is loaded. Either
way the rejects are written to a report (JSON Lines: table, origin, reason).

Re-running an ingest gives the same graph: nodes merge on their key (a null keeps the stored
value), edges merge on their identity, and the backend applies the batch in one transaction.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.aliases import resolve_stored_ids
from graph.errors import ConfigError, Reject, ValidationError
from graph.store import GraphStore, WriteResult
from graph.validate import first_reject, validate_nodes, validate_rels

log = logging.getLogger(__name__)

ON_ERROR = ("fail", "skip")


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


def _rekeyed_onto_stored_papers(store: GraphStore, batch: GraphBatch) -> tuple[GraphBatch, int]:
    """A copy of ``batch`` whose paper ids name the stored papers they are aliases of (:mod:`graph.aliases`),
    and how many ids were re-keyed."""
    nodes, rels = dict(batch.nodes), dict(batch.rels)
    rekeying = resolve_stored_ids(store, nodes, rels)
    return GraphBatch(batch.source, nodes, rels, list(batch.rejects)), len(rekeying.rekeyed)


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
    if on_error not in ON_ERROR:
        raise ConfigError(f"--on-error is {on_error!r}; expected one of {', '.join(ON_ERROR)}")
    started = time.perf_counter()
    merged_ids = 0
    if merge_known_ids:
        batch, merged_ids = _rekeyed_onto_stored_papers(store, batch)
    nodes, rels, rejects = validate_batch(store, batch)
    safe_name = re.sub(r"[^A-Za-z0-9._-]+", "_", batch.source)  # e.g. "jsonl:my corpus" -> "jsonl_my_corpus"
    rejects_path = rejects_dir / f"{safe_name}.rejects.jsonl" if rejects_dir is not None else None
    if rejects_path is not None:
        if rejects:
            write_rejects(rejects, rejects_path)
        elif rejects_path.exists():
            rejects_path.unlink()  # a clean re-run leaves no stale report behind
    if rejects and on_error == "fail":
        where = f"; all of them are listed in {rejects_path}" if rejects_path else ""
        raise ValidationError(
            f"{batch.source}: {len(rejects)} record(s) rejected, nothing was written; first: {first_reject(rejects)}{where}. "
            "Fix the input, or rerun with --on-error skip to load the rest and keep the rejects report",
            rejects,
        )
    written = store.apply(nodes, rels) if (nodes or rels) else {}
    rejected = Counter(r.table for r in rejects)
    tables: dict[str, TableCount] = {}
    for name, frame in [*nodes.items(), *rels.items()]:
        result = written.get(name, WriteResult(0, 0))
        tables[name] = TableCount(len(frame) + rejected[name], result.created, result.matched, rejected[name])
    for name in rejected.keys() - tables.keys():  # tables whose every record was rejected
        tables[name] = TableCount(rejected[name], 0, 0, rejected[name])
    report = IngestReport(batch.source, tables, rejects, time.perf_counter() - started, rejects_path, merged_ids)
    log.debug("%s", report.summary())
    return report


__all__ = [
    "ON_ERROR",
    "GraphBatch",
    "IngestReport",
    "TableCount",
    "ingest",
    "validate_batch",
    "write_rejects",
]
