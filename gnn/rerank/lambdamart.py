r"""LambdaMART over the reranker's features, and its blend with the neural reranker.

**LambdaMART** (Burges 2010, "From RankNet to LambdaRank to LambdaMART"): gradient-boosted regression
trees whose gradients are the LambdaRank pseudo-gradients. For a query's candidates :math:`i` (a
target) and :math:`j` (not), with scores :math:`s_i, s_j`,

.. math::
    \lambda_{ij} = \frac{-\sigma}{1 + e^{\sigma (s_i - s_j)}}\,\bigl|\Delta \mathrm{NDCG}_{ij}\bigr|,
    \qquad \lambda_i = \sum_{j} \lambda_{ij} - \sum_{j} \lambda_{ji},

where :math:`|\Delta \mathrm{NDCG}_{ij}|` is the change of NDCG@k had :math:`i` and :math:`j` swapped
places (LightGBM's ``lambdarank`` objective, pairs truncated to the top ``truncation`` places). The
trees see the features of :mod:`gnn.rerank.features` only — no text vectors — and split on them
without scaling; medians and interactions (a BM25 score that matters only when the profile is empty,
say) come for free, which the feature MLP has to learn. With ``pool_relative`` each feature also
enters relative to the query's own pool: its z-score within the pool and its rank there (0 = the
pool's largest value, 1 = its smallest), so a split can say "the best BM25 score of this pool"
whatever the query's length makes the raw scores.

**Stacking.** With ``stacked`` the neural reranker's score (:mod:`gnn.rerank.model`, which reads the
MiniLM vectors the trees do not see) is one more input, :math:`x = [f(q, d);\, s_\mathrm{nn}(q, d)]`
(Wolpert 1992, "Stacked generalization"). A model's score on the queries it was trained on is
better than on any new query, so the trees would learn to trust it too much; the training queries'
scores are therefore *cross-fitted* (:func:`gnn.recommend.train.cross_fitted_scores`): each training
fold is scored by a neural model trained on the other folds, while validation, test and served
queries are scored by the model trained on every fold — the one saved beside the trees.

**Blend.** Trees and the neural reranker (:mod:`gnn.rerank.model`, which also reads the MiniLM vectors)
are combined per query on standardised scores,

.. math::
    s(q, d) = z_q\bigl(s_\mathrm{mart}(q, d)\bigr) + \alpha\, z_q\bigl(s_\mathrm{nn}(q, d)\bigr),
    \qquad z_q(x_d) = \frac{x_d - \operatorname{mean}_{d'} x_{d'}}{\operatorname{std}_{d'} x_{d'}},

with :math:`\alpha` chosen on validation MRR from a small grid (:func:`choose_alpha`). The
standardisation makes the two scales comparable whatever either model's raw range is.

**Bag of seeds.** Row and feature subsampling make one booster's ranking depend on its seed: on the
2010 validation queries, five seeds of the same stacked model spread over 0.005 of R@10
(docs/results.md). With ``bag`` = :math:`B` the model is :math:`B` boosters trained alike with seeds
``seed`` … ``seed`` + :math:`B - 1`, and the score is their mean,
:math:`s_\mathrm{mart}(q, d) = \tfrac{1}{B} \sum_b s_b(q, d)` (Breiman 1996, "Bagging predictors",
with the seed in place of the bootstrap sample), which lowers that variance by up to :math:`1/B`.

**Contributions** (:meth:`LambdaMart.contributions`): Saabas's path attribution (Saabas 2014,
"Interpreting random forests"; Palczewska et al. 2013). A candidate follows one path through each
tree; every split on the path hands the change of the expected output, from the node to the child
taken, to the feature it splits on, so for each booster

.. math::
    s(q, d) = \sum_{\text{trees}} v_\text{root} + \sum_j \varphi_j(d)

exactly, :math:`\varphi_j` summed over the trees and over the three inputs a feature gives with
``pool_relative`` (value, z-score, rank). A bag's contributions are its boosters' means. The paths
of every leaf are tabulated once, so a candidate costs one traversal per tree, like scoring;
TreeSHAP (``pred_contrib``, Lundberg et al. 2018) would give the Shapley values of the same trees at
about 4 ms per candidate for a five-seed bag of ~230 trees, more than the rest of a served query.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np

from gnn.metrics import reciprocal_rank
from gnn.rerank.examples import QueryExample, ranked_ids
from graph.errors import ConfigError, DataError

log = logging.getLogger(__name__)

MODEL_FILE = "lambdamart.txt"  # the bag's first booster; the others in lambdamart.<k>.txt
ALPHA_GRID = (0.0, 0.25, 0.5, 1.0, 2.0)


@dataclass(frozen=True)
class LambdaMartSettings:
    """LightGBM lambdarank; defaults validated on the 2010 validation queries (docs/results.md)."""

    max_trees: int = 2000  # upper bound; early stopping on validation NDCG@10 picks the number
    learning_rate: float = 0.05
    leaves: int = 15
    min_child_samples: int = 20
    subsample: float = 0.8  # rows per tree
    colsample: float = 0.8  # features per tree
    truncation: int = 20  # lambdarank pairs only among the top places
    patience: int = 100  # trees without a validation gain before stopping
    seed: int = 0
    bag: int = 5  # boosters with seeds seed … seed + bag − 1, their scores averaged (module docstring)
    pool_relative: bool = True  # also each feature's z-score and rank within the query's pool
    stacked: bool = True  # the neural reranker's score is one more input (module docstring)

    def __post_init__(self) -> None:
        if self.max_trees < 1 or self.leaves < 2 or not 0 < self.learning_rate <= 1 or self.bag < 1:
            raise ConfigError(
                f"LambdaMART needs max_trees ≥ 1, leaves ≥ 2, 0 < learning_rate ≤ 1 and bag ≥ 1; got "
                f"{self.max_trees}, {self.leaves}, {self.learning_rate}, {self.bag}"
            )


def _member_file(k: int) -> str:
    return MODEL_FILE if k == 0 else f"lambdamart.{k}.txt"


@dataclass(frozen=True)
class LambdaMart:
    """Trained boosters, one per seed of the bag: the score of a pool is their mean."""

    boosters: tuple[lgb.Booster, ...]
    settings: LambdaMartSettings
    trees: tuple[int, ...]  # trees each booster uses (its best iteration)
    seconds: float = 0.0

    def score(self, features: np.ndarray, neural: np.ndarray | None = None) -> np.ndarray:
        """Scores of one query's pool (rows: candidates); ``neural``: the neural reranker's scores of the
        same rows, needed by a ``stacked`` model."""
        if len(features) == 0:
            return np.zeros(0)
        inputs = tree_inputs(stack_inputs(features, neural, self.settings), self.settings)
        predictions = [
            booster.predict(inputs, num_iteration=trees, num_threads=1)
            for booster, trees in zip(self.boosters, self.trees, strict=True)
        ]
        return np.asarray(np.mean(predictions, axis=0))

    def score_pools(
        self, features: Sequence[np.ndarray], neural: Sequence[np.ndarray] | Sequence[None] | None = None
    ) -> list[np.ndarray]:
        """:meth:`score` of many pools at once: each pool's tree inputs as :meth:`score` makes them, then one
        ``predict`` per booster over them all on every core (a call per pool spends most of its time in
        LightGBM's set-up: 5 ms for 300 rows). Same scores as :meth:`score` pool by pool."""
        neural_scores: Sequence[np.ndarray | None] = [None] * len(features) if neural is None else neural
        inputs = [
            tree_inputs(stack_inputs(f, n, self.settings), self.settings)
            for f, n in zip(features, neural_scores, strict=True)
            if len(f)
        ]
        if not inputs:
            return [np.zeros(0) for _ in features]
        matrix = np.concatenate(inputs)
        predictions = np.mean(
            [
                booster.predict(matrix, num_iteration=trees, num_threads=os.cpu_count() or 1)
                for booster, trees in zip(self.boosters, self.trees, strict=True)
            ],
            axis=0,
        )
        out, begin = [], 0
        for f in features:
            out.append(np.asarray(predictions[begin : begin + len(f)]))
            begin += len(f)
        return out

    def contributions(
        self, features: np.ndarray, neural: np.ndarray | None, rows: Sequence[int] | np.ndarray
    ) -> tuple[np.ndarray, float]:
        """``(len(rows), C)`` contributions :math:`\varphi_j` of the pool's ``rows`` (module docstring) and the
        bias :math:`\\sum v_\text{root}`; ``C`` columns as :func:`stack_inputs` gives them (the features, then
        the neural score when ``stacked``). Each row's sum plus the bias is its :meth:`score`."""
        inputs = tree_inputs(stack_inputs(features, neural, self.settings), self.settings)[np.asarray(rows, np.int64)]
        columns = self._columns(features.shape[1])
        total, bias = np.zeros((len(inputs), columns)), 0.0
        for booster, trees, (table, root) in zip(self.boosters, self.trees, self._paths, strict=True):
            bias += root
            if len(inputs):
                leaves = booster.predict(inputs, num_iteration=trees, pred_leaf=True, num_threads=1)
                leaves = np.asarray(leaves, np.int64).reshape(len(inputs), -1)  # (rows, trees)
                total += table[np.arange(table.shape[0])[None, :], leaves].sum(axis=1)
        return total / len(self.boosters), bias / len(self.boosters)

    def _columns(self, n_features: int) -> int:
        return n_features + (1 if self.settings.stacked else 0)

    @cached_property
    def _paths(self) -> list[tuple[np.ndarray, float]]:
        """Per booster: each leaf's path contributions ``(trees, leaves, C)`` and the summed root values."""
        n_inputs = self.boosters[0].num_feature()
        columns = n_inputs // 3 if self.settings.pool_relative else n_inputs
        return [_leaf_paths(booster, trees, columns) for booster, trees in zip(self.boosters, self.trees, strict=True)]

    def joined(self, more: LambdaMart) -> LambdaMart:
        """One bag of this model's boosters and ``more``'s (seeds that continue this model's)."""
        if replace(more.settings, seed=self.settings.seed, bag=self.settings.bag) != self.settings:
            raise ConfigError("only boosters trained with the same settings can share a bag")
        settings = replace(self.settings, bag=len(self.boosters) + len(more.boosters))
        return LambdaMart(self.boosters + more.boosters, settings, self.trees + more.trees, self.seconds + more.seconds)

    def save(self, folder: Path) -> Path:
        """Write each booster (:data:`MODEL_FILE` and ``lambdamart.<k>.txt``), removing those of an older,
        larger bag; returns the first one's path."""
        folder.mkdir(parents=True, exist_ok=True)
        remove_saved(folder)
        for k, (booster, trees) in enumerate(zip(self.boosters, self.trees, strict=True)):
            booster.save_model(str(folder / _member_file(k)), num_iteration=trees)
        return folder / MODEL_FILE

    @classmethod
    def load(cls, folder: Path, record: dict[str, Any]) -> LambdaMart:
        """The boosters saved in ``folder`` with the ``lambdamart`` entry of the reranker's config."""
        # models saved before bags existed hold one booster, its tree count a number
        trees = record["trees"] if isinstance(record["trees"], list) else [record["trees"]]
        boosters = []
        for k in range(len(trees)):
            path = folder / _member_file(k)
            if not path.is_file():
                raise DataError(f"{folder}: {path.name} is missing; rerun `citegraph train reranker`")
            boosters.append(lgb.Booster(model_file=str(path)))
        # models saved before pool-relative inputs existed were trained on the raw features only,
        # and without the neural score as an input
        settings = {"pool_relative": False, "stacked": False, **record["settings"], "bag": len(trees)}
        return cls(tuple(boosters), LambdaMartSettings(**settings), tuple(int(t) for t in trees))

    def describe(self) -> dict[str, Any]:
        return {"settings": asdict(self.settings), "trees": list(self.trees)}

    def describe_trees(self) -> str:
        """``226 trees``, or ``5 seeds × 210–240 trees`` for a bag."""
        if len(self.trees) == 1:
            return f"{self.trees[0]} trees"
        return f"{len(self.trees)} seeds × {min(self.trees)}–{max(self.trees)} trees"


def _leaf_paths(booster: lgb.Booster, trees: int, columns: int) -> tuple[np.ndarray, float]:
    """Saabas's contributions of every leaf of the first ``trees`` trees, by column (input ``i`` is column
    ``i mod columns``: a feature's value, z-score and rank are one column), and the summed root values."""
    info = booster.dump_model(num_iteration=trees)["tree_info"]
    table = np.zeros((len(info), max(t["num_leaves"] for t in info), columns))
    bias = 0.0
    for t, tree in enumerate(info):
        root = tree["tree_structure"]
        if "leaf_value" in root:  # a tree without a split: a constant
            bias += root["leaf_value"]
            continue
        bias += root["internal_value"]
        stack = [(root, np.zeros(columns))]
        while stack:
            node, path = stack.pop()
            for child in (node["left_child"], node["right_child"]):
                value = child["leaf_value"] if "leaf_value" in child else child["internal_value"]
                step = path.copy()
                step[node["split_feature"] % columns] += value - node["internal_value"]
                if "leaf_value" in child:
                    table[t, child["leaf_index"]] = step
                else:
                    stack.append((child, step))
    return table, bias


def remove_saved(folder: Path) -> None:
    """Delete the boosters a :meth:`LambdaMart.save` wrote into ``folder``."""
    (folder / MODEL_FILE).unlink(missing_ok=True)
    for path in folder.glob("lambdamart.*.txt"):
        path.unlink()


def stack_inputs(features: np.ndarray, neural: np.ndarray | None, settings: LambdaMartSettings) -> np.ndarray:
    """The features, with the neural score as one more column when ``settings.stacked``."""
    if not settings.stacked:
        return features
    if neural is None or len(neural) != len(features):
        raise ConfigError("a stacked LambdaMART needs the neural reranker's score of every candidate")
    return np.hstack([np.asarray(features, np.float64), np.asarray(neural, np.float64)[:, None]])


def tree_inputs(features: np.ndarray, settings: LambdaMartSettings) -> np.ndarray:
    """One pool's rows as the trees see them: the features, and with ``pool_relative`` each
    feature's z-score within the pool and its rank there scaled to [0, 1] (module docstring)."""
    raw = np.asarray(features, dtype=np.float64)
    if not settings.pool_relative:
        return raw.astype(np.float32)
    spread = raw.std(axis=0)
    z = (raw - raw.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    rank = np.argsort(np.argsort(-raw, axis=0, kind="stable"), axis=0, kind="stable") / max(len(raw) - 1, 1)
    return np.hstack([raw, z, rank]).astype(np.float32)


def _matrix(
    pairs: Sequence[tuple[QueryExample, np.ndarray | None]], settings: LambdaMartSettings
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Tree inputs, labels and group sizes of (query, its neural scores or None) pairs."""
    features = np.concatenate([tree_inputs(stack_inputs(ex.features, n, settings), settings) for ex, n in pairs])
    labels = np.concatenate([ex.label.astype(np.int32) for ex, _ in pairs])
    return features, labels, [len(ex.ids) for ex, _ in pairs]


def _with_targets(
    examples: Sequence[QueryExample], neural: Sequence[np.ndarray] | None
) -> list[tuple[QueryExample, np.ndarray | None]]:
    """The queries with a target among their candidates, each with its neural scores (None: unstacked)."""
    scores: Sequence[np.ndarray | None] = [None] * len(examples) if neural is None else neural
    return [(ex, n) for ex, n in zip(examples, scores, strict=True) if ex.label.any()]


def fit_lambdamart(
    train: Sequence[QueryExample],
    validation: Sequence[QueryExample],
    settings: LambdaMartSettings | None = None,
    *,
    train_neural: Sequence[np.ndarray] | None = None,
    validation_neural: Sequence[np.ndarray] | None = None,
) -> LambdaMart:
    """Train ``settings.bag`` boosters on the queries of ``train`` with a target among their candidates
    (the strict regime), each early-stopped on the NDCG@10 of ``validation``'s queries that have one.
    A ``stacked`` model also takes the neural scores of every query's candidates (``train_neural``
    cross-fitted, see the module docstring). The boosters train side by side on as many cores as there
    are, a bag smaller than the machine with several threads each; each is deterministic for its seed."""
    settings = settings or LambdaMartSettings()
    if settings.stacked and (train_neural is None or validation_neural is None):
        raise ConfigError("a stacked LambdaMART needs the neural scores of the training and validation queries")
    train_pairs = _with_targets(train, train_neural if settings.stacked else None)
    validation_pairs = _with_targets(validation, validation_neural if settings.stacked else None)
    if not train_pairs or not validation_pairs:
        raise DataError("LambdaMART needs training and validation queries with a target among their candidates")
    start = time.perf_counter()
    x, y, groups = _matrix(train_pairs, settings)
    vx, vy, vgroups = _matrix(validation_pairs, settings)
    seeds = [settings.seed + k for k in range(settings.bag)]
    cores = os.cpu_count() or 1
    workers = max(1, min(len(seeds), cores))
    threads = max(1, cores // workers)  # a bag smaller than the machine gives each booster several cores
    with ThreadPoolExecutor(max_workers=workers) as pool:
        fitted = list(pool.map(lambda seed: _boost(x, y, groups, vx, vy, vgroups, settings, seed, threads), seeds))
    seconds = time.perf_counter() - start
    trees = tuple(t for _, t in fitted)
    log.info("LambdaMART: %d booster(s), %s trees, %.1f s", len(fitted), trees, seconds)
    return LambdaMart(tuple(b for b, _ in fitted), settings, trees, seconds)


def _boost(
    x: np.ndarray,
    y: np.ndarray,
    groups: list[int],
    vx: np.ndarray,
    vy: np.ndarray,
    vgroups: list[int],
    settings: LambdaMartSettings,
    seed: int,
    threads: int = 1,
) -> tuple[lgb.Booster, int]:
    """One booster of the bag and its best iteration (its own datasets: a thread shares none), on ``threads``
    cores (LightGBM's ``deterministic`` makes a seed's trees the same run to run at a given thread count)."""
    params = {
        "objective": "lambdarank",
        "metric": "ndcg",
        "eval_at": [10],
        "learning_rate": settings.learning_rate,
        "num_leaves": settings.leaves,
        "min_child_samples": settings.min_child_samples,
        "bagging_fraction": settings.subsample,
        "bagging_freq": 1,
        "feature_fraction": settings.colsample,
        "lambdarank_truncation_level": settings.truncation,
        "seed": seed,
        "deterministic": True,
        "num_threads": threads,
        "verbosity": -1,
    }
    train_set = lgb.Dataset(x, y, group=groups)
    valid_set = lgb.Dataset(vx, vy, group=vgroups, reference=train_set)
    booster = lgb.train(
        params,
        train_set,
        num_boost_round=settings.max_trees,
        valid_sets=[valid_set],
        callbacks=[lgb.early_stopping(settings.patience, verbose=False)],
    )
    return booster, int(booster.best_iteration or booster.current_iteration())


def standardise(scores: np.ndarray) -> np.ndarray:
    """:math:`z_q`: zero mean, unit deviation within one query's pool (a constant pool gives zeros)."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) == 0:
        return scores
    spread = scores.std()
    return (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)


def blend(mart_scores: np.ndarray, neural_scores: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`z_q(s_\\mathrm{mart}) + \\alpha\\, z_q(s_\\mathrm{nn})` (module docstring)."""
    return standardise(mart_scores) + alpha * standardise(neural_scores)


def choose_alpha(
    mart: LambdaMart,
    validation: Sequence[QueryExample],
    neural: Sequence[np.ndarray],
    grid: Sequence[float] = ALPHA_GRID,
) -> tuple[float, dict[float, float]]:
    """The :math:`\\alpha` of ``grid`` with the best validation MRR (ties: the smaller), and every value's
    MRR; ``neural``: the neural reranker's scores of each validation query's candidates."""
    scores = mart.score_pools([ex.features for ex in validation], neural)
    pools = list(zip(validation, scores, neural, strict=True))
    mrr = {
        alpha: float(
            np.mean([reciprocal_rank(ranked_ids(blend(m, n, alpha), ex.ids), ex.targets) for ex, m, n in pools])
        )
        for alpha in grid
    }
    best = max(grid, key=lambda a: (mrr[a], -a))
    return best, mrr


def save_blend(folder: Path, mart: LambdaMart, alpha: float, mrr_by_alpha: dict[float, float]) -> None:
    """Save the booster and record it (with ``alpha``) in the reranker's ``config.json``."""
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise DataError(f"{folder}: save the neural reranker first (config.json is missing)")
    mart.save(folder)
    record = json.loads(config_path.read_text(encoding="utf-8"))
    record["lambdamart"] = {
        **mart.describe(),
        "alpha": alpha,
        "validation_mrr_by_alpha": {str(a): round(v, 6) for a, v in mrr_by_alpha.items()},
    }
    config_path.write_text(json.dumps(record, indent=2, sort_keys=True), encoding="utf-8")


def load_blend(folder: Path, record: dict[str, Any]) -> tuple[LambdaMart, float] | None:
    """The booster and :math:`\\alpha` recorded in a reranker's config; None for a neural-only reranker."""
    entry = record.get("lambdamart")
    if not entry:
        return None
    return LambdaMart.load(folder, entry), float(entry["alpha"])


__all__ = [
    "ALPHA_GRID",
    "LambdaMart",
    "LambdaMartSettings",
    "blend",
    "choose_alpha",
    "fit_lambdamart",
    "load_blend",
    "remove_saved",
    "save_blend",
    "stack_inputs",
    "standardise",
    "tree_inputs",
]
