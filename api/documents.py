"""What the server works out from a GraphQL document's text alone, worked out once per text.

Dashboards send the same few documents over and over (the ``paper`` query with another id as a
literal or a variable), and a light request's own Python work was mostly about its document, not its
data: parsing it (twice: to classify it, then to run it), the literal checks of
:func:`api.inputs.oversized_input`, validating it against the schema (graphql-core's rules, the depth
and alias limits: 30% of the server's CPU per ``paper`` request, profiled with
``benchmarks/graphql_profile.py``) and counting its cost (:func:`api.cost.query_cost`, once to
classify, once to check). Each of those depends on the text (and, for the cost, the variables and
the list cap), so :class:`DocumentCache` keeps the results of recent texts:

* :meth:`DocumentCache.parse` — the document (a parse error is raised each time, never kept);
* :meth:`DocumentCache.literal_problem` — what is wrong with its number literals, if anything;
* :meth:`DocumentCache.validation_errors` — the errors of the schema's document-only validation
  rules (the standard rules and the depth and alias limiters; the per-request checks of
  :class:`api.schema.OperationChecks`, which read the variables and the request's limits, run apart);
* :meth:`DocumentCache.cost` — the cost, keyed by text, operation, variables and list cap.

Documents are immutable once parsed (graphql-core never changes a ``DocumentNode``; strawberry's own
``ParserCache``/``ValidationCache`` share them alike). The cache is bounded twice: by entries
(:data:`MAX_ENTRIES`, least recently used first out) and by size — a text longer than
:data:`MAX_CACHED_CHARS` is worked out each time and never kept, so a client cannot fill the memory
with long unique documents (those are heavy and rare; the dashboard's take 200-600 characters).
It is thread-safe: the light pool's threads share it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from graphql import DocumentNode, GraphQLError, GraphQLSchema, parse

from api.cost import query_cost
from api.inputs import literal_problem

T = TypeVar("T")
MAX_ENTRIES = 512  # results kept (of all kinds together): a dashboard sends a few dozen distinct documents
MAX_CACHED_CHARS = 20_000  # longer texts are worked out each time: the memory a client can pin stays ~10 MB


@dataclass
class CacheStats:
    """How often each kind of result was found (``hits``) or worked out (``misses``), since start-up."""

    hits: dict[str, int]
    misses: dict[str, int]


class DocumentCache:
    """The parsed document, literal problems, validation errors and cost of recent texts (see the module)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CACHED_CHARS) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._hits: dict[str, int] = {}
        self._misses: dict[str, int] = {}

    def _get(self, kind: str, text: str, key: Hashable, compute: Callable[[], T]) -> T:
        """The kept result for ``(kind, key)``, else ``compute()`` (kept where ``text`` is short enough)."""
        if len(text) > self.max_chars:
            self._count(self._misses, kind)
            return compute()
        full = (kind, key)
        with self._lock:
            if full in self._entries:
                self._entries.move_to_end(full)
                self._hits[kind] = self._hits.get(kind, 0) + 1
                return self._entries[full]
        value = compute()  # outside the lock: two threads may both work a new text out, and keep one
        with self._lock:
            self._misses[kind] = self._misses.get(kind, 0) + 1
            self._entries[full] = value
            self._entries.move_to_end(full)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return value

    def _count(self, counts: dict[str, int], kind: str) -> None:
        with self._lock:
            counts[kind] = counts.get(kind, 0) + 1

    def parse(self, text: str, *, max_tokens: int | None) -> DocumentNode:
        """``graphql.parse(text, max_tokens=...)``, kept per text; a ``GraphQLError`` where it does not parse."""
        return self._get("parse", text, (text, max_tokens), lambda: parse(text, max_tokens=max_tokens))

    def literal_problem(self, text: str, document: DocumentNode) -> str | None:
        """:func:`api.inputs.literal_problem` of ``document`` (parsed from ``text``), kept per text."""
        return self._get("literals", text, text, lambda: literal_problem(document))

    def validation_errors(
        self, schema: GraphQLSchema, text: str, validate: Callable[[], list[GraphQLError]]
    ) -> list[GraphQLError]:
        """``validate()`` (the errors of ``text``'s document against ``schema``), kept per schema and text.

        ``validate`` must apply rules that depend on the document alone (no variables, no request): the
        first request's are the ones applied to its text. The list returned is a fresh one each time.
        """
        return list(self._get("validation", text, (id(schema), text), validate))

    def cost(
        self,
        schema: GraphQLSchema,
        text: str,
        document: DocumentNode,
        *,
        operation_name: str | None,
        variables: Mapping[str, Any] | None,
        max_results: int,
    ) -> int | None:
        """:func:`api.cost.query_cost` of the operation, kept per schema, text, operation, variables and cap."""
        try:  # the variables as canonical JSON; ones that are not JSON (a test's own objects) are not kept
            spelled = json.dumps(variables or {}, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):
            return query_cost(
                schema, document, operation_name=operation_name, variables=variables, max_results=max_results
            )
        return self._get(
            "cost",
            text + spelled,
            (id(schema), text, operation_name, spelled, max_results),
            lambda: query_cost(
                schema, document, operation_name=operation_name, variables=variables, max_results=max_results
            ),
        )

    def stats(self) -> CacheStats:
        """The hits and misses of each kind so far."""
        with self._lock:
            return CacheStats(dict(self._hits), dict(self._misses))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._hits.clear()
            self._misses.clear()


documents = DocumentCache()  # the server's: shared by the scheduler's classification and the schema's extensions


__all__ = ["MAX_CACHED_CHARS", "MAX_ENTRIES", "CacheStats", "DocumentCache", "documents"]
