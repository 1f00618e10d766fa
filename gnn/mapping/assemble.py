r"""What every unit's builder does once it has counted: strengths, the filters, the top nodes, the edges kept.

A builder counts its co-occurrences :math:`c_{ij}` (documents shared by units :math:`i` and :math:`j`), each
unit's own documents :math:`s_i` and the documents :math:`N` of the window, then hands them here:

* :func:`pair_frame` turns a :class:`~gnn.cocitation.counts.PairCounts` into ``source``, ``target``, ``count``
  and ``strength`` under the filters' :class:`~gnn.mapping.networks.Measure` (van Eck & Waltman 2009, the
  formulas in :mod:`gnn.mapping.networks`);
* :func:`select` applies ``min_count``, ``cluster``, ``seed`` and ``top``: the nodes are the units with at
  least one link of ``min_count`` or more (a seed alone stays), ranked by weight (ties by id), the first
  ``top`` kept; the links are those among kept nodes, strongest first (ties: count, then ids), at most
  :data:`~gnn.mapping.networks.MAX_EDGES`;
* :func:`map_nodes` turns a node table into :class:`~gnn.mapping.networks.MapNode` objects (NaN → None).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from gnn.cocitation.counts import PairCounts, association_strength, inclusion_index, jaccard_index, salton_cosine
from gnn.mapping.networks import MAX_EDGES, MapEdge, MapNode, MapUnit, Measure, NetworkFilters
from graph.errors import ConfigError

EDGE_COLUMNS = ["source", "target", "count", "strength"]
NODE_FIELDS = (
    "label",
    "year",
    "avg_year",
    "first_year",
    "cluster",
    "cluster_label",
    "burst_strength",
    "burst_begin",
    "burst_end",
    "betweenness",
    "sigma",
)
INT_FIELDS = frozenset({"year", "first_year", "cluster", "burst_begin", "burst_end"})


def strengths(count: np.ndarray, s_i: np.ndarray, s_j: np.ndarray, *, total: int, measure: Measure) -> np.ndarray:
    """The link strengths under ``measure`` (count: :math:`c_{ij}` as a float)."""
    if measure is Measure.COUNT:
        return np.asarray(count, dtype=np.float64)
    if measure is Measure.ASSOCIATION:
        return association_strength(count, s_i, s_j, total=total)
    if measure is Measure.COSINE:
        return salton_cosine(count, s_i, s_j)
    if measure is Measure.JACCARD:
        return jaccard_index(count, s_i, s_j)
    return inclusion_index(count, s_i, s_j)


def pair_frame(pairs: PairCounts, measure: Measure, *, min_count: int = 1) -> pd.DataFrame:
    """``source``, ``target`` (ids, source < target), ``count``, ``strength``: the pairs of ``pairs`` with
    ``count >= min_count``, strengths from ``pairs.occurrences`` and ``pairs.n_members``."""
    kept = pairs.count >= min_count
    i, j, count = pairs.i[kept], pairs.j[kept], pairs.count[kept]
    s = pairs.occurrences
    return pd.DataFrame(
        {
            "source": pairs.ids[i],
            "target": pairs.ids[j],
            "count": count.astype(np.int64),
            "strength": strengths(count, s[i], s[j], total=pairs.n_members, measure=measure),
        }
    )


def weights_of(pairs: PairCounts) -> pd.Series:
    """Each item's own documents (:math:`s_i`), indexed by id, items with none left out."""
    occurring = pairs.occurrences > 0
    return pd.Series(pairs.occurrences[occurring], index=pairs.ids[occurring], dtype=np.int64)


@dataclass(frozen=True)
class Selection:
    """The nodes and links a network keeps under its filters."""

    nodes: pd.Series  # weight of each kept node, indexed by id: heaviest first (the seed first when given)
    edges: pd.DataFrame  # EDGE_COLUMNS among kept nodes, strongest first
    truncated: bool  # top or MAX_EDGES left something out


def select(
    unit: MapUnit,
    filters: NetworkFilters,
    weight: pd.Series,
    edges: pd.DataFrame,
    *,
    members: Collection[str] | None = None,
) -> Selection:
    """Apply ``min_freq``, ``min_count``, ``cluster`` (``members``: that cluster's node ids), ``seed`` and ``top``.

    ``weight`` is every node's weight by id; ``edges`` has :data:`EDGE_COLUMNS`. An unknown ``seed`` is a
    :class:`~graph.errors.ConfigError` naming the unit; a seed without partners is a network of one node.
    """
    edges = edges.loc[edges["count"] >= filters.min_count, EDGE_COLUMNS]
    if filters.min_freq > 1:  # nodes under the least weight go, with their links
        weight = weight[weight >= filters.min_freq]
        edges = edges[edges["source"].isin(weight.index) & edges["target"].isin(weight.index)]
    if filters.cluster is not None:
        if members is None:
            raise ConfigError(f"the {unit.value} network has no clusters to choose from; leave out the cluster filter")
        inside = pd.Index(list(members))
        edges = edges[edges["source"].isin(inside) & edges["target"].isin(inside)]
    seed = filters.seed
    if seed is not None:
        if seed not in weight.index:
            raise ConfigError(
                f"{seed!r} is no node of the {unit.value} network under these filters (year window, cluster); "
                "give the id of a node it shows"
            )
        touching = (edges["source"] == seed) | (edges["target"] == seed)
        partners = pd.Index([seed, *edges.loc[touching, "source"], *edges.loc[touching, "target"]]).unique()
        if filters.cluster is not None and members is not None and seed not in set(members):
            partners = pd.Index([seed])
        edges = edges[edges["source"].isin(partners) & edges["target"].isin(partners)]
        candidates = partners
    else:
        candidates = pd.Index(edges["source"]).append(pd.Index(edges["target"])).unique()
    ranked = weight[weight.index.isin(candidates)]
    order = np.lexsort((ranked.index.to_numpy(dtype=str), -ranked.to_numpy()))
    ranked = ranked.iloc[order]
    if seed is not None:  # the seed first, whatever its weight
        ranked = pd.concat([ranked[[seed]], ranked.drop(index=seed)])
    truncated = len(ranked) > filters.top
    ranked = ranked.iloc[: filters.top]
    edges = edges[edges["source"].isin(ranked.index) & edges["target"].isin(ranked.index)]
    order = np.lexsort(
        (
            edges["target"].to_numpy(dtype=str),
            edges["source"].to_numpy(dtype=str),
            -edges["count"].to_numpy(),
            -edges["strength"].to_numpy(),
        )
    )
    edges = edges.iloc[order]
    if len(edges) > MAX_EDGES:
        edges, truncated = edges.iloc[:MAX_EDGES], True
    return Selection(ranked, edges.reset_index(drop=True), truncated)


def map_edges(edges: pd.DataFrame) -> list[MapEdge]:
    """:class:`MapEdge` objects of an :data:`EDGE_COLUMNS` table."""
    return [
        MapEdge(str(s), str(t), int(c), float(w))
        for s, t, c, w in zip(edges["source"], edges["target"], edges["count"], edges["strength"])
    ]


def map_nodes(selection: Selection, attributes: pd.DataFrame) -> list[MapNode]:
    """:class:`MapNode` objects of the selected nodes, in their order; ``attributes`` (indexed by id) holds any
    of :data:`NODE_FIELDS` (absent columns and missing values become None; a missing label the id)."""
    nodes = []
    for node_id, weight in selection.nodes.items():
        row = attributes.loc[node_id] if node_id in attributes.index else None
        values: dict[str, Any] = {}
        for name in NODE_FIELDS:
            value = None if row is None or name not in row.index else row[name]
            if value is not None and not isinstance(value, str) and pd.isna(value):
                value = None
            if value is not None and name != "label" and name != "cluster_label":
                value = int(value) if name in INT_FIELDS else float(value)
            values[name] = value
        label = values.pop("label") or str(node_id)
        nodes.append(MapNode(id=str(node_id), label=str(label), weight=int(weight), **values))
    return nodes


def first_years(members: np.ndarray, items: np.ndarray, years: np.ndarray, n_items: int) -> np.ndarray:
    """Earliest year of the members behind each item (NaN where none has a year): for a cited unit, the year it was
    first cited in the window, where CiteSpace's timeline view places it.

    ``members[k]`` contains item ``items[k]``; ``years`` is indexed by member.
    """
    year = years[members]
    known = ~np.isnan(year)
    first = np.full(n_items, np.inf)
    np.minimum.at(first, items[known], year[known])
    return np.where(np.isfinite(first), first, np.nan)


def mean_years(members: np.ndarray, items: np.ndarray, years: np.ndarray, n_items: int) -> np.ndarray:
    """Mean year of the members behind each item (NaN where none has a year): VOSviewer's overlay score.

    ``members[k]`` contains item ``items[k]`` (distinct pairs); ``years`` is indexed by member.
    """
    year = years[members]
    known = ~np.isnan(year)
    total = np.bincount(items[known], weights=year[known], minlength=n_items)
    count = np.bincount(items[known], minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


__all__ = [
    "EDGE_COLUMNS",
    "NODE_FIELDS",
    "Selection",
    "first_years",
    "map_edges",
    "map_nodes",
    "mean_years",
    "pair_frame",
    "select",
    "strengths",
    "weights_of",
]
