r"""Papers in the taxonomy: taxonomy vectors from categories, and inferred categories for papers without.

**Taxonomy vector** (SymTax, Goyal et al., 2024, https://arxiv.org/abs/2406.01606: a paper is
placed in the taxonomy through its categories). A paper with given arXiv categories :math:`C(p)`
gets the mean of their fused vectors; a paper with inferred categories the score-weighted mean;
both L2-normalised like the class vectors:

.. math::
    t_p = \frac{\sum_{c \in C(p)} w_{pc}\, f_c}{\lVert \sum_{c \in C(p)} w_{pc}\, f_c \rVert_2},
    \qquad w_{pc} = 1 \text{ (given)}, \quad w_{pc} = s(p, c) \text{ (inferred)}.

**Inferred categories.** For a paper without given categories (every ACL Anthology paper) and
every candidate category :math:`c`, the score is the cosine between the paper's text embedding
:math:`e_p` and the category's vector :math:`v_c` — its fused vector, or its text embedding
(``infer_from``; ``auto`` takes whichever ranks the known categories of the tuning papers better,
by precision@1):

.. math::
    s(p, c) = \cos(e_p, v_c),

and the ``top_k`` categories with :math:`s \ge \tau` become ``IN_CATEGORY {score: s, inferred: true}``.
:math:`\tau` maximises the F1 of such predictions against the given categories of the tuning half
of the papers whose categories are known (unarXive); the other half is held out for the report
(:class:`InferenceQuality`). Candidates are the arXiv categories with a description (so not the
retired archives such as ``cmp-lg``) that are not aliases of another (``cs.SY`` is an alias for
``eess.SY``), plus any category a paper is given; a given alias category counts as its target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gnn.taxonomy.graph import ARXIV, JointTaxonomy
from graph.errors import ConfigError, DataError

INFER_FROM = ("auto", "fused", "text")


@dataclass(frozen=True)
class CategorySettings:
    """How papers without categories get inferred ones."""

    # Categories inferred per paper at most (those scoring at least the threshold).
    top_k: int = field(default=3, metadata={"help": "categories inferred per paper without given ones, at most"})
    # Fixed threshold τ on the cosine; None: chosen on the tuning papers (F1 of the top-k predictions).
    min_score: float | None = field(
        default=None, metadata={"help": "fixed cosine threshold for inferred categories (default: tuned on unarXive)"}
    )
    # Class vectors to compare paper embeddings with: fused, text, or auto (better precision@1 on tuning papers).
    infer_from: str = field(
        default="auto",
        metadata={
            "help": "class vectors that inferred categories compare papers with (auto: better P@1 on tuning papers)",
            "choices": INFER_FROM,
        },
    )
    # Share of the papers with known categories held out from tuning, to report unbiased quality.
    holdout_fraction: float = 0.5
    # Seed of the tuning / held-out split.
    seed: int = 0

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise ConfigError(f"top_k is {self.top_k}; infer at least one category per paper (default 3)")
        if self.infer_from not in INFER_FROM:
            raise ConfigError(f"unknown infer_from {self.infer_from!r}; use one of {', '.join(INFER_FROM)}")
        if not 0.0 <= self.holdout_fraction < 1.0:
            raise ConfigError(f"holdout_fraction is {self.holdout_fraction}; use a share in [0, 1) (default 0.5)")


@dataclass(frozen=True)
class Candidates:
    """The categories a paper can be assigned, with both kinds of vectors (unit rows)."""

    codes: tuple[str, ...]
    fused: np.ndarray  # float32 [c, d]
    text: np.ndarray  # float32 [c, d]

    def vectors(self, kind: str) -> np.ndarray:
        return self.fused if kind == "fused" else self.text


def _unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True).clip(min=1e-12)).astype(np.float32)  # clip: 0 rows


def canonical_codes(taxonomy: JointTaxonomy) -> dict[str, str]:
    """arXiv code -> the code it stands for (itself, or the target of an alias)."""
    arxiv = taxonomy.nodes_of(ARXIV)
    return {taxonomy.keys[i]: taxonomy.aliases[i] or taxonomy.keys[i] for i in arxiv}


def candidate_categories(
    taxonomy: JointTaxonomy, fused: np.ndarray, text: np.ndarray, given: Sequence[str] = ()
) -> Candidates:
    """Candidates (module docstring): described, non-alias categories plus the canonical given ones."""
    canonical = canonical_codes(taxonomy)
    wanted = {canonical.get(code, code) for code in given}
    rows = [
        i
        for i in taxonomy.nodes_of(ARXIV).tolist()
        if taxonomy.aliases[i] is None and (taxonomy.described[i] or taxonomy.keys[i] in wanted)
    ]
    if not rows:
        raise DataError("no candidate arXiv category to infer from; ingest the arXiv taxonomy first")
    return Candidates(tuple(taxonomy.keys[i] for i in rows), _unit(fused[rows]), _unit(text[rows]))


def top_categories(embeddings: np.ndarray, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, scores)``, each [n, k]: the k candidates of highest cosine per row of ``embeddings``."""
    k = min(k, vectors.shape[0])
    scores = _unit(embeddings) @ vectors.T  # (n, c)
    top = (
        np.argpartition(-scores, k - 1, axis=1)[:, :k]
        if k < scores.shape[1]
        else np.tile(np.arange(k), (len(scores), 1))
    )
    top_scores = np.take_along_axis(scores, top, axis=1)
    order = np.argsort(-top_scores, axis=1, kind="stable")  # best first
    return np.take_along_axis(top, order, axis=1), np.take_along_axis(top_scores, order, axis=1)


@dataclass(frozen=True)
class InferenceQuality:
    """Category inference on papers with known categories."""

    papers: int
    precision_at_1: float  # share of papers whose best category is one of theirs
    precision_at_3: float  # mean over papers of |top 3 ∩ theirs| / 3
    hit_at_3: float  # share of papers with one of theirs in the top 3
    precision: float  # of the thresholded top-k predictions
    recall: float  # of the given categories, by the thresholded predictions
    f1: float

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def evaluate(
    indices: np.ndarray, scores: np.ndarray, gold: Sequence[set[int]], *, top_k: int, threshold: float
) -> InferenceQuality:
    """Ranking metrics at 1 and 3 and thresholded precision/recall/F1 of the top ``top_k``."""
    n = len(gold)
    if n == 0:
        nan = float("nan")
        return InferenceQuality(0, nan, nan, nan, nan, nan, nan)
    hits = np.array([[c in g for c in row] for row, g in zip(indices[:, :3].tolist(), gold)], dtype=bool)
    kept = (scores[:, :top_k] >= threshold) & np.array(
        [[c in g for c in row] for row, g in zip(indices[:, :top_k].tolist(), gold)], dtype=bool
    )
    predicted = int((scores[:, :top_k] >= threshold).sum())
    correct = int(kept.sum())
    relevant = sum(len(g) for g in gold)
    precision = correct / predicted if predicted else 0.0
    recall = correct / relevant if relevant else 0.0
    return InferenceQuality(
        papers=n,
        precision_at_1=float(hits[:, 0].mean()),
        precision_at_3=float(hits[:, :3].sum(axis=1).mean() / 3),
        hit_at_3=float(hits[:, :3].any(axis=1).mean()),
        precision=precision,
        recall=recall,
        f1=2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    )


def choose_threshold(scores: np.ndarray, correct: np.ndarray, n_relevant: int) -> float:
    """τ maximising the F1 of "top-k with score ≥ τ" (``scores``/``correct``: [n, k]); ties: the higher τ."""
    flat, right = scores.ravel(), correct.ravel()
    if not len(flat) or n_relevant == 0:
        return float("inf")
    order = np.argsort(-flat, kind="stable")
    tp = np.cumsum(right[order])
    predicted = np.arange(1, len(flat) + 1)
    f1 = 2 * tp / (predicted + n_relevant)  # = 2PR/(P+R) with P = tp/predicted, R = tp/n_relevant
    # the threshold is a score, so all predictions tied with it go in together: only evaluate at the last of a tie
    last = np.r_[flat[order][1:] != flat[order][:-1], True]
    best = int(np.flatnonzero(last)[np.argmax(f1[last])])
    return float(flat[order][best])


@dataclass(frozen=True)
class Calibration:
    """What was chosen on the tuning papers, and how it does on the held-out ones."""

    infer_from: str  # "fused" or "text"
    threshold: float
    tuning: dict[str, InferenceQuality]  # per vector kind, on the tuning papers
    held_out: dict[str, InferenceQuality]  # per vector kind, on the held-out papers (at that kind's τ)
    thresholds: dict[str, float]  # τ per vector kind


def calibrate(
    candidates: Candidates,
    known: pd.DataFrame,
    embeddings: np.ndarray,
    canonical: dict[str, str],
    settings: CategorySettings,
) -> Calibration:
    """Pick the vector kind and τ on tuning papers; measure both kinds on held-out papers.

    ``known``: one row per paper with given categories (``codes``: list of codes), aligned with
    ``embeddings`` (its rows).
    """
    position = {code: i for i, code in enumerate(candidates.codes)}
    gold = [
        {position[canonical.get(c, c)] for c in codes if canonical.get(c, c) in position} for codes in known["codes"]
    ]
    rng = np.random.default_rng(settings.seed)
    order = rng.permutation(len(known))
    n_held = round(len(known) * settings.holdout_fraction)
    held, tune = np.sort(order[:n_held]), np.sort(order[n_held:])
    k = max(settings.top_k, 3)
    tuning: dict[str, InferenceQuality] = {}
    held_out: dict[str, InferenceQuality] = {}
    thresholds: dict[str, float] = {}
    for kind in ("fused", "text"):
        indices, scores = top_categories(embeddings, candidates.vectors(kind), k)
        tune_gold = [gold[i] for i in tune]
        correct = np.array(
            [[c in g for c in row] for row, g in zip(indices[tune, : settings.top_k].tolist(), tune_gold)]
        )
        tau = (
            settings.min_score
            if settings.min_score is not None
            else float("inf")  # no tuning paper: nothing to choose on (reported below unless --min-score)
            if not len(tune)
            else choose_threshold(
                scores[tune, : settings.top_k], correct.reshape(len(tune), -1), sum(map(len, tune_gold))
            )
        )
        thresholds[kind] = float(tau)
        tuning[kind] = evaluate(indices[tune], scores[tune], tune_gold, top_k=settings.top_k, threshold=tau)
        held_out[kind] = evaluate(
            indices[held], scores[held], [gold[i] for i in held], top_k=settings.top_k, threshold=tau
        )
    if settings.infer_from == "auto":
        fused_p1, text_p1 = tuning["fused"].precision_at_1, tuning["text"].precision_at_1
        chosen = "text" if text_p1 > fused_p1 else "fused"  # ties (and no tuning papers): the fused vectors
    else:
        chosen = settings.infer_from
    if not np.isfinite(thresholds[chosen]):
        raise DataError(
            "no paper with given categories and an embedding to choose the threshold on; "
            "run `citegraph compute embeddings --embed papers` (and ingest unarXive), or pass --min-score"
        )
    return Calibration(chosen, thresholds[chosen], tuning, held_out, thresholds)


def infer_categories(
    candidates: Candidates, ids: Sequence[str], embeddings: np.ndarray, *, kind: str, top_k: int, threshold: float
) -> pd.DataFrame:
    """``source`` (paper id), ``target`` (code), ``score``, ``inferred`` (True): top-k at or above τ."""
    if not len(ids):
        return pd.DataFrame({"source": [], "target": [], "score": [], "inferred": []})
    indices, scores = top_categories(embeddings, candidates.vectors(kind), top_k)
    keep = scores >= threshold
    rows, cols = np.nonzero(keep)
    codes = np.array(candidates.codes, dtype=object)
    return pd.DataFrame(
        {
            "source": np.asarray(ids, dtype=object)[rows],
            "target": codes[indices[rows, cols]],
            "score": scores[rows, cols].astype(np.float64),
            "inferred": True,
        }
    )


def paper_vectors(
    edges: pd.DataFrame, fused_by_code: dict[str, np.ndarray], *, weighted: bool
) -> tuple[list[str], np.ndarray]:
    """Taxonomy vector :math:`t_p` of each paper of ``edges`` (``source``, ``target``[, ``score``]).

    ``weighted``: weigh each category by its ``score`` (inferred categories); else a plain mean.
    """
    if edges.empty:
        return [], np.zeros((0, len(next(iter(fused_by_code.values()), []))), dtype=np.float32)
    codes = sorted(fused_by_code)
    position = {c: i for i, c in enumerate(codes)}
    matrix = np.stack([fused_by_code[c] for c in codes]).astype(np.float64)
    papers, paper_index = np.unique(edges["source"].astype(str).to_numpy(), return_inverse=True)
    weights = edges["score"].astype(float).fillna(1.0).to_numpy() if weighted else np.ones(len(edges))
    summed = np.zeros((len(papers), matrix.shape[1]))
    np.add.at(summed, paper_index, weights[:, None] * matrix[[position[c] for c in edges["target"].astype(str)]])
    norms = np.linalg.norm(summed, axis=1, keepdims=True).clip(min=1e-12)  # clip: opposite vectors could cancel
    return papers.tolist(), (summed / norms).astype(np.float32)


__all__ = [
    "INFER_FROM",
    "Calibration",
    "Candidates",
    "CategorySettings",
    "InferenceQuality",
    "calibrate",
    "candidate_categories",
    "canonical_codes",
    "choose_threshold",
    "evaluate",
    "infer_categories",
    "paper_vectors",
    "top_categories",
]
