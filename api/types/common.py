"""Types every domain module shares: Relay cursor connections and the expected-failure types.

Connections follow the GraphQL Cursor Connections spec (``edges { cursor node }``, ``pageInfo``)
with forward paging (``first``, ``after``) and a ``totalCount`` where it is cheap. Cursors are
opaque to clients and cannot be forged: each carries an offset into the ordered result and an
HMAC-SHA256 tag (RFC 2104) over that offset and the *scope* it was issued for, the field plus the
arguments that fix the list (``Query.papers`` with its ``search``, ``category`` and years;
``Paper.citedBy`` of one paper). So a cursor only ever names an offset this API handed out for the
same list: reusing the ``endCursor`` of ``papers(search: "a")`` (offset 12,000) on
``papers(search: "machine translation")``, or a base64 ``offset:500000`` of one's own, is a
``BAD_USER_INPUT``, never a SKIP past the end of a smaller result (which crashes the embedded
engine, ``benchmarks/ladybug_skip_crash.py``; the store clamps such a SKIP as well).

The key is ``CITEGRAPH_CURSOR_KEY`` when set (servers behind a load balancer share it, and cursors
outlive a restart), else drawn at random when ``citegraph serve`` starts and shared by every worker it
restarts (:func:`api.cli.serve.worker_env`): a new ``citegraph serve`` refuses the old cursors with a
message that says to start from the first page.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import strawberry
from strawberry.types import Info
from strawberry.types.nodes import SelectedField, Selection

from api.context import Context
from api.errors import UserInputError

NodeT = TypeVar("NodeT")
MAX_OFFSET = 1_000_000  # no list the API pages through is longer; a cursor never carries more
_TAG_BYTES = 16  # 128 bits of HMAC-SHA256: guessing a tag takes ~2^127 tries
_OFFSET = struct.Struct(">Q")  # the offset as 8 bytes, big-endian
CURSOR_KEY_ENV = "CITEGRAPH_CURSOR_KEY"
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


def _cursor_key() -> bytes:
    """The HMAC key: ``CITEGRAPH_CURSOR_KEY`` (any text) when set, else 32 random bytes for this process."""
    given = os.environ.get(CURSOR_KEY_ENV)
    return given.encode() if given else secrets.token_bytes(32)


_KEY = _cursor_key()


def cursor_scope(field: str, **arguments: object) -> str:
    """The scope a cursor is bound to: ``field`` (``Type.field``) and the arguments that fix its list.

    Arguments are written as canonical JSON (sorted keys), so ``cursor_scope("Query.papers", search="a")``
    is the same wherever it is computed; ``first`` is left out (a client may change the page size).
    """
    return f"{field}{json.dumps(arguments, sort_keys=True, default=str)}"


def _tag(scope: str, offset: int) -> bytes:
    message = scope.encode() + b"\x00" + _OFFSET.pack(offset)
    return hmac.new(_KEY, message, hashlib.sha256).digest()[:_TAG_BYTES]


def encode_cursor(offset: int, scope: str) -> str:
    """The cursor of item ``offset`` of the list ``scope`` names: base64url of the offset and its tag."""
    raw = _OFFSET.pack(offset) + _tag(scope, offset)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, scope: str) -> int:
    """The offset after ``cursor`` (0 without one); :class:`UserInputError` unless this process (or one with
    the same ``CITEGRAPH_CURSOR_KEY``) issued it for ``scope``."""
    if cursor is None:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii") + b"=" * (-len(cursor) % 4))
    except (ValueError, UnicodeError, binascii.Error):
        raw = b""
    if len(raw) == _OFFSET.size + _TAG_BYTES:
        (offset,) = _OFFSET.unpack(raw[: _OFFSET.size])
        if offset < MAX_OFFSET and hmac.compare_digest(raw[_OFFSET.size :], _tag(scope, offset)):
            return offset + 1
    raise UserInputError(
        "`after` is not a cursor this API gave out for this list: cursors are bound to the field and the "
        "arguments they came from (and to the server's key, drawn anew when `citegraph serve` starts unless "
        f"{CURSOR_KEY_ENV} is set); pass an `endCursor` or `cursor` of the same query, or start "
        "from the first page without `after`"
    )


@dataclass(frozen=True)
class Page:
    """Which slice of a list one request asked for."""

    start: int  # offset of the first item
    size: int  # items asked for (``first``, checked against the caps)
    scope: str  # what the cursors of this list are bound to (:func:`cursor_scope`)


def connection(nodes: Sequence[NodeT], *, page: Page, has_next: bool, total: int | None) -> Connection[NodeT]:
    """A page of ``nodes`` that starts at ``page.start`` of the whole list, with cursors bound to ``page.scope``."""
    edges = [Edge(cursor=encode_cursor(page.start + i, page.scope), node=node) for i, node in enumerate(nodes)]
    return Connection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=has_next,
            has_previous_page=page.start > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
        total_count=total,
    )


def page_bounds(info: Info[Context, Any], first: int, after: str | None, scope: str) -> Page:
    """The :class:`Page` that ``first``/``after`` ask for on the list ``scope``, checked against the caps."""
    return Page(start=decode_cursor(after, scope), size=info.context.cap(first), scope=scope)


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
    "CURSOR_KEY_ENV",
    "Connection",
    "Edge",
    "InvalidArgument",
    "NotFound",
    "Page",
    "PageInfo",
    "connection",
    "cursor_scope",
    "decode_cursor",
    "encode_cursor",
    "page_bounds",
    "paper_key",
    "paper_not_found",
    "shown_id",
    "wants",
]
