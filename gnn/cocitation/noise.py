r"""Noise distributions of MP-BERT4CR and samplers that draw from them.

A reranker trained with a multi-positive objective needs, for a query whose target is paper
:math:`t`, extra positives (papers often cited together with :math:`t`) and negatives (papers the
query does not cite). MP-BERT4CR draws them from two smoothed distributions:

.. math::
    p(j \mid t) = \frac{\mathrm{freq}(t, j)^{\alpha}}{\sum_k \mathrm{freq}(t, k)^{\alpha}}
    \qquad \text{(eq. 1, over the co-cited partners } j \text{ of } t\text{)}

.. math::
    p(i) = \frac{\mathrm{count}(i)^{\alpha}}{\sum_k \mathrm{count}(k)^{\alpha}}
    \qquad \text{(eq. 2, over all cited papers)}

where :math:`\mathrm{freq}(t, j)` is the co-citation count of :math:`t` and :math:`j`,
:math:`\mathrm{count}(i)` the number of papers citing :math:`i`, and :math:`\alpha = 3/4` as in
word2vec's unigram noise (Mikolov et al., 2013). :math:`\alpha < 1` flattens both distributions:
frequent pairs and popular papers lose probability to rare ones; :math:`\alpha = 0` is uniform.

:func:`noise_distributions` computes both from co-citation counts (:mod:`gnn.cocitation.counts`);
:func:`top_partners` cuts :math:`p(\cdot \mid t)` to the ``M`` most probable partners for storage
(``Paper.cocite_partners``, ``cocite_probs``, with the remaining mass in ``cocite_tail``);
:class:`NoiseSampler` draws seeded, reproducible positives and negatives per target, never
returning the target itself or what the query already cites.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from gnn.cocitation.counts import PairCounts
from gnn.device import select_device
from graph.errors import ConfigError
from graph.store import GraphStore

IndexLike = Sequence[int] | torch.Tensor | np.ndarray


@dataclass(frozen=True)
class NoiseDistributions:
    """:math:`p(j \\mid t)` for every target as CSR rows, and :math:`p(i)`, over the papers in ``ids``."""

    ids: pd.Index  # paper id of each index, sorted
    indptr: torch.Tensor  # int64 [n + 1]: target t's partners are partners[indptr[t] : indptr[t + 1]]
    partners: torch.Tensor  # int64 [nnz]: partner indices; within a row by descending probability, then index
    probs: torch.Tensor  # float64 [nnz]: p(j | t); every non-empty row sums to 1
    negative: torch.Tensor  # float64 [n]: p(i); sums to 1 when anything is cited, 0 for uncited papers
    power: float | None  # α; None when loaded from the store (the stored values already carry it)

    def __len__(self) -> int:
        return len(self.ids)

    def index(self, ids: Sequence[str]) -> torch.Tensor:
        """The indices of paper ids; an unknown id is a :class:`~graph.errors.ConfigError`."""
        found = self.ids.get_indexer(pd.Index(list(ids)))
        if (found < 0).any():
            missing = [paper for paper, at in zip(ids, found) if at < 0][:3]
            raise ConfigError(
                f"{int((found < 0).sum())} ids are not cited papers of the noise distributions, e.g. {missing}"
            )
        return torch.from_numpy(found.astype(np.int64))

    @classmethod
    def from_store(cls, store: GraphStore) -> NoiseDistributions:
        """The distributions ``compute_cocitation`` stored on Paper nodes.

        Only the top-``M`` partners of each target are stored: their probabilities are renormalised
        to sum to 1, so a sampler built from the store draws from the head of :math:`p(j \\mid t)`.
        """
        frame = pd.DataFrame.from_records(
            store.query("noise_weights"),
            columns=["id", "negative_weight", "cocite_partners", "cocite_probs", "cocite_tail"],
        ).sort_values("id", ignore_index=True)
        ids = pd.Index(frame["id"])
        rows, cols, weights = [], [], []
        for row, (partners, probs) in enumerate(zip(frame["cocite_partners"], frame["cocite_probs"])):
            if partners is None or probs is None or len(partners) == 0:
                continue
            at = ids.get_indexer(pd.Index(list(partners)))
            kept = at >= 0  # a partner without a stored weight is stale data: dropped
            head = np.asarray(probs, dtype=np.float64)[kept]
            if head.sum() <= 0:
                continue
            rows.append(np.full(len(head), row))
            cols.append(at[kept])
            weights.append(head / head.sum())  # the stored head of p(.|t), renormalised
        flat = [np.concatenate(x) if x else np.empty(0) for x in (rows, cols, weights)]
        indptr, partners, probs = _csr(
            torch.from_numpy(flat[0].astype(np.int64)),
            torch.from_numpy(flat[1].astype(np.int64)),
            torch.from_numpy(flat[2].astype(np.float64)),
            len(ids),
        )
        negative = torch.tensor(frame["negative_weight"].fillna(0.0).to_numpy(dtype=np.float64))
        total = negative.sum()
        return cls(ids, indptr, partners, probs, negative / total if total > 0 else negative, None)


def negative_distribution(counts: torch.Tensor, *, power: float = 0.75) -> torch.Tensor:
    r"""MP-BERT4CR eq. 2: :math:`p(i) = \mathrm{count}(i)^{\alpha} / \sum_k \mathrm{count}(k)^{\alpha}`.

    Papers with count 0 get probability 0 (also at :math:`\alpha = 0`, where :math:`0^0` would be 1).
    All zeros when nothing is cited.

    Shapes: counts ``[n]`` → ``[n]`` float64.
    """
    counts = counts.to(torch.float64)
    weights = torch.where(counts > 0, counts.pow(power), torch.zeros_like(counts))
    total = weights.sum()
    return weights / total if total > 0 else weights


def positive_distribution(
    rows: torch.Tensor, cols: torch.Tensor, freq: torch.Tensor, n: int, *, power: float = 0.75
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""MP-BERT4CR eq. 1: :math:`p(j \mid t) = \mathrm{freq}(t,j)^{\alpha} / \sum_k \mathrm{freq}(t,k)^{\alpha}`.

    ``(rows[k], cols[k], freq[k])`` are the entries of the (symmetric) co-citation matrix, each
    ordered pair once, every ``freq`` ≥ 1. Returns CSR ``(indptr [n + 1], partners [nnz],
    probs [nnz])`` with each row ordered by descending probability, then partner index (equal
    weights :math:`\mathrm{freq}^{\alpha}` tie; they are equal probabilities).
    """
    weights = freq.to(torch.float64).pow(power)
    row_sums = torch.zeros(n, dtype=torch.float64, device=weights.device).index_add_(0, rows, weights)
    if len(rows) == 0:
        return _csr(rows, cols, weights, n)
    # Within a row p(j|t) orders like freq^α, so one sort of an integer key (row, weight rank
    # descending, partner) gives the CSR order; far faster than three stable argsorts at 10^8 entries.
    levels, rank = _weight_levels(freq, power)  # equal weights share a rank
    n_levels = len(levels)
    if n * n_levels > _KEY_LIMIT // max(n, 1):  # the key would overflow int64: the general path
        return _csr(rows, cols, weights / row_sums[rows], n)
    key = (rows * n_levels + (n_levels - 1 - rank)) * n + cols
    key = _sorted(key)
    row, rest = key // (n_levels * n), key % (n_levels * n)
    partners = rest % n
    probs = levels[n_levels - 1 - rest // n] / row_sums[row]  # the same float as weights / row_sums[rows]
    indptr = torch.zeros(n + 1, dtype=torch.int64, device=rows.device)
    indptr[1:] = torch.cumsum(torch.bincount(rows, minlength=n), 0)
    return indptr, partners, probs


# Largest value an int64 sort key may take.
_KEY_LIMIT = 2**63 - 1


def _weight_levels(freq: torch.Tensor, power: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct weights ``freq^α`` ascending, and each entry's rank among them.

    Works on the few distinct frequencies, not on every entry: sorting 10^8 floats costs seconds.
    """
    if freq.device.type == "cpu":
        values = freq.numpy()
        distinct = np.unique(values)
        if distinct[-1] < 1 << 26:  # a lookup table over the frequencies is small: O(nnz)
            table = np.zeros(int(distinct[-1]) + 1, dtype=np.int64)
            table[distinct] = np.arange(len(distinct))
            position = torch.from_numpy(table[values])
        else:
            position = torch.from_numpy(np.searchsorted(distinct, values))
        distinct_t = torch.from_numpy(distinct)
    else:
        distinct_t, position = torch.unique(freq, sorted=True, return_inverse=True)
    levels, level_of = torch.unique(distinct_t.to(torch.float64).pow(power), sorted=True, return_inverse=True)
    return levels, level_of[position]


def _sorted(values: torch.Tensor) -> torch.Tensor:
    """Ascending int64 values; on the CPU through NumPy, whose SIMD sort is ~10× faster than torch's here."""
    if values.device.type == "cpu":
        return torch.from_numpy(np.sort(values.numpy()))
    return torch.sort(values).values


def _csr(
    rows: torch.Tensor, cols: torch.Tensor, probs: torch.Tensor, n: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sort entries by (row, descending prob, col) and build the row pointer."""
    # Stable sorts from the last key to the first give the lexicographic order.
    order = torch.argsort(cols, stable=True)
    order = order[torch.argsort(-probs[order], stable=True)]
    order = order[torch.argsort(rows[order], stable=True)]
    indptr = torch.zeros(n + 1, dtype=torch.int64, device=rows.device)
    indptr[1:] = torch.cumsum(torch.bincount(rows, minlength=n), 0)
    return indptr, cols[order], probs[order]


def noise_distributions(
    cocitation: PairCounts, *, power: float = 0.75, device: torch.device | str | None = None
) -> NoiseDistributions:
    """Both distributions from co-citation counts; computed on ``device``, returned on the CPU."""
    device = select_device(None) if device is None else torch.device(device)
    i = torch.from_numpy(cocitation.i).to(device)
    j = torch.from_numpy(cocitation.j).to(device)
    freq = torch.from_numpy(cocitation.count).to(device)
    n = len(cocitation.ids)
    # Each unordered pair feeds both targets: t = i with partner j, and t = j with partner i.
    indptr, partners, probs = positive_distribution(
        torch.cat([i, j]), torch.cat([j, i]), torch.cat([freq, freq]), n, power=power
    )
    negative = negative_distribution(torch.from_numpy(cocitation.occurrences).to(device), power=power)
    return NoiseDistributions(cocitation.ids, indptr.cpu(), partners.cpu(), probs.cpu(), negative.cpu(), float(power))


def top_partners(noise: NoiseDistributions, m: int) -> pd.DataFrame:
    r"""The ``m`` most probable partners of every target with at least one.

    Columns: ``id``, ``cocite_partners`` (ids), ``cocite_probs`` (:math:`p(j \mid t)`, descending),
    ``cocite_tail`` (the probability of the partners left out, 0 when none are), so that
    ``sum(cocite_probs) + cocite_tail = 1``. The list columns are Arrow lists
    (``pd.ArrowDtype``; a cell reads as a Python list), built from offsets without a Python object
    per paper: at 1M papers × 32 partners that detour cost seconds and gigabytes.
    """
    indptr = noise.indptr.numpy()
    lengths = np.diff(indptr)
    n_rows = len(lengths)
    rank = np.arange(int(indptr[-1])) - np.repeat(indptr[:-1], lengths)  # position within the row
    probs = noise.probs.numpy()
    head = rank < m
    rows_of_tail = np.repeat(np.arange(n_rows), lengths)[~head]
    tail = np.bincount(rows_of_tail, weights=probs[~head], minlength=n_rows)
    targets = np.flatnonzero(lengths > 0)
    offsets = np.zeros(len(targets) + 1, dtype=np.int64)
    np.cumsum(np.minimum(lengths[targets], m), out=offsets[1:])
    ids = arrow_ids(noise.ids)
    partner_ids = ids.take(pa.array(noise.partners.numpy()[head]))
    offsets_array = pa.array(offsets, type=pa.int64())
    return pd.DataFrame(
        {
            "id": pd.Series(pd.arrays.ArrowExtensionArray(ids.take(pa.array(targets)))),
            "cocite_partners": pd.Series(
                pd.arrays.ArrowExtensionArray(pa.LargeListArray.from_arrays(offsets_array, partner_ids))
            ),
            "cocite_probs": pd.Series(
                pd.arrays.ArrowExtensionArray(pa.LargeListArray.from_arrays(offsets_array, pa.array(probs[head])))
            ),
            "cocite_tail": tail[targets],
        }
    )


def arrow_ids(ids: pd.Index) -> pa.Array:
    """Paper ids as one Arrow string array (no copy for pyarrow-backed ``str`` indexes)."""
    values = pa.array(ids.array) if not pd.api.types.is_object_dtype(ids.dtype) else pa.array(ids.to_numpy())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.cast(pa.string()) if pa.types.is_large_string(values.type) else values


class NoiseSampler:
    r"""Seeded draws of co-citation positives and popularity negatives per target.

    For a training query (a citing context) whose target is :math:`t`:

    * :meth:`positives` draws ``n`` partners :math:`j \sim p(\cdot \mid t)` (eq. 1);
    * :meth:`negatives` draws ``m`` papers :math:`i \sim p(\cdot)` (eq. 2).

    Neither returns :math:`t`. ``exclude[b]`` lists what else row ``b`` must not return: for
    negatives, the query paper's own citations (they are positives for that query, not noise); for
    positives, optionally the same list, to draw partners beyond what the query already cites.
    Draws are with replacement (like word2vec's noise) unless ``replacement=False`` for positives.
    A row with no admissible candidate is filled with -1. Results are indices into ``noise.ids``.

    The same seed, device and sequence of calls give the same draws; CPU and CUDA generators
    differ, so draws are reproducible per device, not across devices.

    Args:
        noise: the distributions (:func:`noise_distributions` or :meth:`NoiseDistributions.from_store`).
        seed: seed of the sampler's own :class:`torch.Generator` (default 0).
        device: where to sample (default: CUDA when available).
    """

    # Below this admissible probability a row's negatives are drawn exactly (masked multinomial)
    # instead of by rejection, which would need more than 1 / 0.05 = 20 draws per accepted one.
    REJECTION_FLOOR = 0.05

    def __init__(self, noise: NoiseDistributions, *, seed: int = 0, device: torch.device | str | None = None) -> None:
        self.noise = noise
        self.seed = seed
        self.device = select_device(None) if device is None else torch.device(device)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self._indptr = noise.indptr.to(self.device)
        self._partners = noise.partners.to(self.device)
        self._probs = noise.probs.to(self.device)
        self._negative = noise.negative.to(self.device)

    def __repr__(self) -> str:
        name, noise = type(self).__name__, self.noise
        return f"{name}(papers={len(noise)}, power={noise.power}, seed={self.seed}, device={self.device})"

    def positives(
        self, targets: IndexLike, n: int, *, exclude: Sequence[Sequence[int]] | None = None, replacement: bool = True
    ) -> torch.Tensor:
        """``n`` partners per target drawn from :math:`p(\\cdot \\mid t)`: ``[len(targets), n]`` int64, -1 for none."""
        targets = self._targets(targets)
        batch = len(targets)
        out = torch.full((batch, n), -1, dtype=torch.int64, device=self.device)
        if batch == 0 or n == 0 or len(self._partners) == 0:
            return out
        starts = self._indptr[targets]
        lengths = self._indptr[targets + 1] - starts
        width = max(int(lengths.max()), 1)
        offsets = torch.arange(width, device=self.device)
        present = offsets < lengths[:, None]  # [B, width]
        at = (starts[:, None] + offsets).clamp(max=len(self._partners) - 1)
        candidates = torch.where(present, self._partners[at], -1)  # [B, width]
        weights = torch.where(present, self._probs[at], 0.0)
        banned = self._banned(candidates, targets, exclude)
        weights = torch.where(banned, 0.0, weights)
        if replacement:
            ok = weights.sum(1) > 0
            if ok.any():
                draws = torch.multinomial(weights[ok], n, replacement=True, generator=self.generator)  # [B_ok, n]
                out[ok] = candidates[ok].gather(1, draws)
            return out
        # Without replacement: Gumbel-top-k (keys log w + Gumbel noise; the k largest are a draw of k
        # without replacement proportional to w). Zero weights get -inf keys and come out as -1.
        uniform = torch.rand(weights.shape, generator=self.generator, device=self.device, dtype=torch.float64)
        gumbel = -torch.log(-torch.log(uniform.clamp(min=1e-300)))  # clamp: log(0) for a uniform of exactly 0
        keys = torch.where(weights > 0, weights.log() + gumbel, -math.inf)
        k = min(n, width)
        top = keys.topk(k, dim=1)
        out[:, :k] = torch.where(top.values > -math.inf, candidates.gather(1, top.indices), -1)
        return out

    def negatives(self, targets: IndexLike, m: int, *, exclude: Sequence[Sequence[int]] | None = None) -> torch.Tensor:
        """``m`` papers per target drawn from :math:`p(\\cdot)`; ``[len(targets), m]`` int64, -1 where none."""
        targets = self._targets(targets)
        batch, size = len(targets), len(self._negative)
        out = torch.full((batch, m), -1, dtype=torch.int64, device=self.device)
        if batch == 0 or m == 0 or not bool((self._negative > 0).any()):
            return out
        codes = self._excluded_codes(targets, exclude)  # sorted row * size + index
        excluded_rows, excluded_items = codes // size, codes % size
        banned_mass = torch.zeros(batch, dtype=torch.float64, device=self.device).index_add_(
            0, excluded_rows, self._negative[excluded_items]
        )
        banned_support = torch.zeros(batch, dtype=torch.int64, device=self.device).index_add_(
            0, excluded_rows, (self._negative[excluded_items] > 0).to(torch.int64)
        )
        possible = banned_support < int((self._negative > 0).sum())  # some positive-probability paper is left
        admissible = (1.0 - banned_mass).clamp(min=0.0)
        exact = possible & (admissible < self.REJECTION_FLOOR)
        by_rejection = possible & ~exact
        filled = torch.zeros(batch, dtype=torch.int64, device=self.device)
        while True:
            pending = torch.nonzero(by_rejection & (filled < m)).flatten()
            if len(pending) == 0:
                break
            # Enough draws that most rows fill in one round: remaining / acceptance rate, plus slack.
            need = int((m - filled[pending]).max())
            per_row = math.ceil(1.25 * need / float(admissible[pending].min())) + 1
            draws = torch.multinomial(
                self._negative, len(pending) * per_row, replacement=True, generator=self.generator
            )
            draws = draws.view(len(pending), per_row)  # [P, per_row]
            valid = ~torch.isin(pending[:, None] * size + draws, codes)
            slot = filled[pending][:, None] + torch.cumsum(valid, 1) - 1  # where each valid draw goes
            place = valid & (slot < m)
            rows = pending[:, None].expand_as(draws)
            out[rows[place], slot[place]] = draws[place]
            filled[pending] += place.sum(1)
        rows = torch.nonzero(exact).flatten()
        if len(rows):
            weights = self._negative.expand(len(rows), size).clone()  # [R, size]
            local = torch.isin(excluded_rows, rows)
            position = torch.searchsorted(rows, excluded_rows[local])
            weights[position, excluded_items[local]] = 0.0
            out[rows] = torch.multinomial(weights, m, replacement=True, generator=self.generator)
        return out

    # helpers ---------------------------------------------------------------------------------
    def _targets(self, targets: IndexLike) -> torch.Tensor:
        tensor = torch.as_tensor(np.asarray(targets, dtype=np.int64) if not torch.is_tensor(targets) else targets)
        tensor = tensor.to(device=self.device, dtype=torch.int64).flatten()
        if len(tensor) and (int(tensor.min()) < 0 or int(tensor.max()) >= len(self.noise)):
            raise ConfigError(f"target indices must lie in [0, {len(self.noise)}); map ids with noise.index(ids)")
        return tensor

    def _excluded_codes(self, targets: torch.Tensor, exclude: Sequence[Sequence[int]] | None) -> torch.Tensor:
        """Sorted unique ``row * n + index`` of each (row, paper) never to draw: the target and ``exclude[row]``."""
        size = len(self.noise)
        batch = len(targets)
        rows = [torch.arange(batch, device=self.device)]
        items = [targets]
        if exclude is not None:
            if len(exclude) != batch:
                raise ConfigError(f"exclude has {len(exclude)} rows for {batch} targets; give one list per target")
            lengths = torch.tensor([len(e) for e in exclude], dtype=torch.int64)
            flat = [int(x) for e in exclude for x in e]
            if flat:
                rows.append(torch.repeat_interleave(torch.arange(batch), lengths).to(self.device))
                items.append(torch.tensor(flat, dtype=torch.int64, device=self.device))
        row, item = torch.cat(rows), torch.cat(items)
        keep = (item >= 0) & (item < size)  # indices outside the distributions cannot be drawn anyway
        return torch.unique(row[keep] * size + item[keep])  # sorted

    def _banned(
        self, candidates: torch.Tensor, targets: torch.Tensor, exclude: Sequence[Sequence[int]] | None
    ) -> torch.Tensor:
        size = len(self.noise)
        rows = torch.arange(len(targets), device=self.device)[:, None]
        return torch.isin(rows * size + candidates, self._excluded_codes(targets, exclude)) | (candidates < 0)


__all__ = [
    "NoiseDistributions",
    "NoiseSampler",
    "arrow_ids",
    "negative_distribution",
    "noise_distributions",
    "positive_distribution",
    "top_partners",
]
