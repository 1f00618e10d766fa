"""Types every domain module shares: Relay cursor connections and the expected-failure types.

Connections follow the GraphQL Cursor Connections spec (``edges { cursor node }``, ``pageInfo``)
with forward paging (``first``, ``after``) and a ``totalCount`` where it is cheap. Cursors are
opaque to clients; here they encode an offset into the ordered result.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import strawberry
from strawberry.types import Info
from strawberry.types.nodes import SelectedField, Selection

from api.context import Context
from api.errors import UserInputError

NodeT = TypeVar("NodeT")
_CURSOR_PREFIX = "offset:"
MAX_OFFSET = 1_000_000  # no list the API pages through is longer; bounds a forged cursor
MAX_SHOWN_ID_CHARS = 100  # an unknown id (or name) is echoed back at most this long; no real id is longer


@strawberry.type(description="Where a page of a connection sits in the whole list.")
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    start_cursor: str | None
    end_cursor: str | None


@strawberry.type
class Edge(Generic[NodeT]):
    cursor: str = strawberry.field(description="Pass as `after` to get the items that follow this one.")
    node: NodeT


@strawberry.type(description="A page of a list (Relay cursor connection).")
class Connection(Generic[NodeT]):
    edges: list[Edge[NodeT]]
    page_info: PageInfo
    total_count: int | None = strawberry.field(description="Items in the whole list; null where counting is costly.")


@strawberry.type(description="No node of that kind has that id.")
class NotFound:
    kind: str = strawberry.field(description="What was looked up, e.g. Paper, Cluster, ExploreQuery.")
    id: str
    message: str


@strawberry.type(description="An argument was well-formed GraphQL but does not fit what it names.")
class InvalidArgument:
    argument: str
    message: str


def shown_id(value: str) -> str:
    """``value`` as a response echoes it: whole up to :data:`MAX_SHOWN_ID_CHARS` characters, else cut there
    and marked with "…" (an unknown id of a megabyte is not sent back)."""
    return value if len(value) <= MAX_SHOWN_ID_CHARS else value[:MAX_SHOWN_ID_CHARS] + "…"


async def paper_key(ctx: Context, given: str) -> str | None:
    """The key of the paper ``given`` names (any id a source gave it: see ``GraphService.papers``), or None."""
    record = await ctx.papers.load(given)
    return record.id if record is not None else None


def paper_not_found(paper_id: str) -> NotFound:
    """The ``NotFound`` of an unknown paper id (shown cut, see :func:`shown_id`)."""
    shown = shown_id(paper_id)
    return NotFound(kind="Paper", id=shown, message=f"no paper has id {shown!r}")


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode()).decode()


def decode_cursor(cursor: str | None) -> int:
    """The offset after ``cursor`` (0 without one); :class:`UserInputError` for a cursor we did not issue."""
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        if not text.startswith(_CURSOR_PREFIX):
            raise ValueError(text)
        offset = int(text[len(_CURSOR_PREFIX) :])
    except (ValueError, UnicodeError, binascii.Error):
        raise UserInputError(
            "`after` is not a cursor this API gave out; pass an `endCursor` or `cursor` value"
        ) from None
    if not 0 <= offset < MAX_OFFSET:
        raise UserInputError("`after` is not a cursor this API gave out; pass an `endCursor` or `cursor` value")
    return offset + 1


def connection(nodes: Sequence[NodeT], *, start: int, has_next: bool, total: int | None) -> Connection[NodeT]:
    """A page of ``nodes`` that starts at offset ``start`` of the whole list."""
    edges = [Edge(cursor=encode_cursor(start + i), node=node) for i, node in enumerate(nodes)]
    return Connection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=has_next,
            has_previous_page=start > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
        total_count=total,
    )


def page_bounds(info: Info[Context, Any], first: int, after: str | None) -> tuple[int, int]:
    """(start offset, page size) for ``first``/``after``, checked against the caps."""
    return decode_cursor(after), info.context.cap(first)


def wants(info: Info[Context, Any], field: str) -> bool:
    """Whether the client selected ``field`` directly under the current field (fragments included)."""

    def walk(selections: Sequence[Selection]) -> bool:
        for selection in selections:
            if isinstance(selection, SelectedField):
                if selection.name == field:
                    return True
            elif walk(selection.selections):  # a fragment spread or an inline fragment
                return True
        return False

    return any(walk(selected.selections) for selected in info.selected_fields)


__all__ = [
    "Connection",
    "Edge",
    "InvalidArgument",
    "NotFound",
    "PageInfo",
    "connection",
    "decode_cursor",
    "encode_cursor",
    "page_bounds",
    "paper_key",
    "paper_not_found",
    "shown_id",
    "wants",
]
