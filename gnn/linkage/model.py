"""The learned linker: a logistic regression over the signals of :mod:`gnn.linkage.features`.

For a citance ``c`` and candidate sentence ``s_i`` with standardised features ``x_i``
(``(x - mu) / sigma``, statistics of the training rows),

.. math::
    p(\\text{link} \\mid c, s_i) = \\sigma(w^\\top x_i + b), \\qquad
    \\min_{w,b} \\; \\tfrac{1}{2}\\lVert w \\rVert^2 + C \\sum_j \\omega_j\\,
        \\ell\\big(y_j, \\sigma(w^\\top x_j + b)\\big)

(``l`` the log loss; ``omega_j`` = 1 for gold rows, ``silver_weight`` for silver rows; positives
are re-weighted so both classes weigh the same, since about 1 in 150 candidates is linked). The
linked set is chosen from the probabilities by a :class:`~gnn.linkage.scoring.Selection`
(top ``k_min`` plus those above a threshold, at most ``k_max``), fitted on training folds.

Why a logistic regression: about 1,700 gold links on 40 papers are too few for a deep model; a
linear model over 42 signals fits in a second, is calibrated enough for a threshold, stores as a
few numbers in JSON (no pickles), and its weights say which signal matters. Gradient boosting
(scikit-learn's ``HistGradientBoostingClassifier``) is measured beside it in
``benchmarks/linkage_quality.py`` (``kind="boosting"``; not persisted).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gnn.linkage.features import FEATURES, CitedPaper, features
from gnn.linkage.scoring import Selection, choose_selection
from graph.errors import ConfigError, DataError
from graph.files import ModelFile

# The linker `linkage train` saves and `link`, `compute linkage` and the server load: <cache>/models/linker.json.
LINKER_FILE = ModelFile("linker", "linker.json")

MODEL_FORMAT = "citegraph-linker/1"


@dataclass(frozen=True)
class LinkerSettings:
    kind: str = "logistic"  # "logistic" (persisted, the default) or "boosting" (benchmarks only)
    # inverse L2 strength of the logistic regression; 1.0 was as good as 0.1 and 10 in CV
    c: float = field(default=1.0, metadata={"help": "inverse regularisation of the logistic regression"})
    # weight of a silver row relative to a gold row
    silver_weight: float = field(default=1.0, metadata={"help": "weight of a silver row relative to a gold row"})
    k_min: int = 1  # always link at least this many sentences
    k_values: tuple[int, ...] = (1, 2, 3, 4, 5)  # k_max values the selection search tries
    inner_folds: int = 3  # folds (by reference paper) for choosing the selection out of fold
    seed: int = 0  # fold assignment and the boosting model

    def __post_init__(self) -> None:
        if self.kind not in ("logistic", "boosting"):
            raise ConfigError(f"linker kind {self.kind!r} is unknown; use 'logistic' or 'boosting'")
        if self.c <= 0 or self.silver_weight < 0:
            raise ConfigError("linker needs c > 0 and silver_weight >= 0")


@dataclass(frozen=True)
class Example:
    """One training citance: its text and vector, the cited paper, and the linked sentence ids."""

    group: str  # reference paper id: folds never split a paper
    citance: str
    vector: np.ndarray  # (d,) unit vector of `citance`
    paper: CitedPaper
    positives: frozenset[int]  # linked sids (gold), or the silver positives
    weight: float = 1.0  # per-row weight (silver rows use LinkerSettings.silver_weight)
    labelled: frozenset[int] | None = None  # sids with a label; None: every sentence (gold), else silver's pairs
    _features: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)  # memo of features()

    def matrix(self) -> np.ndarray:
        """``(n, F)`` features of every sentence of the paper for this citance, computed once."""
        if not self._features:
            self._features.append(features(self.citance, self.vector, self.paper))
        return self._features[0]


@dataclass
class Linker:
    """Standardisation + logistic regression + selection rule; see the module docstring."""

    mean: np.ndarray  # (F,)
    scale: np.ndarray  # (F,)
    weights: np.ndarray  # (F,)
    bias: float
    selection: Selection
    settings: LinkerSettings = field(default_factory=LinkerSettings)
    booster: Any = None  # the fitted boosting model when settings.kind == "boosting"

    # scoring ---------------------------------------------------------------------------------
    def decision(self, x: np.ndarray) -> np.ndarray:
        """``(n,)`` link probabilities of feature rows ``x`` ``(n, F)``."""
        if self.booster is not None:
            return np.asarray(self.booster.predict_proba(x)[:, 1], dtype=np.float64)
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-z))

    def score(self, citance: str, vector: np.ndarray, paper: CitedPaper) -> np.ndarray:
        """``(n,)`` probability that ``citance`` refers to each sentence of ``paper``."""
        return self.decision(features(citance, vector, paper))

    def link(self, citance: str, vector: np.ndarray, paper: CitedPaper) -> list[tuple[int, float]]:
        """The linked ``(sid, probability)`` pairs, best first; empty for an empty paper or citance."""
        if not citance.strip() or len(paper) == 0:
            return []
        scores = self.score(citance, vector, paper)
        return [(int(paper.sids[j]), float(scores[j])) for j in self.selection.select(scores)]

    # persistence -----------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the linker as JSON (logistic only); atomic (a temporary file renamed over ``path``)."""
        if self.booster is not None:
            raise ConfigError("a boosting linker is for benchmarks only and cannot be saved; train kind='logistic'")
        payload = {
            "format": MODEL_FORMAT,
            "features": list(FEATURES),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
            "selection": asdict(self.selection),
            "settings": {**asdict(self.settings), "k_values": list(self.settings.k_values)},
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(payload, indent=1), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Linker:
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise DataError(
                f"cannot read the linker model {path}: {exc}; train one with `citegraph linkage train`"
            ) from exc
        if payload.get("format") != MODEL_FORMAT or payload.get("features") != list(FEATURES):
            raise DataError(
                f"{path} is not a linker model of this version (features changed); retrain with `citegraph linkage train`"
            )
        settings = payload["settings"]
        return cls(
            mean=np.asarray(payload["mean"]),
            scale=np.asarray(payload["scale"]),
            weights=np.asarray(payload["weights"]),
            bias=float(payload["bias"]),
            selection=Selection(**payload["selection"]),
            settings=LinkerSettings(**{**settings, "k_values": tuple(settings["k_values"])}),
        )


def design_matrix(examples: Sequence[Example]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacked features ``X (N, F)``, labels ``y (N,)`` and row weights ``w (N,)`` of the examples' labelled rows."""
    xs, ys, ws = [], [], []
    for ex in examples:
        x = ex.matrix()
        y = np.array([int(s) in ex.positives for s in ex.paper.sids], dtype=np.float64)
        if ex.labelled is not None:
            keep = np.array([int(s) in ex.labelled for s in ex.paper.sids])
            x, y = x[keep], y[keep]
        xs.append(x)
        ys.append(y)
        ws.append(np.full(len(y), ex.weight))
    if not xs:
        return np.zeros((0, len(FEATURES))), np.zeros(0), np.zeros(0)
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


def _fit_model(x: np.ndarray, y: np.ndarray, w: np.ndarray, settings: LinkerSettings) -> Linker:
    if y.min(initial=1.0) == y.max(initial=0.0):
        raise DataError("the linker needs linked and unlinked sentences to learn from; the training data has one kind")
    # Balance the classes: positives weigh as much as negatives in total.
    w = w.copy()
    pos = y > 0.5
    w[pos] *= w[~pos].sum() / max(w[pos].sum(), 1e-12)
    w /= w.mean()
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0  # a constant feature (e.g. no silver cue) stays 0 after centring
    if settings.kind == "boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        booster = HistGradientBoostingClassifier(
            max_iter=200, learning_rate=0.05, max_leaf_nodes=15, l2_regularization=1.0, random_state=settings.seed
        )
        booster.fit(x, y, sample_weight=w)
        zeros = np.zeros(x.shape[1])
        return Linker(mean, scale, zeros, 0.0, Selection(), settings, booster)
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=settings.c, max_iter=2000)
    model.fit((x - mean) / scale, y, sample_weight=w)
    return Linker(mean, scale, model.coef_[0].astype(np.float64), float(model.intercept_[0]), Selection(), settings)


def _folds(groups: Sequence[str], n_folds: int, seed: int) -> list[set[str]]:
    """``n_folds`` disjoint sets of groups, assigned after a seeded shuffle of the sorted distinct groups."""
    distinct = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(distinct))
    return [{distinct[j] for j in order[f::n_folds]} for f in range(n_folds)]


def train_linker(
    examples: Sequence[Example],
    settings: LinkerSettings = LinkerSettings(),
    *,
    selection_examples: Sequence[Example] | None = None,
) -> Linker:
    """Fit the linker on ``examples`` and choose its :class:`Selection` out of fold.

    The selection is chosen on ``selection_examples`` (default: the examples whose every sentence
    is labelled, i.e. gold) with scores from models fitted on the other ``inner_folds - 1`` folds
    (by reference paper), so the threshold is not tuned on scores the model has memorised.
    """
    targets = [e for e in (selection_examples if selection_examples is not None else examples) if e.labelled is None]
    x, y, w = design_matrix(examples)
    linker = _fit_model(x, y, w, settings)
    groups = [e.group for e in targets]
    if len(set(groups)) >= settings.inner_folds >= 2:
        scored = []
        for held in _folds(groups, settings.inner_folds, settings.seed):
            inner = _fit_model(*design_matrix([e for e in examples if e.group not in held]), settings)
            scored += [(inner.decision(e.matrix()), e.paper.sids, e.positives) for e in targets if e.group in held]
    else:
        scored = [(linker.decision(e.matrix()), e.paper.sids, e.positives) for e in targets]
    linker.selection, _ = choose_selection(scored, k_min=settings.k_min, k_values=settings.k_values)
    return linker


def fixed_scorer(feature: str, k: int) -> Linker:
    """A baseline "linker" that ranks by one raw feature (``cosine`` or ``bm25``) and links its top ``k``."""
    column = FEATURES.index(feature)
    weights = np.zeros(len(FEATURES))
    weights[column] = 1.0
    linker = Linker(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), weights, 0.0, Selection(k, k, np.inf))
    return linker


__all__ = [
    "LINKER_FILE",
    "MODEL_FORMAT",
    "Example",
    "Linker",
    "LinkerSettings",
    "design_matrix",
    "fixed_scorer",
    "train_linker",
]
