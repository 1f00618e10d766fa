r"""Ranking metrics for citation recommendation, one query at a time and averaged over queries.

A query has a ranked list of paper ids :math:`r_1, r_2, \dots` (best first, no repeats) and a set
:math:`G` of relevant papers (the papers the citing sentence cites). With
:math:`\mathrm{rel}_i = [r_i \in G]` and :math:`|G| \geq 1`:

.. math::
    \mathrm{R@}k = \frac{\sum_{i \le k} \mathrm{rel}_i}{|G|} \qquad
    \mathrm{P@}k = \frac{\sum_{i \le k} \mathrm{rel}_i}{k} \qquad
    \mathrm{F1@}k = \frac{2\,\mathrm{P@}k\,\mathrm{R@}k}{\mathrm{P@}k + \mathrm{R@}k} \qquad
    \mathrm{hit@}k = [\textstyle\sum_{i \le k} \mathrm{rel}_i \ge 1]

.. math::
    \mathrm{RR} = \frac{1}{\min\{i : \mathrm{rel}_i = 1\}} \ (0 \text{ if none}) \qquad
    \mathrm{AP@}k = \frac{1}{\min(|G|, k)} \sum_{i \le k} \mathrm{rel}_i \, \mathrm{P@}i

.. math::
    \mathrm{NDCG@}k = \frac{\sum_{i \le k} \mathrm{rel}_i / \log_2(i + 1)}
                           {\sum_{i \le \min(|G|, k)} 1 / \log_2(i + 1)}

These are the definitions of Järvelin & Kekäläinen (2002, "Cumulated gain-based evaluation of IR
techniques", binary gains) and of the citation-recommendation literature (Medić & Šnajder 2020,
"Improved local citation recommendation based on context enhanced with global information";
Färber & Jatowt 2020, "Citation recommendation: approaches and datasets"). MAP@k normalises by
:math:`\min(|G|, k)`, so a perfect ranking scores 1 even when :math:`|G| > k`. Means over queries
are macro averages (each query weighs the same); a query whose relevant papers are never
retrieved contributes 0, never "not counted": end-to-end numbers only.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

DEFAULT_CUTOFFS = (5, 10, 20, 50)
HIT_CUTOFFS = (1, 10)  # hit@k: share of queries with at least one relevant paper in the first k


def _hits(ranked: Sequence[str], relevant: Collection[str], k: int) -> int:
    return sum(1 for paper in ranked[:k] if paper in relevant)


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Share of the relevant papers among the first ``k`` (R@k)."""
    return _hits(ranked, relevant, k) / len(relevant) if relevant else 0.0


def hit_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1 when a relevant paper is among the first ``k``, else 0 (hit@k; hit@1 is P@1 for one target)."""
    return 1.0 if _hits(ranked, relevant, k) else 0.0


def precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Share of the first ``k`` places holding a relevant paper (P@k; empty places count as misses)."""
    return _hits(ranked, relevant, k) / k


def f1_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Harmonic mean of P@k and R@k (0 when both are 0)."""
    p, r = precision_at_k(ranked, relevant, k), recall_at_k(ranked, relevant, k)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """1 / rank of the first relevant paper; 0 when none is ranked."""
    for i, paper in enumerate(ranked, start=1):
        if paper in relevant:
            return 1.0 / i
    return 0.0


def average_precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """AP@k normalised by ``min(|G|, k)`` (see the module docstring)."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for i, paper in enumerate(ranked[:k], start=1):
        if paper in relevant:
            hits += 1
            total += hits / i
    return total / min(len(relevant), k)


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Binary-gain NDCG@k (Järvelin & Kekäläinen 2002)."""
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 1) for i, paper in enumerate(ranked[:k], start=1) if paper in relevant)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), k) + 1))
    return dcg / ideal


@dataclass(frozen=True)
class RankingMetrics:
    """Macro-averaged metrics of one system over a query set."""

    queries: int
    recall: dict[int, float]  # k -> mean R@k
    mrr: float
    ndcg10: float
    map10: float
    f1_20: float
    hits: dict[int, float] = field(default_factory=dict)  # k -> mean hit@k (HIT_CUTOFFS)

    def as_dict(self) -> dict[str, float | int]:
        return {
            "queries": self.queries,
            **{f"R@{k}": v for k, v in self.recall.items()},
            "MRR": self.mrr,
            "NDCG@10": self.ndcg10,
            "MAP@10": self.map10,
            "F1@20": self.f1_20,
            **{f"hit@{k}": v for k, v in self.hits.items()},
        }


def evaluate_rankings(
    rankings: Sequence[Sequence[str]], relevant: Sequence[Collection[str]], cutoffs: Sequence[int] = DEFAULT_CUTOFFS
) -> RankingMetrics:
    """Mean R@k (each k in ``cutoffs``), MRR, NDCG@10, MAP@10, F1@20 and hit@1, hit@10 over aligned queries.

    >>> m = evaluate_rankings([["a", "b", "c"], ["x", "y"]], [{"b"}, {"z"}], cutoffs=(1, 2))
    >>> m.recall, m.mrr
    ({1: 0.0, 2: 0.5}, 0.25)
    """
    if len(rankings) != len(relevant):
        raise ValueError(f"{len(rankings)} rankings but {len(relevant)} relevant sets; they must align")
    n = len(rankings)
    if n == 0:
        return RankingMetrics(0, {k: 0.0 for k in cutoffs}, 0.0, 0.0, 0.0, 0.0, {k: 0.0 for k in HIT_CUTOFFS})

    def mean(values: list[float]) -> float:
        return sum(values) / n

    return RankingMetrics(
        queries=n,
        recall={k: mean([recall_at_k(r, g, k) for r, g in zip(rankings, relevant)]) for k in cutoffs},
        mrr=mean([reciprocal_rank(r, g) for r, g in zip(rankings, relevant)]),
        ndcg10=mean([ndcg_at_k(r, g, 10) for r, g in zip(rankings, relevant)]),
        map10=mean([average_precision_at_k(r, g, 10) for r, g in zip(rankings, relevant)]),
        f1_20=mean([f1_at_k(r, g, 20) for r, g in zip(rankings, relevant)]),
        hits={k: mean([hit_at_k(r, g, k) for r, g in zip(rankings, relevant)]) for k in HIT_CUTOFFS},
    )


__all__ = [
    "DEFAULT_CUTOFFS",
    "HIT_CUTOFFS",
    "RankingMetrics",
    "average_precision_at_k",
    "evaluate_rankings",
    "f1_at_k",
    "hit_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
]
