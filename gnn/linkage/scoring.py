"""Task 1A scoring (CL-SciSumm) and the selection rule that turns sentence scores into a linked set.

**Scoring** as the shared task does it (Jaidka et al., CL-SciSumm 2016-2020 overviews): for each
gold file ``g`` (one per reference paper and annotator) and each citance ``c`` in it, with ``P``
the predicted and ``G`` the gold sentence ids,

.. math::
    TP = |P \\cap G|, \\quad FP = |P \\setminus G|, \\quad FN = |G \\setminus P|

*Micro*: the counts are summed over all files and citances, then
``precision = TP / (TP + FP)``, ``recall = TP / (TP + FN)``, ``F1 = 2PR / (P + R)``.
*Macro*: F1 per gold file, averaged over files. A citance the run does not answer counts with
``P = {}`` (all its gold ids are false negatives).

**Selection**: given the scores ``p_1 >= p_2 >= ...`` of one citance's candidates (sorted), the
linked set is

.. math::
    S = \\{ s_{(j)} : j \\le k_{\\min} \\} \\cup \\{ s_{(j)} : j \\le k_{\\max},\\ p_{(j)} \\ge \\tau \\}

(the top ``k_min`` always; more, up to ``k_max``, while they clear the threshold ``tau``).
:func:`choose_selection` picks ``(k_max, tau)`` maximising micro F1 on training folds.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Counts:
    tp: int
    fp: int
    fn: int

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True)
class Task1AScore:
    micro: Counts  # summed over files and citances
    macro_f1: float  # mean over gold files of each file's F1
    files: int
    citances: int

    def as_dict(self) -> dict[str, float | int]:
        return {
            "precision": round(self.micro.precision, 4),
            "recall": round(self.micro.recall, 4),
            "micro_f1": round(self.micro.f1, 4),
            "macro_f1": round(self.macro_f1, 4),
            "tp": self.micro.tp,
            "fp": self.micro.fp,
            "fn": self.micro.fn,
            "files": self.files,
            "citances": self.citances,
        }


def citance_counts(predicted: Iterable[int], gold: Iterable[int]) -> Counts:
    """TP, FP, FN of one citance (sentence ids compared as sets)."""
    p, g = set(predicted), set(gold)
    return Counts(len(p & g), len(p - g), len(g - p))


def score_task1a(
    predictions: Mapping[Hashable, Iterable[int]], gold_files: Mapping[Hashable, Mapping[Hashable, Iterable[int]]]
) -> Task1AScore:
    """Micro and macro scores of ``predictions`` (citance key -> sids) against ``gold_files``.

    ``gold_files`` maps a file key (reference paper, annotator) to that file's citances (citance key
    -> gold sids); the citance keys are the ones ``predictions`` uses.
    """
    total = Counts(0, 0, 0)
    f1s = []
    citances = 0
    for citances_of_file in gold_files.values():
        file_counts = Counts(0, 0, 0)
        for key, gold in citances_of_file.items():
            file_counts = file_counts + citance_counts(predictions.get(key, ()), gold)
            citances += 1
        total = total + file_counts
        f1s.append(file_counts.f1)
    return Task1AScore(total, float(np.mean(f1s)) if f1s else 0.0, len(f1s), citances)


@dataclass(frozen=True)
class Selection:
    """How many sentences to link: see the module docstring."""

    k_min: int = 1  # always linked: Task 1A citances refer to at least one sentence
    k_max: int = 2  # never more than this many
    threshold: float = 1.0  # a sentence past the first k_min is linked only if its score reaches this

    def __post_init__(self) -> None:
        if not 0 <= self.k_min <= self.k_max:
            raise ValueError(f"selection needs 0 <= k_min <= k_max, got k_min={self.k_min}, k_max={self.k_max}")

    def select(self, scores: np.ndarray) -> np.ndarray:
        """Indices into ``scores`` of the linked candidates, best first."""
        order = np.argsort(-np.asarray(scores), kind="stable")[: self.k_max]
        keep = [j for rank, j in enumerate(order) if rank < self.k_min or scores[j] >= self.threshold]
        return np.asarray(keep, dtype=np.int64)


def choose_selection(
    scored: Sequence[tuple[np.ndarray, np.ndarray, frozenset[int]]],
    *,
    k_min: int = 1,
    k_values: Sequence[int] = (1, 2, 3, 4, 5),
    thresholds: Sequence[float] | None = None,
) -> tuple[Selection, float]:
    """The ``Selection`` maximising micro F1 over ``scored`` and that F1.

    ``scored`` holds, per (citance, gold file) pair, the candidates' scores, their sentence ids and
    the gold ids. ``thresholds`` default to the 50 quantiles of all scores from the 50th to the
    99.9th percentile. Ties go to the smaller ``k_max``, then the higher threshold (fewer links).
    """
    if not scored:
        return Selection(k_min, max(k_min, 1)), 0.0
    if thresholds is None:
        every = np.concatenate([s for s, _, _ in scored])
        grid = [float(t) for t in np.unique(np.quantile(every, np.linspace(0.5, 0.999, 50)))]
    else:
        grid = [float(t) for t in thresholds]
    # Sort each citance once; the hits of rank j are then a prefix property.
    ranked = []
    for scores, sids, gold in scored:
        order = np.argsort(-scores, kind="stable")[: max(k_values)]
        ranked.append((scores[order], np.array([int(sids[j]) in gold for j in order]), len(gold)))
    best, best_f1 = Selection(k_min, max(k_min, 1)), -1.0
    for k_max in sorted(k_values):
        if k_max < k_min:
            continue
        for threshold in sorted(grid, reverse=True):
            tp = fp = fn = 0
            for top_scores, hits, n_gold in ranked:
                take = np.arange(len(top_scores)) < k_min
                take |= (np.arange(len(top_scores)) < k_max) & (top_scores >= threshold)
                found = int(hits[take].sum())
                tp += found
                fp += int(take.sum()) - found
                fn += n_gold - found
            f1 = Counts(tp, fp, fn).f1
            if f1 > best_f1 + 1e-12:
                best, best_f1 = Selection(k_min, k_max, float(threshold)), f1
    return best, best_f1


__all__ = ["Counts", "Selection", "Task1AScore", "choose_selection", "citance_counts", "score_task1a"]
