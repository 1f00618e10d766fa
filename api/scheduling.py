"""Fair scheduling of GraphQL work: per-request time budgets, a fair store lock, a bounded heavy queue.

A few accepted but heavy operations (15 aliases of nested ``papers``, 15 depth-2 ego networks, 15
whole-graph ``explore`` queries: seconds each) would otherwise starve every other client: fill the
worker threads, queue ahead of everyone at the store lock, and go on calling the store after their
clients had been told they ran out of time. Three pieces keep the server fair:

* :class:`Budget` — each request's deadline, seen by every store call it makes (a context variable
  copied into the threads that call the store). A call past the budget is never issued: the lock
  refuses it with :class:`~api.errors.TimeBudgetExceeded` (``TIME_BUDGET_EXCEEDED``), so the
  store's time goes to requests whose clients still wait.
* :class:`StoreLock` — the lock around the store's connections, granted in order of
  ``arrival + penalty``: a light request's call goes first, a heavy request's or the server's own
  (the background build, the readiness refresh) after a head start of :data:`HEAVY_PENALTY_S`, so
  light queries are not stuck behind heavy ones and heavy ones still get their turn (no starvation).
  A store that runs several statements at once (a read-only embedded store holds
  ``CITEGRAPH_READ_CONNECTIONS`` connections) is entered by that many calls at once, of which heavy
  and unbudgeted calls take all but one: a light call never waits for a heavy statement to end.
* :class:`Scheduler` — light operations run on a pool of their own; heavy ones (cost at least
  :data:`HEAVY_COST`, or a field that walks the whole graph: :data:`HEAVY_FIELDS`) on ``heavy_slots``
  threads, at most ``heavy_queue`` more waiting; beyond that a request is answered at once with
  ``SERVER_BUSY`` and ``extensions.retryAfter`` (seconds), rather than waiting to time out.
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from graphql import DocumentNode, FieldNode, GraphQLError, GraphQLSchema, OperationDefinitionNode
from graphql.execution.values import VariableValues, get_argument_values, get_variable_values
from graphql.utilities import get_operation_ast

from api.documents import documents
from api.errors import TimeBudgetExceeded

LIGHT = "light"
HEAVY = "heavy"
HEAVY_COST = 2_000  # objects (api.cost); the dashboard's queries cost at most ~400
# root fields that walk much of the graph whatever they return: a whole-graph explore query, a depth-2 ego network
HEAVY_FIELDS = {"explore": None, "egoNetwork": ("depth", 2)}
HEAVY_PENALTY_S = 0.25  # a heavy (or unbudgeted) store call waits behind light calls that arrived up to this much later
LIGHT_WORKERS = 8  # threads running light operations: the store lock serialises them anyway, and fewer threads
# contending for the GIL keep the event loop (/healthz) responsive
DEFAULT_HEAVY_SLOTS = 1  # CITEGRAPH_HEAVY_SLOTS: heavy operations run at once (one keeps a core for the rest on 2)
DEFAULT_HEAVY_QUEUE = 4  # CITEGRAPH_HEAVY_QUEUE: heavy operations waiting for a slot; beyond it SERVER_BUSY
HEAVY_YIELD_EVERY = 50  # fields a heavy operation resolves between two sleeps (api.schema.BudgetedResolvers)
HEAVY_YIELD_S = 0.005  # each sleep: the GIL goes to light requests' threads and the event loop meanwhile
DEFAULT_RETRY_AFTER_S = 5.0  # the hint before any heavy operation has finished


@dataclass
class Budget:
    """One request's time budget: the store calls it makes stop when it is spent."""

    deadline: float  # time.monotonic() past which no store call of the request is issued
    timeout_s: float  # the limit it was given (for messages)
    kind: str = LIGHT  # LIGHT or HEAVY: which queue its store calls join

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def spent(self) -> bool:
        return self.remaining() <= 0

    def exceeded(self) -> TimeBudgetExceeded:
        return TimeBudgetExceeded(budget_message(self.timeout_s))


def budget_message(timeout_s: float) -> str:
    """What a client whose request spent its time budget is told."""
    return (
        f"the request spent its {timeout_s:g} s time budget (CITEGRAPH_REQUEST_TIMEOUT) and was stopped; "
        "ask for less (smaller `first`, `limit` or `depth`, fewer aliases)"
    )


current_budget: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("citegraph_budget", default=None)


class StoreLock:
    """A lock for the store's connections that serves light requests first and honours time budgets.

    Drop-in for :class:`threading.Lock` (``acquire``, ``release``, ``locked``, ``with``). Waiters are
    granted the lock in order of ``arrival + penalty`` (0 for a light request's call,
    :data:`HEAVY_PENALTY_S` for a heavy request's and for calls outside any request), ties by arrival.
    Used as a context manager inside a request (:data:`current_budget` set), it waits at most the
    request's remaining budget and raises :class:`~api.errors.TimeBudgetExceeded` rather than
    issuing a call whose client has been answered.

    ``capacity`` calls hold it at once (the statements the store runs at once,
    :attr:`graph.store.GraphStore.read_concurrency`); with more than one, heavy and unbudgeted calls hold
    at most ``capacity - 1`` of the places, so one is always left to light calls: a light call waits for
    other light calls, never for a heavy statement to end. With ``capacity`` 1 it is one lock, as before.
    """

    def __init__(self, capacity: int = 1) -> None:
        if capacity < 1:
            raise ValueError(f"a StoreLock needs a capacity of at least 1, got {capacity}")
        self.capacity = capacity
        self._cond = threading.Condition(threading.Lock())
        self._holders = 0  # calls inside now
        self._heavy_holders = 0  # of which heavy or unbudgeted
        self._waiting: list[tuple[float, int, bool]] = []  # heap of (rank, ticket, heavy)
        self._tickets = itertools.count()
        self._held = threading.local()  # .heavy: a stack of the kinds this thread holds (release gives back the last)

    def locked(self) -> bool:
        """Whether every place is taken."""
        return self._holders >= self.capacity

    def _admits(self, heavy: bool) -> bool:
        if self._holders >= self.capacity:
            return False
        return not heavy or self.capacity == 1 or self._heavy_holders < self.capacity - 1

    def _first_admissible(self) -> tuple[float, int, bool] | None:
        """The waiter to grant next: the best-ranked one that fits (a heavy one waits while only the light
        place is free, and a light one behind it goes first)."""
        for entry in sorted(self._waiting):
            if self._admits(entry[2]):
                return entry
            if not entry[2]:  # a light waiter that does not fit: nothing fits
                return None
        return None

    def _take(self, heavy: bool) -> None:
        self._holders += 1
        self._heavy_holders += heavy
        stack: list[bool] | None = getattr(self._held, "heavy", None)
        if stack is None:
            stack = self._held.heavy = []
        stack.append(heavy)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        budget = current_budget.get()
        heavy = budget is None or budget.kind != LIGHT
        penalty = HEAVY_PENALTY_S if heavy else 0.0
        with self._cond:
            if not self._waiting and self._admits(heavy):
                self._take(heavy)
                return True
            if not blocking:
                return False
            entry = (time.monotonic() + penalty, next(self._tickets), heavy)
            heapq.heappush(self._waiting, entry)
            end = None if timeout < 0 else time.monotonic() + timeout
            while self._first_admissible() != entry:
                wait = None if end is None else end - time.monotonic()
                if wait is not None and wait <= 0:
                    self._waiting.remove(entry)
                    heapq.heapify(self._waiting)
                    self._cond.notify_all()  # the head may have changed
                    return False
                self._cond.wait(wait)
            self._waiting.remove(entry)
            heapq.heapify(self._waiting)
            self._take(heavy)
            if self._first_admissible() is not None:
                self._cond.notify_all()  # another place may still be free for the next waiter
            return True

    def release(self) -> None:
        with self._cond:
            stack: list[bool] | None = getattr(self._held, "heavy", None)
            if self._holders == 0:
                raise RuntimeError("release of an unheld StoreLock")
            heavy = stack.pop() if stack else False
            self._holders -= 1
            self._heavy_holders -= heavy
            self._cond.notify_all()

    def __enter__(self) -> bool:
        budget = current_budget.get()
        if budget is None:
            return self.acquire()
        if not self.acquire(timeout=max(budget.remaining(), 0.0)):
            raise budget.exceeded()
        if budget.spent():
            self.release()
            raise budget.exceeded()
        return True

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def classify(
    schema: GraphQLSchema,
    query: str | None,
    *,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    max_results: int,
    max_tokens: int,
) -> tuple[str, DocumentNode | None]:
    """:data:`HEAVY` or :data:`LIGHT` for one request, before it runs, and its parsed document (None where
    it does not parse: it fails at once when it runs), which the operation then uses rather than
    parsing the query again (a long document takes the parser seconds).

    Heavy: its cost (:func:`api.cost.query_cost`) is at least :data:`HEAVY_COST`, or a root field is in
    :data:`HEAVY_FIELDS` (with the argument value given there, where one is). A document that does not
    validate is light: it fails at once when it runs.
    """
    if not query:
        return LIGHT, None
    try:
        document = documents.parse(query, max_tokens=max_tokens)
    except Exception:  # classifying never fails a request: the operation parses again and says why
        return LIGHT, None
    return _kind(schema, query, document, operation_name, variables, max_results), document


def _kind(
    schema: GraphQLSchema,
    query: str,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    max_results: int,
) -> str:
    try:
        operation = get_operation_ast(document, operation_name)
    except GraphQLError:
        return LIGHT
    if operation is None:
        return LIGHT
    try:
        coerced = get_variable_values(schema, operation.variable_definitions or (), dict(variables or {}), max_errors=1)
        if isinstance(coerced, list):  # variables that do not fit their types: refused when it runs
            return LIGHT
        if _heavy_field(schema, operation, coerced):
            return HEAVY
        cost = documents.cost(
            schema, query, document, operation_name=operation_name, variables=variables, max_results=max_results
        )
    except Exception:  # classifying never fails a request: the operation reports its own errors
        return LIGHT
    return HEAVY if cost is not None and cost >= HEAVY_COST else LIGHT


def _heavy_field(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: VariableValues) -> bool:
    root = schema.query_type
    if root is None or operation.operation.value != "query":
        return False
    for selection in operation.selection_set.selections:
        if not isinstance(selection, FieldNode) or selection.name.value not in HEAVY_FIELDS:
            continue
        when = HEAVY_FIELDS[selection.name.value]
        if when is None:
            return True
        definition = root.fields.get(selection.name.value)
        if definition is None:
            continue
        arguments = get_argument_values(definition, selection, variables)
        if arguments.get(when[0]) == when[1]:
            return True
    return False


@dataclass
class Scheduler:
    """Where each GraphQL operation runs: the light pool, or a heavy slot (queued, or refused when full).

    One per app. ``heavy_slots`` heavy operations run at once and ``heavy_queue`` more wait; the
    counts include operations whose clients have gone (a timed-out operation holds its slot until
    it stops, at its next store call), so the bound is on the work, not on the clients.
    """

    heavy_slots: int = DEFAULT_HEAVY_SLOTS
    heavy_queue: int = DEFAULT_HEAVY_QUEUE
    light_workers: int = LIGHT_WORKERS
    _admitted: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _heavy_seconds: float = DEFAULT_RETRY_AFTER_S  # moving average of a heavy operation's admission-to-finish time
    _light_pool: ThreadPoolExecutor | None = None
    _heavy_pool: ThreadPoolExecutor | None = None

    @property
    def light(self) -> ThreadPoolExecutor:
        if self._light_pool is None:
            self._light_pool = ThreadPoolExecutor(self.light_workers, thread_name_prefix="graphql-light")
        return self._light_pool

    @property
    def heavy(self) -> ThreadPoolExecutor:
        if self._heavy_pool is None:
            self._heavy_pool = ThreadPoolExecutor(self.heavy_slots, thread_name_prefix="graphql-heavy")
        return self._heavy_pool

    @property
    def admitted(self) -> int:
        """Heavy operations running or waiting now."""
        return self._admitted

    def try_admit(self) -> bool:
        """Take a place for one heavy operation (running or queued); False when all are taken."""
        with self._lock:
            if self._admitted >= self.heavy_slots + self.heavy_queue:
                return False
            self._admitted += 1
            return True

    def finished(self, future: Future[Any], started: float) -> None:
        """Give the place back (a done callback of the operation's future)."""
        with self._lock:
            self._admitted -= 1
            self._heavy_seconds = 0.8 * self._heavy_seconds + 0.2 * (time.monotonic() - started)

    def retry_after(self) -> int:
        """Seconds a refused client should wait: about how long an admitted heavy operation took lately
        (its wait in the queue and its run), the time a place takes to free."""
        return max(1, round(self._heavy_seconds))

    def busy(self) -> GraphQLError:
        """The ``SERVER_BUSY`` error of a refused heavy operation."""
        wait = self.retry_after()
        return GraphQLError(
            f"the server is running {self.heavy_slots} heavy operation(s) with {self.heavy_queue} more waiting; "
            f"retry in about {wait} s, or ask for less (smaller `first`/`limit`, fewer aliases, depth 1)",
            extensions={"code": "SERVER_BUSY", "retryAfter": wait},
        )

    def close(self) -> None:
        for pool in (self._light_pool, self._heavy_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)


__all__ = [
    "HEAVY",
    "HEAVY_COST",
    "HEAVY_YIELD_EVERY",
    "HEAVY_YIELD_S",
    "LIGHT",
    "Budget",
    "Scheduler",
    "StoreLock",
    "budget_message",
    "classify",
    "current_budget",
]
