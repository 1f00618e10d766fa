"""The co-citation compute step: reads the incidences, counts, strengths, noise, clusters, write-back.

:func:`compute_cocitation` is the compute step: it reads CITES and MENTIONS from the store, counts
co-citation per paper and per sentence (:mod:`gnn.cocitation.counts`, which holds the products
and the normalised strengths), writes
``CO_CITED {count, sentence_count, association, cosine, jaccard, inclusion}`` (one edge per
unordered pair, source id < target id) and, on every Paper, ``n_cited``, the noise distributions
of :mod:`gnn.cocitation.noise` (``cocite_partners``, ``cocite_probs``, ``cocite_tail``, ``negative_weight``)
and the Leiden cluster of :mod:`gnn.cocitation.clusters` (``cocite_cluster``). Re-running replaces, never
duplicates. Bibliographic coupling has no edge type; :func:`coupling_table` computes it on demand.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import torch
from tqdm import tqdm

from gnn.cocitation.basis import CitationState, basis_folder, mark_pending, write_basis
from gnn.cocitation.clusters import (
    ClusterLabel,
    label_bare_clusters,
    label_clusters,
    leiden_membership,
    prune_pairs,
    write_cluster_labels,
)
from gnn.cocitation.counts import PairCounts, cooccurrence, count_pairs, normalised_strengths
from gnn.cocitation.noise import NoiseDistributions, arrow_ids, noise_distributions, top_partners
from gnn.cocitation.quality import ClusteringQuality, clustering_quality
from gnn.cocitation.settings import PairCountSettings
from gnn.cocitation.terms import class_term_counts, rank_labels, term_matrix, texts_of
from gnn.device import select_device
from gnn.progress import StageTimer
from graph.errors import ConfigError
from graph.files import StoreFiles
from graph.labels import complete_labels
from graph.store import GraphStore

log = logging.getLogger(__name__)

MEASURES = ("count", "sentence_count", "association", "cosine", "jaccard", "inclusion")


@dataclass(frozen=True)
class CocitationSettings(PairCountSettings):
    """Settings of ``citegraph compute cocitation``: the shared pair-count settings, then clustering."""

    # Leiden resolution γ: above 1 gives more, smaller clusters; below 1 fewer, larger ones.
    resolution: float = field(default=1.0, metadata={"help": "Leiden resolution (higher: more, smaller clusters)"})
    # Seed of Leiden's random node order: the same seed on the same graph gives the same clusters.
    seed: int = field(
        default=0, metadata={"help": "seed of the clustering, the taxonomy fusion and the hyperbolic embedding"}
    )
    # The cluster graph keeps, for every paper, the links to its cluster_top_k strongest partners
    # (the head of cocite_partners); 0 keeps every pair. At 1M papers / 10M citations the full graph
    # has 45.6M pairs, 96.5% co-cited once; the top-10 graph keeps every co-cited paper with <= 10M links.
    cluster_top_k: int = field(
        default=10,
        metadata={
            "help": "cluster graph: each paper's K strongest co-citation links (0: every pair; default %(default)s)"
        },
    )
    # Pairs co-cited fewer times than this are no links of the cluster graph (they stay CO_CITED edges).
    # The cluster graph is always a subgraph of the CO_CITED edges: the larger of this and min_count applies.
    cluster_min_count: int = field(default=1, metadata={"help": "cluster graph: only pairs co-cited at least N times"})
    # "cpu", "cuda", "cuda:N", or None for CUDA when available. The counts are exact integers either way.
    device: str | None = field(
        default=None,
        metadata={"help": "torch device (default: cuda when present, else cpu)", "choices": ("cpu", "cuda")},
    )
    # Terms per cluster label (c-TF-IDF over titles, gnn.cocitation.clusters.label_clusters; LLR and c-TF-IDF over
    # the citing papers' terms, gnn.cocitation.terms).
    label_terms: int = 5
    # Whether the citing papers' abstracts add terms to the LLR/c-TF-IDF labels (titles always do). Abstracts
    # give more evidence per paper; without them the labels come from titles only, and faster.
    label_abstracts: bool = field(
        default=True,
        metadata={
            "help": "cluster labels (cocitation, coupling): the abstracts of the labelling papers add terms, not just titles"
        },
    )
    # Whether the citing papers' keywords (HAS_KEYWORD: author keywords, Keywords Plus, index terms) add whole
    # terms to the LLR/c-TF-IDF labels, as CiteSpace labels from titles, keywords and abstracts. A keyword is
    # a phrase chosen for the work, often the field's own name for a theme the titles only circle around.
    label_keywords: bool = field(
        default=True,
        metadata={
            "help": "cluster labels (cocitation, coupling): the labelling papers' keywords (HAS_KEYWORD) add whole terms"
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.resolution <= 0:
            raise ConfigError(f"resolution is {self.resolution}; Leiden needs a positive resolution (default 1.0)")
        if self.cluster_top_k < 0:
            raise ConfigError(f"cluster_top_k is {self.cluster_top_k}; use 0 (every pair) or more (default 10)")
        if self.cluster_min_count < 1:
            raise ConfigError(f"cluster_min_count is {self.cluster_min_count}; a co-citation count is at least 1")
        if self.label_terms < 1:
            raise ConfigError(f"label_terms is {self.label_terms}; a label needs at least one term (default 5)")


# tables ----------------------------------------------------------------------------------------


def cocitation_edges(cocitation: PairCounts, sentence: PairCounts | None = None, *, min_count: int = 1) -> pd.DataFrame:
    """The CO_CITED table: one row per pair with ``count >= min_count``, source id < target id.

    ``sentence`` must share ``cocitation.ids`` (:func:`cooccurrence` with ``ids=``); pairs never
    co-cited in one sentence get ``sentence_count`` 0. ``source`` and ``target`` are Arrow-backed
    ``str`` columns taken from the ids without a Python object per row.
    """
    sentence_counts = np.zeros(len(cocitation), dtype=np.int64)
    if sentence is not None and len(sentence):
        if not sentence.ids.equals(cocitation.ids):
            raise ValueError("sentence-level counts must be indexed like the co-citation counts (pass ids=)")
        codes = cocitation.i * len(cocitation.ids) + cocitation.j  # ascending: pairs are sorted by (i, j)
        sentence_codes = sentence.i * len(sentence.ids) + sentence.j
        at = np.searchsorted(codes, sentence_codes)
        found = (at < len(codes)) & (codes[np.minimum(at, len(codes) - 1)] == sentence_codes) if len(codes) else at < 0
        sentence_counts[at[found]] = sentence.count[found]
        if not found.all():  # a sentence's paper that lacks the CITES edge: reported, not invented
            log.warning("%d sentence-level pairs have no paper-level co-citation; left out", int((~found).sum()))
    pairs = cocitation
    if min_count > 1:
        keep = cocitation.count >= min_count
        pairs = PairCounts(
            cocitation.ids,
            cocitation.i[keep],
            cocitation.j[keep],
            cocitation.count[keep],
            cocitation.occurrences,
            cocitation.n_members,
        )
        sentence_counts = sentence_counts[keep]
    ids = arrow_ids(pairs.ids)
    table = pd.DataFrame(
        {
            "source": ids.take(pa.array(pairs.i)).to_pandas(),
            "target": ids.take(pa.array(pairs.j)).to_pandas(),
            "count": pairs.count,
            "sentence_count": sentence_counts,
        }
    )
    strengths = normalised_strengths(pairs)
    for name in strengths.columns:
        table[name] = strengths[name].to_numpy()
    return table[["source", "target", *MEASURES]]


def read_citations(store: GraphStore) -> pd.DataFrame:
    """Every CITES edge as ``citing_id``, ``cited_id`` (read as Arrow: no Python object per row)."""
    return _frame(store.query_arrow("citation_pairs"), ["citing_id", "cited_id"])


def read_mentions(store: GraphStore) -> pd.DataFrame:
    """Every MENTIONS edge as ``sentence_id``, ``cited_id`` (read as Arrow)."""
    return _frame(store.query_arrow("sentence_mentions"), ["sentence_id", "cited_id"])


def _frame(table: pa.Table, columns: list[str]) -> pd.DataFrame:
    if table.num_rows == 0:
        return pd.DataFrame({name: pd.Series([], dtype="str") for name in columns})
    return table.select(columns).to_pandas()


@dataclass(frozen=True)
class CocitationInput:
    """The incidences behind co-citation as integer positions, read from the store as Arrow.

    ``papers`` holds every Paper id, sorted; ``citing``/``cited``/``mentioned`` are positions in it.
    """

    papers: pd.Index  # every Paper id, sorted ascending
    titles: pa.Array  # title of papers[k] (null where none), for cluster labels
    citing: np.ndarray  # int64 [citations]: the citing paper of each CITES edge
    cited: np.ndarray  # int64 [citations]: the cited paper
    sentences: np.ndarray  # int64 [mentions]: one code per citing sentence (any distinct ints)
    mentioned: np.ndarray  # int64 [mentions]: the paper the sentence mentions


def read_cocitation_input(store: GraphStore) -> CocitationInput:
    """CITES, MENTIONS and the Paper ids/titles, read with :meth:`GraphStore.query_arrow`.

    The store returns node codes (``paper_codes``, ``citation_codes``, ``mention_codes``): the
    embedded store's dense row offsets (``offset(id(n))``), so the 10M-row reads carry two int64
    columns and no string; Neo4j returns the keys, mapped to positions here.
    """
    table = store.query_arrow("paper_codes")
    if table.num_rows == 0:
        empty = np.empty(0, dtype=np.int64)
        return CocitationInput(pd.Index([], dtype="str"), pa.array([], pa.string()), empty, empty, empty, empty)
    ids = _single_chunk(table.column("id"))
    order = pc.sort_indices(ids).to_numpy()
    papers = pd.Index(ids.take(pa.array(order)).to_pandas(), name="id")
    titles = _single_chunk(table.column("title")).take(pa.array(order))
    codes = _single_chunk(table.column("code"))
    position = _positions_of(codes, order, papers)
    citations = store.query_arrow("citation_codes")
    mentions = store.query_arrow("mention_codes")
    citing = position(citations.column("citing")) if citations.num_rows else np.empty(0, dtype=np.int64)
    cited = position(citations.column("cited")) if citations.num_rows else np.empty(0, dtype=np.int64)
    if mentions.num_rows:
        sentence_codes = _single_chunk(mentions.column("sentence"))
        if pa.types.is_integer(sentence_codes.type):
            sentences = sentence_codes.to_numpy().astype(np.int64)
        else:
            sentences = pd.factorize(sentence_codes.to_pandas())[0].astype(np.int64)
        mentioned = position(mentions.column("cited"))
    else:
        sentences = mentioned = np.empty(0, dtype=np.int64)
    return CocitationInput(papers, titles, citing, cited, sentences, mentioned)


def _single_chunk(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _positions_of(codes: pa.Array, order: np.ndarray, papers: pd.Index) -> Any:
    """A function from a column of node codes to positions in ``papers`` (-1 for an unknown code)."""
    if pa.types.is_integer(codes.type):  # embedded: dense offsets, looked up in an array
        values = codes.to_numpy().astype(np.int64)
        lookup = np.full(int(values.max()) + 1 if len(values) else 0, -1, dtype=np.int64)
        lookup[values[order]] = np.arange(len(order), dtype=np.int64)

        def by_offset(column: pa.ChunkedArray) -> np.ndarray:
            wanted = _single_chunk(column).to_numpy().astype(np.int64)
            inside = (wanted >= 0) & (wanted < len(lookup))
            return np.where(inside, lookup[np.where(inside, wanted, 0)], -1)

        return by_offset

    def by_key(column: pa.ChunkedArray) -> np.ndarray:  # Neo4j: the codes are the keys
        return papers.get_indexer(pd.Index(_single_chunk(column).to_pandas())).astype(np.int64)

    return by_key


def cocitation_table(store: GraphStore, *, min_count: int = 1, device: str | None = None) -> pd.DataFrame:
    """The CO_CITED table computed from the store's CITES and MENTIONS, without writing anything."""
    cocite, sentence = count_cocitation(read_cocitation_input(store), device=select_device(device))
    return cocitation_edges(cocite, sentence, min_count=min_count)


def count_cocitation(
    data: CocitationInput, *, device: torch.device | str | None = None, engine: str = "esc"
) -> tuple[PairCounts, PairCounts]:
    """Paper-level and sentence-level co-citation counts, both indexed by the cited papers (sorted ids)."""
    cited_mask = np.bincount(data.cited[data.cited >= 0], minlength=len(data.papers)) > 0
    position = np.cumsum(cited_mask) - 1  # a paper's index among the cited ones
    ids = data.papers[cited_mask]

    def among_cited(papers: np.ndarray) -> np.ndarray:
        inside = papers >= 0
        found = np.where(inside, cited_mask[np.where(inside, papers, 0)], False)
        return np.where(found, position[np.where(found, papers, 0)], -1)

    known = data.citing >= 0
    cocite = count_pairs(data.citing[known], among_cited(data.cited[known]), ids, device=device, engine=engine)
    sentence = count_pairs(data.sentences, among_cited(data.mentioned), ids, device=device, engine=engine)
    return cocite, sentence


def coupling_table(store: GraphStore, *, min_count: int = 1, device: str | None = None) -> pd.DataFrame:
    r"""Bibliographic coupling of citing papers, :math:`B = A A^\top`, with the same normalisations.

    One row per unordered pair of citing papers sharing at least ``min_count`` references:
    ``source``, ``target`` (ids, source < target), ``count`` (shared references), ``association``,
    ``cosine``, ``jaccard``, ``inclusion``, where :math:`s_k` is the number of references of
    :math:`k` and :math:`N` the number of cited papers. Not stored in the graph (the schema has no
    edge type for it); write it with pandas or export it with :func:`gnn.cocitation.export.export_coupling`.
    """
    citations = read_citations(store)
    coupling = cooccurrence(citations["cited_id"], citations["citing_id"], device=select_device(device))
    table = pd.concat([coupling.frame(), normalised_strengths(coupling)], axis=1)
    return table[table["count"] >= min_count].reset_index(drop=True)


# the compute step ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CocitationReport:
    """What :func:`compute_cocitation` computed and wrote."""

    citations: int  # distinct CITES pairs read
    citing_papers: int  # papers with at least one reference (N of association strength)
    cited_papers: int  # papers cited at least once
    pairs: int  # co-cited pairs (count >= 1)
    edges: int  # CO_CITED edges written (count >= min_count)
    sentence_pairs: int  # CO_CITED edges with sentence_count >= 1
    papers_written: int  # Paper nodes whose co-citation properties were (re)written
    clusters: tuple[ClusterLabel, ...]  # clusters by size, with their labels
    quality: ClusteringQuality  # modularity and silhouette of the clusters (gnn.cocitation.quality)
    clusters_path: Path | None  # where the cluster labels were written (None: not written)
    device: str  # where the sparse products ran
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per stage

    def summary(self) -> str:
        lines = [
            f"co-citation on {self.device}: {self.citations} citations from {self.citing_papers} papers "
            f"to {self.cited_papers} papers",
            f"  {self.pairs} co-cited pairs, {self.edges} CO_CITED edges written "
            f"({self.sentence_pairs} also co-cited within one sentence)",
            f"  {self.papers_written} papers updated; {len(self.clusters)} clusters"
            + (f", labels in {self.clusters_path}" if self.clusters_path else ""),
            f"  modularity Q {self.quality.modularity:.3f}, mean silhouette "
            + (f"{self.quality.silhouette:.3f}" if self.quality.silhouette is not None else "n/a (one cluster)")
            + f" ({self.quality.nodes} works, {self.quality.links} links)",
        ]
        lines += [
            f"    {c.cluster:>4}  {c.size:>5} papers  silhouette {_fmt(c.silhouette)}  {c.label}"
            for c in self.clusters[:10]
        ]
        lines.append("  " + ", ".join(f"{stage} {s:.2f}s" for stage, s in self.seconds.items()))
        return "\n".join(lines)


def compute_cocitation(
    store: GraphStore, settings: CocitationSettings | None = None, *, clusters_path: Path | None = None
) -> CocitationReport:
    """Compute co-citation counts, strengths, noise distributions and clusters; write them back.

    Last, for an embedded store, the basis the counts were made from (:mod:`gnn.cocitation.basis`,
    ``<db>.cocitation/``), from which ``citegraph update`` (:mod:`gnn.cocitation.delta`) brings them up to date.

    Writes CO_CITED (replacing every existing edge of the type) and, on every Paper, ``n_cited``,
    ``negative_weight``, ``cocite_partners``, ``cocite_probs``, ``cocite_tail`` and
    ``cocite_cluster`` (null where a paper has no co-citation). ``settings.min_count`` selects the
    CO_CITED edges; the Leiden clusters run on each paper's ``cluster_top_k`` strongest of those
    edges (:func:`gnn.cocitation.clusters.prune_pairs`); the noise distributions use every co-cited pair.
    The reads are Arrow (:func:`read_cocitation_input`), the counts ESC products on integer codes.
    Cluster labels go to ``clusters_path``, by default ``<store path>.clusters.json`` for the
    embedded store (``graph.files.StoreFiles.clusters``); a store without a file path (Neo4j)
    writes them only when ``clusters_path`` is given.
    """
    settings = settings or CocitationSettings()
    device = select_device(settings.device)
    with tqdm(total=7, desc="co-citation", unit="step", disable=None) as bar:
        stage = StageTimer(bar)
        seconds = stage.seconds
        with stage("read"):
            data = read_cocitation_input(store)
        with stage("count"):
            cocite, sentence = count_cocitation(data, device=device)
        with stage("strengths"):
            edges = cocitation_edges(cocite, sentence, min_count=settings.min_count)
        with stage("noise"):
            noise = noise_distributions(cocite, power=settings.power, device=device)
            partners = top_partners(noise, settings.top_m)
        with stage("cluster"):
            membership, quality = _clusters(noise, cocite, settings)
            labels = _labels(membership, data, cocite, settings, store)
            labels = citer_labels(
                labels,
                membership,
                data,
                store,
                settings.label_terms,
                settings.label_abstracts,
                settings.label_keywords,
            )
            labels = with_quality(labels, quality)
        with stage("write"):
            basis = basis_folder(store)
            # the basis no longer describes the store until it is written again below
            mark_pending(basis, "`compute cocitation` was writing its results and stopped half-way")
            sentence_pairs = int((edges["sentence_count"] > 0).sum())
            negative = noise.negative.cpu().numpy()
            del noise  # the full p(j|t) CSR (2 entries per pair): only its head (partners) is written
            written_edges = store.replace_edges("CO_CITED", edges)
            del edges  # at 45.6M pairs several GiB; the Paper write below needs the room (1M/10M benchmark)
            papers = _paper_frame(data.papers, cocite, negative, partners, membership)
            written_papers = store.write_node_properties("Paper", "id", papers)
        with stage("labels"):
            path = clusters_path if clusters_path is not None else StoreFiles.of(store).clusters
            if path is not None:
                write_cluster_labels(path, labels, settings=_settings_record(settings), quality=quality.as_dict())
            else:
                log.info("cluster labels not written: %s has no file path; pass clusters_path", store.describe())
        if basis is not None:  # what these counts were made from, for `citegraph update` (gnn.cocitation.delta)
            state = CitationState.of(data.papers, data.citing, data.cited, read_mentions(store))
            write_basis(basis, state, settings, full=True)

    report = CocitationReport(
        citations=int(cocite.occurrences.sum()),  # distinct (citing, cited) pairs: each adds 1 to s_cited
        citing_papers=cocite.n_members,
        cited_papers=len(cocite.ids),
        pairs=len(cocite),
        edges=written_edges,
        sentence_pairs=sentence_pairs,
        papers_written=written_papers,
        clusters=tuple(labels),
        quality=quality,
        clusters_path=path,
        device=str(device),
        seconds=seconds,
    )
    log.debug("%s", report.summary())  # the caller prints it (the CLI does)
    return report


def _clusters(
    noise: NoiseDistributions, cocite: PairCounts, settings: CocitationSettings
) -> tuple[pd.Series, ClusteringQuality]:
    """Leiden clusters of the pruned co-citation graph (:func:`gnn.cocitation.clusters.prune_pairs`), by paper id,
    and their modularity (link weight: co-citation count) and silhouette (similarity: cosine) on that graph."""
    indptr = noise.indptr.numpy()
    n = len(noise.ids)
    lengths = np.diff(indptr)
    rows = np.repeat(np.arange(n), lengths)
    partners = noise.partners.numpy()
    if settings.cluster_top_k > 0:  # cut to each row's head first: the count lookup below is then small
        head = np.arange(len(rows)) - np.repeat(indptr[:-1], lengths) < settings.cluster_top_k
        rows, partners = rows[head], partners[head]
    # The CSR rows hold p(j|t) in descending order; their counts come from the pair table.
    lo, hi = np.minimum(rows, partners), np.maximum(rows, partners)
    at = np.searchsorted(cocite.i * n + cocite.j, lo * n + hi)  # pairs are sorted by (i, j)
    freq = cocite.count[at] if len(at) else np.empty(0, dtype=np.int64)
    i, j, weight = prune_pairs(
        rows,
        partners,
        freq,
        n,
        top_k=0,  # rows are already cut to their top_k
        min_count=max(settings.min_count, settings.cluster_min_count),  # links are CO_CITED edges
    )
    membership = leiden_membership(i, j, weight, n, resolution=settings.resolution, seed=settings.seed)
    linked = membership >= 0
    series = pd.Series(membership[linked], index=noise.ids[linked], dtype="int64", name="cocite_cluster")
    series.index.name = "id"
    s = cocite.occurrences.astype(np.float64)  # s_i: citing papers of each work (noise.ids are cocite.ids)
    cosine = weight / np.sqrt(s[i] * s[j])  # Salton's cosine of each link: the silhouette's similarity
    quality = clustering_quality(i, j, weight, cosine, membership, resolution=settings.resolution)
    return series, quality


def _labels(
    membership: pd.Series, data: CocitationInput, cocite: PairCounts, settings: CocitationSettings, store: GraphStore
) -> list[ClusterLabel]:
    """c-TF-IDF labels of the clusters from the titles of their papers (:func:`gnn.cocitation.clusters.label_clusters`);
    clusters of title-less stubs from their citers' titles or their members' labels (``label_bare_clusters``)."""
    clustered = membership.index
    titles = data.titles.take(pa.array(data.papers.get_indexer(clustered))).to_pandas().to_numpy()
    labels = label_clusters(
        membership,
        pd.Series(titles, index=clustered),
        popularity=pd.Series(cocite.occurrences, index=cocite.ids),
        top_k=settings.label_terms,
    )
    bare = {label.cluster for label in labels if not label.terms}
    if not bare:
        return labels
    members = membership.index[membership.isin(bare).to_numpy()]
    inside = np.isin(data.cited, data.papers.get_indexer(members))  # citations into a bare cluster only
    citing, cited = data.citing[inside], data.cited[inside]
    citing_titles: dict[str, list[str]] = {}
    for paper, title in zip(data.papers[cited], data.titles.take(pa.array(citing)).to_pylist()):
        if title:
            citing_titles.setdefault(str(paper), []).append(title)
    top = sorted({p for label in labels if label.cluster in bare for p in label.papers})
    rows = complete_labels(store.query("cocitation_nodes", {"ids": top}), store.query)
    member_labels = {row["id"]: row["label"] for row in rows}
    return label_bare_clusters(
        labels, membership, citing_titles=citing_titles, member_labels=member_labels, top_k=settings.label_terms
    )


def read_texts(store: GraphStore, papers: pd.Index, *, abstracts: bool = True) -> list[str]:
    """The text of every paper of ``papers`` (sorted ids): title plus, with ``abstracts``, abstract (Arrow read)."""
    table = store.query_arrow("paper_texts")
    titles: list[str | None] = [None] * len(papers)
    bodies: list[str | None] = [None] * len(papers)
    if table.num_rows:
        at = papers.get_indexer(pd.Index(table.column("id").to_pandas()))
        title_column = table.column("title").to_pylist()
        abstract_column = table.column("abstract").to_pylist() if abstracts else [None] * table.num_rows
        for k, title, abstract in zip(at.tolist(), title_column, abstract_column):
            if k >= 0:
                titles[k], bodies[k] = title, abstract
    return texts_of(titles, bodies if abstracts else None)


def read_keywords(store: GraphStore, papers: pd.Index, wanted: np.ndarray) -> list[list[str]]:
    """The keywords (``HAS_KEYWORD``, every kind) of the papers at positions ``wanted`` of ``papers`` (sorted ids),
    one list per position, each keyword as its normalised term (the part of ``Keyword.id`` after ``<kind>:``),
    so an author keyword and a Keywords Plus term of one spelling are one term; empty lists for papers without."""
    table = store.query_arrow("keyword_uses")
    out: list[list[str]] = [[] for _ in range(len(wanted))]
    if table.num_rows == 0 or len(wanted) == 0:
        return out
    slot = np.full(len(papers), -1, dtype=np.int64)
    slot[wanted] = np.arange(len(wanted))
    at = papers.get_indexer(pd.Index(table.column("paper").to_pandas()))
    row = np.where(at >= 0, slot[np.maximum(at, 0)], -1)
    keep = np.flatnonzero(row >= 0)
    keywords = table.column("keyword").take(pa.array(keep)).to_pylist()
    for k, keyword in zip(row[keep].tolist(), keywords):
        if isinstance(keyword, str):
            out[k].append(keyword.split(":", 1)[-1])
    return out


def citer_labels(
    labels: list[ClusterLabel],
    membership: pd.Series,
    data: CocitationInput,
    store: GraphStore,
    top_k: int,
    abstracts: bool = True,
    keywords: bool = True,
) -> list[ClusterLabel]:
    """``labels`` with their LLR and c-TF-IDF terms from the papers citing each cluster's members.

    A cluster's documents are the papers citing at least one member (each once); their titles and abstracts
    give the candidate terms (:func:`gnn.cocitation.terms.candidate_terms`) and, with ``keywords``, their
    keywords give whole terms (:func:`read_keywords`), ranked against the other clusters' citing papers
    (:func:`gnn.cocitation.terms.rank_labels`, CiteSpace's labelling from titles, keywords and abstracts).
    Only the citing papers' texts are tokenised.
    """
    if not labels:
        return labels
    cluster_of = np.full(len(data.papers), -1, dtype=np.int64)
    cluster_of[data.papers.get_indexer(membership.index)] = membership.to_numpy()
    known = (data.citing >= 0) & (data.cited >= 0)
    cluster = cluster_of[data.cited[known]]
    citing = data.citing[known][cluster >= 0]
    cluster = cluster[cluster >= 0]
    citers, document = np.unique(citing, return_inverse=True)
    texts = read_texts(store, data.papers, abstracts=abstracts)
    own = read_keywords(store, data.papers, citers) if keywords else None
    doc_terms, terms = term_matrix([texts[k] for k in citers.tolist()], keywords=own)
    n_clusters = max(label.cluster for label in labels) + 1
    llr, ctf = rank_labels(class_term_counts(cluster, document, doc_terms, n_clusters), terms, top_k)
    return [replace(label, llr_terms=llr[label.cluster], ctfidf_terms=ctf[label.cluster]) for label in labels]


def with_quality(labels: list[ClusterLabel], quality: ClusteringQuality) -> list[ClusterLabel]:
    """``labels`` with each cluster's silhouette and modularity term (None where it has none)."""
    out = []
    for label in labels:
        c = label.cluster
        silhouette = quality.cluster_silhouette[c] if c < len(quality.cluster_silhouette) else np.nan
        q = quality.cluster_modularity[c] if c < len(quality.cluster_modularity) else np.nan
        out.append(
            replace(
                label,
                silhouette=None if np.isnan(silhouette) else round(float(silhouette), 6),
                modularity=None if np.isnan(q) else round(float(q), 6),
            )
        )
    return out


def _fmt(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.2f}"


def _paper_frame(
    paper_ids: pd.Index,
    cocite: PairCounts,
    negative: np.ndarray,
    partners: pd.DataFrame,
    membership: pd.Series,
) -> pd.DataFrame:
    """One row per Paper: every co-citation property, nulls where a paper has none (they overwrite old values).

    ``paper_ids`` and ``cocite.ids`` are sorted, so rows are matched by position, not by hashing ids.
    """
    at = cocite.ids.get_indexer(paper_ids)
    cited = at >= 0
    n_cited = np.where(cited, cocite.occurrences[np.maximum(at, 0)] if len(cocite.ids) else 0, 0)
    negative_weight = np.where(cited, negative[np.maximum(at, 0)] if len(negative) else 0.0, 0.0)
    row = pd.Index(partners["id"]).get_indexer(paper_ids)  # -1: the paper has no partner
    missing = row < 0
    take = pa.array(row, mask=missing)
    tail = partners["cocite_tail"].to_numpy(dtype=np.float64)
    return pd.DataFrame(
        {
            "id": paper_ids.array,
            "n_cited": n_cited.astype(np.int64),
            "negative_weight": negative_weight,
            "cocite_partners": _take(partners["cocite_partners"], take),
            "cocite_probs": _take(partners["cocite_probs"], take),
            "cocite_tail": np.where(missing, np.nan, tail[np.maximum(row, 0)] if len(tail) else np.nan),
            "cocite_cluster": membership.reindex(paper_ids).astype("Int64").to_numpy(),
        }
    )


def _take(column: pd.Series, rows: pa.Array) -> pd.arrays.ArrowExtensionArray:
    """Rows of an Arrow-backed column (``pd.ArrowDtype``), null where ``rows`` is null; stays Arrow."""
    return pd.arrays.ArrowExtensionArray(_single_chunk(pa.array(column.array)).take(rows))


def _settings_record(settings: CocitationSettings) -> dict[str, Any]:
    return {
        "min_count": settings.min_count,
        "resolution": settings.resolution,
        "seed": settings.seed,
        "cluster_top_k": settings.cluster_top_k,
        "cluster_min_count": settings.cluster_min_count,
        "label_terms": settings.label_terms,
        "label_abstracts": settings.label_abstracts,
        "label_keywords": settings.label_keywords,
    }


__all__ = [
    "MEASURES",
    "CocitationInput",
    "CocitationReport",
    "CocitationSettings",
    "citer_labels",
    "cocitation_edges",
    "cocitation_table",
    "compute_cocitation",
    "count_cocitation",
    "coupling_table",
    "read_citations",
    "read_cocitation_input",
    "read_keywords",
    "read_mentions",
    "read_texts",
    "with_quality",
]
