"""The GraphQL schema (strawberry): the root ``Query`` assembled from the domain modules, and limits.

Types live in :mod:`api.types`, one module per domain; :data:`QUERY_TYPES` lists each module's root
fields class, and ``Query`` merges them. Adding an area is a new module plus one entry there.

Limits: query depth, token and alias counts are capped by schema extensions; list arguments
(``first``, ``limit``) are capped at ``AppSettings.max_results``; each request has a deadline
(:class:`api.context.Context`). Errors carry ``extensions.code`` and internal ones are masked
(no stack traces or Cypher reach clients), see :mod:`api.errors`. ``api/schema.graphql`` is this
schema printed (``make schema``); a test keeps it current.
"""

from __future__ import annotations

from pathlib import Path

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.printer import print_schema
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from api.context import Context
from api.errors import CodedMaskErrors, UserInputError, error_code
from api.types import (
    ExploreQueries,
    LinkageQuery,
    NetworkQuery,
    PaperQuery,
    RecommendQuery,
    StatsQuery,
    TaxonomyQuery,
)

MAX_DEPTH = 10  # a connection adds two levels (edges, node): paper -> citedBy -> citations -> authors fits
MAX_TOKENS = 2_000
MAX_ALIASES = 15
SCHEMA_FILE = Path(__file__).with_name("schema.graphql")

QUERY_TYPES: tuple[type, ...] = (
    PaperQuery,
    TaxonomyQuery,
    NetworkQuery,
    RecommendQuery,
    LinkageQuery,
    ExploreQueries,
    StatsQuery,
)

Query = merge_types("Query", QUERY_TYPES)


class CitegraphSchema(strawberry.Schema):
    """Logs only internal errors (with their traceback); client errors are the client's to read."""

    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        internal = [e for e in errors if error_code(e) == "INTERNAL_SERVER_ERROR"]
        if internal:
            super().process_errors(internal, execution_context)


schema = CitegraphSchema(
    query=Query,
    extensions=[
        lambda: QueryDepthLimiter(max_depth=MAX_DEPTH),
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        lambda: MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        CodedMaskErrors,
    ],
)


def schema_sdl() -> str:
    """The schema in GraphQL SDL, as ``api/schema.graphql`` holds it."""
    return print_schema(schema) + "\n"


__all__ = ["MAX_ALIASES", "MAX_DEPTH", "MAX_TOKENS", "SCHEMA_FILE", "Context", "UserInputError", "schema", "schema_sdl"]
