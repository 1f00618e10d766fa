"""The time split of a store's own citing sentences: by citing paper, in time, papers without a year by hash."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from gnn.recommend.split import EVERY_DATED_YEAR, SplitRule, describe, time_split
from graph.errors import DataError


def _frame(papers: dict[str, tuple[int | None, int]]) -> pd.DataFrame:
    """One row per query: ``papers`` maps a citing paper to (its year, how many queries it has)."""
    rows = [(f"{paper}#{k}", paper, year) for paper, (year, count) in papers.items() for k in range(count)]
    return pd.DataFrame(rows, columns=["sentence_id", "citing_id", "citing_year"])


def _sha1_place(paper: str) -> float:
    """The rule's order of papers, derived here from SHA-1 independently of the module."""
    return int(hashlib.sha1(paper.encode()).hexdigest()[:16], 16) / 2**64


def _members(parts: list) -> list[set[str]]:
    return [set(part.frame["citing_id"]) for part in parts]


def test_year_boundaries_nearest_the_shares_and_what_each_part_knows() -> None:
    # 19 queries: test wants 2.85 (2005 holds 3), validation 2.85 (2004: 3), the 13 of 2001-2003 two folds of
    # ~6.5 each: 2003 alone holds 5 (off by 1.5), 2002-2003 hold 9 (off by 2.5), so fold 2 is 2003
    papers = {"a1": (2001, 2), "a2": (2001, 2), "b1": (2002, 4), "c1": (2003, 3), "c2": (2003, 2)}
    papers |= {"d1": (2004, 3), "e1": (2005, 1), "e2": (2005, 2)}
    parts = time_split(_frame(papers))
    assert [p.name for p in parts] == ["train 1 (2001-2002)", "train 2 (2003-2003)", "validation", "test"]
    assert _members(parts) == [{"a1", "a2", "b1"}, {"c1", "c2"}, {"d1"}, {"e1", "e2"}]
    assert [len(p.frame) for p in parts] == [8, 5, 3, 3]
    # each part knows the graph up to the year before its first; validation and test alike
    assert [p.until for p in parts] == [2000, 2002, 2003, 2003]
    for part in parts:
        assert (part.frame["citing_year"] > part.until).all()
    summary = describe(parts, SplitRule())["parts"]
    assert summary["test"] == {
        "queries": 3,
        "citing papers": 2,
        "undated queries": 0,
        "years": [2005, 2005],
        "knows until": 2003,
    }


def test_a_single_year_is_divided_by_the_papers_hash_and_known_to_no_part() -> None:
    papers = {f"arxiv:2212.{k:05d}": (2022, 1) for k in range(8)}
    parts = time_split(_frame(papers))
    order = sorted(papers, key=_sha1_place)
    # 8 queries: test the last paper in hash order (1 query, nearest 1.2), validation the one before,
    # the 6 before them two folds of 3
    assert _members(parts) == [set(order[:3]), set(order[3:6]), {order[6]}, {order[7]}]
    assert [p.name for p in parts] == ["train 1 (2022-2022)", "train 2 (2022-2022)", "validation", "test"]
    assert all(p.until == 2021 for p in parts)  # a divided year is known to neither side


def test_papers_without_a_year_go_by_hash_and_no_paper_is_in_two_parts() -> None:
    dated = {f"d{k}": (2000 + k // 5, 2) for k in range(25)}  # 2000-2004, five papers a year
    undated = {f"u{k}": (None, 3) for k in range(40)}
    parts = time_split(_frame(dated | undated))
    members = _members(parts)
    assert sum(len(m) for m in members) == 65 and set().union(*members) == set(dated) | set(undated)
    for k, part in enumerate(parts):
        assert part.until < part.frame["citing_year"].dropna().min()
        for paper in undated:
            place = _sha1_place(paper)
            expected = 3 if place < 0.15 else 2 if place < 0.30 else 0 if place < 0.65 else 1
            assert (paper in members[k]) == (expected == k), paper
    # the dated papers keep to the years: every test year after every validation year, and so on
    years = [set(p.frame["citing_year"].dropna().astype(int)) for p in parts]
    assert max(years[0]) <= min(years[1]) and max(years[1]) <= min(years[2]) <= max(years[2]) <= min(years[3])


def test_a_corpus_without_years_knows_every_dated_citation_and_no_undated_one() -> None:
    parts = time_split(_frame({f"u{k}": (None, 1) for k in range(40)}))
    assert [p.name for p in parts] == ["train 1", "train 2", "validation", "test"]
    assert all(p.until == EVERY_DATED_YEAR and p.years is None for p in parts)


def test_too_few_citing_papers_is_a_data_error_saying_so() -> None:
    with pytest.raises(DataError, match="at least 4 citing papers"):
        time_split(_frame({"a": (2001, 5), "b": (2002, 5), "c": (2003, 5)}))
    with pytest.raises(DataError, match="shares"):
        SplitRule(test_share=0.6, validation_share=0.5)
