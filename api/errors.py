"""Errors a GraphQL client can see, and the extension that masks the rest and codes them all.

::

    ApiError                     message written for the client, code in ``extensions``
    ├── UserInputError           BAD_USER_INPUT: an argument is out of range or malformed
    ├── RequestTimeout           TIME_BUDGET_EXCEEDED: the request spent its time budget
    │   └── TimeBudgetExceeded   a store call refused because the budget is spent (api.scheduling)
    └── ResponseTooLarge         RESPONSE_TOO_LARGE: the answer passed its byte budget (api.budget)

Checks made before execution (several operations without a name, the cost limit, oversized input)
return errors built by :func:`coded_error`, which carry their code from the start. Messages are cut
at :data:`MAX_MESSAGE_CHARS`.

Expected domain outcomes (an unknown id, a paper without full text, an unknown explore query) are
not errors: they are part of the schema (``NotFound`` / ``InvalidArgument`` members of unions, or a
null). Every error in a response carries ``extensions.code``:

========================  ==========================================================================
code                      when
========================  ==========================================================================
GRAPHQL_PARSE_FAILED      the document is not GraphQL
GRAPHQL_VALIDATION_FAILED unknown field or argument, wrong variable type
OPERATION_NAME_REQUIRED   the document holds several operations and the request names none
QUERY_TOO_COMPLEX         depth, token, alias or cost limit exceeded (the cost: ``extensions.cost``)
BAD_USER_INPUT            :class:`UserInputError`; or a number or variable no argument takes (api.inputs)
TIME_BUDGET_EXCEEDED      :class:`RequestTimeout`: the request spent its time budget (``CITEGRAPH_REQUEST_TIMEOUT``);
                          it was stopped, and no store call of it is issued after that
SERVER_BUSY               a heavy operation found every heavy slot and queue place taken (:mod:`api.scheduling`);
                          nothing ran: retry after ``extensions.retryAfter`` seconds, or ask for less
RESPONSE_TOO_LARGE        the response passed ``CITEGRAPH_MAX_RESPONSE_BYTES`` (api.budget); ``data`` is null
STORE_CORRUPT             the store returned a value no step writes (:class:`graph.errors.StoreCorruptError`):
                          its file is damaged; a fixed message (the details, with the store's path, go to the log)
INTERNAL_SERVER_ERROR     anything else; the message is masked (no stack trace, no Cypher)
========================  ==========================================================================

Over HTTP, requests the GraphQL layer never sees are answered with the same ``{"errors": [...]}``
body and a status:

========================  ======  ==================================================================
code                      status  when
========================  ======  ==================================================================
UNAUTHENTICATED           401     ``CITEGRAPH_API_KEY`` is set and the request does not present it
BAD_REQUEST               400     the body is not a GraphQL request (not JSON, not an object, no query)
JSON_TOO_DEEP             400     the body or ``variables`` nest deeper than :data:`MAX_JSON_DEPTH`
PAYLOAD_TOO_LARGE         413     the body is longer than ``CITEGRAPH_MAX_BODY_BYTES``
METHOD_NOT_ALLOWED        405     not GET or POST
NOT_FOUND                 404     no page, asset or endpoint at that path
========================  ======  ==================================================================
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import MaskErrors

from graph.errors import StoreCorruptError

log = logging.getLogger(__name__)

MAX_JSON_DEPTH = 100  # nesting of a request body or its variables; no GraphQL request needs more
# An error message (graphql-core's quote a client's literal whole: `Int cannot represent …: "<1 MB>"`) and
# each line the server logs are cut to this many characters and end with "…".
MAX_MESSAGE_CHARS = 1_000
MASKED_MESSAGE = "Internal error; the server log has the details."
CORRUPT_MESSAGE = (
    "The server's store returned a value no citegraph step writes: its file is damaged. "
    "The server's operator should run `citegraph check` on it (the server log has the details)."
)
# Messages of strawberry's limit extensions (QueryDepthLimiter, MaxTokensLimiter, MaxAliasesLimiter).
# The token limit is enforced by the parser: "Syntax Error: Document contains more than 2000 tokens".
_LIMIT_MARKERS = ("exceeds maximum operation depth", "document contains more than", "aliases found")


class ApiError(Exception):
    """An error whose message is written for the client."""

    code = "BAD_REQUEST"


class UserInputError(ApiError):
    """A client's argument is out of range or malformed; its message is shown to the client."""

    code = "BAD_USER_INPUT"


class RequestTimeout(ApiError):
    """The request spent its time budget (``CITEGRAPH_REQUEST_TIMEOUT``)."""

    code = "TIME_BUDGET_EXCEEDED"


class TimeBudgetExceeded(RequestTimeout):
    """A store call of a request refused because the request's time budget is spent
    (:class:`api.scheduling.StoreLock`): the client has been answered, the store's time goes to others."""


def coded_error(message: str, code: str, **extensions: Any) -> GraphQLError:
    """A GraphQL error that carries its ``extensions.code`` from the start (checks before execution)."""
    return GraphQLError(message, extensions={"code": code, **extensions})


def error_code(error: GraphQLError) -> str:
    """The ``extensions.code`` of an error (see the module docstring)."""
    original = error.original_error
    if isinstance(original, ApiError):
        return original.code
    if isinstance(original, StoreCorruptError):
        return "STORE_CORRUPT"
    if original is None and error.extensions and isinstance(error.extensions.get("code"), str):
        return error.extensions["code"]
    if original is not None and not isinstance(original, GraphQLError):
        return "INTERNAL_SERVER_ERROR"
    message = error.message.lower()
    if any(marker in message for marker in _LIMIT_MARKERS):
        return "QUERY_TOO_COMPLEX"
    if message.startswith("syntax error"):
        return "GRAPHQL_PARSE_FAILED"
    return "GRAPHQL_VALIDATION_FAILED"


class CodedMaskErrors(MaskErrors):
    """:class:`MaskErrors` that masks internal errors and adds ``extensions.code`` to every error."""

    def __init__(self) -> None:
        super().__init__(
            should_mask_error=lambda e: error_code(e) == "INTERNAL_SERVER_ERROR", error_message=MASKED_MESSAGE
        )

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        coded = []
        for error in errors:
            code = error_code(error)
            visible = self.anonymise_error(error) if code == "INTERNAL_SERVER_ERROR" else error
            if code == "STORE_CORRUPT":
                log.error("%s", error.original_error)
            coded.append(
                GraphQLError(
                    message=CORRUPT_MESSAGE if code == "STORE_CORRUPT" else shorten(visible.message),
                    nodes=visible.nodes,
                    source=visible.source,
                    positions=visible.positions,
                    path=visible.path,
                    original_error=None
                    if code in ("INTERNAL_SERVER_ERROR", "STORE_CORRUPT")
                    else visible.original_error,
                    extensions={**(visible.extensions or {}), "code": code},
                )
            )
        return coded


def shorten(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` whole up to ``limit`` characters, else cut there and marked with "…"."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def log_internal(error: GraphQLError, query: str | None) -> None:
    """Logs an internal error with its traceback and the operation, no line longer than
    :data:`MAX_MESSAGE_CHARS` (a 100,000-digit literal once made a 100 KB log line)."""
    original = error.original_error
    trace = traceback.format_exception(original) if original is not None else []
    lines = [f"internal error: {error.message}", f"operation: {query or '(none)'}"]
    lines += [line for chunk in trace for line in chunk.rstrip("\n").split("\n")]
    log.error("%s", "\n".join(shorten(line) for line in lines))


def http_error_body(message: str, code: str) -> dict[str, list[dict[str, Any]]]:
    """The JSON body of an HTTP-level refusal, shaped like a GraphQL response's errors."""
    return {"errors": [{"message": message, "extensions": {"code": code}}]}


__all__ = [
    "CORRUPT_MESSAGE",
    "MASKED_MESSAGE",
    "MAX_JSON_DEPTH",
    "MAX_MESSAGE_CHARS",
    "ApiError",
    "CodedMaskErrors",
    "RequestTimeout",
    "TimeBudgetExceeded",
    "UserInputError",
    "coded_error",
    "error_code",
    "http_error_body",
    "log_internal",
    "shorten",
]
