"""LambdaMART over the reranker's features and its blend with the neural reranker."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gnn.rerank.examples import QueryExample, ranked_ids
from gnn.rerank.features import FEATURE_NAMES
from gnn.rerank.lambdamart import (
    LambdaMart,
    LambdaMartSettings,
    blend,
    choose_alpha,
    fit_lambdamart,
    load_blend,
    remove_saved,
    save_blend,
    stack_inputs,
    standardise,
    tree_inputs,
)
from gnn.rerank.model import RerankerModel, RerankerSettings, load_reranker, save_reranker
from graph.errors import ConfigError, DataError

SMALL = LambdaMartSettings(max_trees=200, leaves=4, min_child_samples=5, patience=30, seed=0, bag=1, stacked=False)


def _examples(rng: np.random.Generator, n: int, signal: int = 5) -> list[QueryExample]:
    """Queries of 8 candidates whose target has the largest value of one feature (plus noise elsewhere):
    learnable by trees from the features alone."""
    out = []
    for _ in range(n):
        features = rng.normal(size=(8, len(FEATURE_NAMES))).astype(np.float32)
        target = int(np.argmax(features[:, signal]))
        ids = [f"c{i}" for i in range(8)]
        rows = np.full(8, -1, dtype=np.int64)
        out.append(QueryExample(np.zeros(4, np.float32), np.zeros(4, np.float32), rows, features, ids, {ids[target]}))
    return out


def _mrr(scores: list[np.ndarray], examples: list[QueryExample]) -> float:
    ranks = [ranked_ids(s, ex.ids).index(next(iter(ex.targets))) + 1 for s, ex in zip(scores, examples)]
    return float(np.mean([1 / r for r in ranks]))


def test_lambdamart_learns_a_feature_ranking_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    train, validation = _examples(rng, 300), _examples(rng, 60)
    mart = fit_lambdamart(train, validation, SMALL)
    assert len(mart.trees) == 1 and 1 <= mart.trees[0] <= SMALL.max_trees
    assert _mrr([mart.score(ex.features) for ex in validation], validation) > 0.9  # chance: about 0.34
    again = fit_lambdamart(train, validation, SMALL)  # seeded and deterministic
    assert mart.score(validation[0].features).tolist() == again.score(validation[0].features).tolist()

    folder = tmp_path / "reranker"
    save_reranker(RerankerModel(4, len(FEATURE_NAMES)), folder, settings=RerankerSettings(), info={})
    save_blend(folder, mart, 0.5, {0.0: 0.9, 0.5: 0.95})
    _, record = load_reranker(folder)
    loaded = load_blend(folder, record)
    assert loaded is not None and loaded[1] == 0.5 and loaded[0].trees == mart.trees
    for ex in validation[:5]:
        assert loaded[0].score(ex.features) == pytest.approx(mart.score(ex.features))
    assert json.loads((folder / "config.json").read_text())["lambdamart"]["validation_mrr_by_alpha"]["0.5"] == 0.95


def test_scoring_many_pools_at_once_is_scoring_each() -> None:
    """score_pools predicts every pool in one call per booster; each pool's scores are score's, an empty pool
    included, and a stacked model takes each pool's neural scores."""
    rng = np.random.default_rng(4)
    train, validation = _examples(rng, 200), _examples(rng, 30)
    bag = fit_lambdamart(train, validation, replace(SMALL, bag=2))
    pools = [ex.features for ex in validation[:6]] + [np.zeros((0, len(FEATURE_NAMES)), np.float32)]
    together = bag.score_pools(pools)
    assert len(together) == 7 and len(together[-1]) == 0
    for scores, features in zip(together[:-1], pools[:-1], strict=True):
        assert scores.tolist() == pytest.approx(bag.score(features).tolist(), abs=1e-12)
    neural = [rng.normal(size=8) for _ in train]
    stacked = fit_lambdamart(
        train,
        validation,
        replace(SMALL, stacked=True),
        train_neural=neural,
        validation_neural=[rng.normal(size=8) for _ in validation],
    )
    scores = [rng.normal(size=8) for _ in range(3)]
    for got, features, n in zip(stacked.score_pools(pools[:3], scores), pools[:3], scores, strict=True):
        assert got.tolist() == pytest.approx(stacked.score(features, n).tolist(), abs=1e-12)


def test_a_bag_scores_the_mean_of_its_seeds_and_saves_each_booster(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    train, validation = _examples(rng, 200), _examples(rng, 40)
    raw = replace(SMALL, pool_relative=False)  # within-pool ranks would give the target away in one tree
    bag = fit_lambdamart(train, validation, replace(raw, bag=3, seed=7))
    singles = [fit_lambdamart(train, validation, replace(raw, seed=seed)) for seed in (7, 8, 9)]
    assert bag.trees == tuple(t for m in singles for t in m.trees) and bag.settings.bag == 3
    features = validation[0].features
    assert bag.score(features) == pytest.approx(np.mean([m.score(features) for m in singles], axis=0))
    assert singles[0].score(features).tolist() != singles[1].score(features).tolist()  # the seeds differ
    # a one-seed model grown by more seeds is the bag trained at once
    grown = singles[0].joined(fit_lambdamart(train, validation, replace(raw, bag=2, seed=8)))
    assert grown.settings == bag.settings and grown.score(features).tolist() == bag.score(features).tolist()
    with pytest.raises(ConfigError, match="same settings"):
        singles[0].joined(fit_lambdamart(train, validation, replace(raw, leaves=3)))

    folder = save_reranker(RerankerModel(4, len(FEATURE_NAMES)), tmp_path / "r", settings=RerankerSettings(), info={})
    (folder / "lambdamart.5.txt").write_text("a booster of an older, larger bag")
    save_blend(folder, bag, 0.25, {0.25: 0.9})
    assert sorted(p.name for p in folder.glob("lambdamart*.txt")) == [
        "lambdamart.1.txt",
        "lambdamart.2.txt",
        "lambdamart.txt",
    ]
    _, record = load_reranker(folder)
    loaded = load_blend(folder, record)
    assert loaded is not None and loaded[0].trees == bag.trees and loaded[0].settings == bag.settings
    assert loaded[0].score(features) == pytest.approx(bag.score(features))
    (folder / "lambdamart.2.txt").unlink()
    with pytest.raises(DataError, match=r"lambdamart\.2\.txt is missing"):
        load_blend(folder, record)
    remove_saved(folder)
    assert not list(folder.glob("lambdamart*.txt"))


def test_a_model_saved_before_bags_loads_as_one_booster(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    mart = fit_lambdamart(_examples(rng, 100), _examples(rng, 20), SMALL)
    folder = save_reranker(RerankerModel(4, len(FEATURE_NAMES)), tmp_path / "r", settings=RerankerSettings(), info={})
    save_blend(folder, mart, 0.5, {0.5: 0.9})
    _, record = load_reranker(folder)
    record["lambdamart"]["trees"] = mart.trees[0]  # how such a model recorded its trees
    del record["lambdamart"]["settings"]["bag"]
    loaded = load_blend(folder, record)
    assert loaded is not None and loaded[0].trees == mart.trees and loaded[0].settings.bag == 1


def test_a_neural_only_reranker_has_no_blend(tmp_path: Path) -> None:
    folder = save_reranker(RerankerModel(4, len(FEATURE_NAMES)), tmp_path / "r", settings=RerankerSettings(), info={})
    _, record = load_reranker(folder)
    assert load_blend(folder, record) is None
    with pytest.raises(DataError, match=r"lambdamart\.txt is missing"):
        LambdaMart.load(folder, {"settings": {}, "trees": 1})


def test_standardise_and_blend_by_hand() -> None:
    assert standardise(np.array([1.0, 2.0, 3.0])) == pytest.approx([-1.224745, 0.0, 1.224745])
    assert standardise(np.array([4.0, 4.0])).tolist() == [0.0, 0.0]  # a constant pool
    mart, neural = np.array([1.0, 2.0, 3.0]), np.array([30.0, 10.0, 20.0])
    # z(mart) = [-1.2247, 0, 1.2247]; z(neural) = [1.2247, -1.2247, 0]
    assert blend(mart, neural, 0.0) == pytest.approx([-1.224745, 0.0, 1.224745])
    assert blend(mart, neural, 1.0) == pytest.approx([0.0, -1.224745, 1.224745])
    assert blend(mart, neural, 2.0) == pytest.approx([1.224745, -2.449490, 1.224745])


def test_choose_alpha_takes_the_best_validation_mrr() -> None:
    """Trees that know feature 5 and a 'neural' scorer that knows the target outright: any α > 0 ranks
    every target first, so the smallest such α of the grid wins; α = 0 (trees alone) is below it."""
    rng = np.random.default_rng(1)
    train, validation = _examples(rng, 200), _examples(rng, 40)
    mart = fit_lambdamart(train, validation, SMALL)

    def oracle(ex: QueryExample) -> np.ndarray:
        return np.asarray([10.0 if i in ex.targets else 0.0 for i in ex.ids])

    alpha, mrr = choose_alpha(mart, validation, [oracle(ex) for ex in validation], grid=(0.0, 1.0, 5.0))
    assert mrr[5.0] == 1.0 and mrr[0.0] <= mrr[5.0] and alpha == min(a for a in mrr if mrr[a] == max(mrr.values()))


def test_fit_needs_queries_with_targets() -> None:
    rng = np.random.default_rng(2)
    examples = _examples(rng, 4)
    no_target = [QueryExample(ex.context, ex.global_, ex.rows, ex.features, ex.ids, set()) for ex in examples]
    with pytest.raises(DataError, match="target among their candidates"):
        fit_lambdamart(examples, no_target, SMALL)
    with pytest.raises(ConfigError, match="leaves"):
        LambdaMartSettings(leaves=1)
    with pytest.raises(ConfigError, match="bag ≥ 1"):
        LambdaMartSettings(bag=0)


def test_pool_relative_inputs_by_hand() -> None:
    """Three candidates, one feature [1, 3, 2]: z-scores [-1.2247, 1.2247, 0], ranks (largest first)
    [1, 0, 0.5]; a constant feature gets z 0 and ranks in pool order."""
    features = np.array([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]])
    inputs = tree_inputs(features, LambdaMartSettings())
    assert inputs.shape == (3, 6)
    assert inputs[:, 0].tolist() == [1.0, 3.0, 2.0]  # the raw features first
    assert inputs[:, 2] == pytest.approx([-1.224745, 1.224745, 0.0])
    assert inputs[:, 3].tolist() == [0.0, 0.0, 0.0]
    assert inputs[:, 4].tolist() == [1.0, 0.0, 0.5]
    assert inputs[:, 5].tolist() == [0.0, 0.5, 1.0]
    assert tree_inputs(features, LambdaMartSettings(pool_relative=False)).shape == (3, 2)


def test_stacked_lambdamart_reads_the_neural_score(tmp_path: Path) -> None:
    """Features that are noise and a 'neural' score that marks the target: only a stacked model can
    learn the ranking; it needs the score at prediction time, and saves and loads as stacked."""
    rng = np.random.default_rng(3)
    train, validation = _examples(rng, 200, signal=0), _examples(rng, 40, signal=0)

    def neural(ex: QueryExample) -> np.ndarray:
        return np.asarray([1.0 if i in ex.targets else 0.0 for i in ex.ids]) + rng.normal(0, 0.1, len(ex.ids))

    for ex in train + validation:  # the features no longer tell the target
        ex.features[:, 0] = rng.normal(size=len(ex.ids))
    stacked = replace(SMALL, stacked=True)
    train_scores, validation_scores = [neural(ex) for ex in train], [neural(ex) for ex in validation]
    mart = fit_lambdamart(train, validation, stacked, train_neural=train_scores, validation_neural=validation_scores)
    assert _mrr([mart.score(ex.features, n) for ex, n in zip(validation, validation_scores)], validation) > 0.9
    plain = fit_lambdamart(train, validation, SMALL)
    assert _mrr([plain.score(ex.features) for ex in validation], validation) < 0.6  # chance: about 0.34
    with pytest.raises(ConfigError, match="neural reranker's score"):
        mart.score(validation[0].features)
    with pytest.raises(ConfigError, match="neural scores"):
        fit_lambdamart(train, validation, stacked)

    folder = save_reranker(RerankerModel(4, len(FEATURE_NAMES)), tmp_path / "r", settings=RerankerSettings(), info={})
    save_blend(folder, mart, 0.0, {0.0: 1.0})
    _, record = load_reranker(folder)
    loaded = load_blend(folder, record)
    assert loaded is not None and loaded[0].settings.stacked
    assert loaded[0].score(validation[0].features, validation_scores[0]) == pytest.approx(
        mart.score(validation[0].features, validation_scores[0])
    )
    # a model saved before stacking existed has no "stacked" in its record: it reads the features only
    record["lambdamart"]["settings"].pop("stacked")
    old = load_blend(folder, record)
    assert old is not None and not old[0].settings.stacked


def test_stack_inputs_appends_the_neural_column() -> None:
    features = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert stack_inputs(features, np.array([0.5, -0.5]), LambdaMartSettings()).tolist() == [
        [1.0, 2.0, 0.5],
        [3.0, 4.0, -0.5],
    ]
    assert stack_inputs(features, None, LambdaMartSettings(stacked=False)) is features
    with pytest.raises(ConfigError, match="every candidate"):
        stack_inputs(features, np.array([1.0]), LambdaMartSettings())
