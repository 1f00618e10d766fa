"""The bytes of a GraphQL response, bounded as it is built: each string cut, the whole answer capped.

The cost limit (:mod:`api.cost`) bounds the objects and the work of an operation before it runs, but
not their size: an importer may store a 50 MB title, and one ``papers(search: …)`` page once answered
262 MB in 7–10 s while ``/healthz`` stalled. :class:`ResponseBudget` watches every value a resolver
returns:

* **Strings are cut** at :data:`MAX_STRING_CHARS` characters (the first ``MAX_STRING_CHARS − 1`` and
  "…"), in lists of strings and in JSON values (``explore`` rows) too. The response says so: its
  ``extensions.truncated`` holds ``maxStringChars`` and the ``paths`` of the cut fields (the first
  :data:`MAX_REPORTED_PATHS`). No real title, abstract or sentence is that long, so a user only ever
  sees a cut where an import stored something broken, and still gets the rest of the page.
* **The response is refused** once the values resolved so far pass the request's byte budget
  (``CITEGRAPH_MAX_RESPONSE_BYTES``, default :data:`DEFAULT_MAX_RESPONSE_BYTES`): ``data`` is null and
  the one error is ``RESPONSE_TOO_LARGE``. Resolvers that come after the budget is spent do not run.
  A refusal, not a silently shortened answer: a page with some of its items quietly missing would
  read as the whole truth, while the error tells the client to ask for less and how.

The bytes counted are those of the JSON the server sends: a string's encoded length
(``\\uXXXX`` escapes for non-ASCII text, as ``json.dumps`` writes them), and
:data:`FIELD_BYTES` for each field's key and punctuation, a number, a boolean or a null.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from graphql import GraphQLError, GraphQLResolveInfo
from strawberry.extensions import SchemaExtension
from strawberry.utils.await_maybe import AwaitableOrValue

from api.errors import ApiError

MAX_STRING_CHARS = 20_000  # longest string served whole: abstracts reach ~5,000 characters, titles ~500
DEFAULT_MAX_RESPONSE_BYTES = 16 * 2**20  # CITEGRAPH_MAX_RESPONSE_BYTES; 200 papers with long abstracts take ~2 MB
FIELD_BYTES = 16  # a field's `"name": ` and comma, or a number, boolean or null; an estimate, not a measure
MAX_REPORTED_PATHS = 20  # cut fields listed in extensions.truncated.paths
ELLIPSIS = "…"


class ResponseTooLarge(ApiError):
    """The response passed the request's byte budget (``CITEGRAPH_MAX_RESPONSE_BYTES``)."""

    code = "RESPONSE_TOO_LARGE"


def too_large_message(budget: int) -> str:
    """What a client whose response passed the byte budget is told."""
    return (
        f"the response would be larger than this server's limit of {budget:,} bytes "
        "(CITEGRAPH_MAX_RESPONSE_BYTES); ask for fewer items (smaller `first`, `limit` or `k`) or fewer "
        "long fields (abstract, sentences, rows), and page with `after`"
    )


def cut(text: str, limit: int = MAX_STRING_CHARS) -> str:
    """``text`` whole up to ``limit`` characters, else its first ``limit - 1`` and "…"."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def json_bytes(text: str) -> int:
    """The bytes of ``text`` in the response's JSON, quotes left out (``json.dumps`` escapes non-ASCII)."""
    return len(text) if text.isascii() else len(json.dumps(text)) - 2


class ResponseBudget(SchemaExtension):
    """Cuts long strings and refuses a response over its byte budget (see the module docstring).

    The budget is the context's ``max_response_bytes`` where it has one, else
    :data:`DEFAULT_MAX_RESPONSE_BYTES`.
    """

    def __init__(self) -> None:
        self.spent = 0
        self.budget = DEFAULT_MAX_RESPONSE_BYTES
        self.over = False
        self.cut_paths: list[str] = []
        self.cut_count = 0

    def on_operation(self) -> Iterator[None]:
        context = self.execution_context.context
        budget = getattr(context, "max_response_bytes", None)
        self.budget = budget if isinstance(budget, int) and budget > 0 else DEFAULT_MAX_RESPONSE_BYTES
        yield

    def on_execute(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if self.over and result is not None and hasattr(result, "errors"):
            result.data = None
            result.errors = [GraphQLError(too_large_message(self.budget), extensions={"code": ResponseTooLarge.code})]

    def get_results(self) -> dict[str, Any]:
        if not self.cut_count or self.over:
            return {}
        return {"truncated": {"maxStringChars": MAX_STRING_CHARS, "count": self.cut_count, "paths": self.cut_paths}}

    def resolve(
        self, _next: Callable[..., Any], root: Any, info: GraphQLResolveInfo, *args: Any, **kwargs: Any
    ) -> AwaitableOrValue[object]:
        if self.over:
            raise ResponseTooLarge(too_large_message(self.budget))
        value = _next(root, info, *args, **kwargs)
        if isinstance(value, Awaitable):
            return self._later(value, info)
        return self._charge(value, info)

    async def _later(self, value: Awaitable[object], info: GraphQLResolveInfo) -> object:
        return self._charge(await value, info)

    def _charge(self, value: object, info: GraphQLResolveInfo) -> object:
        """``value`` with its long strings cut, its bytes added to what the response has spent."""
        spent = FIELD_BYTES
        if isinstance(value, str):
            if len(value) > MAX_STRING_CHARS:
                value = self._cut(value, info)
            spent += json_bytes(value)
        elif isinstance(value, list | tuple | dict):
            value, spent = self._walk(value, info)
        self.spent += spent
        if self.spent > self.budget:
            self.over = True
            raise ResponseTooLarge(too_large_message(self.budget))
        return value

    def _walk(self, value: list[Any] | tuple[Any, ...] | dict[Any, Any], info: GraphQLResolveInfo) -> tuple[Any, int]:
        """A list (of strings, of objects resolved later) or a JSON value, its strings cut, and its bytes.

        Containers are copied only where a string in them was cut; objects count :data:`FIELD_BYTES`
        here, their fields as they resolve.
        """
        spent = FIELD_BYTES
        if isinstance(value, dict):
            items = list(value.items())
            new_items = []
            changed = False
            for key, item in items:
                new_item, item_spent = self._value(item, info)
                spent += item_spent + (json_bytes(key) if isinstance(key, str) else FIELD_BYTES)
                changed |= new_item is not item
                new_items.append((key, new_item))
            return (dict(new_items) if changed else value), spent
        new_list = []
        changed = False
        for item in value:
            new_item, item_spent = self._value(item, info)
            spent += item_spent
            changed |= new_item is not item
            new_list.append(new_item)
        if not changed:
            return value, spent
        return (type(value)(new_list) if isinstance(value, tuple) else new_list), spent

    def _value(self, item: Any, info: GraphQLResolveInfo) -> tuple[Any, int]:
        if isinstance(item, str):
            if len(item) > MAX_STRING_CHARS:
                item = self._cut(item, info)
            return item, json_bytes(item) + 3  # quotes and comma
        if isinstance(item, list | tuple | dict):
            return self._walk(item, info)
        return item, FIELD_BYTES

    def _cut(self, text: str, info: GraphQLResolveInfo) -> str:
        self.cut_count += 1
        if len(self.cut_paths) < MAX_REPORTED_PATHS:
            self.cut_paths.append(".".join(str(key) for key in info.path.as_list()))
        return cut(text)


__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "MAX_STRING_CHARS",
    "ResponseBudget",
    "ResponseTooLarge",
    "cut",
    "too_large_message",
]
