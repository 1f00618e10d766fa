r"""How good a clustering is: modularity and silhouette, per cluster and overall (CiteSpace reports both).

**Modularity** of a partition of a weighted graph (Newman, 2006, PNAS 103:8577), with resolution
:math:`\gamma`, splits into one term per cluster :math:`c`:

.. math::
    Q = \sum_c Q_c, \qquad Q_c = \frac{l_c}{m} - \gamma \left(\frac{d_c}{2m}\right)^2

with :math:`l_c` the weight of the links inside :math:`c`, :math:`d_c` the summed weighted degree of its
nodes and :math:`m` the total link weight: the same :math:`Q` Leiden maximised
(:mod:`gnn.cocitation.clusters`), on the same links.

**Silhouette** (Rousseeuw, 1987, J. Comput. Appl. Math. 20:53), as CiteSpace computes it on the co-citation
similarity (Chen et al., 2010, JASIST 61:1386): with distance :math:`d_{xy} = 1 - \cos_{xy}`,

.. math::
    a(x) = \frac{1}{|A| - 1} \sum_{y \in A \setminus x} d_{xy}, \qquad
    b(x) = \min_{C \ne A} \frac{1}{|C|} \sum_{y \in C} d_{xy}, \qquad
    s(x) = \frac{b(x) - a(x)}{\max(a(x), b(x))}

for :math:`x` in cluster :math:`A` (:math:`s(x) = 0` in a cluster of one). Unlinked pairs have
:math:`\cos = 0`, so :math:`\sum_{y \in C} d_{xy} = |C| - \sum_{y \in C} \cos_{xy}` and every mean comes from
the sparse product :math:`P = S M` (:math:`S` the cosine links, :math:`M` the node × cluster indicator):
exact on every node in :math:`O(\text{links})`, where the dense distance matrix of
``sklearn.metrics.silhouette_samples`` (the tests' independent check) needs :math:`n^2` — 8 TB at 1M
works — and would force a sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class ClusteringQuality:
    """A clustering's modularity and mean silhouette, overall and per cluster (index = cluster number)."""

    modularity: float  # Q of the whole partition
    silhouette: float | None  # mean s(x) over every clustered node; None with fewer than two clusters
    cluster_modularity: np.ndarray  # float64 [clusters]: Q_c
    cluster_silhouette: np.ndarray  # float64 [clusters]: mean s(x) over each cluster's nodes (NaN: no nodes)
    nodes: int  # clustered nodes
    links: int  # links the quality is computed on

    def as_dict(self) -> dict[str, float | int | None]:
        return {"modularity": self.modularity, "silhouette": self.silhouette, "nodes": self.nodes, "links": self.links}


def modularity(
    i: np.ndarray, j: np.ndarray, weight: np.ndarray, membership: np.ndarray, *, resolution: float = 1.0
) -> np.ndarray:
    """:math:`Q_c` of every cluster (module docstring) of an undirected graph given as unordered links.

    ``membership`` holds a cluster number per node (``-1``: not clustered, its links ignored).
    """
    n_clusters = int(membership.max()) + 1 if len(membership) and membership.max() >= 0 else 0
    if n_clusters == 0 or len(i) == 0:
        return np.zeros(n_clusters)
    weight = np.asarray(weight, dtype=np.float64)
    a, b = membership[i], membership[j]
    kept = (a >= 0) & (b >= 0)
    a, b, w = a[kept], b[kept], weight[kept]
    total = w.sum()  # m
    inside = np.bincount(a[a == b], weights=w[a == b], minlength=n_clusters)  # l_c
    degree = np.bincount(a, weights=w, minlength=n_clusters) + np.bincount(b, weights=w, minlength=n_clusters)
    return inside / total - resolution * (degree / (2.0 * total)) ** 2


def silhouettes(i: np.ndarray, j: np.ndarray, similarity: np.ndarray, membership: np.ndarray) -> np.ndarray:
    """:math:`s(x)` of every node (NaN where ``membership`` is -1), distance ``1 - similarity`` (module docstring).

    ``(i, j, similarity)`` are unordered links with similarities in [0, 1]; pairs not listed have similarity 0.
    With fewer than two clusters every value is NaN (the silhouette is undefined).
    """
    n = len(membership)
    out = np.full(n, np.nan)
    clustered = membership >= 0
    n_clusters = int(membership.max()) + 1 if n and clustered.any() else 0
    if n_clusters < 2:
        return out
    sizes = np.bincount(membership[clustered], minlength=n_clusters).astype(np.float64)
    kept = clustered[i] & clustered[j]
    rows = np.concatenate([i[kept], j[kept]])
    cols = np.concatenate([j[kept], i[kept]])
    values = np.concatenate([similarity[kept], similarity[kept]]).astype(np.float64)
    to_cluster = sp.csr_matrix((values, (rows, membership[cols])), shape=(n, n_clusters))  # P = S M
    to_cluster.sum_duplicates()
    nodes = np.flatnonzero(clustered)
    own = membership[nodes]
    own_sum = np.asarray(to_cluster[nodes, own]).ravel()
    size_own = sizes[own]
    a = np.where(size_own > 1, 1.0 - own_sum / np.maximum(size_own - 1, 1), 0.0)
    # b(x) = 1 - max over the other clusters C of P[x, C] / |C|; similarities are >= 0, so a cluster without a
    # link to x (P = 0, an implicit zero of the sparse row) never beats a linked one and b(x) = 1 when none is.
    scaled = to_cluster[nodes].multiply(1.0 / sizes[np.newaxis, :]).tocsr()
    row_of = np.repeat(np.arange(len(nodes)), np.diff(scaled.indptr))
    scaled.data[scaled.indices == own[row_of]] = 0.0  # x's own cluster is not a neighbour cluster
    best = np.asarray(scaled.max(axis=1).toarray()).ravel()
    b = 1.0 - best
    top = np.maximum(a, b)
    s = np.where(size_own > 1, np.where(top > 0, (b - a) / np.where(top > 0, top, 1.0), 0.0), 0.0)
    out[nodes] = s
    return out


def clustering_quality(
    i: np.ndarray,
    j: np.ndarray,
    weight: np.ndarray,
    similarity: np.ndarray,
    membership: np.ndarray,
    *,
    resolution: float = 1.0,
) -> ClusteringQuality:
    """Modularity on ``weight`` and silhouette on ``similarity`` of the same links (module docstring)."""
    q = modularity(i, j, weight, membership, resolution=resolution)
    s = silhouettes(i, j, similarity, membership)
    n_clusters = len(q)
    clustered = membership >= 0
    per_cluster = np.full(n_clusters, np.nan)
    defined = clustered & ~np.isnan(s)
    if defined.any():
        sums = np.bincount(membership[defined], weights=s[defined], minlength=n_clusters)
        counts = np.bincount(membership[defined], minlength=n_clusters)
        per_cluster = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return ClusteringQuality(
        modularity=float(q.sum()),
        silhouette=float(np.nanmean(s[clustered])) if defined.any() else None,
        cluster_modularity=q,
        cluster_silhouette=per_cluster,
        nodes=int(clustered.sum()),
        links=len(i),
    )


__all__ = ["ClusteringQuality", "clustering_quality", "modularity", "silhouettes"]
