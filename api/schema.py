"""The GraphQL schema (strawberry): the root ``Query`` assembled from the domain modules, and limits.

Types live in :mod:`api.types`, one module per domain; :data:`QUERY_TYPES` lists each module's root
fields class, and ``Query`` merges them. Adding an area is a new module plus one entry there.

Limits: query depth, token and alias counts are capped by schema extensions, and what an operation
will fetch by its cost (:mod:`api.cost`, ``CITEGRAPH_MAX_QUERY_COST``), all before it runs; list
arguments (``first``, ``limit``) are capped at ``AppSettings.max_results``; a document with several
operations must name the one to run. Each request has a time budget (:class:`api.context.Context`,
:mod:`api.scheduling`) that holds: the operation runs off the server's event loop, so a slow or
CPU-heavy one delays neither other requests nor its own ``TIME_BUDGET_EXCEEDED``, and heavy
operations run in a bounded number of slots (``SERVER_BUSY`` beyond the queue). Errors carry ``extensions.code`` and internal ones are
masked (no stack traces or Cypher reach clients), see :mod:`api.errors`. ``api/schema.graphql`` is
this schema printed (``make schema``); a test keeps it current.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import strawberry
from graphql import DocumentNode, GraphQLError, GraphQLSchema, OperationDefinitionNode
from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter, SchemaExtension
from strawberry.printer import print_schema
from strawberry.schema.schema import validate_document
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from api.budget import ResponseBudget
from api.context import Context, timeout_message
from api.cost import DEFAULT_MAX_QUERY_COST, query_cost
from api.documents import documents
from api.errors import CodedMaskErrors, UserInputError, coded_error, error_code, log_internal
from api.inputs import oversized_input, variables_problem
from api.scheduling import HEAVY, HEAVY_YIELD_EVERY, HEAVY_YIELD_S, classify, current_budget
from api.types import (
    ExploreQueries,
    ExportQuery,
    LinkageQuery,
    MappingQuery,
    NetworkQuery,
    PaperQuery,
    RecommendQuery,
    StatsQuery,
    TaxonomyQuery,
    ThematicQuery,
)

MAX_DEPTH = 10  # a connection adds two levels (edges, node): paper -> citedBy -> citations -> authors fits
MAX_TOKENS = 2_000
MAX_ALIASES = 15
SCHEMA_FILE = Path(__file__).with_name("schema.graphql")
# Past the deadline the operation is cancelled at its next await, INNER_GRACE_S after the resolvers' own
# deadline so that their messages ("the recommender is still loading") win; the server's event loop
# answers TIME_BUDGET_EXCEEDED itself OUTER_GRACE_S after it where the operation is stuck in code that never awaits.
INNER_GRACE_S = 0.1
OUTER_GRACE_S = 0.5
DEFAULT_MAX_RESULTS = 200  # list cap assumed by the cost check for a context that is not a Context

QUERY_TYPES: tuple[type, ...] = (
    PaperQuery,
    TaxonomyQuery,
    NetworkQuery,
    MappingQuery,
    RecommendQuery,
    LinkageQuery,
    ExploreQueries,
    ExportQuery,
    StatsQuery,
    ThematicQuery,
)

Query = merge_types("Query", QUERY_TYPES)


class OperationChecks(SchemaExtension):
    """Validates the document, and refuses one whose operations the request does not choose between
    (``OPERATION_NAME_REQUIRED``) and an operation over the cost limit (``QUERY_TOO_COMPLEX``, the cost
    in ``extensions.cost``): nothing of either runs. Before validation, a number literal or variable no
    argument takes (:func:`api.inputs.oversized_input`) is ``BAD_USER_INPUT`` and nothing else is
    checked: validation would quote it, or fail converting it.

    What depends on the document's text alone (its literals' problems, the errors of the schema's
    rules and of the depth and alias limits) is worked out once per text (:mod:`api.documents`); the
    checks that read the request (its variables, its operation name, the server's limits) run each
    time, with the cost kept per text and variables too. Validation therefore happens here, and
    strawberry's own validation step finds it done.
    """

    def on_validate(self) -> Iterator[None]:
        ec = self.execution_context
        document = ec.graphql_document
        if document is not None and ec.pre_execution_errors is None:
            ec.pre_execution_errors = self._errors(ec, document)  # strawberry skips its validation once set
        yield

    def _errors(self, ec: ExecutionContext, document: DocumentNode) -> list[GraphQLError]:
        text = ec.query
        if text is None:  # a document handed over without its text: nothing to key a cache by
            problem = oversized_input(document, ec.variables)
        else:
            problem = documents.literal_problem(text, document) or (
                variables_problem(ec.variables) if ec.variables else None
            )
        if problem is not None:
            return [coded_error(problem, "BAD_USER_INPUT")]
        schema = ec.schema._schema
        rules = tuple(ec.validation_rules)
        if text is None:
            errors = validate_document(schema, document, rules)
        else:
            errors = documents.validation_errors(schema, text, lambda: validate_document(schema, document, rules))
        context = ec.context if isinstance(ec.context, Context) else None
        checks = _operation_checks(
            schema,
            text,
            document,
            # the request's own operationName (None where it sent none): once parsed, ec.operation_name falls
            # back to the document's first operation, which would hide a document of several unnamed ones
            getattr(ec, "_provided_operation_name", ec.operation_name),
            dict(ec.variables or {}),
            max_results=context.max_results if context else DEFAULT_MAX_RESULTS,
            max_cost=context.max_query_cost if context else DEFAULT_MAX_QUERY_COST,
        )
        return errors + checks  # in the order of the rules: the schema's and the limits', then these


def _operation_checks(
    schema: GraphQLSchema,
    text: str | None,
    document: DocumentNode,
    operation_name: str | None,
    variables: dict[str, Any],
    *,
    max_results: int,
    max_cost: int,
) -> list[GraphQLError]:
    """The errors of :class:`OperationChecks`' per-request checks of ``document`` (parsed from ``text``)."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is None and len(operations) > 1:
        names = ", ".join(o.name.value if o.name else "(anonymous)" for o in operations)
        return [
            coded_error(
                f"the document holds {len(operations)} operations ({names}) and the request names none; "
                "send `operationName` with the one to run",
                "OPERATION_NAME_REQUIRED",
            )
        ]
    if text is None:
        cost = query_cost(schema, document, operation_name=operation_name, variables=variables, max_results=max_results)
    else:  # the scheduler counted it while classifying the request: found kept
        cost = documents.cost(
            schema, text, document, operation_name=operation_name, variables=variables, max_results=max_results
        )
    if cost is not None and cost > max_cost:
        return [
            coded_error(
                f"the query would fetch about {cost:,} objects, over this server's limit of {max_cost:,} "
                "(CITEGRAPH_MAX_QUERY_COST); ask for fewer items (smaller `first`, `limit` or `k`) or nest "
                "fewer lists",
                "QUERY_TOO_COMPLEX",
                cost=cost,
                maxCost=max_cost,
            )
        ]
    return []


class ParsedOnce(SchemaExtension):
    """Hands the operation the document :func:`api.scheduling.classify` parsed (with the same token
    limit), so that a long document is not parsed twice; without one, the document kept for its text
    (:mod:`api.documents`). A text that does not parse is left to strawberry, which reports why."""

    def on_parse(self) -> Iterator[None]:
        ec = self.execution_context
        if ec.graphql_document is None:
            if isinstance(ec.context, Context) and ec.context.document is not None:
                ec.graphql_document = ec.context.document
            elif ec.query:
                with contextlib.suppress(Exception):  # strawberry parses it again and reports the error its way
                    ec.graphql_document = documents.parse(ec.query, max_tokens=ec.parse_options.get("max_tokens"))
        yield


class BudgetedResolvers(SchemaExtension):
    """Every field resolution checks the request's budget, and a heavy operation yields the GIL.

    The store calls of a request stop at its deadline (:class:`api.scheduling.StoreLock`), but a heavy
    operation's own Python work (resolving thousands of objects: seconds that never await) would go on
    holding the GIL that light requests and the event loop need. Here it stops at the first field
    resolved past the deadline (``TIME_BUDGET_EXCEEDED``), and a heavy operation sleeps
    :data:`~api.scheduling.HEAVY_YIELD_S` every :data:`~api.scheduling.HEAVY_YIELD_EVERY` fields so
    that the other threads get the interpreter in between.
    """

    def resolve(self, _next: Callable[..., Any], root: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
        context = info.context
        if isinstance(context, Context):
            budget = context.budget
            if budget.kind == HEAVY:
                context.resolved += 1
                if context.resolved % HEAVY_YIELD_EVERY == 0:
                    if budget.spent():
                        raise budget.exceeded()
                    time.sleep(HEAVY_YIELD_S)
        return _next(root, info, *args, **kwargs)


class CitegraphSchema(strawberry.Schema):
    """Runs each operation off the event loop under its deadline; logs only internal errors (with their
    traceback), client errors are the client's to read.

    :meth:`execute` parses, validates and executes in a worker thread with an event loop of its own,
    so the server's loop only moves bytes: ``/healthz`` and other requests are answered while an
    operation parses a long document or runs CPU-heavy resolvers. With the app's
    :class:`~api.scheduling.Scheduler` in the context, the operation is first classified (in a
    thread: parsing is CPU work) and runs on the light pool, or takes a heavy slot (waiting in the
    bounded queue, or refused at once with ``SERVER_BUSY``). Past the context's deadline the
    operation is cancelled (its memory returned once its thread lets go) and the client gets
    ``TIME_BUDGET_EXCEEDED`` on time.
    """

    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        query = execution_context.query if execution_context else None
        for error in errors:
            if error_code(error) == "INTERNAL_SERVER_ERROR":
                log_internal(error, query)

    async def execute(
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        def operation() -> Awaitable[ExecutionResult]:
            return super(CitegraphSchema, self).execute(
                query,
                variable_values=variable_values,
                context_value=context_value,
                root_value=root_value,
                operation_name=operation_name,
                allowed_operation_types=allowed_operation_types,
                operation_extensions=operation_extensions,
            )

        if not isinstance(context_value, Context):
            return await operation()
        context = context_value
        loop = asyncio.get_running_loop()
        scheduler = context.scheduler
        if scheduler is None:
            worker = loop.run_in_executor(None, _run_in_own_loop, operation, context)
        else:
            kind, context.document = await loop.run_in_executor(
                scheduler.light,
                functools.partial(
                    classify,
                    self._schema,
                    query,
                    operation_name=operation_name,
                    variables=variable_values,
                    max_results=context.max_results,
                    max_tokens=MAX_TOKENS,
                ),
            )
            context.budget.kind = kind
            if kind == HEAVY:
                if not scheduler.try_admit():
                    return ExecutionResult(data=None, errors=[scheduler.busy()])
                heavy = scheduler.heavy.submit(_run_in_own_loop, operation, context)
                heavy.add_done_callback(functools.partial(scheduler.finished, started=time.monotonic()))
                worker = asyncio.wrap_future(heavy)
            else:
                worker = loop.run_in_executor(scheduler.light, _run_in_own_loop, operation, context)
        try:
            return await asyncio.wait_for(worker, max(context.deadline - time.monotonic(), 0) + OUTER_GRACE_S)
        except TimeoutError:  # stuck in code that does not await (or never got a worker); it stops at its next await
            return _timed_out(context)


class _ThreadLoop:
    """A worker thread's event loop, held in the thread's locals: collected when the thread ends."""

    __slots__ = ("__weakref__", "loop")

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        weakref.finalize(self, self.loop.close)  # the thread ended (or the process exits): its pool shuts down


_thread_state = threading.local()  # .held: this worker thread's _ThreadLoop, kept from one operation to the next


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This worker thread's event loop, made on its first operation and kept for the next ones.

    A fresh loop per operation cost a selector, a self-pipe and a thread pool whose threads were
    started anew for the store calls of every request (about 10% of a light request's server CPU,
    ``benchmarks/graphql_profile.py``); the kept loop keeps its pool's threads. It is closed (its
    pool shut down without waiting) when the thread ends.
    """
    held: _ThreadLoop | None = getattr(_thread_state, "held", None)
    if held is None or held.loop.is_closed():
        held = _thread_state.held = _ThreadLoop()
    return held.loop


def _run_in_own_loop(operation: Callable[[], Awaitable[ExecutionResult]], context: Context) -> ExecutionResult:
    """``operation()`` on this (worker) thread's own event loop, cancelled past the deadline; every
    store call it makes sees the request's budget (:data:`api.scheduling.current_budget`)."""

    async def bounded() -> ExecutionResult:
        remaining = context.deadline - time.monotonic()
        if remaining <= 0:  # waited for a worker until past the deadline: nothing to run
            return _timed_out(context)
        try:
            return await asyncio.wait_for(operation(), remaining + INNER_GRACE_S)
        except TimeoutError:
            return _timed_out(context)

    # asyncio.run would also wait for the loop's store-call threads; one that outlives the deadline
    # finishes on its own instead (in the loop's pool), and the worker is free for the next request.
    token = current_budget.set(context.budget)  # before the loop's tasks copy this thread's context
    loop = _thread_loop()
    try:
        return loop.run_until_complete(bounded())
    finally:
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:  # DataLoader batches still waiting on a store call
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            current_budget.reset(token)  # the pool's thread serves other requests next


def _timed_out(context: Context) -> ExecutionResult:
    return ExecutionResult(data=None, errors=[coded_error(timeout_message(context.timeout_s), "TIME_BUDGET_EXCEEDED")])


schema = CitegraphSchema(
    query=Query,
    extensions=[
        lambda: QueryDepthLimiter(max_depth=MAX_DEPTH),
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        lambda: MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        ParsedOnce,
        BudgetedResolvers,
        OperationChecks,
        ResponseBudget,
        CodedMaskErrors,
    ],
)


def schema_sdl() -> str:
    """The schema in GraphQL SDL, as ``api/schema.graphql`` holds it."""
    return print_schema(schema) + "\n"


__all__ = [
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "SCHEMA_FILE",
    "CitegraphSchema",
    "Context",
    "OperationChecks",
    "UserInputError",
    "schema",
    "schema_sdl",
]
