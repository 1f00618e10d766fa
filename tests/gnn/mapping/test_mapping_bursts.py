"""Kleinberg's two-state burst automaton: a series worked by hand, brute force over every state sequence,
a flat series, and a spike that bursts exactly in its years."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from gnn.mapping.bursts import BurstSettings, detect_bursts, optimal_states, state_costs, strongest_bursts
from graph.errors import ConfigError


def test_costs_states_and_strength_by_hand() -> None:
    # d_t = 4 citing documents in each of 4 years; the work is cited r = 0, 0, 4, 0 times.
    # p0 = R / D = 4 / 16 = 0.25; p1 = s p0 = 0.5 (s = 2).
    # sigma(0, 0, 4) = -ln(0.75^4) = 1.150728     sigma(0, 4, 4) = -ln(0.25^4) = 5.545177
    # sigma(1, 0, 4) = sigma(1, 4, 4) = -ln(0.5^4) = 2.772589
    # tau = gamma ln n = ln 4 = 1.386294 to move up.
    # q = 0000: 3(1.150728) + 5.545177                         = 8.997362
    # q = 0010: 3(1.150728) + 2.772589 + 1.386294              = 7.611066  <- the optimum
    # q = 0011: 2(1.150728) + 2(2.772589) + 1.386294           = 9.232928
    # burst weight over year 2: sigma(0) - sigma(1) = 5.545177 - 2.772589 = 4 ln 2 = 2.772589
    d = np.array([4, 4, 4, 4])
    r = np.array([[0, 0, 4, 0]])
    cost0, cost1 = state_costs(r, d, 2.0)
    np.testing.assert_allclose(cost0, [[1.150728, 1.150728, 5.545177, 1.150728]], atol=1e-6)
    np.testing.assert_allclose(cost1, [[2.772589] * 4], atol=1e-6)
    assert optimal_states(cost0, cost1, 1.0).tolist() == [[0, 0, 1, 0]]
    one_year = detect_bursts(r, d, BurstSettings(min_duration=1))
    assert one_year[["row", "begin", "end"]].values.tolist() == [[0, 2, 2]]
    assert one_year["strength"].iloc[0] == pytest.approx(4 * math.log(2), rel=1e-12)
    # CiteSpace's default minimum duration of 2 years drops this one-year burst
    assert detect_bursts(r, d).empty
    # a dearer move up (gamma = 2.5: tau = 3.465736) makes q = 0010 cost 9.690508 > 8.997362: no burst
    assert optimal_states(cost0, cost1, 2.5).tolist() == [[0, 0, 0, 0]]


def _brute_force(r: np.ndarray, d: np.ndarray, s: float, gamma: float) -> tuple[int, ...]:
    """The cheapest state sequence by enumeration, costs from math.comb and logs (no SciPy)."""
    n = len(d)
    p0 = r.sum() / d.sum()
    rates = (p0, min(s * p0, 1.0))

    def sigma(i: int, t: int) -> float:
        p, k, m = rates[i], int(r[t]), int(d[t])
        likelihood = math.comb(m, k) * p**k * (1 - p) ** (m - k)
        return math.inf if likelihood == 0 else -math.log(likelihood)

    best: tuple[float, tuple[int, ...]] = (math.inf, ())
    for states in itertools.product((0, 1), repeat=n):
        cost, previous = 0.0, 0
        for t, q in enumerate(states):
            cost += sigma(q, t) + (gamma * math.log(n) if q > previous else 0.0)
            previous = q
        # strictly cheaper wins; on a tie the sequence with fewer bursty years (then the lower one) is kept
        key = (round(cost, 9), sum(states), states)
        if best[0] == math.inf or key < (round(best[0], 9), sum(best[1]), best[1]):
            best = (cost, states)
    return best[1]


def test_viterbi_matches_enumeration_of_every_state_sequence() -> None:
    rng = np.random.default_rng(7)
    d = rng.integers(5, 30, size=7)
    r = np.stack([rng.binomial(d, p) for p in rng.uniform(0.05, 0.6, size=40)])
    r[:10, 2:4] = d[2:4]  # some series cited by every document for two years
    for s, gamma in [(2.0, 1.0), (3.0, 0.5)]:
        cost0, cost1 = state_costs(r, d, s)
        states = optimal_states(cost0, cost1, gamma)
        for row in range(len(r)):
            assert tuple(states[row]) == _brute_force(r[row], d, s, gamma), (row, s, gamma)


def test_a_flat_series_has_no_burst() -> None:
    d = np.full(12, 50)
    r = np.full((1, 12), 15)  # cited by 30% of each year's documents, every year
    assert not optimal_states(*state_costs(r, d, 2.0), 1.0).any()
    assert detect_bursts(r, d, BurstSettings(min_duration=1)).empty


def test_a_spike_bursts_exactly_in_its_years() -> None:
    d = np.full(10, 20)
    r = np.array([[1, 1, 1, 1, 12, 14, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2, 2, 2]])
    bursts = detect_bursts(sp.csr_matrix(r), d)  # sparse input, as the compute step passes it
    assert bursts[["row", "begin", "end"]].values.tolist() == [[0, 4, 5]]
    cost0, cost1 = state_costs(r[:1], d, 2.0)
    assert bursts["strength"].iloc[0] == pytest.approx(float((cost0 - cost1)[0, 4:6].sum()), rel=1e-12)
    assert bursts["strength"].iloc[0] > 0


def test_chunks_give_the_same_bursts_and_strongest_keeps_one_per_work() -> None:
    d = np.full(12, 10)
    r = np.array([[0, 6, 6, 0, 0, 0, 0, 0, 7, 7, 7, 0], [1] * 12, [0, 0, 0, 0, 0, 5, 5, 0, 0, 0, 0, 0]])
    whole = detect_bursts(r, d)
    assert whole.equals(detect_bursts(r, d, BurstSettings(chunk=1)))
    assert whole[["row", "begin", "end"]].values.tolist() == [[0, 1, 2], [0, 8, 10], [2, 5, 6]]
    strongest = strongest_bursts(whole)
    assert strongest["row"].tolist() == [0, 2]
    assert strongest.loc[0, "strength"] == whole[whole["row"] == 0]["strength"].max()


def test_settings_and_inputs_are_checked() -> None:
    with pytest.raises(ConfigError, match="s > 1"):
        BurstSettings(s=1.0)
    with pytest.raises(ConfigError, match="gamma"):
        BurstSettings(gamma=0)
    with pytest.raises(ConfigError, match="1 year or more"):
        BurstSettings(min_duration=0)
    with pytest.raises(ValueError, match="r_t > d_t"):
        detect_bursts(np.array([[3, 0]]), np.array([2, 2]))


def test_a_work_cited_by_most_documents_gets_a_finite_strength() -> None:
    # p0 = 36 / 60 = 0.6, so p1 = min(2 * 0.6, 1) = 1: the bursty state cannot emit r_t < d_t (sigma1 = inf in
    # 2000-2002) and emits r_t = d_t at no cost; the burst of the last three years weighs sum sigma(0) there.
    d = np.full(6, 10)
    r = np.array([[2, 2, 2, 10, 10, 10]])
    bursts = detect_bursts(r, d)
    assert bursts[["row", "begin", "end"]].values.tolist() == [[0, 3, 5]]
    assert bursts["strength"].iloc[0] == pytest.approx(-3 * 10 * math.log(0.6), rel=1e-12)
