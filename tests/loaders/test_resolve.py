"""Title resolution: near duplicates found, different titles and ambiguous ones left alone."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from loaders import anthology
from loaders.resolve import TitleIndex, TitleIndexConfig, normalise_title, similarity, title_candidates

PAIRS = [
    ("P1", "Attention Is All You Need"),
    ("P2", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"),
    ("P3", "Neural Machine Translation by Jointly Learning to Align and Translate"),
    ("P4", "Statistical Phrase-Based Translation"),
    ("P5", "Preface"),  # too short to index
    ("P6", "Proceedings of the Workshop on Parsing"),  # listed twice under different ids: ambiguous
    ("P7", "Proceedings of the Workshop on Parsing"),
    ("P8", "Café au lait: Learning Représentations of Coffee"),
    ("P9", None),  # no title
]


@pytest.fixture(scope="module")
def index() -> TitleIndex:
    return TitleIndex(PAIRS)  # type: ignore[arg-type]


def test_normalise_title() -> None:
    assert (
        normalise_title("  {BERT}: Pre-training of Deep_Bidirectional  ") == "bert pre training of deep bidirectional"
    )
    assert normalise_title("Café au LAIT!") == "cafe au lait"


def test_similarity_is_the_ratcliff_obershelp_ratio() -> None:
    assert similarity("abcd", "abcd") == 1.0
    assert similarity("abcd", "abce") == pytest.approx(2 * 3 / 8)
    assert similarity("abcd", "wxyz") == 0.0


def test_index_skips_short_and_missing_titles(index: TitleIndex) -> None:
    assert len(index) == 6  # P6 and P7 share one normalised title
    assert index.skipped == 2
    assert index.ambiguous_titles == 1
    assert "accept=0.9" in repr(index)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Attention is all you need.", "P1"),  # case and punctuation
        ("BERT: Pretraining of Deep Bidirectional Transformers for Language Understanding", "P2"),  # hyphen dropped
        ("Neural Machine Translaton by Jointly Learning to Align and Translate", "P3"),  # a typo
        ("Cafe au lait: learning representations of coffee", "P8"),  # accents
    ],
)
def test_near_duplicates_resolve(index: TitleIndex, query: str, expected: str) -> None:
    found = index.resolve(query)
    assert found is not None
    assert found[0] == expected
    assert 0.9 <= found[1] <= 1.0


@pytest.mark.parametrize(
    "query",
    [
        "Attention Is Not All You Need for Machine Translation",  # shares most words, another paper
        "Neural Machine Translation",  # a prefix of P3
        "Statistical Phrase-Based Translation with Syntax-Augmented Reordering Models",  # P4 plus a subtitle
        "Learning to parse with recurrent networks",  # unrelated
        "Preface",  # too short: never resolved
        "Proceedings of the Workshop on Parsing",  # two papers share this title
    ],
)
def test_different_short_and_ambiguous_titles_do_not_resolve(index: TitleIndex, query: str) -> None:
    assert index.resolve(query) is None


def test_candidates_are_scored_and_sorted(index: TitleIndex) -> None:
    found = index.candidates("Proceedings of the Workshop on Parsing")
    assert found[:2] == [("P6", 1.0), ("P7", 1.0)]
    assert index.candidates("Attention is all you need", floor=0.99) == [("P1", 1.0)]


def test_same_pairs_same_answers() -> None:
    queries = ["Attention is all you nee", "Neural machine translation by jointly learning to align"]
    first, second = TitleIndex(PAIRS[:4]), TitleIndex(PAIRS[:4])  # type: ignore[arg-type]
    assert [first.candidates(q) for q in queries] == [second.candidates(q) for q in queries]
    assert first.resolve(queries[0]) == second.resolve(queries[0]) == ("P1", pytest.approx(0.98, abs=0.01))


def test_a_stricter_threshold_is_honoured() -> None:
    strict = TitleIndex(PAIRS[:4], TitleIndexConfig(accept=0.995))  # type: ignore[arg-type]
    assert strict.resolve("Attention is all you nee") is None
    assert strict.resolve("attention is all you need") == ("P1", 1.0)


def test_title_candidates_of_raw_references() -> None:
    ieee = 'A. Vaswani et al., "Attention is all you need," in Proc. NeurIPS, 2017, pp. 5998-6008.'
    assert title_candidates(ieee)[0] == "Attention is all you need"
    acl = "Philipp Koehn, Franz Josef Och, and Daniel Marcu. 2003. Statistical phrase-based translation. In NAACL."
    assert "Statistical phrase-based translation." in title_candidates(acl)
    assert all(len(normalise_title(p)) >= 12 for p in title_candidates(acl))


def test_resolve_reference(index: TitleIndex) -> None:
    raw = "D. Bahdanau, K. Cho, Y. Bengio. Neural machine translation by jointly learning to align and translate. ICLR."
    assert index.resolve_reference(raw) == ("P3", 1.0)
    assert index.resolve_reference("J. Smith. A study of something else entirely. J. Irrel. 3 (1999).") is None


@pytest.mark.slow  # the whole Anthology's title index (15 s): the default run's index tests use fixtures
@pytest.mark.shared_data
def test_anthology_title_index_build_time(data_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    papers = anthology.load(data_dir / "anthology" / "papers.jsonl.gz").nodes["Paper"]
    started = time.perf_counter()
    with caplog.at_level(logging.INFO, logger="loaders.resolve"):
        index = TitleIndex.from_papers(papers)
    seconds = time.perf_counter() - started
    print(f"\nTitleIndex over {len(papers)} Anthology papers: {len(index)} titles in {seconds:.1f}s")
    assert len(index) > 100_000
    assert index.build_seconds <= seconds
    assert "distinct titles" in caplog.text
    # every indexed title, with one character dropped, comes back to its paper (unless ambiguous)
    sample = papers.dropna(subset=["title"]).iloc[::2000]
    resolved = 0
    for paper_id, title in zip(sample["id"], sample["title"]):
        found = index.resolve(title[:10] + title[11:])
        if found is not None:
            assert found[0] == paper_id, title
            resolved += 1
    assert resolved >= 0.9 * len(sample)
    assert index.resolve("Attention Is All You Need for Unrelated Physics") is None
