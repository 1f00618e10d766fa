r"""Bibliographic coupling: its clusters (``citegraph compute coupling``) and the COUPLING unit's network.

Two documents are coupled by the references they share (Kessler, 1963, American Documentation 14:10):
with :math:`A` the binary document × cited-work incidence, :math:`B = A A^\top` counts them, computed on
integer codes by :func:`gnn.cocitation.counts.count_pairs` (cited works as the "members", documents as the
"items"). :func:`coupling_counts` counts the documents of a year window; :func:`compute_coupling`
clusters every document with Leiden (:func:`gnn.cocitation.clusters.leiden_membership`, each document's
``top_k`` strongest couplings, as the co-citation clusters), labels each cluster by its *own* documents'
titles, abstracts and keywords (log-likelihood ratio and c-TF-IDF, :mod:`gnn.cocitation.terms`), measures modularity
and silhouette on the cosine :math:`B_{ij}/\sqrt{s_i s_j}` (:mod:`gnn.cocitation.quality`, :math:`s_i` the
references of :math:`i`) (see the cut below), writes ``coupling_cluster`` on every Paper and the labels beside the store
(``<db>.coupling_clusters.json``).

**The cut of the most cited references** (:func:`coupling_cut`). Counting expands
:math:`\sum_w c_w (c_w - 1)/2` pairs (:math:`c_w` the documents citing work :math:`w`), which the few most
cited works dominate: 1.7e10 at 1M synthetic papers / 10M citations. As CiteSpace and VOSviewer leave the
most frequent items out, references cited by more than ``max_share`` of the window's citing documents are
cut before counting (``--coupling-max-share``); by default (no share) nothing is cut while the count expands
at most :data:`MAX_EXPANSIONS` pairs, and above that the most cited references are cut until it fits. The
count runs in ranges of documents and keeps only pairs sharing ``min_count`` references
(:func:`gnn.cocitation.counts.count_pairs_bounded`), so its memory is bounded by one range and the kept pairs.

:func:`coupling_network` is the COUPLING unit's builder (:mod:`gnn.mapping.networks`): citing documents of
the window as nodes, sized by their total link strength (VOSviewer's default weight: the sum of their
coupling counts over the kept links), links sharing at least ``min_count`` references, strengths by the
filters' measure with :math:`N` the cited works of the window (as
:func:`gnn.cocitation.compute.coupling_table`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from gnn.cocitation.clusters import (
    ClusterLabel,
    leiden_membership,
    prune_pairs,
    read_cluster_labels,
    write_cluster_labels,
)
from gnn.cocitation.compute import read_keywords, read_texts, with_quality
from gnn.cocitation.counts import (
    PairCounts,
    association_strength,
    count_pairs_bounded,
    inclusion_index,
    jaccard_index,
    salton_cosine,
)
from gnn.cocitation.quality import ClusteringQuality, clustering_quality
from gnn.cocitation.terms import class_term_counts, rank_labels, term_matrix
from gnn.mapping.data import MappingInput, read_mapping_input
from gnn.mapping.networks import MAX_EDGES, MapEdge, MapNetwork, MapNode, MapUnit, Measure, NetworkFilters, register
from gnn.progress import StageTimer
from graph.errors import ConfigError
from graph.files import StoreFiles
from graph.labels import complete_labels
from graph.store import GraphStore

log = logging.getLogger(__name__)

# Pairs the coupling count may expand, sum over works of c_w (c_w - 1) / 2 with c_w the work's citing documents
# in the window. The count runs in ranges of documents (count_pairs_bounded), so memory no longer grows with it,
# but time does: at 1M synthetic papers the exact count would expand 1.7e10 pairs, hours on two cores. Above this
# budget, and when no max_share is set, the most cited references are cut until the count fits (coupling_cut).
MAX_EXPANSIONS = 2_000_000_000


@dataclass(frozen=True)
class CouplingCut:
    """Which references a coupling count left out: those cited by more than ``max_citers`` documents.

    A reference cited by a large share of the documents couples nearly all of them, so it says little about
    which documents belong together (the idea of inverse document frequency), yet its c(c−1)/2 pairs dominate
    the count: at 1M synthetic papers the 60 most cited works (0.006 % of them) expand 94 % of the pairs.
    CiteSpace and VOSviewer likewise leave the most frequent items out of their networks.
    """

    max_citers: int | None  # references cited by more documents were cut (None: nothing cut)
    references_cut: int  # distinct references cut
    citations_cut: int  # (document, reference) pairs they took with them
    expansions: int  # pairs the count expands after the cut
    exact_expansions: int  # pairs it would expand without a cut
    documents: int  # citing documents of the window (N of the share)
    why: str  # "share" (max_share), "budget" (MAX_EXPANSIONS) or "" (nothing cut)

    def summary(self) -> str:
        if self.max_citers is None:
            return f"exact: {self.expansions:,} pairs expanded"
        reason = "--coupling-max-share" if self.why == "share" else f"budget of {MAX_EXPANSIONS:,} expansions"
        return (
            f"references cited by more than {self.max_citers:,} of {self.documents:,} documents cut ({reason}): "
            f"{self.references_cut:,} references, {self.citations_cut:,} citations; {self.expansions:,} pairs "
            f"expanded instead of {self.exact_expansions:,}"
        )


def coupling_cut(citers: np.ndarray, documents: int, *, max_share: float | None = None) -> CouplingCut:
    """The cut of :class:`CouplingCut` for works cited by ``citers[w]`` documents of ``documents``.

    With ``max_share``, references cited by more than ``max_share * documents`` documents are cut. Without it
    nothing is cut while the count expands at most :data:`MAX_EXPANSIONS` pairs; above, the references cited
    most are cut: the largest threshold T whose works (c_w ≤ T) expand no more than the budget.
    """
    c = citers[citers > 0].astype(np.int64)
    pairs = c * (c - 1) // 2
    exact = int(pairs.sum())
    if max_share is not None:
        limit = int(np.floor(max_share * documents))
        why = "share"
    elif exact > MAX_EXPANSIONS:
        order = np.sort(c)
        cumulative = np.cumsum(order * (order - 1) // 2)
        fits = int(np.searchsorted(cumulative, MAX_EXPANSIONS, side="right"))  # the `fits` least cited fit
        limit = int(order[fits]) - 1  # works cited as often as the first that overflows go too (ties cut together)
        why = "budget"
    else:
        return CouplingCut(None, 0, 0, exact, exact, documents, "")
    out = c > limit
    if not out.any():
        return CouplingCut(None, 0, 0, exact, exact, documents, "")
    return CouplingCut(limit, int(out.sum()), int(c[out].sum()), int(pairs[~out].sum()), exact, documents, why)


@dataclass(frozen=True)
class CouplingSettings:
    """Settings of ``citegraph compute coupling``."""

    # Documents sharing at least this many references are linked in the cluster graph.
    min_count: int = field(default=1, metadata={"help": "coupling: documents sharing at least N references are linked"})
    # Each document keeps the links to its top_k most strongly coupled documents (0: every link); a
    # k-nearest-neighbour cut, as the co-citation clusters (gnn.cocitation.compute.CocitationSettings).
    top_k: int = field(
        default=10,
        metadata={"help": "coupling: each document keeps its N most strongly coupled documents (0: every link)"},
    )
    # Leiden resolution γ: above 1 more, smaller clusters.
    resolution: float = 1.0
    # Seed of Leiden's node order: the same seed on the same graph gives the same clusters.
    seed: int = 0
    # Terms per label list (LLR and c-TF-IDF over the documents' own titles and abstracts).
    label_terms: int = 5
    # Whether abstracts add terms to the labels (titles always do).
    label_abstracts: bool = True
    # Whether the documents' keywords (HAS_KEYWORD) add whole terms to the labels, as for co-citation clusters.
    label_keywords: bool = True
    # References cited by more than this share of the citing documents are cut before counting (CouplingCut):
    # they couple nearly everything and carry little information. None: exact while the count fits
    # MAX_EXPANSIONS, else the fewest most-cited references cut to fit.
    max_share: float | None = field(
        default=None,
        metadata={
            "help": "coupling: references cited by more than this share of the documents (0 < S <= 1) are cut before "
            "counting; default: exact while the count fits, else the most cited references cut until it does"
        },
    )

    def __post_init__(self) -> None:
        if self.min_count < 1:
            raise ConfigError(f"min_count is {self.min_count}; a coupling count is at least 1 (default 1)")
        if self.top_k < 0:
            raise ConfigError(f"top_k is {self.top_k}; use 0 (every link) or more (default 10)")
        if self.resolution <= 0:
            raise ConfigError(f"resolution is {self.resolution}; Leiden needs a positive resolution (default 1.0)")
        if self.label_terms < 1:
            raise ConfigError(f"label_terms is {self.label_terms}; a label needs at least one term (default 5)")
        check_share(self.max_share)


def check_share(max_share: float | None) -> None:
    """Refuse a share outside (0, 1]."""
    if max_share is not None and not 0 < max_share <= 1:
        raise ConfigError(
            f"max_share is {max_share}; give a share of the citing documents in (0, 1] such as 0.01, "
            "or none for the automatic cut"
        )


def coupling_counts(
    data: MappingInput,
    *,
    year_min: int | None = None,
    year_max: int | None = None,
    max_share: float | None = None,
    min_count: int = 1,
) -> PairCounts:
    """:math:`B = A A^\\top` over the citing documents published in [year_min, year_max] (either may be open;
    with a bound, documents without a year are left out), after the cut of :func:`coupling_cut`, keeping
    pairs that share at least ``min_count`` references, counted in bounded memory
    (:func:`gnn.cocitation.counts.count_pairs_bounded`). ``ids`` are the documents with a reference,
    ``occurrences`` their references and ``n_members`` the distinct works they cite, both after the cut."""
    return _counts_and_cut(data, year_min, year_max, max_share, min_count)[0]


def _counts_and_cut(
    data: MappingInput, year_min: int | None, year_max: int | None, max_share: float | None, min_count: int
) -> tuple[PairCounts, CouplingCut]:
    check_share(max_share)
    known = (data.citing >= 0) & (data.cited >= 0)
    if year_min is not None or year_max is not None:
        year = data.years[np.where(known, data.citing, 0)]
        known &= ~np.isnan(year)
        if year_min is not None:
            known &= year >= year_min
        if year_max is not None:
            known &= year <= year_max
    n = len(data.papers)
    codes = np.unique(data.citing[known] * n + data.cited[known])  # each (document, work) once
    citing, cited = codes // n, codes % n
    del codes
    documents = np.unique(citing)  # sorted positions, so their ids are sorted too
    citers = np.bincount(cited, minlength=n)
    cut = coupling_cut(citers, len(documents), max_share=max_share)
    if cut.max_citers is not None:
        log.warning("bibliographic coupling: %s", cut.summary())
        kept = citers[cited] <= cut.max_citers
        citing, cited = citing[kept], cited[kept]
    pairs = count_pairs_bounded(cited, np.searchsorted(documents, citing), data.papers[documents], min_count=min_count)
    return pairs, cut


def _cluster_graph(pairs: PairCounts, *, top_k: int, min_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each document's ``top_k`` strongest couplings (:func:`gnn.cocitation.clusters.prune_pairs`), as unordered links."""
    rows = np.concatenate([pairs.i, pairs.j])
    partners = np.concatenate([pairs.j, pairs.i])
    freq = np.concatenate([pairs.count, pairs.count])
    order = np.lexsort((partners, -freq, rows))  # CSR order, strongest first within a row
    return prune_pairs(rows[order], partners[order], freq[order], len(pairs.ids), top_k=top_k, min_count=min_count)


@dataclass(frozen=True)
class CouplingReport:
    """What :func:`compute_coupling` computed and wrote."""

    documents: int  # citing documents (with at least one reference)
    pairs: int  # coupled pairs (sharing at least min_count references)
    links: int  # links of the cluster graph
    clusters: tuple[ClusterLabel, ...]
    quality: ClusteringQuality
    papers_written: int
    clusters_path: Path | None
    cut: CouplingCut | None = None  # the references left out of the count (None: not reported)
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        silhouette = "n/a" if self.quality.silhouette is None else f"{self.quality.silhouette:.3f}"
        lines = [
            f"bibliographic coupling: {self.documents} citing documents, {self.pairs} coupled pairs, "
            f"{self.links} links clustered",
            *([f"  {self.cut.summary()}"] if self.cut is not None else []),
            f"  {len(self.clusters)} clusters, modularity Q {self.quality.modularity:.3f}, mean silhouette {silhouette}"
            + (f"; labels in {self.clusters_path}" if self.clusters_path else ""),
            f"  {self.papers_written} papers updated",
        ]
        lines += [f"    {c.cluster:>4}  {c.size:>5} documents  {c.label}" for c in self.clusters[:10]]
        lines.append("  " + ", ".join(f"{stage} {s:.2f}s" for stage, s in self.seconds.items()))
        return "\n".join(lines)


def compute_coupling(
    store: GraphStore, settings: CouplingSettings | None = None, *, clusters_path: Path | None = None
) -> CouplingReport:
    """Cluster the bibliographic coupling network, label and measure the clusters, write them back.

    Writes ``coupling_cluster`` on every Paper (null where a paper is in no cluster: a rerun replaces old
    values) and the labels to ``clusters_path``, by default ``<store path>.coupling_clusters.json``.
    """
    settings = settings or CouplingSettings()
    with tqdm(total=5, desc="coupling", unit="step", disable=None) as bar:
        stage = StageTimer(bar)
        with stage("read"):
            data = read_mapping_input(store)
        with stage("count"):
            pairs, cut = _counts_and_cut(data, None, None, settings.max_share, settings.min_count)
        with stage("cluster"):
            i, j, weight = _cluster_graph(pairs, top_k=settings.top_k, min_count=settings.min_count)
            n = len(pairs.ids)
            membership = leiden_membership(i, j, weight, n, resolution=settings.resolution, seed=settings.seed)
            s = pairs.occurrences.astype(np.float64)
            cosine = weight / np.sqrt(s[i] * s[j]) if len(i) else np.empty(0)
            quality = clustering_quality(i, j, weight, cosine, membership, resolution=settings.resolution)
        with stage("labels"):
            labels = _labels(store, data, pairs, membership, settings)
            labels = with_quality(labels, quality)
        with stage("write"):
            cluster = pd.Series(membership, index=pairs.ids)
            cluster = cluster[cluster >= 0]
            frame = pd.DataFrame(
                {"id": data.papers.array, "coupling_cluster": cluster.reindex(data.papers).astype("Int64").array}
            )
            written = store.write_node_properties("Paper", "id", frame)
            path = clusters_path if clusters_path is not None else StoreFiles.of(store).coupling_clusters
            if path is not None:
                record = {
                    "min_count": settings.min_count,
                    "top_k": settings.top_k,
                    "resolution": settings.resolution,
                    "seed": settings.seed,
                    "label_terms": settings.label_terms,
                    "label_abstracts": settings.label_abstracts,
                    "label_keywords": settings.label_keywords,
                    "max_share": settings.max_share,
                    "max_citers": cut.max_citers,
                }
                write_cluster_labels(path, labels, settings=record, quality=quality.as_dict())
    return CouplingReport(
        documents=len(pairs.ids),
        pairs=len(pairs),
        links=len(i),
        clusters=tuple(labels),
        quality=quality,
        papers_written=written,
        clusters_path=path,
        cut=cut,
        seconds=stage.seconds,
    )


def _labels(
    store: GraphStore, data: MappingInput, pairs: PairCounts, membership: np.ndarray, settings: CouplingSettings
) -> list[ClusterLabel]:
    """A label per cluster, largest first: LLR and c-TF-IDF terms of the members' own texts; the most cited
    members (citations in the store) as its papers; their display labels where no member has a term."""
    clustered = np.flatnonzero(membership >= 0)
    if len(clustered) == 0:
        return []
    n_clusters = int(membership.max()) + 1
    positions = data.papers.get_indexer(pairs.ids[clustered])
    texts = read_texts(store, data.papers, abstracts=settings.label_abstracts)
    own = read_keywords(store, data.papers, positions) if settings.label_keywords else None
    doc_terms, terms = term_matrix([texts[k] for k in positions.tolist()], keywords=own)
    counts = class_term_counts(membership[clustered], np.arange(len(clustered)), doc_terms, n_clusters)
    llr, ctf = rank_labels(counts, terms, settings.label_terms)
    cited = data.cited[data.cited >= 0]
    citations = np.bincount(cited, minlength=len(data.papers))[positions]
    order = np.lexsort((positions, -citations))  # most cited first, ties by id (positions follow sorted ids)
    members: dict[int, list[str]] = {c: [] for c in range(n_clusters)}
    for k in order.tolist():
        members[int(membership[clustered[k]])].append(str(pairs.ids[clustered[k]]))
    sizes = np.bincount(membership[clustered], minlength=n_clusters)
    bare = [c for c in range(n_clusters) if not llr[c] and not ctf[c]]
    names: dict[str, str] = {}
    if bare:
        top = sorted({p for c in bare for p in members[c][:2]})
        names = {
            row["id"]: row["label"]
            for row in complete_labels(store.query("cocitation_nodes", {"ids": top}), store.query)
        }
    labels = []
    for c in range(n_clusters):
        name = "; ".join(names[p] for p in members[c][:2] if p in names) or None
        labels.append(
            ClusterLabel(
                cluster=c,
                size=int(sizes[c]),
                terms=ctf[c],
                papers=tuple(members[c][:5]),
                terms_from="titles" if ctf[c] else "",
                name=name if c in bare else None,
                llr_terms=llr[c],
                ctfidf_terms=ctf[c],
            )
        )
    return labels


# the COUPLING unit -------------------------------------------------------------------------------


def _strengths(measure: Measure, count: np.ndarray, s_i: np.ndarray, s_j: np.ndarray, total: int) -> np.ndarray:
    if measure is Measure.COUNT:
        return count.astype(np.float64)
    if measure is Measure.ASSOCIATION:
        return association_strength(count, s_i, s_j, total=total)
    if measure is Measure.COSINE:
        return salton_cosine(count, s_i, s_j)
    if measure is Measure.JACCARD:
        return jaccard_index(count, s_i, s_j)
    return inclusion_index(count, s_i, s_j)


def _stored_clusters(store: GraphStore) -> pd.Series:
    """``Paper.coupling_cluster`` by id (empty before ``compute coupling``)."""
    table = store.query_arrow("paper_coupling_clusters")
    if table.num_rows == 0:
        return pd.Series([], dtype="int64")
    return pd.Series(table.column("cluster").to_numpy(), index=pd.Index(table.column("id").to_pandas()))


@register(MapUnit.COUPLING)
def coupling_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """The COUPLING unit: documents of the window linked by shared references (module docstring)."""
    data = read_mapping_input(store)
    pairs = coupling_counts(data, year_min=filters.year_min, year_max=filters.year_max, min_count=filters.min_count)
    keep = pairs.count >= filters.min_count
    i, j, count = pairs.i[keep], pairs.j[keep], pairs.count[keep]
    ids = pairs.ids
    clusters = _stored_clusters(store)
    cluster_of = clusters.reindex(ids).to_numpy(dtype=np.float64)  # NaN: no cluster
    if filters.cluster is not None:
        inside = cluster_of == filters.cluster
        keep = inside[i] & inside[j]
        i, j, count = i[keep], j[keep], count[keep]
    if filters.seed is not None:
        at = ids.get_indexer([filters.seed])[0]
        if at < 0:
            return MapNetwork(MapUnit.COUPLING, filters)
        near = np.zeros(len(ids), dtype=bool)
        near[at] = True
        near[j[i == at]] = True
        near[i[j == at]] = True
        keep = near[i] & near[j]
        i, j, count = i[keep], j[keep], count[keep]
    strength_total = np.bincount(i, weights=count, minlength=len(ids)) + np.bincount(
        j, weights=count, minlength=len(ids)
    )
    linked = np.flatnonzero((strength_total > 0) & (strength_total >= filters.min_freq))
    ranked = linked[np.lexsort((linked, -strength_total[linked]))]  # heaviest first, ties by id
    chosen = np.sort(ranked[: filters.top])
    truncated = len(ranked) > filters.top
    inside = np.zeros(len(ids), dtype=bool)
    inside[chosen] = True
    keep = inside[i] & inside[j]
    i, j, count = i[keep], j[keep], count[keep]
    s = pairs.occurrences
    strength = _strengths(filters.measure, count, s[i], s[j], pairs.n_members)
    order = np.lexsort((j, i, -strength))[:MAX_EDGES]
    truncated |= len(i) > MAX_EDGES
    chosen_ids = [str(p) for p in ids[chosen]]
    rows = {r["id"]: r for r in complete_labels(store.query("cocitation_nodes", {"ids": chosen_ids}), store.query)}
    path = StoreFiles.of(store).coupling_clusters
    names = {c.cluster: c.label for c in read_cluster_labels(path)} if path is not None else {}
    nodes = []
    for k, paper in zip(chosen.tolist(), chosen_ids):
        row: dict[str, Any] = rows.get(paper, {})
        year = row.get("year")
        cluster = None if np.isnan(cluster_of[k]) else int(cluster_of[k])
        nodes.append(
            MapNode(
                id=paper,
                label=str(row.get("label") or paper),
                weight=int(strength_total[k]),
                year=year,
                avg_year=None if year is None else float(year),
                cluster=cluster,
                cluster_label=names.get(cluster) if cluster is not None else None,
            )
        )
    nodes.sort(key=lambda node: (-node.weight, node.id))
    edges = [MapEdge(str(ids[i[e]]), str(ids[j[e]]), int(count[e]), float(strength[e])) for e in order.tolist()]
    return MapNetwork(MapUnit.COUPLING, filters, nodes, edges, truncated)


__all__ = [
    "MAX_EXPANSIONS",
    "CouplingCut",
    "CouplingReport",
    "CouplingSettings",
    "compute_coupling",
    "coupling_counts",
    "coupling_cut",
    "coupling_network",
]
