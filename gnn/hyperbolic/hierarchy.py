r"""Class hierarchies as index arrays: transitive closure, reconstruction metrics, a tree embedding.

A :class:`Hierarchy` is a DAG of named nodes given by its ``(child, parent)`` edges. The
taxonomy of the store becomes one (:func:`taxonomy_hierarchy`): every AcmClass under its BROADER
parent, the top classes of each scheme under a virtual ``scheme:<name>`` node, every
ArxivCategory under a virtual ``arxiv:<archive>`` node (``cs.CL`` under ``arxiv:cs``) *and* under
each ACM class it MAPS_TO, and every scheme node under one virtual ``root``. Virtual nodes have
no node in the store; they are trained with the rest and never written.

Reconstruction (Nickel & Kiela, 2017, §4.1): embed the transitive closure :math:`D` and rank,
for every node :math:`u`, every other node by its distance to :math:`u`. The *related* nodes of
:math:`u` are its ancestors and descendants (:math:`D` read as a symmetric relation, as a
symmetric distance sees it); the *ancestors-only* variant ranks only the ancestors as relevant,
as the reference implementation of the paper does (``hype/graph.py``: ``adj[hyponym] = {hypernyms}``).
For each related pair :math:`(u, v)`

.. math::
    \mathrm{rank}(u, v) = 1 + |\{w \ne u : w \text{ not related to } u,\ d(u, w) < d(u, v)\}|

and the average precision of :math:`u` is the mean over its related :math:`v` of the precision
of the ranking cut at :math:`v`. Mean rank averages over pairs, MAP over nodes with at least one
related node. Perfect: mean rank 1, MAP 1.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import torch

from gnn.hyperbolic import poincare

ROOT = "root"


@dataclass(frozen=True)
class Hierarchy:
    """Nodes ``names`` and edges ``edges[k] = (child index, parent index)``; a DAG with one or more roots."""

    names: tuple[str, ...]
    edges: np.ndarray  # int64 [m, 2]: (child, parent)
    virtual: np.ndarray  # bool [n]: no node in the store (root, scheme and archive nodes)

    def __post_init__(self) -> None:
        if len(set(self.names)) != len(self.names):
            raise ValueError("hierarchy node names repeat")

    def __len__(self) -> int:
        return len(self.names)

    @cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names)}

    @cached_property
    def parents(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.names]
        for child, parent in self.edges:
            out[int(child)].append(int(parent))
        return out

    @cached_property
    def children(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.names]
        for child, parent in self.edges:
            out[int(parent)].append(int(child))
        return out

    @cached_property
    def depth(self) -> np.ndarray:
        """Shortest number of edges up to a root (roots: 0)."""
        depth = np.full(len(self), -1, dtype=np.int64)
        queue = deque(i for i in range(len(self)) if not self.parents[i])
        for i in queue:
            depth[i] = 0
        while queue:
            node = queue.popleft()
            for child in self.children[node]:
                if depth[child] < 0:
                    depth[child] = depth[node] + 1
                    queue.append(child)
        if (depth < 0).any():
            raise ValueError("hierarchy has a cycle: some nodes reach no root")
        return depth

    @cached_property
    def closure(self) -> np.ndarray:
        """Transitive closure as int64 [p, 2] pairs ``(descendant, ancestor)``, sorted."""
        ancestors: list[set[int]] = [set() for _ in self.names]
        for node in self._topological_order():  # parents before children
            for parent in self.parents[node]:
                ancestors[node].add(parent)
                ancestors[node] |= ancestors[parent]
        pairs = [(d, a) for d in range(len(self)) for a in sorted(ancestors[d])]
        return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)

    def _topological_order(self) -> list[int]:
        indegree = np.array([len(p) for p in self.parents])
        queue = deque(int(i) for i in np.flatnonzero(indegree == 0))
        order: list[int] = []
        while queue:
            node = queue.popleft()
            order.append(node)
            for child in self.children[node]:
                indegree[child] -= 1
                if indegree[child] == 0:
                    queue.append(child)
        if len(order) != len(self):
            raise ValueError("hierarchy has a cycle")
        return order

    def related(self) -> np.ndarray:
        """bool [n, n]: ``u`` is an ancestor or a descendant of ``v`` (the symmetric closure)."""
        rel = np.zeros((len(self), len(self)), dtype=bool)
        rel[self.closure[:, 0], self.closure[:, 1]] = True
        return rel | rel.T

    def spanning_tree(self) -> np.ndarray:
        """One parent per non-root node (int64 [n], -1 at roots): the first parent on a shortest path up."""
        parent = np.full(len(self), -1, dtype=np.int64)
        for node in range(len(self)):
            ups = [p for p in self.parents[node] if self.depth[p] == self.depth[node] - 1]
            if ups:
                parent[node] = ups[0]
        return parent

    def subset(self, keep: np.ndarray) -> tuple[Hierarchy, np.ndarray]:
        """The hierarchy on the nodes where ``keep`` is true with the closure restricted to them.

        Returns the sub-hierarchy, whose edges are the covering pairs of the restricted closure
        (its transitive reduction: ``(d, a)`` with no kept node between them), and the indices of
        the kept nodes in ``self``.
        """
        kept = np.flatnonzero(keep)
        at = np.full(len(self), -1, dtype=np.int64)
        at[kept] = np.arange(len(kept))
        pairs = at[self.closure]
        pairs = pairs[(pairs >= 0).all(axis=1)]
        above = np.zeros((len(kept), len(kept)), dtype=np.float32)  # above[d, a]: a is an ancestor of d
        above[pairs[:, 0], pairs[:, 1]] = 1
        two_steps = (above @ above) > 0  # d -> m -> a for some kept m
        covering = pairs[~two_steps[pairs[:, 0], pairs[:, 1]]]
        sub = Hierarchy(tuple(self.names[i] for i in kept), covering, self.virtual[kept])
        return sub, kept


# building ---------------------------------------------------------------------------------------


def taxonomy_hierarchy(
    acm: pd.DataFrame, arxiv_codes: Sequence[str], broader: pd.DataFrame, maps_to: pd.DataFrame
) -> Hierarchy:
    """The joint hierarchy of the module docstring.

    Args:
        acm: AcmClass ``id`` and ``scheme``.
        arxiv_codes: every ArxivCategory code.
        broader: BROADER ``source`` (child id), ``target`` (parent id).
        maps_to: MAPS_TO ``source`` (arXiv code), ``target`` (AcmClass id).
    """
    schemes = sorted(set(acm["scheme"].fillna("unknown")))
    archives = sorted({_archive(code) for code in arxiv_codes})
    names = [
        ROOT,
        *(f"scheme:{s}" for s in schemes),
        "scheme:arxiv",
        *(f"arxiv:{a}" for a in archives),
    ]
    n_virtual = len(names)
    names += list(acm["id"]) + list(arxiv_codes)
    index = {name: i for i, name in enumerate(names)}
    edges: list[tuple[int, int]] = [(index[f"scheme:{s}"], 0) for s in schemes]
    edges.append((index["scheme:arxiv"], 0))
    edges += [(index[f"arxiv:{a}"], index["scheme:arxiv"]) for a in archives]
    has_parent: set[int] = set()
    for child, parent in zip(broader["source"], broader["target"]):
        if child in index and parent in index:
            edges.append((index[child], index[parent]))
            has_parent.add(index[child])
    for class_id, scheme in zip(acm["id"], acm["scheme"].fillna("unknown")):
        if index[class_id] not in has_parent:  # a top class of its scheme
            edges.append((index[class_id], index[f"scheme:{scheme}"]))
    for code in arxiv_codes:
        edges.append((index[code], index[f"arxiv:{_archive(code)}"]))
    for code, class_id in zip(maps_to["source"], maps_to["target"]):
        if code in index and class_id in index:
            edges.append((index[code], index[class_id]))
    virtual = np.zeros(len(names), dtype=bool)
    virtual[:n_virtual] = True
    return Hierarchy(tuple(names), np.unique(np.asarray(edges, dtype=np.int64), axis=0), virtual)


def _archive(code: str) -> str:
    """The archive of an arXiv category: ``cs`` of ``cs.CL``, ``hep-th`` of ``hep-th``."""
    return code.split(".", 1)[0]


# reconstruction ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reconstruction:
    """Mean rank and MAP of a hierarchy reconstruction (module docstring)."""

    mean_rank: float
    map: float
    nodes: int  # nodes ranked (with at least one relevant node)
    pairs: int  # relevant pairs ranked

    def __str__(self) -> str:
        return f"mean rank {self.mean_rank:.3f}, MAP {self.map:.4f} ({self.nodes} nodes, {self.pairs} pairs)"


def reconstruction(distances: np.ndarray, hierarchy: Hierarchy, *, ancestors_only: bool = False) -> Reconstruction:
    """Mean rank and MAP of ``distances`` [n, n] (rows and columns: ``hierarchy``'s nodes)."""
    n = len(hierarchy)
    relevant = np.zeros((n, n), dtype=bool)
    relevant[hierarchy.closure[:, 0], hierarchy.closure[:, 1]] = True
    related = relevant | relevant.T
    if not ancestors_only:
        relevant = related
    dist = np.asarray(distances, dtype=np.float64).copy()
    np.fill_diagonal(dist, np.inf)  # a node never ranks itself
    ranks: list[np.ndarray] = []
    precisions: list[float] = []
    for u in np.flatnonzero(relevant.any(axis=1)):
        pos = np.flatnonzero(relevant[u])
        negatives = np.sort(dist[u, ~related[u] & (np.arange(n) != u)])
        # rank among the non-related nodes only (Nickel & Kiela): 1 + non-related nodes strictly closer
        ranks.append(1 + np.searchsorted(negatives, dist[u, pos], side="left"))
        # average precision over the full ranking (relevant and all other nodes), ties broken pessimistically
        d_pos = np.sort(dist[u, pos])
        others = np.sort(dist[u, ~relevant[u] & (np.arange(n) != u)])
        hits = np.arange(1, len(pos) + 1)
        position = hits + np.searchsorted(others, d_pos, side="right")
        precisions.append(float(np.mean(hits / position)))
    all_ranks = np.concatenate(ranks) if ranks else np.empty(0)
    return Reconstruction(
        mean_rank=float(all_ranks.mean()) if len(all_ranks) else float("nan"),
        map=float(np.mean(precisions)) if precisions else float("nan"),
        nodes=len(precisions),
        pairs=len(all_ranks),
    )


# a combinatorial tree embedding -----------------------------------------------------------------


def sphere_points(count: int, dim: int, *, generator: torch.Generator, steps: int = 300) -> torch.Tensor:
    r"""``count`` well-spread unit vectors in :math:`\mathbb{R}^{dim}`, the first fixed at :math:`e_1`.

    In 2 dimensions exactly evenly spaced angles :math:`2\pi k / count`; above, the minimum of
    the Riesz energy :math:`\sum_{i<j} \|p_i - p_j\|^{-2}` by projected gradient descent from a
    seeded random start (Sala et al. 2018 use coding-theoretic point sets for the same purpose).
    float64 [count, dim].
    """
    if dim == 1:
        raise ValueError("tree embeddings need at least 2 dimensions")
    if dim == 2:
        angles = torch.arange(count, dtype=torch.float64) * (2 * torch.pi / max(count, 1))
        return torch.stack([angles.cos(), angles.sin()], dim=-1)
    points = torch.randn(count, dim, dtype=torch.float64, generator=generator)
    points[0] = 0
    points[0, 0] = 1
    points = points / points.norm(dim=-1, keepdim=True)
    if count < 2:
        return points
    free = points[1:].clone().requires_grad_(True)
    optimizer = torch.optim.Adam([free], lr=0.05)
    # the pairs i < j, made once: a boolean triu costs milliseconds per call on a CPU, and 300 of them per
    # sibling set were most of a small taxonomy's `compute hyperbolic`
    upper = torch.triu(torch.ones(count, count, dtype=torch.bool), diagonal=1)
    for _ in range(steps):
        optimizer.zero_grad()
        all_points = torch.cat([points[:1], free / free.norm(dim=-1, keepdim=True)])
        diff2 = (all_points.unsqueeze(0) - all_points.unsqueeze(1)).pow(2).sum(-1)
        energy = (1 / diff2[upper].clamp_min(1e-12)).sum()  # 1e-12: two coinciding points
        energy.backward()
        optimizer.step()
    with torch.no_grad():
        return torch.cat([points[:1], free / free.norm(dim=-1, keepdim=True)])


def _reflect_to(direction: torch.Tensor) -> torch.Tensor:
    """Householder matrix H with H e_1 = ``direction`` (a unit vector); H is its own inverse."""
    dim = direction.shape[0]
    e1 = torch.zeros(dim, dtype=direction.dtype)
    e1[0] = 1
    w = e1 - direction
    norm = w.norm()
    if norm < 1e-12:  # already e_1: the identity (a reflection through a zero vector is undefined)
        return torch.eye(dim, dtype=direction.dtype)
    w = w / norm
    return torch.eye(dim, dtype=direction.dtype) - 2 * torch.outer(w, w)


def tree_embedding(
    parent: np.ndarray,
    dim: int,
    *,
    scale: float | Callable[[int], float],
    seed: int = 0,
) -> torch.Tensor:
    r"""Sarkar's combinatorial embedding of a tree into the Poincaré ball (Sarkar 2011; Sala et al. 2018, Alg. 1).

    The roots sit at the origin (several roots share it). A node :math:`v` with parent :math:`p`
    is moved to the origin by the isometry :math:`x \mapsto (-x_v) \oplus x`; its children are
    placed at hyperbolic distance :math:`\tau` from the origin along well-spread directions
    (:func:`sphere_points`) of which one is the direction back to :math:`p`, and moved back by
    :math:`x \mapsto x_v \oplus x`. Every tree edge then has length exactly :math:`\tau` and
    the embedding's distortion goes to 1 as :math:`\tau` grows (Sarkar, Thm. 6), at the price of
    points close to the boundary: depth :math:`h` lands at distance :math:`h\tau` from the origin,
    so float64 bounds :math:`h\tau` to about 30. ``scale`` is :math:`\tau`, or a function of the
    depth of the *child* (a longer edge where siblings are many). float64 [n, dim].
    """
    n = len(parent)
    generator = torch.Generator().manual_seed(seed)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = [i for i in range(n) if parent[i] < 0]
    for child in range(n):
        if parent[child] >= 0:
            children[int(parent[child])].append(child)
    points = torch.zeros(n, dim, dtype=torch.float64)
    depth = np.zeros(n, dtype=np.int64)
    cache: dict[int, torch.Tensor] = {}

    def directions(count: int) -> torch.Tensor:
        if count not in cache:
            cache[count] = sphere_points(count, dim, generator=generator)
        return cache[count]

    queue: deque[int] = deque()
    for r in roots:
        queue.append(r)
    visited_roots = set(roots)
    while queue:
        node = queue.popleft()
        kids = children[node]
        if not kids:
            continue
        tau = scale(int(depth[node]) + 1) if callable(scale) else scale
        radius = float(np.tanh(tau / 2))  # d(0, r·e) = 2 artanh(r) = τ
        if node in visited_roots:
            dirs = directions(len(kids))  # no edge back to reserve a direction for
        else:
            back = poincare.mobius_add(-points[node], points[int(parent[node])])
            back = back / back.norm().clamp_min(poincare.MIN_NORM)  # MIN_NORM: parent at the node's position
            dirs = directions(len(kids) + 1)[1:] @ _reflect_to(back).T  # rows rotated so e_1 -> back
        for k, child in enumerate(kids):
            local = radius * dirs[k]
            points[child] = poincare.mobius_add(points[node], local)
            depth[child] = depth[node] + 1
            queue.append(child)
    return points


__all__ = [
    "ROOT",
    "Hierarchy",
    "Reconstruction",
    "reconstruction",
    "sphere_points",
    "taxonomy_hierarchy",
    "tree_embedding",
]
