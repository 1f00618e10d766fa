"""The service's final scorers: the fusion's and the trained reranker's explanations, and the trees' contributions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_reranker import CITATIONS, _index, _places

from gnn.rerank.examples import QueryExample
from gnn.rerank.features import FEATURE_NAMES, FeatureBuilder
from gnn.rerank.knowledge import Knowledge
from gnn.rerank.lambdamart import LambdaMart, LambdaMartSettings, fit_lambdamart
from gnn.rerank.model import RerankerModel, RerankerSettings
from gnn.rerank.scorer import FusionScorer, TrainedReranker
from gnn.retrieval.enricher import Candidate
from gnn.retrieval.prefetch import Prefetcher, PrefetchQuery

SIGNAL = FEATURE_NAMES.index("cocite_count")  # the feature the trees learn to rank by
POOL = 8


def _examples(rng: np.random.Generator, n: int) -> list[QueryExample]:
    """Pools of 8 whose target has the largest ``cocite_count`` (every other feature noise)."""
    out = []
    for _ in range(n):
        features = rng.normal(size=(POOL, len(FEATURE_NAMES))).astype(np.float32)
        ids = [f"c{i}" for i in range(POOL)]
        target = ids[int(np.argmax(features[:, SIGNAL]))]
        rows = np.full(POOL, -1, dtype=np.int64)
        out.append(QueryExample(np.zeros(8, np.float32), np.zeros(8, np.float32), rows, features, ids, {target}))
    return out


def _neural(rng: np.random.Generator, examples: list[QueryExample]) -> list[np.ndarray]:
    return [rng.normal(size=len(ex.ids)) for ex in examples]


@pytest.fixture(scope="module")
def trees() -> LambdaMart:
    rng = np.random.default_rng(0)
    train, validation = _examples(rng, 120), _examples(rng, 30)
    settings = LambdaMartSettings(max_trees=60, leaves=4, min_child_samples=5, patience=60, bag=2)
    return fit_lambdamart(
        train, validation, settings, train_neural=_neural(rng, train), validation_neural=_neural(rng, validation)
    )


def _reranker(blend: tuple[LambdaMart, float] | None) -> TrainedReranker:
    """A tiny trained reranker over the 8-d index of the feature tests; its feature MLP outputs 0, so the
    features reach the score only through the trees."""
    index = _index()
    model = RerankerModel(index.dim, len(FEATURE_NAMES), RerankerSettings(projection=4, text_hidden=4))
    torch.nn.init.zeros_(model.features[-1].weight)
    torch.nn.init.zeros_(model.features[-1].bias)
    builder = FeatureBuilder(index, Knowledge.from_citations(CITATIONS, None), _places())
    return TrainedReranker(model, builder, Prefetcher(index, None), blend=blend)


def _pool_inputs(seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    context = np.eye(8, dtype=np.float32)[1]
    rows = np.asarray([0, 1, 2, 3, -1, -1, -1, -1], dtype=np.int64)
    return context, np.zeros(8, np.float32), rows, rng.normal(size=(POOL, len(FEATURE_NAMES))).astype(np.float32)


def test_tree_contributions_add_up_to_the_score_and_follow_the_signal(trees: LambdaMart) -> None:
    _, _, _, features = _pool_inputs()
    neural = np.linspace(-1, 1, POOL)
    contributions, bias = trees.contributions(features, neural, [0, 3, 5])
    assert contributions.shape == (3, len(FEATURE_NAMES) + 1)  # the features, then the stacked neural score
    np.testing.assert_allclose(contributions.sum(axis=1) + bias, trees.score(features, neural)[[0, 3, 5]], atol=1e-9)
    everyone, _ = trees.contributions(features, neural, range(POOL))
    assert int(np.abs(everyone).sum(axis=0).argmax()) == SIGNAL


def test_the_trained_parts_split_the_served_score_exactly(trees: LambdaMart) -> None:
    for blend in ((trees, 0.5), None):
        reranker = _reranker(blend)
        pool = reranker.score_features(*_pool_inputs())
        parts = reranker.parts(pool, range(POOL))
        if blend is None:
            assert set(parts) == {"text", "feature term"}
        rest = pool.scores - np.sum(list(parts.values()), axis=0)
        np.testing.assert_allclose(rest, rest[0], atol=1e-6)  # a constant of the pool: c_q


def test_the_trained_why_names_what_drove_the_score(trees: LambdaMart) -> None:
    reranker = _reranker((trees, 0.5))
    context, global_, rows, features = _pool_inputs()
    pool = reranker.score_features(context, global_, rows, features)
    top = int(np.argmax(pool.scores))
    candidates = [
        Candidate(f"c{i}", prefetch_rank=i + 1, channel_ranks={"bm25": i + 1, "dense": POOL - i}) for i in range(POOL)
    ]
    [why] = reranker.explain(pool, candidates, [top], top_m=10)
    named = [part.rsplit(" ", 1)[0] for part in why.split(", ")]
    tree_features = [name for name in named if name in FEATURE_NAMES]
    assert tree_features and tree_features[0] == "cocite_count"
    stages = sorted([("bm25", top + 1), ("dense", POOL - top)], key=lambda stage: (stage[1], stage[0]))
    assert why.endswith(", ".join(f"{name} #{rank}" for name, rank in stages))  # the stages, best place first
    # zeroing the named feature of that candidate moves its score more than zeroing any other feature
    moved = []
    for column in range(len(FEATURE_NAMES)):
        changed = features.copy()
        changed[top, column] = 0.0
        moved.append(abs(reranker.score_features(context, global_, rows, changed).scores[top] - pool.scores[top]))
    assert FEATURE_NAMES[int(np.argmax(moved))] == "cocite_count"


def test_a_feature_constant_over_the_pool_is_not_named(trees: LambdaMart) -> None:
    reranker = _reranker((trees, 0.5))
    context, global_, rows, features = _pool_inputs()
    features[:, SIGNAL] = 1.5
    pool = reranker.score_features(context, global_, rows, features)
    whys = reranker.explain(pool, [Candidate(f"c{i}") for i in range(POOL)], range(POOL), top_m=10)
    assert not any("cocite_count" in why for why in whys)


def test_the_fusion_explains_with_its_stages_largest_contribution_first() -> None:
    candidate = Candidate(
        "p1",
        prefetch_rank=1,
        channel_ranks={"dense": 4, "profile_bm25": 1},
        cited_by=["a", "b"],
        references_rank=2,
    )
    query = PrefetchQuery("x [CIT]")
    assert FusionScorer().why(query, [Candidate("p0"), candidate], [1], top_m=10) == [
        "profile_bm25 #1, dense #4, cited by 2 of top 10"
    ]
