"""The co-citation *basis*: what the stored counts were made from, kept beside the store.

``compute cocitation`` writes it after its results (``<db>.cocitation/``): every Paper id, every distinct
CITES pair and every MENTIONS pair as counted (Parquet, pairs as positions into the sorted Paper ids), and
``basis.json`` (the settings that shape what is stored, when the last full step ran, how many updates
followed). ``citegraph update`` (:mod:`gnn.cocitation.delta`) compares it with the store's edges now to
find what changed, whatever changed them. A write of the results leaves the marker ``pending`` in the
folder until the new basis replaces it: a basis with the marker no longer describes the store.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from gnn.cocitation.settings import PairCountSettings
from graph.files import StoreFiles, publish_folder, staging_folder, write_atomic
from graph.store import GraphStore

BASIS_VERSION = 1
PENDING = "pending"  # the marker file inside the basis folder while the results are written
# Settings that shape what is stored: a basis made under others cannot be updated by delta.
BASIS_SETTINGS = ("min_count", "top_m", "power")


@dataclass(frozen=True)
class CitationState:
    """The incidences co-citation is counted from, as positions into ``papers``.

    ``citing[k]`` cites ``cited[k]``; ``sentences[k]`` (a Sentence id) mentions ``mentioned[k]``.
    Positions are -1 for an end outside ``papers`` (such rows count for nothing).
    """

    papers: pd.Index  # every Paper id, sorted ascending
    citing: np.ndarray  # int64 [citations]
    cited: np.ndarray  # int64 [citations]
    sentences: pd.Index  # Sentence id of each mention row (an Index of str, repeats allowed)
    mentioned: np.ndarray  # int64 [mentions]

    @classmethod
    def of(cls, papers: pd.Index, citing: np.ndarray, cited: np.ndarray, mentions: pd.DataFrame) -> CitationState:
        """The state from positions into ``papers`` and ``mentions`` (``sentence_id``, ``cited_id``: ids)."""
        mentioned = papers.get_indexer(pd.Index(mentions["cited_id"])).astype(np.int64)
        return cls(papers, citing, cited, pd.Index(mentions["sentence_id"]), mentioned)


# the basis beside the store --------------------------------------------------------------------


def basis_folder(store: GraphStore) -> Path | None:
    """``<db>.cocitation/`` for an embedded store (``StoreFiles.cocitation_basis``); None for a server store (Neo4j)."""
    return StoreFiles.of(store).cocitation_basis


def write_basis(folder: Path, state: CitationState, settings: PairCountSettings, *, full: bool) -> None:
    """Record what the stored counts were made from (``folder``, built complete and renamed into place).

    ``full``: the counts come from a full step (its clusters are current); else from an update, and the
    record keeps the time of the last full step.
    """
    previous = read_basis_record(folder)
    staging = staging_folder(folder)
    keep = (state.citing >= 0) & (state.cited >= 0)
    n = max(len(state.papers), 1)
    codes = np.unique(state.citing[keep] * n + state.cited[keep])  # one row per distinct (citing, cited)
    pq.write_table(
        pa.table({"id": pa.array(state.papers.to_numpy(dtype=object), pa.string())}), staging / "papers.parquet"
    )
    pq.write_table(pa.table({"citing": codes // n, "cited": codes % n}), staging / "citations.parquet")
    inside = state.mentioned >= 0
    mentions = pa.table(
        {
            "sentence": pa.array(state.sentences.to_numpy(dtype=object)[inside], pa.string()),
            "cited": state.mentioned[inside],
        }
    )
    pq.write_table(mentions, staging / "mentions.parquet")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    record = {
        "version": BASIS_VERSION,
        "written_at": now,
        "full_step_at": now if full or previous is None else previous.get("full_step_at"),
        "updates_since_full": 0 if full or previous is None else int(previous.get("updates_since_full", 0)) + 1,
        "papers": len(state.papers),
        "citations": len(codes),
        "mentions": mentions.num_rows,
        **{name: getattr(settings, name) for name in BASIS_SETTINGS},
    }
    write_atomic(staging / "basis.json", json.dumps(record, indent=2))
    publish_folder(staging, folder)


def read_basis_record(folder: Path | None) -> dict[str, Any] | None:
    """``basis.json`` of the folder, or None when there is none (or it is unreadable)."""
    if folder is None:
        return None
    try:
        record = json.loads((folder / "basis.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def read_basis(folder: Path) -> CitationState:
    """The state recorded by :func:`write_basis`."""
    papers = pd.Index(pq.read_table(folder / "papers.parquet").column("id").to_pandas(), name="id")
    citations = pq.read_table(folder / "citations.parquet")
    mentions = pq.read_table(folder / "mentions.parquet")
    return CitationState(
        papers,
        citations.column("citing").to_numpy().astype(np.int64),
        citations.column("cited").to_numpy().astype(np.int64),
        pd.Index(mentions.column("sentence").to_pandas()),
        mentions.column("cited").to_numpy().astype(np.int64),
    )


def mark_pending(folder: Path | None, why: str) -> None:
    """Mark the basis as no longer describing the store, saying ``why`` (the next update runs the full step)."""
    if folder is not None and folder.is_dir():
        write_atomic(folder / PENDING, f"{why} ({time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())})")


def currency(folder: Path | None) -> dict[str, Any]:
    """How current the stored co-citation results are, from the basis alone (no store read: ``/readyz`` shows it).

    ``state``: ``basis`` (the results are those the basis describes: ``citegraph update`` brings them up to
    the citations now, by delta), ``stale`` (a write stopped half-way, or counts came from elsewhere: the next
    update runs the full step; ``why`` says which), ``none`` (no basis: counted by an older version, never
    counted, or a server store). ``counts_at``: when the counts were made; ``clusters_at``: when the last full
    step ran (clusters and labels); ``updates_since_clusters``: the updates by delta since (clusters kept).
    """
    record = read_basis_record(folder)
    if folder is None or record is None:
        return {"state": "none", "command": "citegraph compute cocitation"}
    out: dict[str, Any] = {
        "state": "basis",
        "counts_at": record.get("written_at"),
        "clusters_at": record.get("full_step_at"),
        "updates_since_clusters": record.get("updates_since_full", 0),
        "command": "citegraph update",
    }
    pending = folder / PENDING
    if pending.exists():
        try:
            why = pending.read_text(encoding="utf-8")
        except OSError:
            why = "unreadable marker"
        out.update(state="stale", why=why)
    return out


__all__ = [
    "BASIS_SETTINGS",
    "BASIS_VERSION",
    "PENDING",
    "CitationState",
    "basis_folder",
    "currency",
    "mark_pending",
    "read_basis",
    "read_basis_record",
    "write_basis",
]
