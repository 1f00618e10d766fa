r"""Betweenness centrality of the co-citation network, and CiteSpace's sigma.

Betweenness (Freeman 1977; Brandes 2001's algorithm, networkx ``betweenness_centrality``) of a work
:math:`v` in the undirected, unweighted co-citation network, normalised as CiteSpace reports it (Chen
2006, "CiteSpace II", JASIST 57(3)): the share of shortest paths between other works that pass through
:math:`v`,

.. math::

    b(v) = \frac{2}{(n-1)(n-2)} \sum_{\{s, t\},\, s \ne v \ne t} \frac{\sigma_{st}(v)}{\sigma_{st}},

so a star's centre has 1 and a leaf 0. The network is the CO_CITED edges with ``count >= min_count``
(CiteSpace links two references once they are co-cited; weights do not enter). A pair of works in two
components has no path and adds nothing.

Cost: Brandes' algorithm is one breadth-first search per source, :math:`O(nm)`. Measured on this
project's shared 2-core machine (networkx 3.6; ``benchmarks/mapping_bench.py --scan-betweenness``, synthetic
co-citation graphs of 8 references per citing paper; docs/results/mapping_cost.json): 828 works / 10,646 links
took 10.2 s exactly, 1,643 / 22,252 took 60.1 s. Above :data:`EXACT_UP_TO` works the searches start from
:data:`PIVOTS` sampled sources (Brandes & Pich 2007; networkx's ``k``, seeded), an unbiased estimate: on the
1,643-work graph 100 pivots took 3.6 s, with Spearman's ρ = 0.963 to the exact values, 19 of the exact top
20 in its top 20 and at most 0.022 absolute error (the largest value is 0.237); 300 pivots gave ρ = 0.980 in
13.2 s. A pivot costs one search over every link: on a 76,020-work / 1,366,189-link network (100k synthetic
papers) 20 pivots took 550 s on a busy hour of the machine, so large stores want fewer pivots or a higher
``min_count``.

Sigma (Chen et al. 2009, "Towards an explanatory and computational theory of scientific discovery",
J. Informetrics 3(3)) combines structural and temporal novelty:

.. math::

    \Sigma(v) = (b(v) + 1)^{w(v)}

with :math:`w(v)` the work's burst strength (:mod:`gnn.mapping.bursts`; 0 without a burst, so
:math:`\Sigma = 1`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from graph.errors import ConfigError

log = logging.getLogger(__name__)

# Exact betweenness up to this many works; sampled pivots above (measured: see the module docstring).
EXACT_UP_TO = 1000
PIVOTS = 100  # sampled sources above EXACT_UP_TO: rho 0.96 to the exact values at 1,643 works, 17x faster
LARGEST = float(np.finfo(np.float64).max)


@dataclass(frozen=True)
class CentralitySettings:
    """Settings of the betweenness computation."""

    # Co-citation links with count below this are left out of the network (1: every CO_CITED edge).
    min_count: int = 1
    # Networks with more works than this get sampled betweenness (measured cost: module docstring).
    exact_up_to: int = EXACT_UP_TO
    # Sampled source works above exact_up_to (networkx's k): the cost grows with it, the error shrinks as
    # 1/sqrt(pivots) (module docstring: 100 pivots rank like the exact values, rho 0.96).
    pivots: int = PIVOTS
    # Seed of the pivot sample: the same seed on the same network gives the same values.
    seed: int = 0

    def __post_init__(self) -> None:
        if self.min_count < 1:
            raise ConfigError(f"centrality min_count is {self.min_count}; a co-citation count is at least 1")
        if self.exact_up_to < 0:
            raise ConfigError(f"exact_up_to is {self.exact_up_to}; use 0 (always sample) or more (default 1000)")
        if self.pivots < 2:
            raise ConfigError(f"pivots is {self.pivots}; sample at least 2 source works (default 100)")


def cocitation_network(edges: pd.DataFrame, min_count: int = 1) -> nx.Graph:
    """The undirected, unweighted network of the CO_CITED table (``source``, ``target``, ``count``)."""
    kept = edges[edges["count"] >= min_count] if "count" in edges.columns else edges
    graph = nx.Graph()
    graph.add_edges_from(zip(kept["source"].tolist(), kept["target"].tolist()))
    return graph


def betweenness(graph: nx.Graph, settings: CentralitySettings | None = None) -> tuple[pd.Series, bool]:
    """Normalised betweenness of every work of ``graph`` (a Series by work id) and whether it was sampled."""
    settings = settings or CentralitySettings()
    n = graph.number_of_nodes()
    sampled = n > settings.exact_up_to and settings.pivots < n
    if sampled:
        log.info("betweenness of %d works from %d sampled pivots (seed %d)", n, settings.pivots, settings.seed)
    values = nx.betweenness_centrality(
        graph, k=settings.pivots if sampled else None, normalized=True, seed=settings.seed if sampled else None
    )
    series = pd.Series(values, dtype="float64", name="betweenness")
    series.index.name = "id"
    return series.sort_index(), sampled


def sigma(centrality: pd.Series, strength: pd.Series) -> pd.Series:
    r""":math:`(b + 1)^{w}` over the union of both indexes; a missing :math:`b` or :math:`w` counts as 0.

    Computed as :math:`\exp(w \ln(1 + b))`; a value beyond float64 (:math:`w \ln(1+b) > 709`, far past any
    observed burst) is clipped to the largest float64 with a warning, since the store keeps finite values only.
    """
    index = centrality.index.union(strength.index)
    b = centrality.reindex(index).fillna(0.0).to_numpy(dtype=np.float64)
    w = strength.reindex(index).fillna(0.0).to_numpy(dtype=np.float64)
    with np.errstate(over="ignore"):
        values = np.exp(w * np.log1p(b))
    if np.isinf(values).any():
        log.warning("%d sigma values exceed float64; clipped to %g", int(np.isinf(values).sum()), LARGEST)
    result = pd.Series(np.minimum(values, LARGEST), index=index, name="sigma")
    result.index.name = "id"
    return result


__all__ = ["EXACT_UP_TO", "PIVOTS", "CentralitySettings", "betweenness", "cocitation_network", "sigma"]
