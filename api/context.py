"""Per-request state of the GraphQL API: the service, caps, a deadline and DataLoaders.

Every DataLoader lives for one request (created here, in the context getter), so its cache never
serves another client's query; each batches the keys of one level of nesting into store round trips
of at most :data:`MAX_BATCH` keys, so that one heavy request's calls stay short and other requests'
calls get the store between them. The whole operation runs off the server's event loop
(:class:`api.schema.CitegraphSchema`), and store calls run in a worker thread under the request's
time budget (:meth:`Context.call`, :class:`api.scheduling.Budget`): a slow query answers
``TIME_BUDGET_EXCEEDED`` instead of holding the client and issues no store call after that, and the
server keeps answering other requests (``/healthz`` included) meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from graphql import DocumentNode
from strawberry.dataloader import DataLoader
from strawberry.fastapi import BaseContext

from api.budget import DEFAULT_MAX_RESPONSE_BYTES
from api.cost import DEFAULT_MAX_QUERY_COST
from api.errors import RequestTimeout, UserInputError
from api.lazy import Lazy
from api.scheduling import Budget, Scheduler, budget_message, current_budget
from api.services import (
    AuthorRecord,
    CategoryAssignment,
    CategoryRecord,
    CitanceLinkRecord,
    CoCitation,
    Coordinates,
    GraphService,
    PaperRecord,
    SentenceRecord,
    TaxonomyClassRecord,
)

if TYPE_CHECKING:  # gnn.linkage.service / gnn.recommend.service import the encoder (torch); loaded only when used
    from gnn.linkage.service import LinkageService
    from gnn.recommend.service import RecommendationService

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")

DEFAULT_TIMEOUT_S = 10.0  # per request; CITEGRAPH_REQUEST_TIMEOUT overrides (AppSettings.request_timeout_s)
INT64_MAX = 2**63 - 1
MAX_BATCH = 100  # keys per store call of a DataLoader: a heavy request's calls stay short (a 500-key citing_papers
# took up to 0.9 s on the full store, a machine under load), so light calls interleave


class Context(BaseContext):
    """Per-request state: the service, the result and cost caps, the deadline, and DataLoaders for one request.

    ``linkage`` is the app's one sentence-linkage service (built lazily on first use; None where the
    app serves no linkage, and ``linkage`` then answers a ``LinkageUnavailable``); ``recommend`` is
    likewise the app's one recommendation service (``recommend`` answers ``RecommendUnavailable``
    without it).
    """

    def __init__(
        self,
        service: GraphService,
        max_results: int,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        linkage: Lazy[LinkageService] | None = None,
        recommend: Lazy[RecommendationService] | None = None,
        max_query_cost: int = DEFAULT_MAX_QUERY_COST,
        scheduler: Scheduler | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        super().__init__()
        self.service = service
        self.linkage = linkage
        self.recommend = recommend
        self.max_results = max_results
        self.max_query_cost = max_query_cost
        self.max_response_bytes = max_response_bytes  # read by api.budget.ResponseBudget
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.budget = Budget(self.deadline, timeout_s)  # its kind is set when the operation is classified
        self.scheduler = scheduler  # the app's (light pool, heavy slots); None: the event loop's default pool
        self.resolved = 0  # fields resolved so far, counted for a heavy operation (api.schema.BudgetedResolvers)
        self.document: DocumentNode | None = None  # the request's document, once the scheduler has parsed it
        self.memo: dict[str, Any] = {}  # request-scoped results that are not keyed loads (e.g. a taxonomy)

        s = service
        self.papers: DataLoader[str, PaperRecord | None] = self._loader(s.papers)
        self.authors: DataLoader[str, list[AuthorRecord]] = self._loader(s.authors)
        self.cocited: DataLoader[str, list[CoCitation]] = self._loader(s.cocited)
        self.cited: DataLoader[str, list[str]] = self._loader(
            lambda ids: s.neighbours(ids, direction="out", limit=INT64_MAX)
        )
        self.citing: DataLoader[str, list[str]] = self._loader(
            lambda ids: s.neighbours(ids, direction="in", limit=INT64_MAX)
        )
        self.pair_citers: DataLoader[tuple[str, str], list[tuple[str, int | None]]] = self._loader(s.pair_citers)
        self.cocited_in_years: DataLoader[tuple[str, int, int], dict[str, int]] = self._loader(s.cocited_in_years)
        self.source_papers: DataLoader[str, list[str]] = self._loader(s.papers_of_sources)
        self.author_records: DataLoader[str, AuthorRecord | None] = self._loader(s.author_records)
        self.author_papers: DataLoader[str, list[str]] = self._loader(s.papers_of_authors)
        self.sentences: DataLoader[str, list[SentenceRecord]] = self._loader(s.sentences)
        self.citance_links: DataLoader[str, list[CitanceLinkRecord]] = self._loader(s.citance_links)
        self.mentions: DataLoader[str, list[tuple[str, str | None]]] = self._loader(s.mentions)
        self.paper_categories: DataLoader[str, list[CategoryAssignment]] = self._loader(s.categories_of_papers)
        self.categories: DataLoader[str, CategoryRecord | None] = self._loader(s.categories)
        self.category_mappings: DataLoader[str, list[CategoryAssignment]] = self._loader(s.category_mappings)
        self.acm_classes: DataLoader[str, TaxonomyClassRecord | None] = self._loader(s.acm_classes)
        self.paper_coordinates: DataLoader[str, Coordinates] = self._loader(lambda ids: s.coordinates("paper", ids))
        self.category_coordinates: DataLoader[str, Coordinates] = self._loader(
            lambda ids: s.coordinates("category", ids)
        )
        self.acm_coordinates: DataLoader[str, Coordinates] = self._loader(lambda ids: s.coordinates("acm", ids))

    @classmethod
    def create(
        cls,
        service: GraphService,
        max_results: int,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        linkage: Lazy[LinkageService] | None = None,
        recommend: Lazy[RecommendationService] | None = None,
        max_query_cost: int = DEFAULT_MAX_QUERY_COST,
        scheduler: Scheduler | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> Context:
        return cls(service, max_results, timeout_s, linkage, recommend, max_query_cost, scheduler, max_response_bytes)

    def _loader(self, batch: Callable[[list[K]], Sequence[V]]) -> DataLoader[K, V]:
        async def load(keys: list[K]) -> Sequence[V]:
            return await self.call(batch, list(keys))

        return DataLoader(load_fn=load, max_batch_size=MAX_BATCH)

    async def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker thread, cut off at the request's deadline.

        The thread sees the request's :class:`~api.scheduling.Budget` (a context variable that
        ``asyncio.to_thread`` copies): a store call it has not issued by the deadline never is.
        """
        remaining = self.budget.remaining()
        if remaining <= 0:
            raise self._timeout()
        try:
            return await asyncio.wait_for(asyncio.to_thread(fn, *args, **kwargs), remaining)
        except TimeoutError as exc:
            raise self._timeout() from exc

    async def load(self, get: Callable[[], T], what: str) -> T:
        """``get()`` (a lazy service's first build) in a worker thread; past the deadline the client is
        told that ``what`` is still loading — the load goes on in its thread, so a retry finds it ready."""

        def unbudgeted() -> T:  # the load serves every later request: its store reads are not cut at this deadline
            token = current_budget.set(None)
            try:
                return get()
            finally:
                current_budget.reset(token)

        try:
            return await self.call(unbudgeted)
        except RequestTimeout as exc:
            raise RequestTimeout(
                f"the {what} is still loading (it loads once per server, on first use); retry in a few seconds, "
                "or start the server with CITEGRAPH_WARM=1 to load it at start-up"
            ) from exc

    def _timeout(self) -> RequestTimeout:
        return RequestTimeout(timeout_message(self.timeout_s))

    def cap(self, first: int, name: str = "first", upper: int | None = None) -> int:
        """``first`` if it is within 1..max_results (and ``upper``, where the field has a lower bound of its
        own), else a :class:`UserInputError` naming the one range that applies."""
        bound = self.max_results if upper is None else min(upper, self.max_results)
        if first < 1 or first > bound:
            raise UserInputError(f"`{name}` must be between 1 and {bound}, got {first}")
        return first


def timeout_message(timeout_s: float) -> str:
    """What a client that ran past the time limit is told."""
    return budget_message(timeout_s)


__all__ = ["DEFAULT_TIMEOUT_S", "Context", "timeout_message"]
