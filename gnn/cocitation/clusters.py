r"""Clusters of the co-citation network and their labels.

Communities maximise modularity with a resolution :math:`\gamma` over the co-citation graph
weighted by co-citation count :math:`c_{ij}`:

.. math::
    Q = \frac{1}{2m} \sum_{ij} \Big( c_{ij} - \gamma \frac{k_i k_j}{2m} \Big) \, \delta(\sigma_i, \sigma_j)

with :math:`k_i = \sum_j c_{ij}` and :math:`m` the total weight. Modularity's null model
:math:`k_i k_j / 2m` already discounts pairs of highly cited papers, which is why clustering raw
counts with modularity behaves like clustering association strengths (Waltman, van Eck & Noyons,
2010, "A unified approach to mapping and clustering of bibliometric networks").

The compute step runs the Leiden algorithm (:func:`leiden_membership`; Traag, Waltman & van Eck,
2019, Sci. Rep. 9:5233; igraph's C implementation), whose communities are guaranteed connected,
on a *pruned* graph (:func:`prune_pairs`): each paper keeps the links to its ``top_k`` strongest
partners (a k-nearest-neighbour sparsification, the usual input of Leiden in large similarity
graphs), optionally only pairs co-cited at least ``min_count`` times. On the
1M-paper/10M-citation benchmark the full graph has 45.6M pairs, most co-cited once; networkx's
Louvain did not finish on it in 28 CPU-minutes (docs/history.md). :func:`leiden_clusters`
runs the same Leiden on an edge table; :func:`louvain_clusters` (networkx's Louvain, Blondel et
al., 2008) clusters a small edge table without igraph and is not used by the compute step.

Each cluster is labelled with its most distinctive title terms by class-based TF-IDF
(Grootendorst, 2022, BERTopic, arXiv:2203.05794): the titles of a cluster form one document and

.. math::
    W_{t,c} = \mathrm{tf}_{t,c} \cdot \log\!\left(1 + \frac{A}{f_t}\right)

with :math:`\mathrm{tf}_{t,c}` the frequency of term :math:`t` in cluster :math:`c`, :math:`f_t` its
frequency over all clusters and :math:`A` the average number of terms per cluster. Terms are
lower-cased words of three or more characters, minus English stop words and words that title
nearly every paper ("using", "based", ...).

A cluster whose members have no title (cited-reference stubs) takes its terms from the titles of
the papers citing its members, else its name from its members' display labels
(:func:`label_bare_clusters`): no cluster is labelled by its number alone.

The label shown is CiteSpace's: the top terms of the papers *citing* the members, by log-likelihood ratio
(:mod:`gnn.cocitation.terms`, ``ClusterLabel.llr_terms``); the same counts ranked by c-TF-IDF are stored
as ``ctfidf_terms``, the members' own title terms as ``terms``. Each cluster also carries its silhouette
and modularity term (:mod:`gnn.cocitation.quality`).

The schema has no Cluster node: :func:`write_cluster_labels` stores the labels as JSON next to the
embedded store (``<db path>.clusters.json``, ``StoreFiles.clusters``), where a GraphQL
``clusters`` field can read them with :func:`read_cluster_labels`; ``Paper.cocite_cluster`` holds
each paper's cluster number.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

_WORD = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# English function words plus words that say nothing about a title's topic.
_STOP_WORDS_TEXT = """
    a about above after again against all also an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers
    him his how if in into is it its itself just more most no nor not now of off on once only or other our out over
    own same she should so some such than that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your using use based
    approach approaches method methods towards toward via new study studies paper improving improved improve simple
    effective efficient
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
LABEL_SHOWN = 3  # LLR terms a label shows (CiteSpace shows the first; three tell neighbouring clusters apart)
LABEL_METHODS = ("llr", "ctfidf")  # the ranked term lists every cluster stores beside its title terms


@dataclass(frozen=True)
class ClusterLabel:
    cluster: int  # number stored in Paper.cocite_cluster; 0 is the largest cluster
    size: int  # papers in the cluster
    terms: tuple[str, ...]  # most distinctive title terms, by c-TF-IDF weight
    papers: tuple[str, ...]  # the cluster's most cited papers (ids), most cited first
    # where the terms come from: "titles" (the members' own), "citing titles" (the titles of the papers that cite
    # the members: a cluster of title-less cited-reference stubs), "" (no term anywhere: see name)
    terms_from: str = "titles"
    name: str | None = None  # without terms: the display labels of the most cited members (graph.labels)
    # terms of the documents citing the members (for a coupling cluster: of its own documents), titles and
    # abstracts, 1-3-grams (gnn.cocitation.terms): by log-likelihood ratio (CiteSpace's default label) and by c-TF-IDF
    llr_terms: tuple[str, ...] = ()
    ctfidf_terms: tuple[str, ...] = ()
    silhouette: float | None = None  # mean silhouette of the members on the co-citation cosine (gnn.cocitation.quality)
    modularity: float | None = None  # the cluster's term Q_c of the partition's modularity Q

    @property
    def label(self) -> str:
        """The top LLR terms, as CiteSpace shows; else the title terms; else the members' labels; else the most
        cited member's id (never a bare number)."""
        if self.llr_terms:
            return ", ".join(self.llr_terms[:LABEL_SHOWN])
        if self.terms:
            return ", ".join(self.terms)
        if self.name:
            return self.name
        return self.papers[0] if self.papers else f"cluster {self.cluster}"


def louvain_clusters(
    edges: pd.DataFrame, *, weight: str = "count", resolution: float = 1.0, seed: int = 0
) -> pd.Series:
    """Cluster number per paper id (a Series named ``cocite_cluster``) for every paper with an edge.

    Args:
        edges: ``source``, ``target`` and the ``weight`` column (e.g. the CO_CITED table).
        resolution: Louvain's γ; above 1 favours smaller clusters (default 1.0).
        seed: seed of Louvain's random node order; edges are added in sorted order, so the same
            seed on the same edges gives the same clusters.

    Clusters are numbered by size, largest first (ties: by their smallest id).
    """
    ordered = edges.sort_values(["source", "target"])
    graph = nx.Graph()
    graph.add_weighted_edges_from(
        zip(ordered["source"].tolist(), ordered["target"].tolist(), ordered[weight].astype(float).tolist())
    )
    if graph.number_of_nodes() == 0:
        return pd.Series([], index=pd.Index([], dtype=object, name="id"), dtype="int64", name="cocite_cluster")
    communities = nx.community.louvain_communities(graph, weight="weight", resolution=resolution, seed=seed)
    ranked = sorted((sorted(c) for c in communities), key=lambda members: (-len(members), members[0]))
    membership = {paper: number for number, members in enumerate(ranked) for paper in members}
    series = pd.Series(membership, dtype="int64", name="cocite_cluster").sort_index()
    series.index.name = "id"
    return series


def prune_pairs(
    rows: np.ndarray, partners: np.ndarray, freq: np.ndarray, n: int, *, top_k: int, min_count: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The links of the cluster graph: each paper's ``top_k`` strongest partners, as unordered pairs.

    ``(rows, partners, freq)`` are every paper's partners in CSR order, strongest first within a
    row (:class:`gnn.cocitation.noise.NoiseDistributions` order: descending count, then partner index). A
    pair is kept when it has ``freq >= min_count`` and is among the first ``top_k`` partners of
    either end (``top_k = 0``: no top-k cut). Returns ``(i, j, count)`` with ``i < j``, sorted.
    """
    if len(rows) == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    keep = freq >= min_count
    if top_k > 0:
        row_start = np.searchsorted(rows, np.arange(n))  # rows ascending (CSR order)
        rank = np.arange(len(rows)) - row_start[rows]  # position of each entry within its row
        keep &= rank < top_k
    a, b, w = rows[keep], partners[keep], freq[keep]
    codes = np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)
    codes, first = np.unique(codes, return_index=True)  # a pair kept from both ends counts once
    return codes // n, codes % n, w[first].astype(np.int64)


def leiden_membership(
    i: np.ndarray, j: np.ndarray, weight: np.ndarray, n: int, *, resolution: float = 1.0, seed: int = 0
) -> np.ndarray:
    r"""Leiden communities of an undirected weighted graph on nodes ``0..n-1``: a cluster number per node.

    Maximises :math:`Q` with resolution :math:`\gamma` (igraph's ``community_leiden`` with the
    modularity objective, two iterations, as igraph and leidenalg default to). ``seed`` seeds the
    random generator igraph uses for node order (a private ``random.Random``, set for the call and
    restored after): the same edges, in the same order, and seed give the same partition. Nodes
    without an edge get -1. Clusters are numbered by size, largest first, ties by their smallest
    node. Measured on a 100k-node/600k-edge graph, igraph's C implementation ran ~9× faster than
    ``leidenalg`` with the same modularity (0.699 vs 0.697).
    """
    import igraph as ig  # local: a compiled library, loaded only when clustering runs

    membership = np.full(n, -1, dtype=np.int64)
    if len(i) == 0:
        return membership
    graph = ig.Graph(n=n, edges=np.column_stack([i, j]).astype(np.int64), directed=False)
    ig.set_random_number_generator(random.Random(seed))
    try:
        clustering = graph.community_leiden(
            objective_function="modularity",
            weights=np.asarray(weight, dtype=np.float64).tolist(),
            resolution=resolution,
            n_iterations=2,
        )
    finally:
        ig.set_random_number_generator(random)  # igraph's default: Python's module-level generator
    raw = np.asarray(clustering.membership, dtype=np.int64)
    linked = np.zeros(n, dtype=bool)
    linked[i] = True
    linked[j] = True
    return _rank_clusters(raw, np.flatnonzero(linked), membership)


def _rank_clusters(raw: np.ndarray, nodes: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Renumber ``raw[nodes]`` by cluster size (descending), ties by smallest node; write into ``out``."""
    labels, inverse = np.unique(raw[nodes], return_inverse=True)
    sizes = np.bincount(inverse, minlength=len(labels))
    smallest = np.full(len(labels), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(smallest, inverse, nodes)
    order = np.lexsort((smallest, -sizes))  # last key first: size descending, then smallest node
    number = np.empty(len(labels), dtype=np.int64)
    number[order] = np.arange(len(labels))
    out[nodes] = number[inverse]
    return out


def leiden_clusters(edges: pd.DataFrame, *, weight: str = "count", resolution: float = 1.0, seed: int = 0) -> pd.Series:
    """Cluster number per paper id (a Series named ``cocite_cluster``) for every paper with an edge.

    Like :func:`louvain_clusters` but with Leiden (:func:`leiden_membership`) over the given edges
    as they are (prune them first with :func:`prune_pairs` for a large graph). Clusters are
    numbered by size, largest first (ties: by their smallest id).
    """
    ids, codes = np.unique(
        np.concatenate([edges["source"].to_numpy(object), edges["target"].to_numpy(object)]), return_inverse=True
    )
    n, m = len(ids), len(edges)
    a, b = codes[:m], codes[m:]
    i, j = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((j, i))  # a canonical edge order: the seed alone then fixes the result
    membership = leiden_membership(
        i[order], j[order], edges[weight].to_numpy(dtype=np.float64)[order], n, resolution=resolution, seed=seed
    )
    series = pd.Series(membership, index=pd.Index(ids, name="id"), dtype="int64", name="cocite_cluster")
    return series[series >= 0]


def title_terms(title: str | None) -> list[str]:
    """The label terms of one title: lower-cased words of 3+ characters that are not stop words."""
    if not isinstance(title, str):
        return []
    return [w for w in _WORD.findall(title.lower()) if len(w) >= 3 and w not in STOP_WORDS]


def ctfidf(documents: dict[int, list[str]]) -> dict[int, list[tuple[str, float]]]:
    r"""Class-based TF-IDF weights of every term in every class, highest first (ties by term).

    .. math::
        W_{t,c} = \mathrm{tf}_{t,c} \cdot \log\!\left(1 + \frac{A}{f_t}\right)

    ``documents`` maps a class to its terms (all of its documents' terms together).
    """
    counts = {c: Counter(terms) for c, terms in documents.items()}
    overall: Counter[str] = Counter()
    for counter in counts.values():
        overall.update(counter)
    average = sum(overall.values()) / max(len(documents), 1)  # A: mean number of terms per class
    weights: dict[int, list[tuple[str, float]]] = {}
    for c, counter in counts.items():
        scored = [(t, n * math.log(1.0 + average / overall[t])) for t, n in counter.items()]
        weights[c] = sorted(scored, key=lambda item: (-item[1], item[0]))
    return weights


def label_clusters(
    membership: pd.Series, titles: pd.Series, *, popularity: pd.Series | None = None, top_k: int = 5, n_papers: int = 5
) -> list[ClusterLabel]:
    """A :class:`ClusterLabel` per cluster, largest first.

    Args:
        membership: cluster number per paper id (the Leiden clusters of the compute step, or
            :func:`leiden_clusters`).
        titles: title per paper id; papers without one add no terms.
        popularity: citations per paper id, to pick each cluster's representative papers.
        top_k: terms per label; n_papers: representative papers per cluster.
    """
    documents: dict[int, list[str]] = {int(c): [] for c in sorted(membership.unique())}
    for paper, cluster in membership.items():
        documents[int(cluster)].extend(title_terms(titles.get(paper)))
    weights = ctfidf(documents)
    popular = popularity if popularity is not None else pd.Series(dtype="int64")
    labels = []
    for cluster, members in membership.groupby(membership, sort=True):
        ids = sorted(members.index, key=lambda paper: (-int(popular.get(paper, 0)), paper))
        labels.append(
            ClusterLabel(
                cluster=int(cluster),
                size=len(members),
                terms=tuple(term for term, _ in weights[int(cluster)][:top_k]),
                papers=tuple(ids[:n_papers]),
            )
        )
    return labels


def label_bare_clusters(
    labels: list[ClusterLabel],
    membership: pd.Series,
    *,
    citing_titles: Mapping[str, Sequence[str]],
    member_labels: Mapping[str, str],
    top_k: int = 5,
    n_labels: int = 2,
) -> list[ClusterLabel]:
    r"""``labels`` with every cluster that has no title term labelled another way.

    A cluster of cited-reference stubs (Web of Science and Scopus references without titles) has no
    member title to draw terms from. Its terms then come from the titles of the papers citing its
    members — CiteSpace labels every cluster that way (Chen, 2006, JASIST 57:359, "CiteSpace II") — by
    the same c-TF-IDF over the citing titles of each bare cluster (one document per cluster). A
    cluster whose citers have no title either is named by its ``n_labels`` most cited members' display
    labels (:func:`graph.labels.paper_label`, e.g. "Goos F, 1947, Ann Phys-Berlin 1:333; ...").

    Args:
        membership: cluster number per paper id (as for :func:`label_clusters`).
        citing_titles: the titles of the papers citing each paper id (only members of bare clusters are read).
        member_labels: display label per paper id (only the listed top papers of bare clusters are read).
    """
    bare = {label.cluster for label in labels if not label.terms}
    if not bare:
        return labels
    documents: dict[int, list[str]] = {cluster: [] for cluster in sorted(bare)}
    for paper, cluster in membership[membership.isin(bare)].items():
        for title in citing_titles.get(str(paper), ()):
            documents[int(cluster)].extend(title_terms(title))
    weights = ctfidf(documents)
    out = []
    for label in labels:
        if label.cluster not in bare:
            out.append(label)
            continue
        terms = tuple(term for term, _ in weights[label.cluster][:top_k])
        if terms:
            out.append(replace(label, terms=terms, terms_from="citing titles"))
            continue
        names = [member_labels[p] for p in label.papers[:n_labels] if member_labels.get(p)]
        more = label.size - len(names)
        name = "; ".join(names) + (f" and {more} more" if names and more > 0 else "")
        out.append(replace(label, terms_from="", name=name or None))
    return out


def write_cluster_labels(
    path: Path,
    labels: list[ClusterLabel],
    *,
    settings: dict[str, Any] | None = None,
    quality: Mapping[str, Any] | None = None,
) -> Path:
    """Write the labels as JSON (``settings`` records how they were computed, ``quality`` the clustering's
    overall modularity and silhouette, :meth:`gnn.cocitation.quality.ClusteringQuality.as_dict`), atomically."""
    record = {
        "settings": settings or {},
        "quality": dict(quality) if quality is not None else None,
        "clusters": [{**asdict(label), "label": label.label} for label in labels],
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def read_cluster_labels(path: Path) -> list[ClusterLabel]:
    """The labels :func:`write_cluster_labels` wrote; an empty list when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return []
    record = json.loads(path.read_text(encoding="utf-8"))
    return [
        ClusterLabel(
            int(c["cluster"]),
            int(c["size"]),
            tuple(c["terms"]),
            tuple(c["papers"]),
            terms_from=c.get("terms_from", "titles"),  # files written before it had titles only
            name=c.get("name"),
            llr_terms=tuple(c.get("llr_terms", ())),  # files written before these have none
            ctfidf_terms=tuple(c.get("ctfidf_terms", ())),
            silhouette=c.get("silhouette"),
            modularity=c.get("modularity"),
        )
        for c in record["clusters"]
    ]


@dataclass(frozen=True)
class StoredQuality:
    """The overall quality of the clusters as :func:`write_cluster_labels` stored it
    (:meth:`gnn.cocitation.quality.ClusteringQuality.as_dict`)."""

    modularity: float  # Q of the whole partition
    silhouette: float | None  # mean s(x) over every clustered node; None with fewer than two clusters
    nodes: int  # clustered nodes
    links: int  # links the quality was computed on


def read_cluster_quality(path: Path) -> StoredQuality | None:
    """The overall quality :func:`write_cluster_labels` wrote; None when the file does not exist or predates it."""
    path = Path(path)
    if not path.is_file():
        return None
    quality = json.loads(path.read_text(encoding="utf-8")).get("quality")
    if not isinstance(quality, dict) or quality.get("modularity") is None:
        return None
    silhouette = quality.get("silhouette")
    return StoredQuality(
        modularity=float(quality["modularity"]),
        silhouette=None if silhouette is None else float(silhouette),
        nodes=int(quality.get("nodes", 0)),
        links=int(quality.get("links", 0)),
    )


__all__ = [
    "LABEL_METHODS",
    "LABEL_SHOWN",
    "STOP_WORDS",
    "ClusterLabel",
    "StoredQuality",
    "ctfidf",
    "label_bare_clusters",
    "label_clusters",
    "leiden_clusters",
    "leiden_membership",
    "louvain_clusters",
    "prune_pairs",
    "read_cluster_labels",
    "read_cluster_quality",
    "title_terms",
    "write_cluster_labels",
]
