"""The reranker's queries as training and evaluation see them, and the order a scored pool ranks in.

A :class:`QueryExample` is one query with its candidate pool (what the recommendation service
returned for it), each candidate's index row and features (:mod:`gnn.rerank.features`), and which
candidates are its targets. The neural model (:mod:`gnn.rerank.model`) and LambdaMART
(:mod:`gnn.rerank.lambdamart`) both train on them; :func:`ranked_ids` is the one order every
scorer's pool is read in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gnn.rerank.features import FEATURE_NAMES


@dataclass
class QueryExample:
    """One training or evaluation query: its candidates' vectors and features, and which are targets."""

    context: np.ndarray  # (dim,)
    global_: np.ndarray  # (dim,) zeros without a citing paper
    rows: np.ndarray  # (N,) index rows of the candidates (-1: not indexed), for vectors
    features: np.ndarray  # (N, F) float32
    ids: list[str]  # (N,) candidate paper ids, pool order
    targets: set[str]  # the papers the context cites
    stages: list[tuple[str, ...]] = field(default_factory=list)  # (N,) which stages proposed each candidate
    # extra rows drawn for training only (not part of the pool): partners (positives) and noise negatives
    extra_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    extra_features: np.ndarray = field(default_factory=lambda: np.zeros((0, len(FEATURE_NAMES)), np.float32))
    extra_positive: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # target-based triples (index rows): target, partner, negative
    triples: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))

    @property
    def label(self) -> np.ndarray:
        return np.asarray([p in self.targets for p in self.ids], dtype=bool)


def ranked_ids(scores: np.ndarray, ids: Sequence[str]) -> list[str]:
    """Ids by descending score, ties by id (the service's order)."""
    return [ids[k] for k in sorted(range(len(ids)), key=lambda k: (-float(scores[k]), ids[k]))]


__all__ = ["QueryExample", "ranked_ids"]
