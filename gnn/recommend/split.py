r"""The time split of a store's own citing sentences, computed from the data (``--queries store``).

The ScisummNet queries of the shared data have fixed folds (:class:`gnn.recommend.examples.TrainSettings`);
any other corpus gets its split from its citing papers' years. The queries are cut **by citing paper**
(no citing paper has sentences in two parts) and **in time**:

1. The citing papers with a year are ordered by year, and within a year by :func:`paper_hash` of their id
   (a fixed, seedless order).
2. From the latest year backwards, *test* takes the latest years holding about ``test_share`` of the
   dated queries, *validation* the years before holding about ``validation_share``, and the rest, the
   training period, is cut into ``folds`` training folds of about equal size, earliest first. Each cut
   falls between two years — at the year boundary whose share is closest to the target — unless no
   boundary gives between half and twice the target (a corpus of one or two years, such as the unarXive
   sample of December 2022): then the year at the cut is divided between the two sides, its papers in
   :func:`paper_hash` order, the later side taking the last ones.
3. Citing papers without a year are assigned by :func:`paper_hash` alone: :math:`h < s_\mathrm{test}`
   test, :math:`h < s_\mathrm{test} + s_\mathrm{val}` validation, the rest spread over the training
   folds in equal ranges of :math:`h`.

**What each part knows.** A part knows the citations, citing sentences (citation-context profiles) and
co-citations of citing papers published up to ``until`` = the year before its earliest dated citing
paper; validation and test both know up to the year before validation's (as ScisummNet's 2010 and 2011
both know up to 2009). So no query ever sees its own sentence in a profile or its own citation in a
count, and a year divided by a cut is known to neither side. Citations of papers without a year are
known to no part (every cutoff hides them, :func:`gnn.rerank.knowledge.known_citations`); a part without
any dated citing paper knows every dated citation (:data:`EVERY_DATED_YEAR`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from graph.errors import DataError

EVERY_DATED_YEAR = 9998  # the cutoff of a part without a dated citing paper: below OPEN_YEAR (unknown years)


@dataclass(frozen=True)
class SplitRule:
    """The shares of the split (module docstring)."""

    test_share: float = 0.15  # of the queries: the latest citing papers, reported, never used to choose
    validation_share: float = 0.15  # the citing papers before them: early stopping, model selection, tuning
    folds: int = 2  # training folds, each knowing the graph up to the year before its first citing year

    def __post_init__(self) -> None:
        if not (
            0 < self.test_share < 1 and 0 < self.validation_share < 1 and self.test_share + self.validation_share < 1
        ):
            raise DataError("the test and validation shares must be in (0, 1) and sum to less than 1")
        if self.folds < 1:
            raise DataError("the split needs at least one training fold")


@dataclass(frozen=True)
class SplitPart:
    """One part of the split: its name, its queries and what they know."""

    name: str  # "train 1 (2019-2020)", ..., "validation", "test"
    frame: pd.DataFrame  # the queries (rows of gnn.recommend.citances.store_queries)
    until: int  # knows the citations of papers published up to this year
    years: tuple[int, int] | None  # first and last citing year of its dated queries (None: none dated)

    @property
    def citing_papers(self) -> int:
        return int(self.frame["citing_id"].nunique())


def paper_hash(paper_id: str) -> float:
    """A citing paper's place in ``[0, 1)``: the first 8 bytes of the SHA-1 of its id."""
    return int.from_bytes(hashlib.sha1(paper_id.encode("utf-8")).digest()[:8], "big") / 2.0**64


def _cut(papers: pd.DataFrame, end: int, wanted: float) -> int:
    """Where the part ending (exclusively) at ``end`` of the ordered ``papers`` begins: the latest years
    holding about ``wanted`` queries (module docstring, step 2). At least one paper stays on each side."""
    if end < 2:
        return end  # nothing to divide: the part is empty, and the split says so
    counts = papers["queries"].to_numpy()[:end]
    years = papers["year"].to_numpy()[:end]
    after = np.cumsum(counts[::-1])[::-1]  # after[i]: queries of papers i .. end-1
    starts = [i for i in range(1, end) if years[i] != years[i - 1]]  # year boundaries
    good = [i for i in starts if wanted / 2 <= after[i] <= 2 * wanted]
    if good:
        return min(good, key=lambda i: (abs(after[i] - wanted), -i))
    # no boundary near the target: divide the year at the cut, papers in hash order
    closest = int(np.argmin(np.abs(after - wanted)))
    return min(max(closest, 1), end - 1)


def time_split(frame: pd.DataFrame, rule: SplitRule = SplitRule()) -> list[SplitPart]:
    """The parts of ``frame`` (``citing_id``, ``citing_year`` per query): the training folds, earliest
    first, then validation and test (module docstring)."""
    if frame.empty:
        raise DataError("no queries to split")
    per_paper = frame.groupby("citing_id", sort=True).agg(year=("citing_year", "first"), queries=("citing_id", "size"))
    per_paper["hash"] = [paper_hash(str(p)) for p in per_paper.index]
    dated = per_paper[per_paper["year"].notna()].sort_values(["year", "hash"], kind="stable")
    undated = per_paper[per_paper["year"].isna()]
    n_parts = rule.folds + 2  # part k: training fold k+1; then validation, test
    # dated papers: the part of each, cut from the end (step 2)
    dated_part = np.zeros(len(dated), dtype=int)
    if len(dated):
        total = float(dated["queries"].sum())
        test_start = _cut(dated, len(dated), rule.test_share * total)
        validation_start = _cut(dated, test_start, rule.validation_share * total)
        training = float(dated["queries"].to_numpy()[:validation_start].sum())
        starts: list[int] = []
        end = validation_start
        for _ in range(rule.folds - 1):
            end = _cut(dated, end, training / rule.folds)
            starts.insert(0, end)
        for k, start in enumerate([*starts, validation_start, test_start], start=1):
            dated_part[start:] = k
    # papers without a year: by hash alone (step 3)
    h = undated["hash"].to_numpy()
    held_out = rule.test_share + rule.validation_share
    fold = np.minimum(((h - held_out) / (1.0 - held_out) * rule.folds).astype(int), rule.folds - 1)
    undated_part = np.where(h < rule.test_share, rule.folds + 1, np.where(h < held_out, rule.folds, fold))
    part_of = pd.Series(
        np.concatenate([dated_part, undated_part]).astype(int), index=[*dated.index, *undated.index], dtype=int
    )
    year_of = dated["year"].astype(int)
    names = [f"train {k + 1}" for k in range(rule.folds)] + ["validation", "test"]
    members = [sorted(part_of.index[part_of.to_numpy() == k]) for k in range(n_parts)]
    years = [
        (int(year_of.reindex(m).min()), int(year_of.reindex(m).max())) if year_of.reindex(m).notna().any() else None
        for m in members
    ]
    until = [y[0] - 1 if y else EVERY_DATED_YEAR for y in years]
    until[-2] = until[-1] = min(until[-2], until[-1])  # validation and test know the same graph
    parts = [
        SplitPart(
            f"{name} ({y[0]}-{y[1]})" if name.startswith("train") and y else name,
            frame[frame["citing_id"].isin(m)].reset_index(drop=True),
            cutoff,
            y,
        )
        for name, m, y, cutoff in zip(names, members, years, until)
    ]
    empty = [p.name for p in parts if p.frame.empty]
    if empty:
        raise DataError(
            f"the time split of {len(frame)} queries from {len(per_paper)} citing papers leaves "
            f"{', '.join(empty)} without queries: it needs at least {n_parts} citing papers with citing sentences "
            "(MENTIONS); load more of the corpus"
        )
    return parts


def rule_text(rule: SplitRule) -> str:
    """The rule in one sentence, for reports."""
    return (
        f"by citing paper and year: test the latest ~{rule.test_share:.0%} of the queries, validation the "
        f"~{rule.validation_share:.0%} before, {rule.folds} training folds before them; a year is divided "
        "(papers in SHA-1 order of their id) only where no year boundary comes near a share; papers "
        "without a year by SHA-1 of their id; each part knows citations up to the year before its first"
    )


def describe(parts: Sequence[SplitPart], rule: SplitRule) -> dict[str, object]:
    """The split as the reports record it: the rule, and per part its queries, citing papers, years and cutoff."""
    return {
        "rule": rule_text(rule),
        "parts": {
            p.name: {
                "queries": len(p.frame),
                "citing papers": p.citing_papers,
                "undated queries": int(p.frame["citing_year"].isna().sum()),
                "years": list(p.years) if p.years else None,
                "knows until": p.until,
            }
            for p in parts
        },
    }


__all__ = ["EVERY_DATED_YEAR", "SplitPart", "SplitRule", "describe", "paper_hash", "rule_text", "time_split"]
