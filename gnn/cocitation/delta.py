r"""Co-citation kept current by delta: what changed since the counts were made, and only what it touches.

The counts of :mod:`gnn.cocitation.compute` are sums over citing papers. With :math:`a_k` the binary
reference vector of citing paper :math:`k`,

.. math::
    C = \sum_k a_k a_k^\top \qquad s = \sum_k a_k \qquad N = |\{k : a_k \neq 0\}|

so when the papers of a set :math:`K` change (added, removed, or their references changed) from
:math:`a_k` to :math:`a'_k`,

.. math::
    C' = C - \sum_{k \in K} a_k a_k^\top + \sum_{k \in K} a'_k a'^\top_k

exactly, in integers: the changed papers' old pairs are subtracted and their new pairs added, each
product an ESC count (:func:`gnn.cocitation.counts.count_pairs`) over the changed papers only. The
same holds for sentence-level co-citation over citing sentences.

**What changed is read from state, not from events.** The full step writes the *basis* beside the
store (:func:`write_basis`, ``<db>.cocitation/``): every Paper id, every CITES pair and every
MENTIONS pair as counted. :func:`plan_delta` compares it with the edges now, so anything that changed
CITES — an ``ingest``, a merge of a duplicate work into its survivor (its edges moved), a deleted
work — is picked up without being told. A citing paper is *changed* when its set of cited papers
differs; a sentence when its set of mentioned papers does.

**What is touched.** Let :math:`T` be the papers cited by a changed paper before or after (and those
mentioned by a changed sentence). Every pair whose count changes has both ends in :math:`T`; every
paper whose :math:`s_i` changes is in :math:`T`. So the cosine, Jaccard and inclusion index change only
on CO_CITED edges incident to :math:`T`, and :math:`p(j \mid t)` (MP-BERT4CR eq. 1) only in the rows
:math:`t \in T`: these are recomputed from the stored edges incident to :math:`T` plus the delta
(:func:`updated_rows`). Two values carry a global normaliser and change everywhere:

* the association strength :math:`N c_{ij} / (s_i s_j)` (van Eck & Waltman, 2009) scales with
  :math:`N`: every untouched edge's value is multiplied by :math:`N' / N`;
* :math:`p(i) = s_i^{\alpha} / \sum_k s_k^{\alpha}` (MP-BERT4CR eq. 2): every untouched paper's
  ``negative_weight`` is multiplied by :math:`\sum_k s_k^{\alpha} / \sum_k s'^{\alpha}_k`.

A product of two floats is within a few ulps of the value computed afresh, so the result equals a
from-scratch ``compute cocitation`` — counts exactly, floats to ~1e-15 relative — after any sequence of
updates (``tests/gnn/test_cocitation_delta.py``). The Leiden clusters are not refreshed by the delta
(a paper keeps its cluster; a new one has none until the clusters are re-run): ``recluster=True``
runs the full step, at a full step's cost.

**The writes.** CO_CITED is read whole (one Arrow read), its edges incident to :math:`T` replaced and
written back whole as the full step writes it (a staging table swapped in; the embedded store's in-place
edge upsert rewrites the whole table too when stored edges change). The noise properties of every paper
that has them are read before the edge write and written again after it (``negative_weight`` rescaled):
a write of every cited paper, as the full step's. (Values of ``cocite_probs`` zeroed after the edge write
were LadybugDB's compressed ``DOUBLE[]`` columns losing values on the checkpoint that follows the COPY,
not the edge write itself; the embedded store opens the engine with compression off,
``graph.embedded.COMPRESSION``, and ``benchmarks/ladybug_list_property_loss.py`` reproduces it.) The rows of :math:`T` and of new papers are written with their new values. These are
several transactions: a marker (``<db>.cocitation/pending``) is left while they run, and an update that
finds it runs the full step instead, which rewrites everything.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import torch

from gnn.cocitation.basis import (
    BASIS_SETTINGS,
    BASIS_VERSION,
    PENDING,
    CitationState,
    basis_folder,
    mark_pending,
    read_basis,
    read_basis_record,
    write_basis,
)
from gnn.cocitation.compute import (
    CocitationReport,
    CocitationSettings,
    _paper_frame,
    cocitation_edges,
    compute_cocitation,
    read_cocitation_input,
    read_mentions,
)
from gnn.cocitation.counts import PairCounts, _sorted_unique, count_pairs
from gnn.cocitation.noise import NoiseDistributions, arrow_ids, positive_distribution, top_partners
from graph.errors import DataError
from graph.store import GraphStore

log = logging.getLogger(__name__)


def read_state(store: GraphStore) -> CitationState:
    """The store's CITES and MENTIONS now (Arrow reads, as the full step reads them)."""
    data = read_cocitation_input(store)
    return CitationState.of(data.papers, data.citing, data.cited, read_mentions(store))


# the delta --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeltaPlan:
    """What changed between two :class:`CitationState` and the exact change of the counts it makes.

    Positions are into ``ids``, the sorted union of both states' papers; pair codes are ``i * n + j``
    with ``i < j`` and ``n = len(ids)``.
    """

    ids: pd.Index  # every paper of either state, sorted
    present: np.ndarray  # bool [n]: the paper exists now
    new_papers: np.ndarray  # bool [n]: exists now, did not when the basis was made
    changed_citing: int  # citing papers whose references changed (added and removed ones included)
    changed_sentences: int  # citing sentences whose mentions changed
    touched: np.ndarray  # bool [n]: papers some of whose pairs, counts or noise rows change (T)
    pair_codes: np.ndarray  # int64: pairs whose count changes (sorted)
    pair_delta: np.ndarray  # int64: the change of each count (may be 0 where +1 and -1 cancel)
    occurrences: np.ndarray  # int64 [n]: s_i now (papers citing i)
    old_occurrences: np.ndarray  # int64 [n]: s_i as counted
    members: int  # N now: papers citing at least one paper
    old_members: int  # N as counted
    sentence_pairs: PairCounts  # sentence-level counts now of every pair with both ends in T

    @property
    def is_empty(self) -> bool:
        return not self.changed_citing and not self.changed_sentences and not self.new_papers.any()


def plan_delta(old: CitationState, new: CitationState) -> DeltaPlan:
    """Compare the basis ``old`` with the state ``new``; the changed papers' pairs counted (ESC, CPU)."""
    ids = old.papers.union(new.papers)
    if not ids.is_monotonic_increasing:
        ids = ids.sort_values()
    n = max(len(ids), 1)
    old_at = ids.get_indexer(old.papers).astype(np.int64)
    new_at = ids.get_indexer(new.papers).astype(np.int64)
    present = np.zeros(n, dtype=bool)
    present[new_at] = True
    new_papers = present.copy()
    new_papers[old_at] = False
    old_codes = _pair_codes(old_at, old.citing, old.cited, n)
    new_codes = _pair_codes(new_at, new.citing, new.cited, n)
    changed = np.zeros(n, dtype=bool)
    changed[old_codes[~_isin_sorted(old_codes, new_codes)] // n] = True  # a reference removed
    changed[new_codes[~_isin_sorted(new_codes, old_codes)] // n] = True  # a reference added
    old_rows = old_codes[changed[old_codes // n]]
    new_rows = new_codes[changed[new_codes // n]]
    touched = np.zeros(n, dtype=bool)
    touched[old_rows % n] = True
    touched[new_rows % n] = True
    minus = count_pairs(old_rows // n, old_rows % n, ids, device="cpu")
    plus = count_pairs(new_rows // n, new_rows % n, ids, device="cpu")
    pair_codes, pair_delta = _sum_by_code(
        np.concatenate([minus.i * n + minus.j, plus.i * n + plus.j]), np.concatenate([-minus.count, plus.count])
    )
    # sentences: a sentence changed when its set of mentioned papers did; its papers join T
    old_mentions = np.where(old.mentioned >= 0, old_at[np.maximum(old.mentioned, 0)], -1)
    new_mentions = np.where(new.mentioned >= 0, new_at[np.maximum(new.mentioned, 0)], -1)
    sentence_codes, _ = pd.factorize(
        np.concatenate([old.sentences.to_numpy(dtype=object), new.sentences.to_numpy(dtype=object)])
    )
    old_sentence, new_sentence = sentence_codes[: len(old.sentences)], sentence_codes[len(old.sentences) :]
    old_m = _sorted_unique(old_sentence[old_mentions >= 0].astype(np.int64) * n + old_mentions[old_mentions >= 0])
    new_m = _sorted_unique(new_sentence[new_mentions >= 0].astype(np.int64) * n + new_mentions[new_mentions >= 0])
    changed_sentence = np.zeros(int(sentence_codes.max()) + 1 if len(sentence_codes) else 0, dtype=bool)
    changed_sentence[old_m[~_isin_sorted(old_m, new_m)] // n] = True
    changed_sentence[new_m[~_isin_sorted(new_m, old_m)] // n] = True
    touched[old_m[changed_sentence[old_m // n]] % n] = True
    touched[new_m[changed_sentence[new_m // n]] % n] = True
    occurrences = np.bincount(new_codes % n, minlength=n).astype(np.int64)
    old_occurrences = np.bincount(old_codes % n, minlength=n).astype(np.int64)
    # sentence-level counts of every pair in T x T afresh, over the sentences mentioning two cited papers of T
    mentioned = new_m % n
    keep = touched[mentioned] & (occurrences[mentioned] > 0)
    sentence_pairs = count_pairs(new_m[keep] // n, mentioned[keep], ids, device="cpu")
    return DeltaPlan(
        ids=ids,
        present=present,
        new_papers=new_papers,
        changed_citing=int(changed.sum()),
        changed_sentences=int(changed_sentence.sum()),
        touched=touched,
        pair_codes=pair_codes,
        pair_delta=pair_delta,
        occurrences=occurrences,
        old_occurrences=old_occurrences,
        members=_distinct_rows(new_codes, n),
        old_members=_distinct_rows(old_codes, n),
        sentence_pairs=sentence_pairs,
    )


@dataclass(frozen=True)
class UpdatedRows:
    """What an update writes: the CO_CITED edges incident to T, the Paper rows of T and new papers, the factors."""

    edges: pd.DataFrame  # as compute.cocitation_edges: source < target, count >= 1, every measure
    papers: pd.DataFrame  # id, n_cited, negative_weight, cocite_partners, cocite_probs, cocite_tail
    association_factor: float  # N' / N: applied to every other edge's association
    negative_factor: float  # sum s^a / sum s'^a: applied to every other paper's negative_weight


def updated_rows(plan: DeltaPlan, incident: pd.DataFrame, settings: CocitationSettings) -> UpdatedRows:
    """The new values around T from ``incident`` — every stored CO_CITED edge touching a paper of T
    (``source``, ``target``, ``count``, ``sentence_count``; each edge once or twice) — and the plan's delta.

    Raises :class:`~graph.errors.DataError` when a count would fall below zero: the stored edges are not
    the ones the basis describes (written by something else), and only the full step can repair that.
    """
    ids, n = plan.ids, max(len(plan.ids), 1)
    known = arrow_ids(ids)  # Arrow's hash lookup of the ids: pandas' get_indexer on strings is several times slower
    a = pc.index_in(pa.array(incident["source"].to_numpy(dtype=object), pa.string()), value_set=known)
    b = pc.index_in(pa.array(incident["target"].to_numpy(dtype=object), pa.string()), value_set=known)
    a = a.fill_null(-1).to_numpy().astype(np.int64)
    b = b.fill_null(-1).to_numpy().astype(np.int64)
    if (a < 0).any() or (b < 0).any():
        raise DataError(
            "stored CO_CITED edges name papers the co-citation basis does not know; "
            "run `citegraph compute cocitation` to recount from scratch"
        )
    stored_codes = np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)
    order, starts = _first_of_runs(stored_codes)  # an edge with both ends in T comes twice
    first = order[starts]
    stored_codes = stored_codes[first]
    stored_count = incident["count"].to_numpy(dtype=np.int64)[first]
    stored_sentence = incident["sentence_count"].fillna(0).to_numpy(dtype=np.int64)[first]
    codes, count = _sum_by_code(
        np.concatenate([stored_codes, plan.pair_codes]), np.concatenate([stored_count, plan.pair_delta])
    )
    alive = plan.present[codes // n] & plan.present[codes % n]  # a deleted paper's edges went with its node
    codes, count = codes[alive], count[alive]
    if (count < 0).any():
        bad = codes[count < 0][0]
        raise DataError(
            f"the co-citation count of ({ids[bad // n]}, {ids[bad % n]}) would fall below zero: the stored CO_CITED "
            "edges are not those the co-citation basis describes; run `citegraph compute cocitation` to recount "
            "from scratch"
        )
    keep = count >= 1
    codes, count = codes[keep], count[keep]
    i, j = codes // n, codes % n
    sentence = np.zeros(len(codes), dtype=np.int64)
    at = np.searchsorted(stored_codes, codes)
    was = _isin_sorted(codes, stored_codes)
    sentence[was] = stored_sentence[at[was]]
    both = plan.touched[i] & plan.touched[j]  # T x T: recounted afresh
    recount = plan.sentence_pairs.i * n + plan.sentence_pairs.j
    found = _isin_sorted(codes, recount)
    sentence[both] = 0
    sentence[both & found] = plan.sentence_pairs.count[np.searchsorted(recount, codes[both & found])]
    pairs = PairCounts(ids, i, j, count, plan.occurrences, plan.members)
    edges = cocitation_edges(pairs)
    edges["sentence_count"] = sentence
    # p(j|t) for the rows t in T, over every partner of t
    rows, cols, freq = np.concatenate([i, j]), np.concatenate([j, i]), np.concatenate([count, count])
    mine = plan.touched[rows]
    indptr, partners, probs = positive_distribution(
        torch.from_numpy(rows[mine]),
        torch.from_numpy(cols[mine]),
        torch.from_numpy(freq[mine]),
        n,
        power=settings.power,
    )
    negative, total = _negative(plan.occurrences, settings.power)
    _, old_total = _negative(plan.old_occurrences, settings.power)
    noise = NoiseDistributions(ids, indptr, partners, probs, torch.from_numpy(negative), settings.power)
    head = top_partners(noise, settings.top_m)
    written = np.flatnonzero((plan.touched | plan.new_papers) & plan.present)
    frame = _paper_frame(ids[written], pairs, negative, head, pd.Series([], dtype="int64"))
    frame = frame.drop(columns=["cocite_cluster"]).reset_index(drop=True)
    association_factor = plan.members / plan.old_members if plan.old_members else 1.0
    negative_factor = old_total / total if total > 0 else 0.0
    return UpdatedRows(edges, frame, association_factor, negative_factor)


def _negative(occurrences: np.ndarray, power: float) -> tuple[np.ndarray, float]:
    """MP-BERT4CR eq. 2 over every paper, and its normaliser :math:`\\sum_k s_k^{\\alpha}` (as noise.py computes it)."""
    counts = torch.from_numpy(occurrences).to(torch.float64)
    weights = torch.where(counts > 0, counts.pow(power), torch.zeros_like(counts))
    total = float(weights.sum())
    return (weights / total if total > 0 else weights).numpy(), total


def _pair_codes(at: np.ndarray, citing: np.ndarray, cited: np.ndarray, n: int) -> np.ndarray:
    """Sorted distinct ``citing * n + cited`` in the union index (rows with an unknown end dropped)."""
    keep = (citing >= 0) & (cited >= 0)
    return _sorted_unique(at[citing[keep]] * n + at[cited[keep]])


def _isin_sorted(values: np.ndarray, sorted_unique: np.ndarray) -> np.ndarray:
    """``np.isin`` for a sorted, unique second array: one binary search per value."""
    if len(sorted_unique) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_unique, values), len(sorted_unique) - 1)
    return sorted_unique[at] == values


def _first_of_runs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts ``codes`` (stable) and, in it, where each run of equal codes starts."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]])) if len(codes) else np.empty(0, int)
    return order, starts


def _sum_by_code(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct codes (sorted) and the sum of their values (a sort, not a hash: faster on millions of int64)."""
    if len(codes) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order, starts = _first_of_runs(codes)
    sums = np.add.reduceat(values.astype(np.int64)[order], starts)
    return codes[order][starts].astype(np.int64), sums.astype(np.int64)


def _distinct_rows(codes: np.ndarray, n: int) -> int:
    """Distinct ``code // n`` of sorted codes: the citing papers with at least one reference."""
    rows = codes // n
    return int(len(rows) > 0) + int(np.count_nonzero(rows[1:] != rows[:-1]))


# the step -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpdateReport:
    """What :func:`update_cocitation` did: the delta, or the full step and why."""

    mode: str  # "delta", "full" or "current" (nothing changed)
    reason: str  # why the full step ran, or what the delta covered
    changed_citing: int = 0
    changed_sentences: int = 0
    touched_papers: int = 0
    edges_written: int = 0
    papers_written: int = 0
    full: CocitationReport | None = None  # the full step's report when it ran
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        if self.full is not None:
            return f"co-citation recomputed in full ({self.reason})\n{self.full.summary()}"
        if self.mode == "current":
            return f"co-citation is current: {self.reason}"
        return (
            f"co-citation updated by delta: {self.changed_citing} citing papers and {self.changed_sentences} "
            f"citing sentences changed; {self.touched_papers} papers touched, {self.edges_written} CO_CITED edges "
            f"and {self.papers_written} papers rewritten (clusters kept: `citegraph update --recluster` re-runs them)\n"
            "  " + ", ".join(f"{stage} {s:.2f}s" for stage, s in self.seconds.items())
        )


def full_step_reason(folder: Path | None, settings: CocitationSettings, *, recluster: bool) -> str | None:
    """Why the delta cannot run (the full step must), or None when it can."""
    if recluster:
        return "clusters asked for (--recluster)"
    if folder is None:
        return "the store has no file to keep the co-citation basis beside (a server store)"
    if settings.min_count > 1:
        return f"min_count {settings.min_count} stores only some pairs, and the delta needs every pair's count"
    record = read_basis_record(folder)
    if record is None:
        return f"no co-citation basis at {folder} (the counts were made by an older version, or never)"
    if (folder / PENDING).exists():
        return f"the stored results are not those the basis describes: {(folder / PENDING).read_text(encoding='utf-8')}"
    if record.get("version") != BASIS_VERSION:
        return f"the basis at {folder} has version {record.get('version')}, this version reads {BASIS_VERSION}"
    differing = [name for name in BASIS_SETTINGS if record.get(name) != getattr(settings, name)]
    if differing:
        return "the settings changed since the counts were made: " + ", ".join(
            f"{name} {record.get(name)} -> {getattr(settings, name)}" for name in differing
        )
    return None


def update_cocitation(
    store: GraphStore,
    settings: CocitationSettings | None = None,
    *,
    recluster: bool = False,
    clusters_path: Path | None = None,
) -> UpdateReport:
    """Bring co-citation up to date with the store's CITES and MENTIONS: by delta, or in full where it must.

    The full step (:func:`~gnn.cocitation.compute.compute_cocitation`) runs when :func:`full_step_reason`
    gives a reason; it writes the basis the next update starts from.
    """
    settings = settings or CocitationSettings()
    folder = basis_folder(store)
    reason = full_step_reason(folder, settings, recluster=recluster)
    if reason is not None:
        log.info("co-citation: full step, %s", reason)
        return UpdateReport("full", reason, full=compute_cocitation(store, settings, clusters_path=clusters_path))
    assert folder is not None  # full_step_reason gave none
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = round(now - clock, 3)
        clock = now

    old = read_basis(folder)
    new = read_state(store)
    lap("read")
    plan = plan_delta(old, new)
    lap("delta")
    if plan.is_empty:
        return UpdateReport("current", "no citation or mention changed since the counts were made", seconds=seconds)
    stored = store.read_edges("CO_CITED")
    noise = store.query_arrow("noise_weights").to_pandas()  # read before the edge write: see the module docstring
    touched = pa.array(plan.ids[plan.touched].to_numpy(dtype=object), pa.string())
    incident = _touches(stored["source"], touched) | _touches(stored["target"], touched)
    lap("read edges")
    rows = updated_rows(plan, stored[incident], settings)
    lap("recompute")
    mark_pending(folder, "`citegraph update` was writing its results and stopped half-way")
    kept = stored[~incident].copy()
    kept["association"] = kept["association"] * rows.association_factor
    present = (
        plan.present[plan.ids.get_indexer(rows.edges["source"])]
        & plan.present[plan.ids.get_indexer(rows.edges["target"])]
    )  # a deleted paper's pairs went with it
    edges = pd.concat([kept[rows.edges.columns], rows.edges[present]], ignore_index=True)
    store.replace_edges("CO_CITED", edges)
    papers_written = store.write_node_properties("Paper", "id", rows.papers)
    if len(noise):  # every other paper's noise as it was read, negative_weight rescaled
        others = noise[~noise["id"].isin(set(rows.papers["id"])) & noise["id"].isin(set(plan.ids[plan.present]))]
        others = others.assign(negative_weight=others["negative_weight"].fillna(0.0) * rows.negative_factor)
        store.write_node_properties("Paper", "id", others.reset_index(drop=True))
    lap("write")
    write_basis(folder, new, settings, full=False)
    lap("basis")
    return UpdateReport(
        "delta",
        f"{plan.changed_citing} citing papers changed",
        changed_citing=plan.changed_citing,
        changed_sentences=plan.changed_sentences,
        touched_papers=int(plan.touched.sum()),
        edges_written=int(present.sum()),
        papers_written=papers_written,
        seconds=seconds,
    )


def _touches(ids: pd.Series, touched: pa.Array) -> np.ndarray:
    """Which of ``ids`` are in ``touched`` (Arrow's hash lookup)."""
    found = pc.is_in(pa.array(ids.to_numpy(dtype=object), pa.string()), value_set=touched)
    return np.asarray(found.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


__all__ = [
    "DeltaPlan",
    "UpdateReport",
    "UpdatedRows",
    "full_step_reason",
    "plan_delta",
    "read_state",
    "update_cocitation",
    "updated_rows",
]
