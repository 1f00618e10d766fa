r"""Citation bursts: Kleinberg's two-state automaton over each work's yearly citations (as CiteSpace uses it).

Kleinberg (2002), "Bursty and hierarchical structure in streams" (KDD; Data Min. Knowl. Disc. 7, 2003),
section 4, the *batched* model: in year :math:`t` the collection holds :math:`d_t` citing documents, of
which :math:`r_t` cite the work. Over the whole span the work's base rate is :math:`p_0 = R / D`
(:math:`R = \sum_t r_t`, :math:`D = \sum_t d_t`); the bursty state emits at :math:`p_1 = \min(s\,p_0, 1)`.
The cost of being in state :math:`i` in year :math:`t` is the negative log-likelihood

.. math::

    \sigma(i, r_t, d_t) = -\ln\left[\binom{d_t}{r_t} p_i^{r_t} (1 - p_i)^{d_t - r_t}\right],

moving up from state 0 to state 1 costs :math:`\tau = \gamma \ln n` (:math:`n` the number of years),
moving down costs nothing, and the automaton starts in state 0. The optimal state sequence minimises
:math:`\sum_t \sigma(q_t, r_t, d_t) + \sum_t \tau(q_{t-1}, q_t)` (Viterbi, :func:`optimal_states`).
A *burst* is a maximal run of years in state 1; its **weight** (CiteSpace's burst strength) is how much
the bursty state improves the fit over the baseline across the run (Kleinberg's section 4.3):

.. math::

    w(t_1, t_2) = \sum_{t = t_1}^{t_2} \big(\sigma(0, r_t, d_t) - \sigma(1, r_t, d_t)\big).

CiteSpace exposes :math:`s` (default 2), :math:`\gamma` (default 1) and a minimum burst duration
(default 2 years): runs shorter than that are not reported. A work keeps its strongest burst
(:func:`strongest_bursts`) as ``burst_strength``, ``burst_begin``, ``burst_end``.

No installed library has the automaton; the ``burst_detection`` package on PyPI (0.1.2, 2.5 kB, no tests)
runs one Python loop per series. Here every work of a chunk moves through the years together: the
Viterbi recursion loops over the years (tens) and is vectorised over the works (up to millions), with
:func:`scipy.stats.binom.logpmf` for :math:`\sigma` (exact at :math:`p = 0`, :math:`p = 1`, :math:`d_t = 0`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import binom

from graph.errors import ConfigError

BURST_COLUMNS = ["row", "begin", "end", "strength"]


@dataclass(frozen=True)
class BurstSettings:
    """CiteSpace's burst-detection parameters."""

    # s: the rate of the bursty state is s times the work's base rate (Kleinberg's s; CiteSpace default 2).
    # Higher: only sharper rises count as bursts.
    s: float = field(default=2.0, metadata={"help": "burst rate ratio s of Kleinberg's automaton (CiteSpace: 2)"})
    # γ: moving up into the bursty state costs γ ln n (n years). Higher: fewer, longer-lasting bursts.
    gamma: float = field(
        default=1.0, metadata={"help": "burst cost γ: higher gives fewer, longer bursts (CiteSpace: 1)"}
    )
    # Runs of the bursty state shorter than this many years are not reported (CiteSpace's
    # "minimum burst duration", default 2).
    min_duration: int = field(default=2, metadata={"help": "shortest burst reported, in years (CiteSpace: 2)"})
    # Works per vectorised Viterbi pass: bounds memory at about 40 bytes x chunk x years.
    chunk: int = 200_000

    def __post_init__(self) -> None:
        if not self.s > 1:
            raise ConfigError(f"burst s is {self.s}; the bursty rate must exceed the base rate: use s > 1 (default 2)")
        if not self.gamma > 0:
            raise ConfigError(f"burst gamma is {self.gamma}; the cost of a burst must be positive (default 1)")
        if self.min_duration < 1:
            raise ConfigError(f"minimum burst duration is {self.min_duration}; use 1 year or more (default 2)")
        if self.chunk < 1:
            raise ConfigError(f"burst chunk is {self.chunk}; use 1 or more works per pass (default 200000)")


def state_costs(r: np.ndarray, d: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """σ(0, r_t, d_t) and σ(1, r_t, d_t) for every work (row) and year (column).

    Args:
        r: ``[works, years]`` citations of each work per year (each at most ``d``).
        d: ``[years]`` citing documents per year.
        s: rate ratio of the bursty state.

    Returns:
        Two ``[works, years]`` float64 arrays; +inf where a state cannot emit ``r_t`` (p = 1 and r_t < d_t).
    """
    r = np.asarray(r, dtype=np.float64)
    d = np.broadcast_to(np.asarray(d, dtype=np.float64), r.shape)
    total = d.sum(axis=1, keepdims=True)
    p0 = np.divide(r.sum(axis=1, keepdims=True), total, out=np.zeros_like(total), where=total > 0)
    p1 = np.minimum(s * p0, 1.0)  # Kleinberg's p_i = p_0 s^i, a probability only up to 1
    return -binom.logpmf(r, d, p0), -binom.logpmf(r, d, p1)


def optimal_states(cost0: np.ndarray, cost1: np.ndarray, gamma: float) -> np.ndarray:
    """The minimum-cost state sequence of the two-state automaton (Viterbi), ``[works, years]`` of 0/1.

    Starts in state 0; entering state 1 costs γ ln n (n = years), leaving it is free. On a tie the
    lower state wins, so a burst is reported only where it strictly lowers the cost.
    """
    works, years = cost0.shape
    states = np.zeros((works, years), dtype=np.int8)
    if years == 0 or works == 0:
        return states
    up = gamma * np.log(years) if years > 1 else 0.0
    # from_one[w, t]: the best path into state q at t came from state 1 at t-1 (one bit per state)
    came_from_one_to0 = np.zeros((works, years), dtype=bool)
    came_from_one_to1 = np.zeros((works, years), dtype=bool)
    best0 = cost0[:, 0].copy()  # in state 0 at t = 0: no transition
    best1 = cost1[:, 0] + up  # the automaton starts in state 0, so state 1 at t = 0 pays the move up
    for t in range(1, years):
        stay0, down = best0, best1  # into state 0: from 0 (free) or from 1 (free)
        from1_to0 = down < stay0
        rise, stay1 = best0 + up, best1  # into state 1: from 0 (pay up) or stay
        from1_to1 = stay1 <= rise  # ties: staying in 1 and rising cost the same; either gives the same cost
        came_from_one_to0[:, t] = from1_to0
        came_from_one_to1[:, t] = from1_to1
        best0 = np.where(from1_to0, down, stay0) + cost0[:, t]
        best1 = np.where(from1_to1, stay1, rise) + cost1[:, t]
    state = (best1 < best0).astype(np.int8)  # ties end in state 0
    for t in range(years - 1, -1, -1):
        states[:, t] = state
        if t:
            from_one = np.where(state == 1, came_from_one_to1[:, t], came_from_one_to0[:, t])
            state = from_one.astype(np.int8)
    return states


def detect_bursts(r: np.ndarray, d: np.ndarray, settings: BurstSettings | None = None) -> pd.DataFrame:
    """Every burst of every work: ``row`` (the work's row of ``r``), ``begin``, ``end`` (year columns,
    inclusive), ``strength`` (Kleinberg's weight), for runs of at least ``settings.min_duration`` years.

    ``r`` is ``[works, years]`` (dense, or any SciPy sparse matrix: processed ``settings.chunk`` rows at a
    time), ``d`` is ``[years]``; each ``r[w, t] <= d[t]``.
    """
    settings = settings or BurstSettings()
    d = np.asarray(d, dtype=np.float64)
    works = r.shape[0]
    if r.shape[1] != len(d):
        raise ValueError(f"r has {r.shape[1]} year columns but d has {len(d)} years")
    found = []
    for start in range(0, works, settings.chunk):
        block = r[start : start + settings.chunk]
        block = block.toarray() if hasattr(block, "toarray") else np.asarray(block)
        if (block > d).any():
            raise ValueError("a work has more citations in a year than that year has citing documents (r_t > d_t)")
        cost0, cost1 = state_costs(block, d, settings.s)
        states = optimal_states(cost0, cost1, settings.gamma)
        found.append(_runs(states, cost0 - cost1, settings.min_duration, offset=start))
    if not found:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c != "strength" else "float64") for c in BURST_COLUMNS})
    return pd.concat(found, ignore_index=True)


def _runs(states: np.ndarray, gain: np.ndarray, min_duration: int, *, offset: int) -> pd.DataFrame:
    """Maximal runs of state 1 per row, with their summed gain σ0 − σ1, at least ``min_duration`` long."""
    padded = np.pad(states, ((0, 0), (1, 1)))
    edges = np.diff(padded.astype(np.int8), axis=1)
    rows_up, begin = np.nonzero(edges == 1)  # row-major: runs come in row order, then by time
    _, after = np.nonzero(edges == -1)  # the k-th fall closes the k-th rise (same row-major order)
    end = after - 1
    keep = end - begin + 1 >= min_duration
    rows_up, begin, end = rows_up[keep], begin[keep], end[keep]
    # A year of a run has a finite σ1 (the path chose state 1 there) and σ0 is finite wherever r_t <= d_t;
    # years outside every run may have σ1 = +inf (p1 = 1, r_t < d_t): zeroed so the running sums stay finite.
    finite = np.where(np.isfinite(gain), gain, 0.0)
    cumulative = np.concatenate([np.zeros((gain.shape[0], 1)), np.cumsum(finite, axis=1)], axis=1)
    strength = cumulative[rows_up, end + 1] - cumulative[rows_up, begin]
    return pd.DataFrame({"row": rows_up + offset, "begin": begin, "end": end, "strength": strength})


def strongest_bursts(bursts: pd.DataFrame) -> pd.DataFrame:
    """Each work's strongest burst (the earliest on a tie), one row per ``row``."""
    if bursts.empty:
        return bursts
    ordered = bursts.sort_values(["row", "strength", "begin"], ascending=[True, False, True], kind="stable")
    return ordered.drop_duplicates("row").reset_index(drop=True)


__all__ = ["BURST_COLUMNS", "BurstSettings", "detect_bursts", "optimal_states", "state_costs", "strongest_bursts"]
