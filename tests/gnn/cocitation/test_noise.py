"""Noise distributions (MP-BERT4CR eq. 1-2) and their samplers, on the hand-checkable graph and seeded random ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.cocitation.counts import PairCounts, cooccurrence
from gnn.cocitation.noise import (
    NoiseDistributions,
    NoiseSampler,
    negative_distribution,
    noise_distributions,
    top_partners,
)
from graph import GraphStore
from graph.errors import ConfigError
from tests.gnn.cocite_graph import CITES, open_cocite_store

CPU = torch.device("cpu")
W = 2**0.75  # freq 2 at α = 3/4


def partners_of(noise: NoiseDistributions, target: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Partner indices and probabilities of one target, most probable first (a row of the CSR layout)."""
    start, stop = int(noise.indptr[target]), int(noise.indptr[target + 1])
    return noise.partners[start:stop], noise.probs[start:stop]


def hand_counts() -> PairCounts:
    frame = pd.DataFrame(CITES, columns=["citing", "cited"])
    return cooccurrence(frame["citing"], frame["cited"], device=CPU)


def hand_noise(power: float = 0.75) -> NoiseDistributions:
    return noise_distributions(hand_counts(), power=power, device=CPU)


def partners(noise: NoiseDistributions, paper: str) -> dict[str, float]:
    indices, probs = partners_of(noise, int(noise.index([paper])[0]))
    return dict(zip(noise.ids[indices.numpy()], probs.tolist()))


def random_noise(seed: int = 0, *, power: float = 0.75) -> NoiseDistributions:
    """400 citing papers, 2000 citations of 120 papers with Zipf popularity."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, 121)
    cited = rng.choice(120, size=2000, p=popularity / popularity.sum())
    counts = cooccurrence(rng.integers(0, 400, size=2000), cited, device=CPU)
    return noise_distributions(counts, power=power, device=CPU)


# distributions ---------------------------------------------------------------------------------


def test_positive_distribution_by_hand() -> None:
    noise = hand_noise()
    # a: b (freq 2), c (freq 1)
    assert partners(noise, "a") == pytest.approx({"b": W / (W + 1), "c": 1 / (W + 1)}, rel=1e-12)
    # b: a (2), c, d, y (1 each)
    assert partners(noise, "b") == pytest.approx(
        {"a": W / (W + 3), "c": 1 / (W + 3), "d": 1 / (W + 3), "y": 1 / (W + 3)}
    )
    assert list(partners(noise, "b")) == ["a", "c", "d", "y"]  # by probability, then id
    assert partners(noise, "y") == pytest.approx({"b": 0.5, "d": 0.5})


def test_negative_distribution_by_hand() -> None:
    noise = hand_noise()
    weights = {"a": 2**0.75, "b": 3**0.75, "c": 1.0, "d": 1.0, "y": 1.0}
    expected = [weights[p] / sum(weights.values()) for p in noise.ids]
    np.testing.assert_allclose(noise.negative.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("power", [0.0, 0.5, 0.75, 1.0])
def test_distributions_sum_to_one(power: float) -> None:
    noise = random_noise(power=power)
    row_sums = torch.zeros(len(noise), dtype=torch.float64).index_add_(
        0, torch.repeat_interleave(torch.arange(len(noise)), noise.indptr.diff()), noise.probs
    )
    has_partners = noise.indptr.diff() > 0
    torch.testing.assert_close(row_sums[has_partners], torch.ones(int(has_partners.sum()), dtype=torch.float64))
    assert float(noise.negative.sum()) == pytest.approx(1.0, abs=1e-12)
    assert bool((noise.probs > 0).all()) and bool((noise.negative >= 0).all())


def test_lower_power_moves_mass_towards_rare_pairs() -> None:
    # For b, a is the frequent partner (2) and c the rare one (1): as α drops, c gains and a loses.
    rare = [partners(hand_noise(power), "b")["c"] for power in (1.0, 0.75, 0.5, 0.0)]
    frequent = [partners(hand_noise(power), "b")["a"] for power in (1.0, 0.75, 0.5, 0.0)]
    assert rare == sorted(rare) and rare[0] == pytest.approx(1 / 5) and rare[-1] == pytest.approx(1 / 4)
    assert frequent == sorted(frequent, reverse=True) and frequent[0] == pytest.approx(2 / 5)
    # the same for the negatives: the rarely cited c gains, the popular b loses
    c, b = (int(i) for i in hand_noise().index(["c", "b"]))
    negatives = [hand_noise(power).negative for power in (1.0, 0.75, 0.5, 0.0)]
    assert [float(p[c]) for p in negatives] == sorted(float(p[c]) for p in negatives)
    assert [float(p[b]) for p in negatives] == sorted((float(p[b]) for p in negatives), reverse=True)
    assert float(negatives[-1][c]) == pytest.approx(1 / 5)  # α = 0: uniform over cited papers


@pytest.mark.parametrize("power", [0.0, 0.5, 0.75, 1.0])
def test_sorted_key_path_equals_the_general_csr_path(power: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-sort integer-key CSR equals three stable argsorts (the overflow fallback), exactly."""
    import gnn.cocitation.noise as module

    rng = np.random.default_rng(7)
    popularity = 1.0 / np.arange(1, 301) ** 0.9
    counts = cooccurrence(
        rng.integers(0, 2000, size=12000), rng.choice(300, size=12000, p=popularity / popularity.sum()), device=CPU
    )
    fast = noise_distributions(counts, power=power, device=CPU)
    monkeypatch.setattr(module, "_KEY_LIMIT", 0)  # every key "overflows": the general path
    general = noise_distributions(counts, power=power, device=CPU)
    assert len(fast.partners) > 20_000
    torch.testing.assert_close(fast.indptr, general.indptr, rtol=0, atol=0)
    torch.testing.assert_close(fast.partners, general.partners, rtol=0, atol=0)
    torch.testing.assert_close(fast.probs, general.probs, rtol=0, atol=0)


def test_top_partners_are_arrow_lists_without_python_objects() -> None:
    table = top_partners(random_noise(), 3)
    assert isinstance(table["cocite_partners"].dtype, pd.ArrowDtype)
    assert isinstance(table["cocite_probs"].dtype, pd.ArrowDtype)
    lengths = table["cocite_partners"].map(len)
    assert lengths.max() == 3 and lengths.min() >= 1
    heads = table["cocite_probs"].map(sum) + table["cocite_tail"]
    np.testing.assert_allclose(heads.to_numpy(dtype=float), 1.0, rtol=1e-12)


def test_uncited_papers_get_no_negative_mass_even_at_power_zero() -> None:
    p = negative_distribution(torch.tensor([0, 2, 0, 1]), power=0.0)
    torch.testing.assert_close(p, torch.tensor([0.0, 0.5, 0.0, 0.5], dtype=torch.float64))
    assert negative_distribution(torch.zeros(3), power=0.75).sum() == 0


def test_top_partners_keeps_the_head_and_the_tail_mass() -> None:
    table = top_partners(hand_noise(), 2).set_index("id")
    assert table.loc["b", "cocite_partners"] == ["a", "c"]
    assert table.loc["b", "cocite_tail"] == pytest.approx(2 / (W + 3), rel=1e-12)
    assert table.loc["a", "cocite_tail"] == 0.0
    totals = table["cocite_probs"].map(sum) + table["cocite_tail"]
    np.testing.assert_allclose(totals.to_numpy(dtype=float), 1.0, atol=1e-12)
    assert set(table.index) == {"a", "b", "c", "d", "y"}


# samplers --------------------------------------------------------------------------------------


def test_sampler_is_deterministic_under_a_seed() -> None:
    noise = random_noise()
    targets = torch.arange(0, 40)
    exclude = [[int(t) + 1] for t in targets]
    first, again, other = (NoiseSampler(noise, seed=s, device=CPU) for s in (7, 7, 8))
    draws = [
        (s.positives(targets, 5, exclude=exclude), s.negatives(targets, 6, exclude=exclude)) for s in (first, again)
    ]
    assert torch.equal(draws[0][0], draws[1][0]) and torch.equal(draws[0][1], draws[1][1])
    assert not torch.equal(draws[0][1], other.negatives(targets, 6, exclude=exclude))
    # later calls continue the same stream: equal again after the same sequence of calls
    assert torch.equal(first.negatives(targets, 3), again.negatives(targets, 3))


def test_positives_are_partners_and_never_excluded() -> None:
    noise = random_noise()
    sampler = NoiseSampler(noise, seed=0, device=CPU)
    targets = torch.arange(len(noise))
    exclude = [partners_of(noise, int(t))[0][:1].tolist() for t in targets]  # ban each target's top partner
    draws = sampler.positives(targets, 8, exclude=exclude)
    assert draws.shape == (len(noise), 8)
    for t, row in zip(targets.tolist(), draws.tolist()):
        allowed = set(partners_of(noise, t)[0].tolist()) - set(exclude[t]) - {t}
        if allowed:
            assert set(row) <= allowed
        else:
            assert row == [-1] * 8


def test_positives_follow_the_distribution() -> None:
    noise = hand_noise()
    b = int(noise.index(["b"])[0])
    draws = NoiseSampler(noise, seed=1, device=CPU).positives(torch.full((20_000,), b), 1).flatten()
    frequencies = torch.bincount(draws, minlength=len(noise)).double() / len(draws)
    indices, probs = partners_of(noise, b)
    torch.testing.assert_close(frequencies[indices], probs, atol=0.015, rtol=0)


def test_positives_without_replacement_are_distinct_and_padded() -> None:
    noise = hand_noise()
    a, b = (int(i) for i in noise.index(["a", "b"]))
    draws = NoiseSampler(noise, seed=0, device=CPU).positives([a, b], 3, replacement=False)
    assert sorted(draws[0].tolist()) == sorted([*noise.index(["b", "c"]).tolist(), -1])  # a has two partners
    assert len(set(draws[1].tolist())) == 3 and -1 not in draws[1].tolist()


def test_negatives_never_return_the_target_or_the_query_citations() -> None:
    noise = random_noise()
    sampler = NoiseSampler(noise, seed=3, device=CPU)
    targets = torch.arange(len(noise))
    cited = torch.nonzero(noise.negative > 0).flatten()
    exclude = [cited[(t * 7) % len(cited) : (t * 7) % len(cited) + 5].tolist() for t in targets.tolist()]
    draws = sampler.negatives(targets, 16, exclude=exclude)
    assert draws.shape == (len(noise), 16) and bool((draws >= 0).all())
    for t, row in zip(targets.tolist(), draws.tolist()):
        assert t not in row and not set(row) & set(exclude[t])
        assert all(float(noise.negative[i]) > 0 for i in row)  # never an uncited paper


def test_negatives_follow_the_distribution() -> None:
    noise = hand_noise()
    draws = NoiseSampler(noise, seed=2, device=CPU).negatives(torch.zeros(5_000, dtype=torch.int64), 4).flatten()
    # target 0 (a) is excluded: the rest follows p renormalised without a
    expected = noise.negative.clone()
    expected[0] = 0
    expected /= expected.sum()
    frequencies = torch.bincount(draws, minlength=len(noise)).double() / len(draws)
    torch.testing.assert_close(frequencies, expected, atol=0.01, rtol=0)


def test_negatives_when_almost_everything_is_excluded() -> None:
    noise = hand_noise()
    sampler = NoiseSampler(noise, seed=0, device=CPU)
    everything_but_c = noise.index(["a", "b", "d", "y"]).tolist()
    b = noise.index(["b"]).tolist()
    # row 0: only c is left, so every draw is c; row 1: nothing is left, so -1.
    draws = sampler.negatives(b * 2, 4, exclude=[everything_but_c, [*everything_but_c, *noise.index(["c"]).tolist()]])
    c = int(noise.index(["c"])[0])
    assert draws[0].tolist() == [c] * 4
    assert draws[1].tolist() == [-1] * 4


def test_exact_path_for_heavily_excluded_rows() -> None:
    # One paper holds almost all the mass; excluding it leaves < 5 % for the rest: the exact path runs.
    counts = cooccurrence(
        [f"q{k}" for k in range(1000)] + ["r1", "r2", "r3"], ["hub"] * 1000 + ["p", "q", "r"], device=CPU
    )
    noise = noise_distributions(counts, power=1.0, device=CPU)
    hub, p = (int(i) for i in noise.index(["hub", "p"]))
    sampler = NoiseSampler(noise, seed=0, device=CPU)
    assert 1 - float(noise.negative[hub]) < NoiseSampler.REJECTION_FLOOR
    draws = sampler.negatives([p, p], 50, exclude=[[hub], []])
    assert hub not in draws[0].tolist() and p not in draws[0].tolist() and bool((draws[0] >= 0).all())
    assert hub in draws[1].tolist()


def test_sampler_refuses_bad_input() -> None:
    noise = hand_noise()
    sampler = NoiseSampler(noise, seed=0, device=CPU)
    with pytest.raises(ConfigError, match="target indices"):
        sampler.negatives([99], 2)
    with pytest.raises(ConfigError, match="one list per target"):
        sampler.negatives([0, 1], 2, exclude=[[2]])
    with pytest.raises(ConfigError, match="not cited papers"):
        noise.index(["x"])
    assert repr(sampler) == "NoiseSampler(papers=5, power=0.75, seed=0, device=cpu)"


# from the store --------------------------------------------------------------------------------


@pytest.fixture
def cocite_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_cocite_store(tmp_path) as store:
        yield store


def test_distributions_read_back_from_the_store(cocite_store: GraphStore) -> None:
    compute_cocitation(cocite_store, CocitationSettings(device="cpu", top_m=2))
    stored = NoiseDistributions.from_store(cocite_store)
    assert list(stored.ids) == ["a", "b", "c", "d", "y"] and stored.power is None
    torch.testing.assert_close(stored.negative, hand_noise().negative)
    # b kept a and c (top 2), renormalised: W : 1
    assert partners(stored, "b") == pytest.approx({"a": W / (W + 1), "c": 1 / (W + 1)})
    draws = NoiseSampler(stored, seed=0, device=CPU).positives(stored.index(["b"]), 50)
    assert set(draws.flatten().tolist()) <= set(stored.index(["a", "c"]).tolist())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_sampler_on_cuda() -> None:
    noise = random_noise()
    sampler = NoiseSampler(noise, seed=0, device="cuda")
    targets = torch.arange(len(noise), device="cuda")
    draws = sampler.negatives(targets, 8, exclude=[[int(t)] for t in targets])
    assert draws.device.type == "cuda" and bool((draws != targets[:, None]).all())
    again = NoiseSampler(noise, seed=0, device="cuda").negatives(targets, 8, exclude=[[int(t)] for t in targets])
    assert torch.equal(draws, again)
