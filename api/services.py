"""Read services over the store: batched lookups the GraphQL loaders call.

One lock serialises access to the store's connection (the embedded connection is not meant for
concurrent use); every function takes many ids at once so a nested GraphQL query costs one
store round trip per level, not one per object.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graph.store import GraphStore

YEAR_MIN, YEAR_MAX = 0, 9999  # open bounds for year filters (statements take integers)


@dataclass(frozen=True)
class PaperRecord:
    id: str
    title: str | None
    abstract: str | None
    year: int | None
    venue: str | None
    doi: str | None
    arxiv_id: str | None
    n_cited: int | None
    stub: bool | None


@dataclass(frozen=True)
class CoCitation:
    other_id: str
    count: int
    sentence_count: int | None
    association: float | None
    cosine: float | None
    jaccard: float | None
    inclusion: float | None


@dataclass(frozen=True)
class AuthorRecord:
    id: str
    name: str | None


class GraphService:
    """The read side of the API over one store."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self.round_trips = 0  # store queries issued; tests assert on it (no N+1)

    def _query(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        with self._lock:
            self.round_trips += 1
            return self.store.query(name, params)

    def papers(self, ids: Sequence[str]) -> list[PaperRecord | None]:
        rows = {row["id"]: PaperRecord(**row) for row in self._query("paper_by_ids", {"ids": list(ids)})}
        return [rows.get(i) for i in ids]

    def authors(self, paper_ids: Sequence[str]) -> list[list[AuthorRecord]]:
        grouped: dict[str, list[AuthorRecord]] = defaultdict(list)
        for row in self._query("authors_of_papers", {"ids": list(paper_ids)}):
            grouped[row["paper_id"]].append(AuthorRecord(row["author_id"], row["name"]))
        return [grouped.get(i, []) for i in paper_ids]

    def neighbours(self, paper_ids: Sequence[str], *, direction: str, limit: int) -> list[list[str]]:
        """Cited (``out``) or citing (``in``) paper ids per paper, at most ``limit`` each."""
        name, column = ("cited_papers", "cited_id") if direction == "out" else ("citing_papers", "citing_id")
        grouped: dict[str, list[str]] = defaultdict(list)
        for row in self._query(name, {"ids": list(paper_ids)}):
            bucket = grouped[row["paper_id"]]
            if len(bucket) < limit:
                bucket.append(row[column])
        return [grouped.get(i, []) for i in paper_ids]

    def cocited(self, paper_ids: Sequence[str]) -> list[list[CoCitation]]:
        """Every co-cited partner of each paper with the stored strengths (CO_CITED, both directions)."""
        grouped: dict[str, list[CoCitation]] = defaultdict(list)
        for row in self._query("cocited_with", {"ids": list(paper_ids)}):
            paper_id = row.pop("paper_id")
            grouped[paper_id].append(CoCitation(**row))
        return [grouped.get(i, []) for i in paper_ids]

    def search(self, text: str, *, year_min: int | None, year_max: int | None, limit: int) -> list[str]:
        params = {
            "text": text.lower(),
            "year_min": YEAR_MIN if year_min is None else year_min,
            "year_max": YEAR_MAX if year_max is None else year_max,
            "limit": limit,
        }
        return [row["id"] for row in self._query("search_papers_by_title", params)]

    def stats(self) -> dict[str, dict[str, int]]:
        with self._lock:
            self.round_trips += 1
            return self.store.stats()
