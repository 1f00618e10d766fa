"""CiteSpace's timeline view: for each co-citation cluster, the citations its members receive per year.

A cluster's timeline counts, for every year :math:`t`, the citations from documents published in :math:`t`
to any member of the cluster (each citing document–member pair once), over the clusters of ``citegraph
compute cocitation`` (``Paper.cocite_cluster``, labels beside the store). It shows when a cluster formed,
peaked and faded (Chen, 2006, JASIST 57:359; CiteSpace's "Timeline View").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gnn.cocitation.clusters import read_cluster_labels
from gnn.mapping.data import MappingInput, read_mapping_input
from gnn.mapping.overlay import dated_citations
from graph.files import StoreFiles
from graph.store import GraphStore


@dataclass(frozen=True)
class ClusterTimeline:
    """One cluster's citations per year, oldest first (years without a citation left out)."""

    cluster: int
    label: str
    years: tuple[tuple[int, int], ...]  # (year, citations)


def timeline_counts(
    data: MappingInput, membership: pd.Series, *, year_min: int | None = None, year_max: int | None = None
) -> dict[int, list[tuple[int, int]]]:
    """Citations per cluster and citing year: ``{cluster: [(year, citations), ...]}`` (``membership``: cluster by id)."""
    cluster_of = np.full(len(data.papers), -1, dtype=np.int64)
    at = data.papers.get_indexer(membership.index)
    cluster_of[at[at >= 0]] = membership.to_numpy(dtype=np.int64)[at >= 0]
    _, cited, year = dated_citations(data, year_min=year_min, year_max=year_max)
    cluster = cluster_of[cited]
    inside = cluster >= 0
    if not inside.any():
        return {}
    frame = pd.DataFrame({"cluster": cluster[inside], "year": year[inside]})
    counts = frame.groupby(["cluster", "year"]).size()
    out: dict[int, list[tuple[int, int]]] = {}
    for (c, y), n in counts.items():
        out.setdefault(int(c), []).append((int(y), int(n)))
    return out


def read_membership(store: GraphStore) -> pd.Series:
    """``Paper.cocite_cluster`` by id (empty before ``compute cocitation``)."""
    table = store.query_arrow("paper_cocite_clusters")
    if table.num_rows == 0:
        return pd.Series([], dtype="int64")
    return pd.Series(table.column("cluster").to_numpy(), index=pd.Index(table.column("id").to_pandas()))


def cluster_timeline(
    store: GraphStore, *, first: int = 20, year_min: int | None = None, year_max: int | None = None
) -> list[ClusterTimeline]:
    """The timelines of the ``first`` largest co-citation clusters (their stored order), labelled."""
    path = StoreFiles.of(store).clusters
    labels = read_cluster_labels(path) if path is not None else []
    chosen = labels[:first]
    if not chosen:
        return []
    membership = read_membership(store)
    membership = membership[membership.isin([c.cluster for c in chosen])]
    counts = timeline_counts(read_mapping_input(store), membership, year_min=year_min, year_max=year_max)
    return [ClusterTimeline(c.cluster, c.label, tuple(counts.get(c.cluster, []))) for c in chosen]


__all__ = ["ClusterTimeline", "cluster_timeline", "read_membership", "timeline_counts"]
