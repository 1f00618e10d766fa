"""Graph-wide counts."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from api.context import Context


@strawberry.type
class Count:
    kind: str  # "node" or "relationship"
    label: str
    count: int


@strawberry.type
class StatsQuery:
    @strawberry.field(description="Node counts per label and relationship counts per type.")
    async def stats(self, info: Info[Context, Any]) -> list[Count]:
        ctx = info.context
        stats = await ctx.call(ctx.service.stats)
        return [Count(kind="node", label=k, count=v) for k, v in stats["nodes"].items()] + [
            Count(kind="relationship", label=k, count=v) for k, v in stats["relationships"].items()
        ]


__all__ = ["Count", "StatsQuery"]
