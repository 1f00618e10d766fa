"""Hierarchies, reconstruction metrics, the tree embedding and Nickel & Kiela training on tiny trees."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from gnn.hyperbolic import poincare
from gnn.hyperbolic.embedding import PoincareEmbeddingSettings, train_embedding
from gnn.hyperbolic.hierarchy import Hierarchy, reconstruction, taxonomy_hierarchy, tree_embedding
from graph.errors import ConfigError


def binary_tree(depth: int) -> Hierarchy:
    """A complete binary tree: node k has children 2k+1 and 2k+2."""
    n = 2 ** (depth + 1) - 1
    edges = np.array([(child, (child - 1) // 2) for child in range(1, n)], dtype=np.int64)
    return Hierarchy(tuple(f"n{i}" for i in range(n)), edges, np.zeros(n, dtype=bool))


def closure_metric(h: Hierarchy) -> np.ndarray:
    """1 between related nodes, 2 otherwise: a perfect reconstruction."""
    d = np.where(h.related(), 1.0, 2.0)
    np.fill_diagonal(d, 0.0)
    return d


def test_closure_and_depth_of_a_small_tree() -> None:
    h = binary_tree(2)  # 7 nodes
    assert h.depth.tolist() == [0, 1, 1, 2, 2, 2, 2]
    # each depth-1 node has 1 ancestor, each depth-2 node 2: 2·1 + 4·2
    assert len(h.closure) == 10
    assert (3, 0) in {tuple(p) for p in h.closure.tolist()}
    assert h.spanning_tree().tolist() == [-1, 0, 0, 1, 1, 2, 2]


def test_subset_keeps_covering_edges() -> None:
    h = binary_tree(2)
    sub, kept = h.subset(np.array([True, False, True, True, True, True, True]))  # drop n1
    assert kept.tolist() == [0, 2, 3, 4, 5, 6]
    # n3, n4 lost their parent n1 and hang from n0 directly; n5, n6 keep n2
    assert sorted(map(tuple, sub.edges.tolist())) == [(1, 0), (2, 0), (3, 0), (4, 1), (5, 1)]


def test_taxonomy_hierarchy_joins_schemes_archives_and_mappings() -> None:
    acm = pd.DataFrame({"id": ["1998:I", "1998:I.2", "1998:I.2.7"], "scheme": ["1998"] * 3})
    broader = pd.DataFrame({"source": ["1998:I.2", "1998:I.2.7"], "target": ["1998:I", "1998:I.2"]})
    maps_to = pd.DataFrame({"source": ["cs.CL"], "target": ["1998:I.2.7"]})
    h = taxonomy_hierarchy(acm, ["cs.CL", "math.AG"], broader, maps_to)
    parents = {h.names[c]: sorted(h.names[p] for p in h.parents[c]) for c in range(len(h))}
    assert parents["cs.CL"] == ["1998:I.2.7", "arxiv:cs"]
    assert parents["math.AG"] == ["arxiv:math"]
    assert parents["1998:I"] == ["scheme:1998"]
    assert parents["scheme:1998"] == ["root"] and parents["scheme:arxiv"] == ["root"]
    assert h.virtual.sum() == 5  # root, two scheme nodes, two archives, and nothing else
    assert not h.virtual[h.index["cs.CL"]]


def test_reconstruction_perfect_and_shuffled() -> None:
    h = binary_tree(3)
    perfect = reconstruction(closure_metric(h), h)
    assert perfect.map == pytest.approx(1.0) and perfect.mean_rank == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    noise = rng.random((len(h), len(h)))
    shuffled = reconstruction(noise + noise.T, h)
    assert shuffled.map < 0.7 and shuffled.mean_rank > 2
    ancestors = reconstruction(closure_metric(h), h, ancestors_only=True)
    assert ancestors.nodes == len(h) - 1  # the root has no ancestor


def test_tree_embedding_has_edges_of_length_tau() -> None:
    h = binary_tree(3)
    for dim in (2, 3):
        x = tree_embedding(h.spanning_tree(), dim, scale=2.0)
        child, parent = h.edges[:, 0], h.edges[:, 1]
        lengths = poincare.dist(x[child], x[parent])
        torch.testing.assert_close(lengths, torch.full_like(lengths, 2.0), rtol=1e-8, atol=1e-8)
        assert (x.norm(dim=-1) < 1).all()


def test_training_is_seeded_and_reconstructs_a_tiny_tree() -> None:
    h = binary_tree(3)  # 15 nodes
    settings = PoincareEmbeddingSettings(dim=2, epochs=60, burn_in=5, seed=3, device="cpu")
    first = train_embedding(h, settings, progress=False)
    again = train_embedding(h, settings, progress=False)
    torch.testing.assert_close(first.points, again.points, rtol=0, atol=0)
    assert reconstruction(first.distances(), h).map > 0.95
    assert first.losses[-1] < first.losses[0]


@pytest.mark.parametrize("geometry", ["poincare", "euclidean"])
def test_sampled_negatives_and_random_init_train(geometry: str) -> None:
    h = binary_tree(2)
    settings = PoincareEmbeddingSettings(
        dim=2, geometry=geometry, init="random", negatives=3, epochs=40, burn_in=2, lr=0.1, seed=0, device="cpu"
    )
    trained = train_embedding(h, settings, progress=False)
    assert torch.isfinite(trained.points).all()
    assert trained.losses[-1] < trained.losses[0]
    if geometry == "poincare":
        assert (trained.points.norm(dim=-1) < 1).all()


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="geometry"):
        PoincareEmbeddingSettings(geometry="spherical")
    with pytest.raises(ConfigError, match="negatives"):
        PoincareEmbeddingSettings(negatives=0)
