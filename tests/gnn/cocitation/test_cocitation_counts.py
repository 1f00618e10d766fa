"""Co-citation counts (the ESC, torch and SciPy products) and normalised strengths, by hand and at random."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from gnn.cocitation.counts import (
    association_strength,
    cooccurrence,
    count_pairs,
    count_pairs_bounded,
    inclusion_index,
    jaccard_index,
    salton_cosine,
)
from graph.errors import ConfigError
from tests.gnn.cocite_graph import CITED_BY, COCITED, MENTIONS, SENTENCE, citations, pairs_of

CPU = torch.device("cpu")


# counts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["esc", "torch", "scipy"])
def test_cocitation_counts_by_hand(engine: str) -> None:
    frame = citations()
    counts = cooccurrence(frame["citing"], frame["cited"], device=CPU, engine=engine)
    assert list(counts.ids) == ["a", "b", "c", "d", "y"]
    assert pairs_of(counts) == COCITED
    assert dict(zip(counts.ids, counts.occurrences.tolist())) == CITED_BY
    assert counts.n_members == 3
    assert all(counts.ids[i] < counts.ids[j] for i, j in zip(counts.i, counts.j))


@pytest.mark.parametrize("engine", ["esc", "torch", "scipy"])
def test_sentence_level_and_coupling_counts_by_hand(engine: str) -> None:
    frame = citations()
    cocite = cooccurrence(frame["citing"], frame["cited"], device=CPU, engine=engine)
    mentions = pd.DataFrame(MENTIONS, columns=["sentence", "cited"])
    sentence = cooccurrence(mentions["sentence"], mentions["cited"], ids=cocite.ids, device=CPU, engine=engine)
    assert pairs_of(sentence) == SENTENCE
    coupling = cooccurrence(frame["cited"], frame["citing"], device=CPU, engine=engine)
    assert pairs_of(coupling) == {("x", "y"): 2, ("x", "z"): 1, ("y", "z"): 1}
    assert coupling.occurrences.tolist() == [3, 2, 3]  # references of x, y, z


def test_repeated_incidence_counts_once() -> None:
    counts = cooccurrence(["x", "x", "x", "y"], ["a", "b", "a", "b"], device=CPU)
    assert pairs_of(counts) == {("a", "b"): 1}
    assert counts.occurrences.tolist() == [1, 2]


def test_ids_outside_the_index_are_dropped() -> None:
    counts = cooccurrence(["s", "s", "s"], ["a", "b", "q"], ids=pd.Index(["b", "a"]), device=CPU)
    assert list(counts.ids) == ["a", "b"] and pairs_of(counts) == {("a", "b"): 1}


def test_empty_input_gives_no_pairs() -> None:
    for engine in ("torch", "scipy"):
        counts = cooccurrence([], [], device=CPU, engine=engine)
        assert len(counts) == 0 and len(counts.ids) == 0


def random_incidence(seed: int, members: int = 3000, items: int = 800, nnz: int = 20000) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    # Zipf-like item popularity, as citation counts are: many pairs, a few heavy ones.
    popularity = 1.0 / np.arange(1, items + 1) ** 0.8
    cited = rng.choice(items, size=nnz, p=popularity / popularity.sum())
    return rng.integers(0, members, size=nnz), cited


@pytest.mark.parametrize("seed", [0, 1])
def test_torch_and_scipy_paths_agree_exactly(seed: int) -> None:
    members, items = random_incidence(seed)
    by_torch = cooccurrence(members, items, device=CPU, engine="torch")
    by_scipy = cooccurrence(members, items, engine="scipy")
    assert by_torch.ids.equals(by_scipy.ids)
    for name in ("i", "j", "count", "occurrences"):
        np.testing.assert_array_equal(getattr(by_torch, name), getattr(by_scipy, name))
    assert by_torch.n_members == by_scipy.n_members
    assert len(by_torch) > 10_000  # a real test, not two empty results


@pytest.mark.parametrize("seed", [0, 1])
def test_esc_agrees_with_scipy_exactly(seed: int) -> None:
    members, items = random_incidence(seed)
    by_esc = cooccurrence(members, items, device=CPU, engine="esc")
    by_scipy = cooccurrence(members, items, engine="scipy")
    assert by_esc.ids.equals(by_scipy.ids)
    for name in ("i", "j", "count", "occurrences"):
        np.testing.assert_array_equal(getattr(by_esc, name), getattr(by_scipy, name))
    assert by_esc.n_members == by_scipy.n_members
    assert len(by_esc) > 10_000


def test_esc_in_small_chunks_and_with_torch_gives_the_same_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunked expansion and the device variant (the CUDA code, here on the CPU) change nothing.

    ESC_CHUNK = 97 cuts the NumPy expansion inside rows and the device variant's first-item ranges
    into dozens, so the order in which ranges are concatenated is exercised too.
    """
    import gnn.cocitation.counts as module

    members, items = random_incidence(4)
    reference = cooccurrence(members, items, engine="scipy")
    member_codes = pd.factorize(pd.Series(members))[0].astype(np.int64)
    item_codes = reference.ids.get_indexer(items).astype(np.int64)
    codes = np.unique(member_codes * 800 + item_codes)
    rows, cols = codes // 800, codes % 800
    monkeypatch.setattr(module, "ESC_CHUNK", 97)
    i, j, count = module._gram_upper_esc(rows, cols, 800)
    on_device = module._count_pairs_esc_torch(member_codes, item_codes, 800, CPU)
    for got in ((i, j, count), on_device[:3]):
        np.testing.assert_array_equal(got[0], reference.i)
        np.testing.assert_array_equal(got[1], reference.j)
        np.testing.assert_array_equal(got[2], reference.count)
    np.testing.assert_array_equal(on_device[3][: len(reference.ids)], reference.occurrences)
    assert on_device[4] == reference.n_members


def test_device_variant_handles_empty_and_single_rows() -> None:
    import gnn.cocitation.counts as module

    empty = np.empty(0, dtype=np.int64)
    i, j, count, occurrences, n_members = module._count_pairs_esc_torch(empty, empty, 5, CPU)
    assert len(i) == len(count) == 0 and n_members == 0 and occurrences.tolist() == [0] * 5
    i, j, count, occurrences, n_members = module._count_pairs_esc_torch(
        np.array([7, 7, 7, 9]), np.array([0, 2, 2, 3]), 5, CPU
    )
    assert list(zip(i.tolist(), j.tolist(), count.tolist())) == [(0, 2, 1)]
    assert occurrences.tolist() == [1, 0, 1, 1, 0] and n_members == 2


def test_count_pairs_takes_sparse_member_codes() -> None:
    """Members may be any non-negative codes (e.g. the store's row offsets), not only 0..m-1."""
    members, items = random_incidence(5, members=400, items=100, nnz=3000)
    dense = cooccurrence(members, items, device=CPU)
    sparse_members = members.astype(np.int64) * 1_000_003 + 17
    for engine in ("esc", "torch", "scipy"):
        codes = count_pairs(sparse_members, dense.ids.get_indexer(items), dense.ids, device=CPU, engine=engine)
        np.testing.assert_array_equal(codes.count, dense.count)
        np.testing.assert_array_equal(codes.i, dense.i)
        assert codes.n_members == dense.n_members


def test_counts_match_a_dense_product() -> None:
    members, items = random_incidence(2, members=200, items=60, nnz=1500)
    counts = cooccurrence(members, items, device=CPU)
    dense = np.zeros((200, 60), dtype=np.int64)
    dense[members, counts.ids.get_indexer(items)] = 1
    gram = dense.T @ dense
    upper = np.triu(gram, k=1)
    assert int(upper.sum()) == int(counts.count.sum())
    np.testing.assert_array_equal(upper[counts.i, counts.j], counts.count)
    np.testing.assert_array_equal(np.diag(gram), counts.occurrences)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_and_cpu_paths_agree_exactly() -> None:
    members, items = random_incidence(3, members=50_000, items=5_000, nnz=400_000)
    on_gpu = cooccurrence(members, items, device="cuda")
    on_cpu = cooccurrence(members, items, engine="scipy")
    for name in ("i", "j", "count", "occurrences"):
        np.testing.assert_array_equal(getattr(on_gpu, name), getattr(on_cpu, name))


def test_unknown_engine_is_refused() -> None:
    with pytest.raises(ConfigError, match="engine"):
        cooccurrence(["x"], ["a"], engine="dense")


# normalised strengths --------------------------------------------------------------------------


def test_each_normalisation_by_hand() -> None:
    # (a, b): c = 2, s = 2, 3, N = 3;  (d, y): c = 1, s = 1, 1
    c, s_i, s_j = np.array([2, 1]), np.array([2, 1]), np.array([3, 1])
    np.testing.assert_allclose(association_strength(c, s_i, s_j, total=3), [1.0, 3.0])
    np.testing.assert_allclose(salton_cosine(c, s_i, s_j), [2 / math.sqrt(6), 1.0])
    np.testing.assert_allclose(jaccard_index(c, s_i, s_j), [2 / 3, 1.0])
    np.testing.assert_allclose(inclusion_index(c, s_i, s_j), [1.0, 1.0])


def test_inclusion_and_jaccard_differ_when_one_paper_is_popular() -> None:
    # 1 co-citation between a paper cited once and one cited 10 times: fully included, barely overlapping
    assert inclusion_index([1], [1], [10])[0] == 1.0
    assert jaccard_index([1], [1], [10])[0] == pytest.approx(0.1)
    assert salton_cosine([1], [1], [10])[0] == pytest.approx(1 / math.sqrt(10))
    assert association_strength([1], [1], [10], total=20)[0] == pytest.approx(2.0)


@pytest.mark.parametrize(("chunk", "min_count"), [(97, 1), (97, 3), (1 << 24, 2), (1, 1)])
def test_bounded_count_in_item_ranges_equals_the_full_product(chunk: int, min_count: int) -> None:
    """count_pairs_bounded against SciPy's full product, its pairs under min_count dropped: chunk 97 cuts the
    first items into dozens of ranges, chunk 1 gives every item its own range."""
    members, items = random_incidence(5)
    reference = cooccurrence(members, items, engine="scipy")
    member_codes = pd.factorize(pd.Series(members))[0].astype(np.int64)
    got = count_pairs_bounded(
        member_codes, reference.ids.get_indexer(items), reference.ids, min_count=min_count, chunk=chunk
    )
    keep = reference.count >= min_count
    assert keep.sum() > 1_000 and (min_count == 1 or not keep.all())
    np.testing.assert_array_equal(got.i, reference.i[keep])
    np.testing.assert_array_equal(got.j, reference.j[keep])
    np.testing.assert_array_equal(got.count, reference.count[keep])
    np.testing.assert_array_equal(got.occurrences, reference.occurrences)
    assert got.n_members == reference.n_members
    with pytest.raises(ConfigError, match="min_count"):
        count_pairs_bounded(member_codes, items, reference.ids, min_count=0)
