"""Betweenness of the co-citation network and CiteSpace's sigma: a 5-work network by hand, igraph as an
independent computation, networkx's sampled estimate, and the step's values on a store."""

from __future__ import annotations

import igraph as ig
import networkx as nx
import numpy as np
import pandas as pd
import pytest

from gnn.mapping.centrality import CentralitySettings, betweenness, cocitation_network, sigma
from graph.errors import ConfigError


def _edges(pairs: list[tuple[str, str]], counts: list[int] | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(pairs, columns=["source", "target"])
    frame["count"] = counts if counts is not None else 1
    return frame


def test_five_works_by_hand() -> None:
    # a - b - c - d, and e on c:   a   b   c   d
    #                                      |
    #                                      e
    # Normalisation for n = 5: 2 / ((n-1)(n-2)) = 1/6 per unordered pair of other works.
    # b lies on the paths a-c, a-d, a-e: 3 pairs -> 3/6 = 0.5.
    # c lies on a-d, a-e, b-d, b-e and d-e: 5 pairs -> 5/6. a, d, e are ends only: 0.
    network = cocitation_network(_edges([("a", "b"), ("b", "c"), ("c", "d"), ("c", "e")]))
    values, sampled = betweenness(network)
    assert not sampled
    assert values.to_dict() == pytest.approx({"a": 0.0, "b": 0.5, "c": 5 / 6, "d": 0.0, "e": 0.0}, rel=1e-12)


def test_min_count_leaves_weak_links_out() -> None:
    edges = _edges([("a", "b"), ("b", "c"), ("a", "c")], counts=[3, 3, 1])
    network = cocitation_network(edges, min_count=2)
    assert sorted(network.edges) == [("a", "b"), ("b", "c")]
    assert betweenness(network)[0]["b"] == pytest.approx(1.0)  # the centre of a 3-work path


def test_exact_values_match_igraph_on_a_sample_graph() -> None:
    graph = nx.relabel_nodes(nx.les_miserables_graph(), {n: f"w:{n}" for n in nx.les_miserables_graph()})
    edges = pd.DataFrame(list(graph.edges), columns=["source", "target"]).assign(count=1)
    values, sampled = betweenness(cocitation_network(edges))
    assert not sampled and len(values) == graph.number_of_nodes() == 77
    # igraph (C, another implementation) gives the raw sum over unordered pairs; normalise as CiteSpace does
    other = ig.Graph.TupleList(edges[["source", "target"]].itertuples(index=False), directed=False)
    n = other.vcount()
    expected = pd.Series(other.betweenness(directed=False), index=other.vs["name"]) * 2 / ((n - 1) * (n - 2))
    np.testing.assert_allclose(values.to_numpy(), expected.reindex(values.index).to_numpy(), rtol=1e-9, atol=1e-12)


def test_large_networks_are_sampled_from_seeded_pivots() -> None:
    graph = nx.relabel_nodes(nx.les_miserables_graph(), str)
    edges = pd.DataFrame(list(graph.edges), columns=["source", "target"]).assign(count=1)
    network = cocitation_network(edges)
    settings = CentralitySettings(exact_up_to=50, pivots=30, seed=3)
    values, sampled = betweenness(network, settings)
    assert sampled
    expected = nx.betweenness_centrality(network, k=30, normalized=True, seed=3)
    assert values.to_dict() == pytest.approx(expected, rel=1e-12)
    assert values.equals(betweenness(network, settings)[0])  # the same seed, the same values
    exact = betweenness(network)[0]
    assert values.idxmax() == exact.idxmax() == "Valjean"  # the estimate keeps the hub on top


def test_sigma_is_centrality_plus_one_to_the_burst_strength() -> None:
    central = pd.Series({"a": 0.5, "b": 0.0, "c": 0.2})
    strength = pd.Series({"a": 2.0, "c": 0.0, "d": 3.0})
    values = sigma(central, strength)
    assert values.to_dict() == pytest.approx({"a": 2.25, "b": 1.0, "c": 1.0, "d": 1.0})
    huge = sigma(pd.Series({"a": 1.0}), pd.Series({"a": 5000.0}))  # 2^5000 is no float64: clipped, finite
    assert np.isfinite(huge["a"]) and huge["a"] == np.finfo(np.float64).max


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        CentralitySettings(min_count=0)
    with pytest.raises(ConfigError, match="at least 2"):
        CentralitySettings(pivots=1)
