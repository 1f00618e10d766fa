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

Only the strict upper triangle of a product is needed (the matrices are symmetric; the diagonal
is :math:`s`). The default engine, ``"esc"``, computes exactly that by expand–sort–compress (the
ESC sparse product of Bell, Dalton & Olson, 2012, SIAM J. Sci. Comput. 34(4)): every member
:math:`k` with sorted items :math:`i_1 < \dots < i_{d_k}` *expands* into its
:math:`d_k (d_k - 1) / 2` pairs :math:`(i_a, i_b)`, :math:`a < b`, as int64 codes
:math:`i_a n + i_b`; the codes are *sorted*; equal codes *compress* into one pair with their
multiplicity, which is :math:`C_{i_a i_b} = \sum_k A_{k i_a} A_{k i_b}`. The work is
:math:`\sum_k d_k (d_k - 1)/2` (the (p, a, b) rows a Cypher pattern join produces) plus one sort;
it runs on NumPy on the CPU and on torch on CUDA (:func:`gnn.device.select_device`).
``engine="torch"`` (torch sparse COO product, full matrix) and ``engine="scipy"`` (SciPy CSR
product) compute the same integers, and the tests hold the three paths to exact equality.

:func:`compute_cocitation` is the compute step: it reads CITES and MENTIONS from the store, writes
``CO_CITED {count, sentence_count, association, cosine, jaccard, inclusion}`` (one edge per
unordered pair, source id < target id) and, on every Paper, ``n_cited``, the noise distributions
of :mod:`gnn.cocitation.noise` (``cocite_partners``, ``cocite_probs``, ``cocite_tail``, ``negative_weight``)
and the Leiden cluster of :mod:`gnn.cocitation.clusters` (``cocite_cluster``). Re-running replaces, never
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
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp
import torch
from numpy.typing import ArrayLike
from tqdm import tqdm

from gnn.cocitation.clusters import (
    ClusterLabel,
    cluster_labels_path,
    label_clusters,
    leiden_membership,
    prune_pairs,
    write_cluster_labels,
)
from gnn.cocitation.noise import NoiseDistributions, arrow_ids, noise_distributions, top_partners
from gnn.device import select_device
from graph.errors import ConfigError
from graph.store import GraphStore

log = logging.getLogger(__name__)

ENGINES = ("esc", "torch", "scipy")
# Pairs expanded at once by the ESC engine: bounds its transient index arrays (~3 × 8 bytes each).
ESC_CHUNK = 1 << 24
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
    # Leiden resolution γ: above 1 gives more, smaller clusters; below 1 fewer, larger ones.
    resolution: float = 1.0
    # Seed of Leiden's random node order: the same seed on the same graph gives the same clusters.
    seed: int = 0
    # The cluster graph keeps, for every paper, the links to its cluster_top_k strongest partners
    # (the head of cocite_partners); 0 keeps every pair. At 1M papers / 10M citations the full graph
    # has 45.6M pairs, 96.5% co-cited once; the top-10 graph keeps every co-cited paper with <= 10M links.
    cluster_top_k: int = 10
    # Pairs co-cited fewer times than this are no links of the cluster graph (they stay CO_CITED edges).
    # The cluster graph is always a subgraph of the CO_CITED edges: the larger of this and min_count applies.
    cluster_min_count: int = 1
    # "cpu", "cuda", "cuda:N", or None for CUDA when available. The counts are exact integers either way.
    device: str | None = None
    # Terms per cluster label (c-TF-IDF over titles, gnn.cocitation.clusters.label_clusters).
    label_terms: int = 5

    def __post_init__(self) -> None:
        if self.min_count < 1:
            raise ConfigError(f"min_count is {self.min_count}; a co-citation count is at least 1 (default 1)")
        if self.top_m < 1:
            raise ConfigError(f"top_m is {self.top_m}; keep at least one partner per paper (default 32)")
        if not 0.0 <= self.power <= 1.0:
            raise ConfigError(f"power is {self.power}; use a value in [0, 1] (default 0.75, MP-BERT4CR's 3/4)")
        if self.resolution <= 0:
            raise ConfigError(f"resolution is {self.resolution}; Leiden needs a positive resolution (default 1.0)")
        if self.cluster_top_k < 0:
            raise ConfigError(f"cluster_top_k is {self.cluster_top_k}; use 0 (every pair) or more (default 10)")
        if self.cluster_min_count < 1:
            raise ConfigError(f"cluster_min_count is {self.cluster_min_count}; a co-citation count is at least 1")
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
    engine: str = "esc",
) -> PairCounts:
    r"""Pairs of items that occur in the same member, counted over members: :math:`X = B^\top B`.

    ``members[k]`` contains ``items[k]`` (both ids, any hashable); :math:`B` is the binary member ×
    item incidence, so a repeated ``(member, item)`` row counts once. Co-citation is
    ``cooccurrence(citing, cited)``, bibliographic coupling ``cooccurrence(cited, citing)``,
    sentence-level co-citation ``cooccurrence(sentence, cited)``.

    Args:
        ids: the items to index by (sorted here); items outside it are dropped. Default: the
            distinct items, sorted. Pass another count's ``ids`` to put two counts in one index.
        device: where the product runs (default: CUDA when available).
        engine: ``"esc"`` (expand–sort–compress of the upper triangle; NumPy on the CPU, torch on
            CUDA), ``"torch"`` (torch sparse COO product on ``device``) or ``"scipy"`` (CSR
            product on the CPU); all give the same integers.
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
    return count_pairs(member_codes, item_codes, index, device=device, engine=engine)


def count_pairs(
    members: np.ndarray,
    items: np.ndarray,
    ids: pd.Index,
    *,
    device: torch.device | str | None = None,
    engine: str = "esc",
) -> PairCounts:
    r""":func:`cooccurrence` over integer codes: ``members[k]`` (any int ≥ 0) contains item ``ids[items[k]]``.

    Rows with a negative item code (an item outside ``ids``) are dropped and logged. This is the
    entry point for codes read from the store as Arrow (:func:`read_cocitation_input`): no id is
    hashed or compared as a string.
    """
    if engine not in ENGINES:
        raise ConfigError(f"engine {engine!r} is not one of {ENGINES}")
    member_codes, item_codes = np.asarray(members, dtype=np.int64), np.asarray(items, dtype=np.int64)
    kept = item_codes >= 0
    if not kept.all():
        log.info("cooccurrence: %d rows name items outside the index; dropped", int((~kept).sum()))
        member_codes, item_codes = member_codes[kept], item_codes[kept]
    n_items = max(len(ids), 1)
    if len(member_codes) and int(member_codes.max()) > (2**63 - 1) // n_items - 1:
        member_codes = pd.factorize(member_codes)[0].astype(np.int64)  # sparse codes: make them dense first
    # One int64 code per (member, item): sorting it deduplicates far faster than hashing row pairs.
    codes = _sorted_unique(member_codes * n_items + item_codes)
    rows, cols = codes // n_items, codes % n_items  # rows ascending, items ascending within a row
    occurrences = np.bincount(cols, minlength=len(ids)).astype(np.int64)  # X_ii = s_i
    n_members = int(len(rows) > 0) + int(np.count_nonzero(rows[1:] != rows[:-1]))
    torch_device = select_device(None) if device is None else torch.device(device)
    if engine == "esc":
        i, j, count = _gram_upper_esc(rows, cols, n_items, torch_device)
    elif engine == "torch":
        rows = np.unique(rows, return_inverse=True)[1].astype(np.int64)  # dense member rows for the matrix
        i, j, count = _gram_upper_torch(rows, cols, n_items, torch_device)
    else:
        i, j, count = _gram_upper_scipy(rows, cols, n_items)
    pair_codes = i * n_items + j
    if len(pair_codes) > 1 and not (pair_codes[1:] > pair_codes[:-1]).all():  # ESC's and torch's output already is
        order = np.argsort(pair_codes, kind="stable")
        i, j, count = i[order], j[order], count[order]
    return PairCounts(ids, i, j, count, occurrences, n_members)


def _gram_upper_esc(
    rows: np.ndarray, cols: np.ndarray, n_items: int, device: torch.device
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Strict upper triangle of :math:`B^\top B` by expand–sort–compress (see the module docstring).

    ``(rows, cols)`` are unique and sorted by row, then column. Position :math:`p` in a row that
    ends at :math:`e` pairs with the :math:`e - p - 1` later positions of the row; pairs are
    expanded in chunks of at most :data:`ESC_CHUNK`, as codes ``cols[p] * n_items + cols[q]``.
    """
    empty = np.empty(0, dtype=np.int64)
    if len(rows) < 2:
        return empty, empty, empty
    if n_items > 3_037_000_499:  # n_items² would overflow int64 codes
        raise ConfigError(f"{n_items} items are too many for int64 pair codes; use engine='scipy'")
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    ends = np.append(starts[1:], len(rows))
    later = np.repeat(ends, ends - starts) - np.arange(len(rows)) - 1  # pairs each position starts
    if device.type != "cpu":
        return _gram_upper_esc_torch(cols, later, n_items, device)
    total = int(later.sum())
    if total == 0:
        return empty, empty, empty
    codes = np.empty(total, dtype=np.int64)
    for first, last, out in _esc_chunks(later):  # expand
        counts = later[first:last]
        left = np.repeat(np.arange(first, last), counts)
        step = np.arange(len(left)) - np.repeat(np.cumsum(counts) - counts, counts) + 1  # 1..counts[p]
        codes[out : out + len(left)] = cols[left] * n_items + cols[left + step]
    codes.sort()  # sort
    boundary = np.empty(total, dtype=bool)  # compress
    boundary[0] = True
    np.not_equal(codes[1:], codes[:-1], out=boundary[1:])
    at = np.flatnonzero(boundary)
    count = np.diff(np.append(at, total)).astype(np.int64)
    unique = codes[at]
    return unique // n_items, unique % n_items, count


def _esc_chunks(later: np.ndarray) -> Iterator[tuple[int, int, int]]:
    """``(first, last, out)``: position ranges expanding to at most ~ESC_CHUNK pairs, and where their pairs go."""
    ends = np.cumsum(later)
    first, out = 0, 0
    while first < len(later):
        last = int(np.searchsorted(ends, out + ESC_CHUNK, side="right"))
        last = max(last, first + 1)
        yield first, last, out
        out = int(ends[last - 1])
        first = last


def _gram_upper_esc_torch(
    cols: np.ndarray, later: np.ndarray, n_items: int, device: torch.device
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ESC product with torch on ``device`` (CUDA): the same expand, sort and compress."""
    cols_t = torch.from_numpy(cols).to(device)
    later_t = torch.from_numpy(later).to(device)
    parts = []
    for first, last, _ in _esc_chunks(later):
        counts = later_t[first:last]
        left = torch.repeat_interleave(torch.arange(first, last, device=device), counts)
        offsets = torch.cumsum(counts, 0) - counts
        step = torch.arange(len(left), device=device) - torch.repeat_interleave(offsets, counts) + 1
        parts.append(cols_t[left] * n_items + cols_t[left + step])
    codes = torch.sort(torch.cat(parts)).values
    unique, count = torch.unique_consecutive(codes, return_counts=True)
    return (unique // n_items).cpu().numpy(), (unique % n_items).cpu().numpy(), count.to(torch.int64).cpu().numpy()


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
    CO_CITED edges; the Leiden clusters run on each paper's ``cluster_top_k`` strongest of those
    edges (:func:`gnn.cocitation.clusters.prune_pairs`); the noise distributions use every co-cited pair.
    The reads are Arrow (:func:`read_cocitation_input`), the counts ESC products on integer codes.
    Cluster labels go to ``clusters_path``, by default ``<store path>.clusters.json`` for the
    embedded store (:func:`gnn.cocitation.clusters.cluster_labels_path`); a store without a file path (Neo4j)
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

    with tqdm(total=7, desc="co-citation", unit="step", disable=None) as bar:
        with stage("read", bar):
            data = read_cocitation_input(store)
        with stage("count", bar):
            cocite, sentence = count_cocitation(data, device=device)
        with stage("strengths", bar):
            edges = cocitation_edges(cocite, sentence, min_count=settings.min_count)
        with stage("noise", bar):
            noise = noise_distributions(cocite, power=settings.power, device=device)
            partners = top_partners(noise, settings.top_m)
        with stage("cluster", bar):
            membership = _clusters(noise, cocite, settings)
            clustered = membership.index
            labels = label_clusters(
                membership,
                pd.Series(
                    data.titles.take(pa.array(data.papers.get_indexer(clustered))).to_pandas().to_numpy(),
                    index=clustered,
                ),
                popularity=pd.Series(cocite.occurrences, index=cocite.ids),
                top_k=settings.label_terms,
            )
        with stage("write", bar):
            sentence_pairs = int((edges["sentence_count"] > 0).sum())
            negative = noise.negative.cpu().numpy()
            del noise  # the full p(j|t) CSR (2 entries per pair): only its head (partners) is written
            written_edges = store.replace_edges("CO_CITED", edges)
            del edges  # at 45.6M pairs several GiB; the Paper write below needs the room (1M/10M benchmark)
            papers = _paper_frame(data.papers, cocite, negative, partners, membership)
            written_papers = store.write_node_properties("Paper", "id", papers)
        with stage("labels", bar):
            path = clusters_path if clusters_path is not None else cluster_labels_path(store)
            if path is not None:
                write_cluster_labels(path, labels, settings=_settings_record(settings))
            else:
                log.info("cluster labels not written: %s has no file path; pass clusters_path", store.describe())

    report = CocitationReport(
        citations=int(cocite.occurrences.sum()),  # distinct (citing, cited) pairs: each adds 1 to s_cited
        citing_papers=cocite.n_members,
        cited_papers=len(cocite.ids),
        pairs=len(cocite),
        edges=written_edges,
        sentence_pairs=sentence_pairs,
        papers_written=written_papers,
        clusters=tuple(labels),
        clusters_path=path,
        device=str(device),
        seconds=seconds,
    )
    log.info("%s", report.summary())
    return report


def _clusters(noise: NoiseDistributions, cocite: PairCounts, settings: CocitationSettings) -> pd.Series:
    """Leiden clusters of the pruned co-citation graph (:func:`gnn.cocitation.clusters.prune_pairs`), by paper id."""
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
    return series


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
    }


__all__ = [
    "ENGINES",
    "MEASURES",
    "CocitationInput",
    "CocitationReport",
    "CocitationSettings",
    "PairCounts",
    "association_strength",
    "cocitation_edges",
    "cocitation_table",
    "compute_cocitation",
    "cooccurrence",
    "count_cocitation",
    "count_pairs",
    "coupling_table",
    "inclusion_index",
    "jaccard_index",
    "normalised_strengths",
    "read_citations",
    "read_cocitation_input",
    "read_mentions",
    "salton_cosine",
]
