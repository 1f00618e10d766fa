r"""Enricher: add what the prefetched papers cite, and what the query's cited papers are co-cited with.

SymTax (Goyal et al. 2024) and citeomatic (Bhagavatula et al. 2018) observe that the papers cited by
the papers most relevant to a context are often cited by the context too, yet may not be similar
in text. So after the prefetch, two graph stages add candidates:

* **references** — the outgoing ``CITES`` of the top-:math:`m` prefetched papers, read for a whole
  batch of queries with one Cypher statement (``cypher/enrich_references.cypher``), ranked by

  .. math::
      f(d) = |\{p \in \mathrm{top}_m : p \to d\}|, \text{ then by } \min\{\mathrm{rank}(p) : p \to d\}

  (how many of the top papers cite it, then how high the best of them ranks);
* **cocited** — the co-citation partners of the papers the query already cites
  (``(a)-[:CO_CITED]-(d)`` for each cited :math:`a`), ranked by the summed co-citation count
  :math:`\sum_a c_{ad}`. With ``known_until`` set, the counts come from ``CITES`` made by papers
  published up to that year (``cypher/enrich_cocited_until.cypher``) instead of the stored
  ``CO_CITED`` edges, which also count later citations — an evaluation must not see those.

With :class:`CitationLists` (the service loads them once) both stages read the citations from
memory instead of the store: the same counts, without a store round trip per batch (the embedded
store scans the Paper table for ``WHERE p.id IN $ids``, which dominated the service's latency).

Candidates are deduplicated against the prefetch and each other, capped per stage, filtered by the
query's year, and carry the features that produced them (:class:`Candidate`): their rank in every
prefetch channel and in the fused list, and for each enrichment stage their frequency and rank.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from gnn.retrieval.prefetch import Prefetched
from graph.errors import ConfigError
from graph.store import GraphStore

STAGES = ("references", "cocited")
OPEN_YEAR = 9999  # statements compare integers; "no cutoff" is a year no paper reaches


@dataclass(frozen=True)
class EnricherSettings:
    top_m: int = 10  # prefetched papers whose references are added (SymTax enriches from the top few)
    max_references: int = 100  # references added per query, most frequent first
    max_cocited: int = 50  # co-citation partners added per query, strongest first
    # Only citations made by papers published up to this year are used (None: every citation). An
    # evaluation sets it to the end of its training period.
    known_until: int | None = None

    def __post_init__(self) -> None:
        if self.top_m < 0 or self.max_references < 0 or self.max_cocited < 0:
            raise ConfigError("top_m, max_references and max_cocited must be >= 0")


@dataclass
class Candidate:
    """One candidate paper of one query with the features that produced it."""

    paper_id: str
    prefetch_rank: int | None = None  # place in the fused prefetch list (1-based), None if not prefetched
    prefetch_score: float | None = None
    channel_ranks: dict[str, int] = field(default_factory=dict)  # prefetch channel -> rank (1-based)
    channel_scores: dict[str, float] = field(default_factory=dict)  # prefetch channel -> its score
    cited_by: list[str] = field(default_factory=list)  # top-m prefetched papers citing it
    references_rank: int | None = None  # place among the references stage's additions (by frequency)
    cocitation_count: int = 0  # summed co-citation count with the query's cited papers
    cocited_rank: int | None = None  # place among the cocited stage's additions
    year: int | None = None

    @property
    def stages(self) -> list[str]:
        out = ["prefetch"] if self.prefetch_rank is not None else []
        if self.references_rank is not None:
            out.append("references")
        if self.cocited_rank is not None:
            out.append("cocited")
        return out


def read_citations_with_years(store: GraphStore) -> pd.DataFrame:
    """Every CITES edge as ``citing_id``, ``citing_year`` (None when unknown), ``cited_id``."""
    return pd.DataFrame(store.query("citations_with_years"), columns=["citing_id", "citing_year", "cited_id"])


@dataclass
class CitationLists:
    """Every CITES edge in memory, by citing and by cited paper, with the citing papers' years.

    Built once from ``cypher/citations_with_years.cypher`` and ``cypher/paper_years.cypher``; an
    unknown citing year is :data:`OPEN_YEAR` (hidden behind any cutoff, like the statements do).
    """

    cites: dict[str, list[str]]  # citing paper -> cited papers
    cited_by: dict[str, list[str]]  # cited paper -> citing papers
    year: dict[str, int]  # every paper -> its year (OPEN_YEAR when unknown)

    @classmethod
    def from_store(cls, store: GraphStore) -> CitationLists:
        return cls.from_rows(read_citations_with_years(store), store)

    @classmethod
    def from_rows(cls, citations: pd.DataFrame, store: GraphStore) -> CitationLists:
        """From :func:`read_citations_with_years` rows, with every paper's year read from ``store``."""
        years = {str(r["id"]): OPEN_YEAR if r["year"] is None else int(r["year"]) for r in store.query("paper_years")}
        cites: dict[str, list[str]] = defaultdict(list)
        cited_by: dict[str, list[str]] = defaultdict(list)
        for citing, cited in zip(citations["citing_id"].astype(str), citations["cited_id"].astype(str)):
            cites[citing].append(cited)
            cited_by[cited].append(citing)
        return cls(dict(cites), dict(cited_by), years)

    def references(self, seeds: Sequence[str], known_until: int) -> dict[str, list[str]]:
        """citing seed -> what it cites, for seeds published up to ``known_until``."""
        return {
            seed: self.cites[seed]
            for seed in seeds
            if seed in self.cites and self.year.get(seed, OPEN_YEAR) <= known_until
        }

    def cocited(self, papers: Sequence[str], known_until: int) -> dict[str, dict[str, int]]:
        """paper -> partner -> papers published up to ``known_until`` citing both."""
        out: dict[str, dict[str, int]] = {}
        for paper in papers:
            counts: dict[str, int] = defaultdict(int)
            for citing in self.cited_by.get(paper, []):
                if self.year.get(citing, OPEN_YEAR) > known_until:
                    continue
                for other in self.cites[citing]:
                    if other != paper:
                        counts[other] += 1
            out[paper] = dict(counts)
        return out


@dataclass(frozen=True)
class EnrichQuery:
    """What the enricher needs besides the prefetch: the papers already cited, the year, exclusions."""

    cited_ids: tuple[str, ...] = ()
    year: int | None = None
    exclude: tuple[str, ...] = ()


class Enricher:
    """Graph stages after the prefetch (module docstring); one store read per stage per batch."""

    def __init__(
        self, store: GraphStore, settings: EnricherSettings = EnricherSettings(), citations: CitationLists | None = None
    ) -> None:
        self.store = store
        self.settings = settings
        self.citations = citations  # in memory: no store read per batch
        self.round_trips = 0

    def _query(self, name: str, params: dict[str, object]) -> list[dict[str, object]]:
        self.round_trips += 1
        return self.store.query(name, params)

    def references(self, seeds: Sequence[Sequence[str]]) -> list[dict[str, tuple[int, int, list[str]]]]:
        """Per query: cited paper -> (frequency, best seed rank, citing seeds), from one batched read."""
        wanted = sorted({paper for top in seeds for paper in top})
        if not wanted or self.settings.top_m == 0:
            return [{} for _ in seeds]
        known_until = OPEN_YEAR if self.settings.known_until is None else self.settings.known_until
        cites: dict[str, list[str]] = defaultdict(list)
        if self.citations is not None:
            cites.update(self.citations.references(wanted, known_until))
        else:
            for row in self._query("enrich_references", {"ids": wanted, "known_until": known_until}):
                cites[str(row["citing_id"])].append(str(row["cited_id"]))
        out = []
        for top in seeds:
            found: dict[str, tuple[int, int, list[str]]] = {}
            for rank, seed in enumerate(top, start=1):
                for cited in cites.get(seed, []):
                    freq, best, by = found.get(cited, (0, rank, []))
                    found[cited] = (freq + 1, min(best, rank), [*by, seed])
            out.append(found)
        return out

    def cocited(self, cited: Sequence[Sequence[str]]) -> list[dict[str, int]]:
        """Per query: partner -> summed co-citation count with the query's cited papers (one read)."""
        wanted = sorted({paper for ids in cited for paper in ids})
        if not wanted or self.settings.max_cocited == 0:
            return [{} for _ in cited]
        counts: dict[str, dict[str, int]] = defaultdict(dict)
        if self.citations is not None:
            known_until = OPEN_YEAR if self.settings.known_until is None else self.settings.known_until
            counts.update(self.citations.cocited(wanted, known_until))
            rows: list[dict[str, object]] = []
        elif self.settings.known_until is None:
            rows = self._query("cocited_with", {"ids": wanted})
        else:
            rows = self._query("enrich_cocited_until", {"ids": wanted, "known_until": self.settings.known_until})
        for row in rows:
            counts[str(row["paper_id"])][str(row["other_id"])] = int(row["count"] or 0)  # type: ignore[call-overload]
        out = []
        for ids in cited:
            total: dict[str, int] = defaultdict(int)
            for paper in ids:
                for other, count in counts.get(paper, {}).items():
                    total[other] += count
            out.append(dict(total))
        return out

    def years(self, paper_ids: Sequence[str]) -> dict[str, int | None]:
        if not paper_ids:
            return {}
        if self.citations is not None:
            known = self.citations.year
            return {p: (None if known.get(p, OPEN_YEAR) == OPEN_YEAR else known[p]) for p in paper_ids}
        self.round_trips += 1
        return {str(r["id"]): r["year"] for r in self.store.query("paper_by_ids", {"ids": list(paper_ids)})}

    def enrich(self, prefetched: Sequence[Prefetched], queries: Sequence[EnrichQuery]) -> list[list[Candidate]]:
        """Prefetch candidates plus both stages' additions, per query (prefetch order, then additions)."""
        if len(prefetched) != len(queries):
            raise ValueError("one EnrichQuery per prefetched list")
        m = self.settings.top_m
        references = self.references([p.ids[:m] for p in prefetched])
        cocited = self.cocited([q.cited_ids for q in queries])
        added = {pid for refs in references for pid in refs} | {pid for co in cocited for pid in co}
        years = self.years(sorted(added))
        out = []
        for fetched, query, refs, co in zip(prefetched, queries, references, cocited):
            banned = set(query.exclude) | set(query.cited_ids)
            candidates: dict[str, Candidate] = {}
            for rank, (paper, score) in enumerate(zip(fetched.ids, fetched.scores), start=1):
                if paper in banned:
                    continue
                ranks = {c: r[paper] for c, r in fetched.channel_ranks.items() if paper in r}
                scores = {c: s[paper] for c, s in fetched.channel_scores.items() if paper in s}
                candidates[paper] = Candidate(
                    paper, prefetch_rank=rank, prefetch_score=score, channel_ranks=ranks, channel_scores=scores
                )

            def allowed(paper: str, query: EnrichQuery = query, banned: set[str] = banned) -> bool:
                year = years.get(paper)
                return paper not in banned and not (query.year is not None and year is not None and year > query.year)

            ordered_refs = sorted(
                ((p, f) for p, f in refs.items() if allowed(p)), key=lambda item: (-item[1][0], item[1][1], item[0])
            )[: self.settings.max_references]
            for rank, (paper, (_freq, _best, by)) in enumerate(ordered_refs, start=1):
                candidate = candidates.setdefault(paper, Candidate(paper, year=years.get(paper)))
                candidate.cited_by = by
                candidate.references_rank = rank
            ordered_co = sorted(((p, c) for p, c in co.items() if allowed(p)), key=lambda item: (-item[1], item[0]))[
                : self.settings.max_cocited
            ]
            for rank, (paper, count) in enumerate(ordered_co, start=1):
                candidate = candidates.setdefault(paper, Candidate(paper, year=years.get(paper)))
                candidate.cocitation_count = count
                candidate.cocited_rank = rank
            out.append(list(candidates.values()))
        return out


__all__ = [
    "STAGES",
    "Candidate",
    "CitationLists",
    "EnrichQuery",
    "Enricher",
    "EnricherSettings",
    "read_citations_with_years",
]
