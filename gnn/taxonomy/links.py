r"""Held-out link prediction on the joint taxonomy: which edges are held out, and how a fusion scores on them.

Given BROADER and MAPS_TO edges are split into train / validation / test (:func:`split_links`);
inferred MAPS_TO edges only ever train (text similarity made them, so predicting them from text
would flatter every method). A set of vectors is judged by the cosine of each held-out edge against
negative pairs (:func:`link_metrics`): ROC AUC and average precision, on uniform negatives and, for
the test part, on hard negatives of the same scheme.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import torch
from torch_geometric.utils import negative_sampling, to_undirected

from gnn.taxonomy.graph import JointTaxonomy
from graph.errors import DataError

BROADER_KIND, MAPS_TO_KIND = 0, 1


# metrics ---------------------------------------------------------------------------------------
def roc_auc(positive: np.ndarray, negative: np.ndarray) -> float:
    r"""Area under the ROC curve: the probability that a positive outscores a negative (ties count half).

    .. math::
        \mathrm{AUC} = \frac{1}{|P||N|}\sum_{p \in P}\sum_{n \in N}
        \big([s_p > s_n] + \tfrac12 [s_p = s_n]\big)

    computed from ranks (Mann-Whitney U) in :math:`O((|P|+|N|) \log(|P|+|N|))`.
    """
    if len(positive) == 0 or len(negative) == 0:
        return float("nan")
    from scipy.stats import rankdata  # here, not at the top: scipy.stats costs the server's start-up for nothing

    ranks = rankdata(np.concatenate([positive, negative]))  # average ranks: ties count half
    u = ranks[: len(positive)].sum() - len(positive) * (len(positive) + 1) / 2
    return float(u / (len(positive) * len(negative)))


def average_precision(positive: np.ndarray, negative: np.ndarray) -> float:
    r"""Average precision of the ranking by score: :math:`\mathrm{AP} = \frac{1}{|P|}\sum_k P@k \cdot \mathrm{rel}_k`.

    Ties are broken with negatives first (the pessimistic order), so a constant scorer gets no credit.
    """
    if len(positive) == 0:
        return float("nan")
    scores = np.concatenate([positive, negative])
    relevant = np.concatenate([np.ones(len(positive)), np.zeros(len(negative))])
    order = np.lexsort((relevant, -scores))  # by score descending, negatives before positives on ties
    hits = relevant[order]
    precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float((precision * hits).sum() / len(positive))


def cosine_scores(vectors: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Cosine of the two vectors of each pair (``pairs``: int [P, 2])."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)  # clip: zero rows score 0
    return np.einsum("ij,ij->i", unit[pairs[:, 0]], unit[pairs[:, 1]])


# split -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LinkSplit:
    """Positive taxonomy edges with their part, and fixed negatives for validation and test."""

    pairs: np.ndarray  # int64 [P, 2]: BROADER (child, parent) and MAPS_TO (category, class) edges
    kinds: np.ndarray  # int8 [P]: BROADER_KIND or MAPS_TO_KIND
    part: np.ndarray  # int8 [P]: 0 train, 1 validation, 2 test (inferred edges are always 0)
    negatives: dict[str, np.ndarray] = field(default_factory=dict)  # "val" / "test" / "test_hard" -> int64 [Q, 2]

    def edges(self, part: int, kind: int | None = None) -> np.ndarray:
        mask = self.part == part
        if kind is not None:
            mask &= self.kinds == kind
        return self.pairs[mask]

    def message_edges(self, *, everything: bool = False) -> np.ndarray:
        """int64 [2, E']: training edges (or all edges) in both directions, coalesced, for message passing."""
        pairs = self.pairs if everything else self.pairs[self.part == 0]
        edge_index = torch.from_numpy(np.ascontiguousarray(pairs.T, dtype=np.int64)).reshape(2, -1)
        return to_undirected(edge_index).numpy()


def split_links(taxonomy: JointTaxonomy, *, val_fraction: float, test_fraction: float, seed: int) -> LinkSplit:
    """Hold out shares of the given edges; draw negatives for them.

    Uniform negatives (``val``, ``test``): node pairs that are no edge in either direction, drawn
    with :func:`torch_geometric.utils.negative_sampling` over the whole graph, as many as positives.
    Hard negatives (``test_hard``): each test edge :math:`(u, v)` with :math:`v` replaced by a node of
    the same scheme (an ACM 1998 class by another ACM 1998 class) that is no neighbour of :math:`u`;
    they test whether a method knows *which* class, not only which kind of class.
    """
    pairs = np.concatenate([taxonomy.broader, taxonomy.maps_to]).astype(np.int64).reshape(-1, 2)
    kinds = np.concatenate(
        [np.full(len(taxonomy.broader), BROADER_KIND), np.full(len(taxonomy.maps_to), MAPS_TO_KIND)]
    ).astype(np.int8)
    inferred = np.concatenate([np.zeros(len(taxonomy.broader), dtype=bool), taxonomy.maps_inferred])
    rng = np.random.default_rng(seed)
    candidates = rng.permutation(np.flatnonzero(~inferred))
    # at least one edge each where there are enough, so a tiny taxonomy still gets a (rough) figure
    least = 1 if len(candidates) >= 3 else 0
    n_val = max(least, round(len(candidates) * val_fraction))
    n_test = max(least, round(len(candidates) * test_fraction))
    part = np.zeros(len(pairs), dtype=np.int8)
    part[candidates[:n_val]] = 1
    part[candidates[n_val : n_val + n_test]] = 2

    n = len(taxonomy)
    everything = LinkSplit(pairs, kinds, part).message_edges(everything=True)
    random.seed(seed)  # negative_sampling draws with Python's `random`
    drawn = negative_sampling(torch.from_numpy(everything), num_nodes=n, num_neg_samples=2 * (n_val + n_test))
    uniform = drawn.T.numpy()
    uniform = uniform[uniform[:, 0] != uniform[:, 1]]
    # the same unordered pair twice would count double: keep first occurrences only
    _, first = np.unique(np.sort(uniform, axis=1), axis=0, return_index=True)
    uniform = uniform[np.sort(first)]
    if len(uniform) < n_val + n_test:
        raise DataError(f"the taxonomy graph ({n} nodes) is too dense to draw {n_val + n_test} negative pairs")
    negatives = {"val": uniform[:n_val], "test": uniform[n_val : n_val + n_test]}
    negatives["test_hard"] = _corrupted(pairs[part == 2], taxonomy.schemes, everything, rng)
    return LinkSplit(pairs, kinds, part, negatives)


def _corrupted(pairs: np.ndarray, schemes: tuple[str, ...], edges: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each (u, v): (u, v') with v' of v's scheme, v' != u, and (u, v') no edge. Pairs without one are skipped."""
    linked = set(zip(edges[0].tolist(), edges[1].tolist()))
    by_scheme: dict[str, np.ndarray] = {}
    for scheme in set(schemes):
        by_scheme[scheme] = np.flatnonzero(np.array([s == scheme for s in schemes]))
    out = []
    for u, v in pairs.tolist():
        pool = by_scheme[schemes[v]]
        for _ in range(20):  # a few tries; a scheme whose nodes are all linked to u gives up
            w = int(pool[rng.integers(len(pool))])
            if w != u and w != v and (u, w) not in linked:
                out.append((u, w))
                break
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def link_metrics(vectors: np.ndarray, split: LinkSplit, part: str) -> dict[str, float]:
    """AUC and AP of cosine scores on a split part (``"val"`` or ``"test"``; test adds hard-negative AUC/AP)."""
    positive = cosine_scores(vectors, split.edges(1 if part == "val" else 2))
    out = {
        "auc": roc_auc(positive, cosine_scores(vectors, split.negatives[part])),
        "ap": average_precision(positive, cosine_scores(vectors, split.negatives[part])),
    }
    if part == "test" and len(split.negatives.get("test_hard", ())):
        hard = cosine_scores(vectors, split.negatives["test_hard"])
        out["auc_hard"] = roc_auc(positive, hard)
        out["ap_hard"] = average_precision(positive, hard)
    return out


__all__ = [
    "BROADER_KIND",
    "MAPS_TO_KIND",
    "LinkSplit",
    "average_precision",
    "cosine_scores",
    "link_metrics",
    "roc_auc",
    "split_links",
]
