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

:class:`PairCounts` holds such a product; :func:`normalised_strengths` turns its counts into the
association strength, Salton's cosine, the Jaccard index and the inclusion index.
:mod:`gnn.cocitation.compute` reads the incidences from the store and writes the results back.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from numpy.typing import ArrayLike

from gnn.device import select_device
from graph.errors import ConfigError

log = logging.getLogger(__name__)

ENGINES = ("esc", "torch", "scipy")
# Pairs expanded at once by the ESC engine: bounds its transient index arrays (~3 × 8 bytes each).
ESC_CHUNK = 1 << 24


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
    if engine == "esc" and n_items > 3_037_000_499:  # n_items² would overflow ESC's int64 pair codes
        raise ConfigError(f"{n_items} items are too many for int64 pair codes; use engine='scipy'")
    torch_device = select_device(None) if device is None else torch.device(device)
    if engine == "esc" and torch_device.type != "cpu":
        i, j, count, occurrences, n_members = _count_pairs_esc_torch(member_codes, item_codes, n_items, torch_device)
        return PairCounts(ids, i, j, count, occurrences[: len(ids)], n_members)
    # One int64 code per (member, item): sorting it deduplicates far faster than hashing row pairs.
    codes = _sorted_unique(member_codes * n_items + item_codes)
    rows, cols = codes // n_items, codes % n_items  # rows ascending, items ascending within a row
    occurrences = np.bincount(cols, minlength=len(ids)).astype(np.int64)  # X_ii = s_i
    n_members = int(len(rows) > 0) + int(np.count_nonzero(rows[1:] != rows[:-1]))
    if engine == "esc":
        i, j, count = _gram_upper_esc(rows, cols, n_items)
    elif engine == "torch":
        rows = np.unique(rows, return_inverse=True)[1].astype(np.int64)  # dense member rows for the matrix
        i, j, count = _gram_upper_torch(rows, cols, n_items, torch_device)
    else:
        i, j, count = _gram_upper_scipy(rows, cols, n_items)
    if engine == "scipy":  # ESC's and torch's output already is in (i, j) order
        order = np.lexsort((j, i))
        i, j, count = i[order], j[order], count[order]
    return PairCounts(ids, i, j, count, occurrences, n_members)


def count_pairs_bounded(
    members: np.ndarray, items: np.ndarray, ids: pd.Index, *, min_count: int = 1, chunk: int = ESC_CHUNK
) -> PairCounts:
    r""":func:`count_pairs` (ESC on the CPU) in bounded memory, keeping only pairs counted at least ``min_count`` times.

    The expansion is cut by *first item*, as :func:`esc_on_device` cuts it: the pairs whose first item lies in
    one range of items (about ``chunk`` pairs) are expanded, sorted and compressed together, and the pairs
    under ``min_count`` dropped before the next range. Every pair :math:`(i, j)` is expanded only in the
    range of :math:`i`, so its count there is complete. Memory: the incidence, one range's transient arrays
    (~4 int64 per pair of the range) and the kept pairs; the ranges ascend, so the kept pairs come out in
    ``(i, j)`` order with no global sort. A single item whose pairs exceed ``chunk`` is a range of its own.
    """
    if min_count < 1:
        raise ConfigError(f"min_count is {min_count}; a pair is counted at least once")
    member_codes, item_codes = np.asarray(members, dtype=np.int64), np.asarray(items, dtype=np.int64)
    kept = item_codes >= 0
    member_codes, item_codes = member_codes[kept], item_codes[kept]
    n_items = max(len(ids), 1)
    if len(member_codes) and int(member_codes.max()) > (2**63 - 1) // n_items - 1:
        member_codes = pd.factorize(member_codes)[0].astype(np.int64)
    codes = _sorted_unique(member_codes * n_items + item_codes)
    rows, cols = codes // n_items, codes % n_items
    del codes
    occurrences = np.bincount(cols, minlength=len(ids)).astype(np.int64)
    n_members = int(len(rows) > 0) + int(np.count_nonzero(rows[1:] != rows[:-1]))
    empty = np.empty(0, dtype=np.int64)
    if len(rows) < 2:
        return PairCounts(ids, empty, empty, empty, occurrences, n_members)
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    ends = np.append(starts[1:], len(rows))
    later = np.repeat(ends, ends - starts) - np.arange(len(rows)) - 1  # pairs each position starts
    del rows, starts, ends
    by_item = np.argsort(cols, kind="stable")  # positions grouped by their (first) item
    item_start = np.searchsorted(cols[by_item], np.arange(n_items + 1))  # positions of item k: [start[k], start[k+1])
    per_item = np.bincount(cols, weights=later, minlength=n_items).astype(np.int64)
    cumulative = np.cumsum(per_item)
    cuts = np.searchsorted(cumulative, np.arange(chunk, max(int(cumulative[-1]), 1), chunk), side="left") + 1
    bounds = np.unique(np.concatenate([[0, n_items], np.minimum(cuts, n_items)]))
    parts_i, parts_j, parts_count = [], [], []
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        positions = by_item[item_start[lo] : item_start[hi]]
        counts = later[positions]
        total = int(counts.sum())
        if total == 0:
            continue
        left = np.repeat(positions, counts)
        step = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts) + 1  # 1..counts[p]
        pair_codes = cols[left] * n_items + cols[left + step]
        del left, step
        pair_codes.sort()
        boundary = np.empty(total, dtype=bool)
        boundary[0] = True
        np.not_equal(pair_codes[1:], pair_codes[:-1], out=boundary[1:])
        at = np.flatnonzero(boundary)
        count = np.diff(np.append(at, total)).astype(np.int64)
        keep = count >= min_count
        unique = pair_codes[at[keep]]
        del pair_codes, boundary, at
        parts_i.append(unique // n_items)
        parts_j.append(unique % n_items)
        parts_count.append(count[keep])
    if not parts_i:
        return PairCounts(ids, empty, empty, empty, occurrences, n_members)
    return PairCounts(
        ids, np.concatenate(parts_i), np.concatenate(parts_j), np.concatenate(parts_count), occurrences, n_members
    )


def _gram_upper_esc(rows: np.ndarray, cols: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Strict upper triangle of :math:`B^\top B` by expand–sort–compress (see the module docstring).

    ``(rows, cols)`` are unique and sorted by row, then column. Position :math:`p` in a row that
    ends at :math:`e` pairs with the :math:`e - p - 1` later positions of the row; pairs are
    expanded in chunks of at most :data:`ESC_CHUNK`, as codes ``cols[p] * n_items + cols[q]``.
    """
    empty = np.empty(0, dtype=np.int64)
    if len(rows) < 2:
        return empty, empty, empty
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    ends = np.append(starts[1:], len(rows))
    later = np.repeat(ends, ends - starts) - np.arange(len(rows)) - 1  # pairs each position starts
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


def _count_pairs_esc_torch(
    member_codes: np.ndarray, item_codes: np.ndarray, n_items: int, device: torch.device
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    r"""The whole ESC count on ``device`` (CUDA): ``(i, j, count, occurrences, n_members)``.

    Every step from the raw ``(member, item)`` codes to the compressed pairs runs on the device
    (:func:`esc_on_device`), so the host does no sorting and the only copies are the inputs in
    (16 bytes per incidence) and the pairs out (24 bytes per pair).
    """
    members = torch.from_numpy(member_codes).to(device, non_blocking=True)
    items = torch.from_numpy(item_codes).to(device, non_blocking=True)
    occurrences, n_members, ranges = esc_on_device(members, items, n_items)
    del members, items
    parts = [tuple(to_host(column) for column in triple) for triple in ranges]
    occurrences_host = to_host(occurrences)
    if device.type == "cuda":
        torch.cuda.synchronize(device)  # the asynchronous copies are complete
    if not parts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, occurrences_host.numpy(), n_members
    if len(parts) == 1:
        i, j, count = (column.numpy() for column in parts[0])
    else:
        i, j, count = (torch.cat(column).numpy() for column in zip(*parts))
    return i, j, count, occurrences_host.numpy(), n_members


def to_host(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` copied to page-locked host memory, asynchronously (CUDA); a CPU tensor as it is.

    A copy out of pageable memory is staged by the driver through a small pinned buffer: on the
    machine the device benchmark ran on it moved about 1.5 GB/s, a third of a second per 10M pairs,
    more than the count itself. Into pinned memory the copy runs at the bus's rate. The caller
    synchronises before reading.
    """
    if tensor.device.type != "cuda":
        return tensor
    host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
    host.copy_(tensor, non_blocking=True)
    return host


def esc_on_device(
    members: torch.Tensor, items: torch.Tensor, n_items: int
) -> tuple[torch.Tensor, int, Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]:
    r"""Expand–sort–compress on the tensors' device: ``(occurrences, n_members, ranges)``.

    ``members[k]`` contains item ``items[k]`` (int64 codes, ``0 <= items < n_items``, repeats
    allowed). ``ranges`` yields ``(i, j, count)`` int64 tensors on the device, ordered by ``(i, j)``
    within and across ranges. The expansion is cut by *first item*: the pairs whose first item lies
    in ``[lo, hi)`` are expanded, sorted and compressed together; the ranges ascend, so their
    concatenation is sorted without a global sort, and one range's transient arrays (about 48 bytes
    per pair: two expansion indexes, the codes, the sort's buffers) fit the device's free memory
    whatever the graph's size.
    """
    device = members.device
    codes = torch.unique(members * n_items + items)  # sorted and deduplicated
    rows, cols = codes // n_items, codes % n_items
    del codes
    occurrences = torch.bincount(cols, minlength=n_items)
    if len(rows) < 2:
        return occurrences, int(len(rows) > 0), iter(())
    first_of_row = torch.ones(len(rows), dtype=torch.bool, device=device)
    torch.ne(rows[1:], rows[:-1], out=first_of_row[1:])
    starts = torch.nonzero(first_of_row).squeeze(1)
    n_members = len(starts)
    ends = torch.cat([starts[1:], torch.tensor([len(rows)], device=device)])
    positions = torch.arange(len(rows), device=device)
    later = torch.repeat_interleave(ends, ends - starts, output_size=len(rows)) - positions - 1
    del rows, first_of_row, starts, ends
    # the pairs each first item starts; the items are cut into ranges of about `budget` pairs each
    per_item = torch.bincount(cols, weights=later.to(torch.float64), minlength=n_items).to(torch.int64)
    budget = _pairs_per_range(device)
    cuts = torch.arange(budget, max(int(per_item.sum()), budget), budget, device=device)
    last_items = torch.searchsorted(torch.cumsum(per_item, 0), cuts)  # a range ends after the item crossing a cut
    bounds = torch.unique(torch.cat([torch.tensor([0, n_items], device=device), last_items + 1]).clamp(max=n_items))

    def ranges() -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            starting = torch.where((cols >= lo) & (cols < hi), later, 0)
            total = int(starting.sum())
            if total == 0:
                continue
            left = torch.repeat_interleave(positions, starting, output_size=total)
            offsets = torch.cumsum(starting, 0) - starting
            step = torch.arange(total, device=device) - torch.repeat_interleave(offsets, starting, output_size=total)
            pair_codes = cols[left] * n_items + cols[left + step + 1]
            del left, offsets, step
            unique, count = torch.unique(pair_codes, sorted=True, return_counts=True)
            del pair_codes
            yield unique // n_items, unique % n_items, count.to(torch.int64)

    return occurrences, n_members, ranges()


# Bytes the device path needs per expanded pair at its peak (see esc_on_device).
_DEVICE_BYTES_PER_PAIR = 48


def _pairs_per_range(device: torch.device) -> int:
    """Pairs expanded at once on ``device``: half its free memory over the peak bytes per pair (CPU: ESC_CHUNK)."""
    if device.type != "cuda":
        return ESC_CHUNK
    free, _ = torch.cuda.mem_get_info(device)
    return max(ESC_CHUNK, free // 2 // _DEVICE_BYTES_PER_PAIR)


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


__all__ = [
    "ENGINES",
    "ESC_CHUNK",
    "PairCounts",
    "association_strength",
    "cooccurrence",
    "count_pairs",
    "count_pairs_bounded",
    "esc_on_device",
    "inclusion_index",
    "jaccard_index",
    "normalised_strengths",
    "salton_cosine",
    "to_host",
]
