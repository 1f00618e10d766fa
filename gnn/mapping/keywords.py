r"""Keyword co-occurrence: two keywords linked when they occur in the same document, and its clusters.

As bibliometrix's ``biblioNetwork(M, analysis="co-occurrences", network="author_keywords")`` does, the
network is :math:`C = B^\top B` over the binary documents × keywords incidence matrix :math:`B` (a keyword
counted once per document): :math:`c_{ij}` is the documents that carry both keywords, :math:`c_{ii}` (a
node's ``weight``) the documents that carry keyword :math:`i`. The documents are those of the filters'
year window (a document without a year is left out when a window is given); ``min_count`` is the least
:math:`c_{ij}` a link keeps; ``top`` keeps the keywords with the most documents (ties by id).

Which keywords: one kind at a time, as bibliometrix's ``field="DE"`` (author keywords) or ``"ID"``
(Keywords Plus). Unless the caller names kinds, :func:`keyword_kinds` takes the first kind of
:data:`KIND_FALLBACK` the store has any use of: author keywords, else Keywords Plus, else Scopus index
keywords, else OpenAlex keywords, topics, fields of study. (A store of WoS and OpenAlex records thus maps
the WoS author keywords only; name the kinds to mix them.)

Clusters (:func:`keyword_clusters`): Leiden on the co-occurrence counts (the modularity objective and
igraph implementation of :func:`gnn.cocitation.clusters.leiden_membership`), each labelled by its most
frequent keyword, as bibliometrix names its themes; ``citegraph compute thematic-map`` writes them onto
``Keyword.cluster`` and ``Keyword.cluster_label`` (:mod:`gnn.mapping.thematic`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import scipy.sparse as sp

from gnn.cocitation.clusters import leiden_membership
from gnn.mapping.networks import (
    MAX_EDGES,
    MapEdge,
    MapNetwork,
    MapNode,
    MapUnit,
    Measure,
    NetworkFilters,
    register,
)
from graph.errors import ConfigError
from graph.store import GraphStore

# The kinds loaders.keywords stores, in the order the default falls back through them.
KIND_FALLBACK = ("author", "plus", "index", "openalex_keyword", "topic", "field_of_study")


@dataclass(frozen=True)
class KeywordUses:
    """Every use of a keyword by a work, as codes: ``docs[u]`` used ``keywords[u]``."""

    papers: pd.Index  # work ids
    years: np.ndarray  # float64 [papers]: NaN where unknown
    keywords: pd.Index  # keyword ids
    kinds: np.ndarray  # object [keywords]
    doc: np.ndarray  # int64 [uses]: position in papers
    term: np.ndarray  # int64 [uses]: position in keywords


def read_keyword_uses(store: GraphStore) -> KeywordUses:
    """The store's keyword uses in one bulk read (``keyword_uses``, Arrow)."""
    table = store.query_arrow("keyword_uses")
    if table.num_rows == 0:
        empty = np.zeros(0, dtype=np.int64)
        return KeywordUses(
            pd.Index([], dtype=object), np.zeros(0), pd.Index([], dtype=object), np.zeros(0, object), empty, empty
        )
    paper_codes, papers = pd.factorize(table.column("paper").to_pandas(), sort=True)
    term_codes, keywords = pd.factorize(table.column("keyword").to_pandas(), sort=True)
    year = table.column("year").cast(pa.float64()).to_numpy(zero_copy_only=False)
    years = np.full(len(papers), np.nan)
    years[paper_codes] = year
    kinds = np.empty(len(keywords), dtype=object)
    kinds[term_codes] = table.column("kind").to_numpy(zero_copy_only=False)
    return KeywordUses(
        pd.Index(papers), years, pd.Index(keywords), kinds, paper_codes.astype(np.int64), term_codes.astype(np.int64)
    )


def keyword_kinds(uses: KeywordUses, kinds: Sequence[str] | None = None) -> tuple[str, ...]:
    """``kinds`` as given (checked), else the first kind of :data:`KIND_FALLBACK` with a use (none: empty)."""
    if kinds:
        unknown = sorted(set(kinds) - set(KIND_FALLBACK))
        if unknown:
            raise ConfigError(f"unknown keyword kind(s) {', '.join(unknown)}; known: {', '.join(KIND_FALLBACK)}")
        return tuple(kinds)
    present = set(uses.kinds[np.unique(uses.term)].tolist()) if len(uses.term) else set()
    return next(((kind,) for kind in KIND_FALLBACK if kind in present), ())


@dataclass(frozen=True)
class Cooccurrence:
    """The co-occurrence counts of the ``top`` keywords in a window.

    ``counts`` is symmetric with a zero diagonal and only the links with :math:`c_{ij} \\ge` ``min_count``;
    ``weights`` the documents per keyword (its :math:`c_{ii}`), ``documents`` the window's documents with a
    keyword of the chosen kinds (the N of the association strength).
    """

    keywords: pd.Index  # ids, heaviest first (ties by id)
    weights: np.ndarray  # int64 [keywords]
    avg_year: np.ndarray  # float64 [keywords]: NaN where no document has a year
    counts: sp.csr_matrix  # int64 [keywords, keywords]
    incidence: sp.csr_matrix  # int8 [documents, keywords]: which window document carries which keyword
    documents: int
    kinds: tuple[str, ...]
    cut: bool  # top left keywords out


def cooccurrence(uses: KeywordUses, filters: NetworkFilters, kinds: Sequence[str] | None = None) -> Cooccurrence:
    """:math:`C = B^\\top B` of the window's documents and the ``filters.top`` heaviest keywords of ``kinds``."""
    chosen = keyword_kinds(uses, kinds)
    keep = np.isin(uses.kinds[uses.term], list(chosen)) if len(uses.term) else np.zeros(0, dtype=bool)
    if filters.year_min is not None or filters.year_max is not None:
        year = uses.years[uses.doc]
        low = -np.inf if filters.year_min is None else filters.year_min
        high = np.inf if filters.year_max is None else filters.year_max
        keep &= ~np.isnan(year) & (year >= low) & (year <= high)
    doc, term = uses.doc[keep], uses.term[keep]
    docs, doc_row = np.unique(doc, return_inverse=True)
    terms, term_col = np.unique(term, return_inverse=True)
    b = sp.csr_matrix((np.ones(len(doc), dtype=np.int64), (doc_row, term_col)), shape=(len(docs), len(terms)))
    b.data[:] = 1  # a keyword counted once per document, whatever the store repeats
    weight = np.asarray(b.sum(axis=0)).ravel().astype(np.int64)
    ids = uses.keywords[terms]
    order = np.lexsort((np.asarray(ids, dtype=object).astype(str), -weight))
    frequent = order[weight[order] >= filters.min_freq]  # bibliometrix's minfreq: rarer keywords are no nodes
    order = frequent[: filters.top]
    b = b[:, order].tocsc().tocsr()
    years = uses.years[docs]
    dated = ~np.isnan(years)
    b_dated = sp.diags(dated.astype(np.float64)) @ b
    year_sum = np.asarray(b_dated.T @ np.where(dated, years, 0.0)).ravel()
    year_docs = np.asarray(b_dated.sum(axis=0)).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_year = np.where(year_docs > 0, year_sum / np.maximum(year_docs, 1), np.nan)
    counts = (b.T @ b).tocsr().astype(np.int64)
    counts.setdiag(0)
    counts.data[counts.data < filters.min_count] = 0
    counts.eliminate_zeros()
    return Cooccurrence(
        keywords=pd.Index(ids[order]),
        weights=weight[order],
        avg_year=avg_year,
        counts=counts,
        incidence=b.astype(np.int8),
        documents=len(docs),
        kinds=chosen,
        cut=len(frequent) > len(order),
    )


def strengths(counts: np.ndarray, s_i: np.ndarray, s_j: np.ndarray, n: int, measure: Measure) -> np.ndarray:
    """Each link's strength under ``measure`` (:mod:`gnn.mapping.networks` gives the formulas)."""
    c = counts.astype(np.float64)
    a, b = s_i.astype(np.float64), s_j.astype(np.float64)
    if measure is Measure.COUNT:
        return c
    if measure is Measure.ASSOCIATION:
        return n * c / (a * b)
    if measure is Measure.COSINE:
        return c / np.sqrt(a * b)
    if measure is Measure.JACCARD:
        return c / (a + b - c)
    return c / np.minimum(a, b)  # inclusion


def keyword_network(store: GraphStore, filters: NetworkFilters, kinds: Sequence[str] | None = None) -> MapNetwork:
    """The keyword co-occurrence network under ``filters`` (see the module docstring).

    ``seed`` (a Keyword id) keeps it and its neighbours, ``cluster`` the keywords of that stored cluster;
    nodes carry the stored ``Keyword.cluster``/``cluster_label`` and the mean year of their documents.
    """
    co = cooccurrence(read_keyword_uses(store), filters, kinds)
    keep = np.ones(len(co.keywords), dtype=bool)
    info = _keyword_info(store, co.keywords)
    if filters.seed is not None:
        at = co.keywords.get_indexer([filters.seed])[0]
        keep[:] = False
        if at >= 0:
            keep[co.counts[at].indices] = True
            keep[at] = True
    if filters.cluster is not None:
        keep &= info["cluster"].to_numpy(dtype=np.float64) == filters.cluster
    upper = sp.triu(co.counts, k=1).tocoo()
    linked = keep[upper.row] & keep[upper.col]
    i, j, c = upper.row[linked], upper.col[linked], upper.data[linked]
    strength = strengths(c, co.weights[i], co.weights[j], co.documents, filters.measure)
    order = np.lexsort((j, i, -strength))
    cut_edges = len(order) > MAX_EDGES
    order = order[:MAX_EDGES]
    nodes = [
        MapNode(
            id=str(key),
            label=str(name) if isinstance(name, str) else str(key),
            weight=int(weight),
            avg_year=None if np.isnan(year) else round(float(year), 2),
            cluster=None if pd.isna(cluster) else int(cluster),
            cluster_label=label if isinstance(label, str) else None,
        )
        for key, weight, year, name, cluster, label, kept in zip(
            co.keywords, co.weights, co.avg_year, info["name"], info["cluster"], info["cluster_label"], keep
        )
        if kept
    ]
    ids = co.keywords
    edges = [
        MapEdge(str(ids[a]), str(ids[b]), int(n), float(s))
        for a, b, n, s in zip(i[order].tolist(), j[order].tolist(), c[order].tolist(), strength[order].tolist())
    ]
    return MapNetwork(MapUnit.KEYWORDS, filters, nodes, edges, truncated=co.cut or cut_edges)


@register(MapUnit.KEYWORDS)
def keywords_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """The KEYWORDS unit: :func:`keyword_network` with the default kinds (:func:`keyword_kinds`)."""
    return keyword_network(store, filters)


def _keyword_info(store: GraphStore, ids: pd.Index) -> pd.DataFrame:
    """``name``, ``kind``, ``cluster``, ``cluster_label`` of ``ids``, in their order (null where absent)."""
    rows = store.query("keyword_nodes", {"ids": [str(k) for k in ids]}) if len(ids) else []
    frame = pd.DataFrame(rows, columns=["id", "name", "kind", "cluster", "cluster_label"]).set_index("id")
    return frame.reindex(ids)


def keyword_clusters(co: Cooccurrence, *, resolution: float = 1.0, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """Leiden clusters of the co-occurrence network: a number per keyword (-1: no link) and each cluster's
    label, the id of its keyword with the most documents (ties: the smaller id).

    Clusters are numbered by size, largest first (:func:`gnn.cocitation.clusters.leiden_membership`).
    """
    upper = sp.triu(co.counts, k=1).tocoo()
    order = np.lexsort((upper.col, upper.row))
    membership = leiden_membership(
        upper.row[order].astype(np.int64),
        upper.col[order].astype(np.int64),
        upper.data[order].astype(np.float64),
        len(co.keywords),
        resolution=resolution,
        seed=seed,
    )
    labels: list[str] = []
    for number in range(int(membership.max()) + 1 if len(membership) else 0):
        members = np.flatnonzero(membership == number)
        best = members[
            np.lexsort((np.asarray(co.keywords[members], dtype=object).astype(str), -co.weights[members]))[0]
        ]
        labels.append(str(co.keywords[best]))
    return membership, labels


__all__ = [
    "KIND_FALLBACK",
    "Cooccurrence",
    "KeywordUses",
    "cooccurrence",
    "keyword_clusters",
    "keyword_kinds",
    "keyword_network",
    "keywords_network",
    "read_keyword_uses",
    "strengths",
]
