r"""Co-citation, sentence-level co-citation and bibliographic coupling, with normalised strengths.

Let :math:`A \in \{0, 1\}^{m \times n}` be the citation incidence matrix: :math:`A_{ki} = 1` when
paper :math:`k` cites paper :math:`i` (``(k)-[:CITES]->(i)``). Then

.. math::
    C = A^\top A \qquad\qquad B = A A^\top

:math:`C_{ij}` (:math:`i \neq j`) counts the papers citing both :math:`i` and :math:`j`, their
co-citation count (Small, 1973, JASIS 24(4)); the diagonal :math:`C_{ii} = s_i` is the number of
papers citing :math:`i`. :math:`B_{kl}` counts the references papers :math:`k` and :math:`l` share,
their bibliographic coupling (Kessler, 1963, American Documentation 14(1)). With the incidence of
citing sentences :math:`M` (sentence × cited paper, from ``(Sentence)-[:MENTIONS]->(Paper)``),
:math:`S = M^\top M` counts co-citation within one sentence: a finer, stronger signal than
co-citation anywhere in a paper (Gipp & Beel, 2009, "Citation proximity analysis"). It counts
sentences, not papers: a paper that co-cites a pair in two sentences adds 2, so a pair's
``sentence_count`` can exceed its ``count``.

The products run as torch sparse matrix products on the selected device (CUDA when present,
:func:`gnn.device.select_device`); :func:`cooccurrence` with ``engine="scipy"`` computes the same
integers with SciPy on the CPU, and the tests hold the two paths to exact equality.

:func:`compute_cocitation` is the compute step: it reads CITES and MENTIONS from the store, writes
``CO_CITED {count, sentence_count, association, cosine, jaccard, inclusion}`` (one edge per
unordered pair, source id < target id) and, on every Paper, ``n_cited``, the noise distributions
of :mod:`gnn.noise` (``cocite_partners``, ``cocite_probs``, ``cocite_tail``, ``negative_weight``)
and the Louvain cluster of :mod:`gnn.clusters` (``cocite_cluster``). Re-running replaces, never
duplicates. Bibliographic coupling has no edge type; :func:`coupling_table` computes it on demand.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from numpy.typing import ArrayLike
from tqdm import tqdm

from gnn.clusters import ClusterLabel, cluster_labels_path, label_clusters, louvain_clusters, write_cluster_labels
from gnn.device import select_device
from gnn.noise import noise_distributions, top_partners
from graph.errors import ConfigError
from graph.store import GraphStore

log = logging.getLogger(__name__)

ENGINES = ("torch", "scipy")
MEASURES = ("count", "sentence_count", "association", "cosine", "jaccard", "inclusion")


@dataclass(frozen=True)
class CocitationSettings:
    """Settings of ``citegraph compute cocitation``."""

    # A pair becomes a CO_CITED edge (and a link of the cluster graph) when at least this many papers
    # cite both. 1 keeps every pair; raise it on large corpora, where most pairs are co-cited once.
    min_count: int = 1
    # Partners kept per paper in cocite_partners/cocite_probs (the top of p(j|t)); the probability of
    # the rest is stored as cocite_tail, so a reader knows how much of the distribution it lacks.
    top_m: int = 32
    # Exponent α of both noise distributions, freq^α (MP-BERT4CR eq. 1-2, word2vec's 3/4). Below 1 it
    # flattens the distributions, moving probability towards rare pairs and rarely cited papers.
    power: float = 0.75
    # Louvain resolution γ: above 1 gives more, smaller clusters; below 1 fewer, larger ones.
    resolution: float = 1.0
    # Seed of Louvain's random node order: the same seed on the same graph gives the same clusters.
    seed: int = 0
    # "cpu", "cuda", "cuda:N", or None for CUDA when available. The counts are exact integers either way.
    device: str | None = None
    # Terms per cluster label (c-TF-IDF over titles, gnn.clusters.label_clusters).
    label_terms: int = 5

    def __post_init__(self) -> None:
        if self.min_count < 1:
            raise ConfigError(f"min_count is {self.min_count}; a co-citation count is at least 1 (default 1)")
        if self.top_m < 1:
            raise ConfigError(f"top_m is {self.top_m}; keep at least one partner per paper (default 32)")
        if not 0.0 <= self.power <= 1.0:
            raise ConfigError(f"power is {self.power}; use a value in [0, 1] (default 0.75, MP-BERT4CR's 3/4)")
        if self.resolution <= 0:
            raise ConfigError(f"resolution is {self.resolution}; Louvain needs a positive resolution (default 1.0)")
        if self.label_terms < 1:
            raise ConfigError(f"label_terms is {self.label_terms}; a label needs at least one term (default 5)")


@dataclass(frozen=True)
class PairCounts:
    r"""A symmetric co-occurrence matrix :math:`X = B^\top B` as its strict upper triangle and its diagonal.

    Row and column ``k`` stand for ``ids[k]``; ``ids`` is sorted, so ``i < j`` means ``ids[i] < ids[j]``.
    Pairs are ordered by ``(i, j)``.
    """

    ids: pd.Index  # item id of each index, sorted ascending
    i: np.ndarray  # int64 [nnz]: first item of each pair
    j: np.ndarray  # int64 [nnz]: second item, i < j
    count: np.ndarray  # int64 [nnz]: X_ij, members containing both
    occurrences: np.ndarray  # int64 [n]: X_ii = s_i, members containing the item
    n_members: int  # members with at least one item: the N of association strength

    def __len__(self) -> int:
        return len(self.count)

    def frame(self) -> pd.DataFrame:
        """``source``, ``target`` (ids, source < target) and ``count``."""
        return pd.DataFrame({"source": self.ids[self.i], "target": self.ids[self.j], "count": self.count})


# normalised strengths --------------------------------------------------------------------------


def association_strength(count: ArrayLike, s_i: ArrayLike, s_j: ArrayLike, *, total: int) -> np.ndarray:
    r"""Association strength, scaled so that it reads as observed over expected co-occurrences.

    .. math::
        \mathrm{AS}_{ij} = \frac{N \, c_{ij}}{s_i \, s_j}

    van Eck & Waltman (2009), "How to normalize cooccurrence data? An analysis of some well-known
    similarity measures", JASIST 60(8): :math:`c_{ij} / (s_i s_j)` is proportional to the ratio of
    the observed co-occurrences to those expected if :math:`i` and :math:`j` occurred independently,
    :math:`s_i s_j / N` with :math:`N` documents (here: citing papers). Multiplying by
    ``total`` :math:`= N` makes the ratio explicit: 1 is chance, above 1 more often co-cited than
    chance. Unlike cosine it does not favour pairs of highly cited papers. VOSviewer's own variant
    divides by total link strengths instead of :math:`s_i`; bibliometrix's ``association`` is the
    unscaled :math:`c_{ij}/(s_i s_j)`.
    """
    c, si, sj = _floats(count, s_i, s_j)
    return total * c / (si * sj)


def salton_cosine(count: ArrayLike, s_i: ArrayLike, s_j: ArrayLike) -> np.ndarray:
    r"""Salton's cosine.

    .. math::
        \cos_{ij} = \frac{c_{ij}}{\sqrt{s_i \, s_j}}

    Salton & McGill (1983), *Introduction to Modern Information Retrieval*; the cosine of the two
    papers' binary citing vectors (columns of :math:`A`). In [0, 1].
    """
    c, si, sj = _floats(count, s_i, s_j)
    return c / np.sqrt(si * sj)


def jaccard_index(count: ArrayLike, s_i: ArrayLike, s_j: ArrayLike) -> np.ndarray:
    r"""Jaccard index: papers citing both over papers citing either.

    .. math::
        J_{ij} = \frac{c_{ij}}{s_i + s_j - c_{ij}}

    Jaccard (1901); as a co-occurrence normalisation see van Eck & Waltman (2009). In [0, 1].
    """
    c, si, sj = _floats(count, s_i, s_j)
    return c / (si + sj - c)


def inclusion_index(count: ArrayLike, s_i: ArrayLike, s_j: ArrayLike) -> np.ndarray:
    r"""Inclusion index: how far the less cited paper's citers are contained in the other's.

    .. math::
        I_{ij} = \frac{c_{ij}}{\min(s_i, s_j)}

    The inclusion index of co-word analysis (Callon, Courtial & Laville, 1991, Scientometrics 22(1);
    also called the overlap or Simpson coefficient), compared in van Eck & Waltman (2009) and
    offered by bibliometrix's ``normalizeSimilarity(type = "inclusion")``. In [0, 1]; 1 when every
    paper citing the less cited one also cites the other.
    """
    c, si, sj = _floats(count, s_i, s_j)
    return c / np.minimum(si, sj)


def normalised_strengths(pairs: PairCounts) -> pd.DataFrame:
    """``association``, ``cosine``, ``jaccard`` and ``inclusion`` for every pair, ``s`` = ``pairs.occurrences``."""
    s_i, s_j = pairs.occurrences[pairs.i], pairs.occurrences[pairs.j]
    return pd.DataFrame(
        {
            "association": association_strength(pairs.count, s_i, s_j, total=pairs.n_members),
            "cosine": salton_cosine(pairs.count, s_i, s_j),
            "jaccard": jaccard_index(pairs.count, s_i, s_j),
            "inclusion": inclusion_index(pairs.count, s_i, s_j),
        }
    )


def _floats(*arrays: ArrayLike) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(a, dtype=np.float64) for a in arrays)


# counts ----------------------------------------------------------------------------------------


def cooccurrence(
    members: ArrayLike,
    items: ArrayLike,
    *,
    ids: pd.Index | None = None,
    device: torch.device | str | None = None,
    engine: str = "torch",
) -> PairCounts:
    r"""Pairs of items that occur in the same member, counted over members: :math:`X = B^\top B`.

    ``members[k]`` contains ``items[k]`` (both ids, any hashable); :math:`B` is the binary member ×
    item incidence, so a repeated ``(member, item)`` row counts once. Co-citation is
    ``cooccurrence(citing, cited)``, bibliographic coupling ``cooccurrence(cited, citing)``,
    sentence-level co-citation ``cooccurrence(sentence, cited)``.

    Args:
        ids: the items to index by (sorted here); items outside it are dropped. Default: the
            distinct items, sorted. Pass another count's ``ids`` to put two counts in one index.
        device: where the torch product runs (default: CUDA when available).
        engine: ``"torch"`` (sparse COO product on ``device``) or ``"scipy"`` (CSR product on the
            CPU); both give the same integers.
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine {engine!r} is not one of {ENGINES}")
    member_codes, _ = pd.factorize(_series(members))
    item_values = _series(items)
    if ids is None:
        item_codes, uniques = pd.factorize(item_values, sort=True)
        index = pd.Index(uniques)
    else:
        index = pd.Index(ids).sort_values()
        item_codes = index.get_indexer(item_values)
        kept = item_codes >= 0
        if not kept.all():
            log.info("cooccurrence: %d rows name items outside the index; dropped", int((~kept).sum()))
        member_codes, item_codes = member_codes[kept], item_codes[kept]
    n_items = len(index)
    # One int64 code per (member, item): unique() on it deduplicates far faster than on row pairs.
    codes = _sorted_unique(member_codes.astype(np.int64) * max(n_items, 1) + item_codes.astype(np.int64))
    rows, cols = codes // max(n_items, 1), codes % max(n_items, 1)  # rows ascending
    occurrences = np.bincount(cols, minlength=n_items).astype(np.int64)  # X_ii = s_i
    n_members = int(len(rows) > 0) + int(np.count_nonzero(rows[1:] != rows[:-1]))
    if engine == "torch":
        i, j, count = _gram_upper_torch(rows, cols, n_items, select_device(None) if device is None else device)
    else:
        i, j, count = _gram_upper_scipy(rows, cols, n_items)
    pair_codes = i * n_items + j
    if len(pair_codes) > 1 and not (pair_codes[1:] > pair_codes[:-1]).all():  # torch's coalesced output already is
        order = np.argsort(pair_codes, kind="stable")
        i, j, count = i[order], j[order], count[order]
    return PairCounts(index, i, j, count, occurrences, n_members)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting: for tens of millions of int64 codes faster than its hash table."""
    values = np.sort(values)
    if len(values) < 2:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _series(values: ArrayLike) -> pd.Series:
    """Ids as a Series without a detour through Python objects (pandas factorizes typed arrays fast)."""
    if isinstance(values, pd.Series):
        return values
    if isinstance(values, pd.Index):
        return values.to_series(index=None)
    return pd.Series(np.asarray(values))


def _gram_upper_torch(
    rows: np.ndarray, cols: np.ndarray, n_items: int, device: torch.device | str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strict upper triangle of BᵀB with torch sparse tensors (COO × COO; cuSPARSE on CUDA)."""
    if len(rows) == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    n_members = int(rows.max()) + 1
    index = torch.from_numpy(np.stack([rows, cols])).to(device)  # [2, nnz]
    # float64 holds every integer up to 2^53 exactly, so the counts are exact; CUDA has no integer SpGEMM.
    values = torch.ones(index.shape[1], dtype=torch.float64, device=device)
    # rows/cols come sorted and unique from cooccurrence(), so the tensor is coalesced as built
    incidence = torch.sparse_coo_tensor(index, values, (n_members, n_items), check_invariants=True, is_coalesced=True)
    with warnings.catch_warnings():  # torch routes COO @ COO through CSR and warns that CSR is "beta"
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
        gram = torch.sparse.mm(incidence.t().coalesce(), incidence).coalesce()  # [n_items, n_items]
    i, j = gram.indices()
    upper = i < j  # the matrix is symmetric: keep each unordered pair once, and no diagonal
    count = gram.values()[upper].round().to(torch.int64)
    return i[upper].cpu().numpy(), j[upper].cpu().numpy(), count.cpu().numpy()


def _gram_upper_scipy(rows: np.ndarray, cols: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strict upper triangle of BᵀB with SciPy (CSR × CSC, int64)."""
    n_members = int(rows.max()) + 1 if len(rows) else 0
    incidence = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(n_members, n_items), dtype=np.int64
    )
    gram = sp.triu(incidence.T @ incidence, k=1).tocoo()
    return gram.row.astype(np.int64), gram.col.astype(np.int64), gram.data.astype(np.int64)


# tables ----------------------------------------------------------------------------------------


def cocitation_edges(cocitation: PairCounts, sentence: PairCounts | None = None, *, min_count: int = 1) -> pd.DataFrame:
    """The CO_CITED table: one row per pair with ``count >= min_count``, source id < target id.

    ``sentence`` must share ``cocitation.ids`` (:func:`cooccurrence` with ``ids=``); pairs never
    co-cited in one sentence get ``sentence_count`` 0.
    """
    table = pd.concat([cocitation.frame(), normalised_strengths(cocitation)], axis=1)
    table["sentence_count"] = 0
    if sentence is not None and len(sentence):
        if not sentence.ids.equals(cocitation.ids):
            raise ValueError("sentence-level counts must be indexed like the co-citation counts (pass ids=)")
        codes = cocitation.i * len(cocitation.ids) + cocitation.j  # ascending: pairs are sorted by (i, j)
        sentence_codes = sentence.i * len(sentence.ids) + sentence.j
        at = np.searchsorted(codes, sentence_codes)
        found = (at < len(codes)) & (codes[np.minimum(at, len(codes) - 1)] == sentence_codes) if len(codes) else at < 0
        counts = np.zeros(len(codes), dtype=np.int64)
        counts[at[found]] = sentence.count[found]
        table["sentence_count"] = counts
        if not found.all():  # a sentence's paper that lacks the CITES edge: reported, not invented
            log.warning("%d sentence-level pairs have no paper-level co-citation; left out", int((~found).sum()))
    table = table[table["count"] >= min_count]
    return table[["source", "target", *MEASURES]].reset_index(drop=True)


def read_citations(store: GraphStore) -> pd.DataFrame:
    """Every CITES edge as ``citing_id``, ``cited_id``."""
    return pd.DataFrame.from_records(store.query("citation_pairs"), columns=["citing_id", "cited_id"])


def read_mentions(store: GraphStore) -> pd.DataFrame:
    """Every MENTIONS edge as ``sentence_id``, ``cited_id``."""
    return pd.DataFrame.from_records(store.query("sentence_mentions"), columns=["sentence_id", "cited_id"])


def cocitation_table(store: GraphStore, *, min_count: int = 1, device: str | None = None) -> pd.DataFrame:
    """The CO_CITED table computed from the store's CITES and MENTIONS, without writing anything."""
    torch_device = select_device(device)
    citations, mentions = read_citations(store), read_mentions(store)
    cocite = cooccurrence(citations["citing_id"], citations["cited_id"], device=torch_device)
    sentence = cooccurrence(mentions["sentence_id"], mentions["cited_id"], ids=cocite.ids, device=torch_device)
    return cocitation_edges(cocite, sentence, min_count=min_count)


def coupling_table(store: GraphStore, *, min_count: int = 1, device: str | None = None) -> pd.DataFrame:
    r"""Bibliographic coupling of citing papers, :math:`B = A A^\top`, with the same normalisations.

    One row per unordered pair of citing papers sharing at least ``min_count`` references:
    ``source``, ``target`` (ids, source < target), ``count`` (shared references), ``association``,
    ``cosine``, ``jaccard``, ``inclusion``, where :math:`s_k` is the number of references of
    :math:`k` and :math:`N` the number of cited papers. Not stored in the graph (the schema has no
    edge type for it); write it with pandas or export it with :func:`gnn.export.export_coupling`.
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
        ]
        lines += [f"    {c.cluster:>4}  {c.size:>5} papers  {c.label}" for c in self.clusters[:10]]
        lines.append("  " + ", ".join(f"{stage} {s:.2f}s" for stage, s in self.seconds.items()))
        return "\n".join(lines)


def compute_cocitation(
    store: GraphStore, settings: CocitationSettings | None = None, *, clusters_path: Path | None = None
) -> CocitationReport:
    """Compute co-citation counts, strengths, noise distributions and clusters; write them back.

    Writes CO_CITED (replacing every existing edge of the type) and, on every Paper, ``n_cited``,
    ``negative_weight``, ``cocite_partners``, ``cocite_probs``, ``cocite_tail`` and
    ``cocite_cluster`` (null where a paper has no co-citation). ``settings.min_count`` selects the
    CO_CITED edges and the graph Louvain clusters; the noise distributions use every co-cited pair.
    Cluster labels go to ``clusters_path``, by default ``<store path>.clusters.json`` for the
    embedded store (:func:`gnn.clusters.cluster_labels_path`); a store without a file path (Neo4j)
    writes them only when ``clusters_path`` is given.
    """
    settings = settings or CocitationSettings()
    device = select_device(settings.device)
    seconds: dict[str, float] = {}

    @contextmanager
    def stage(name: str, bar: tqdm) -> Iterator[None]:
        bar.set_postfix_str(name)
        started = time.perf_counter()
        yield
        seconds[name] = time.perf_counter() - started
        bar.update()

    with tqdm(total=6, desc="co-citation", unit="step", disable=None) as bar:
        with stage("read", bar):
            citations, mentions = read_citations(store), read_mentions(store)
            paper_ids = pd.Index(pd.DataFrame.from_records(store.query("paper_ids"), columns=["id"])["id"])
        with stage("count", bar):
            cocite = cooccurrence(citations["citing_id"], citations["cited_id"], device=device)
            sentence = cooccurrence(mentions["sentence_id"], mentions["cited_id"], ids=cocite.ids, device=device)
            edges = cocitation_edges(cocite, sentence, min_count=settings.min_count)
        with stage("noise", bar):
            noise = noise_distributions(cocite, power=settings.power, device=device)
            partners = top_partners(noise, settings.top_m)
        with stage("cluster", bar):
            membership = louvain_clusters(edges, resolution=settings.resolution, seed=settings.seed)
            titles = _titles(store, membership.index.tolist())
            labels = label_clusters(
                membership,
                titles,
                popularity=pd.Series(cocite.occurrences, index=cocite.ids),
                top_k=settings.label_terms,
            )
        with stage("write", bar):
            written_edges = store.replace_edges("CO_CITED", edges)
            papers = _paper_frame(paper_ids, cocite, noise.negative.cpu().numpy(), partners, membership)
            written_papers = store.write_node_properties("Paper", "id", papers)
        with stage("labels", bar):
            path = clusters_path if clusters_path is not None else cluster_labels_path(store)
            if path is not None:
                write_cluster_labels(path, labels, settings=_settings_record(settings))
            else:
                log.info("cluster labels not written: %s has no file path; pass clusters_path", store.describe())

    report = CocitationReport(
        citations=len(citations.drop_duplicates()),
        citing_papers=cocite.n_members,
        cited_papers=len(cocite.ids),
        pairs=len(cocite),
        edges=written_edges,
        sentence_pairs=int((edges["sentence_count"] > 0).sum()),
        papers_written=written_papers,
        clusters=tuple(labels),
        clusters_path=path,
        device=str(device),
        seconds=seconds,
    )
    log.info("%s", report.summary())
    return report


def _titles(store: GraphStore, ids: list[str]) -> pd.Series:
    rows = store.query("cocitation_nodes", {"ids": ids}) if ids else []
    frame = pd.DataFrame.from_records(rows, columns=["id", "title", "year", "n_cited", "cluster"])
    return frame.set_index("id")["title"]


def _paper_frame(
    paper_ids: pd.Index,
    cocite: PairCounts,
    negative: np.ndarray,
    partners: pd.DataFrame,
    membership: pd.Series,
) -> pd.DataFrame:
    """One row per Paper: every co-citation property, nulls where a paper has none (they overwrite old values)."""
    at = cocite.ids.get_indexer(paper_ids)
    cited = at >= 0
    n_cited = np.where(cited, cocite.occurrences[np.maximum(at, 0)], 0)
    negative_weight = np.where(cited, negative[np.maximum(at, 0)] if len(negative) else 0.0, 0.0)
    frame = pd.DataFrame({"id": paper_ids, "n_cited": n_cited.astype(np.int64), "negative_weight": negative_weight})
    frame = frame.merge(partners, on="id", how="left")
    frame["cocite_cluster"] = frame["id"].map(membership).astype("Int64")
    return frame


def _settings_record(settings: CocitationSettings) -> dict[str, Any]:
    return {
        "min_count": settings.min_count,
        "resolution": settings.resolution,
        "seed": settings.seed,
        "label_terms": settings.label_terms,
    }


__all__ = [
    "ENGINES",
    "MEASURES",
    "CocitationReport",
    "CocitationSettings",
    "PairCounts",
    "association_strength",
    "cocitation_edges",
    "cocitation_table",
    "compute_cocitation",
    "cooccurrence",
    "coupling_table",
    "inclusion_index",
    "jaccard_index",
    "normalised_strengths",
    "read_citations",
    "read_mentions",
    "salton_cosine",
]
