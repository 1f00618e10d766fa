"""Graph-wide counts, and how complete each computed property is."""

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


@strawberry.type(
    description="How far one computed property has come: `have` of the `of` nodes that should carry it. "
    "A build that serves early embeds some papers first and fills in the rest in the background."
)
class Completeness:
    property: str = strawberry.field(
        description="`Label.property`: `Paper.embedding`, `Paper.taxonomy`, `Paper.poincare` or `Sentence.embedding`."
    )
    have: int = strawberry.field(description="Nodes among `of` that carry the property.")
    of: int = strawberry.field(
        description="Nodes that should carry it: papers with a text to embed (a title, an abstract or a "
        "reference string), or sentences with text. A paper without text is in no count."
    )
    fraction: float = strawberry.field(
        description="`have / of`, 1.0 where `of` is 0. `Sentence.embedding` below 1.0 is normal: a limited "
        "build embeds only some sentences."
    )


@strawberry.type
class StatsQuery:
    @strawberry.field(description="Node counts per label and relationship counts per type.")
    async def stats(self, info: Info[Context, Any]) -> list[Count]:
        ctx = info.context
        stats = await ctx.call(ctx.service.stats)
        return [Count(kind="node", label=k, count=v) for k, v in stats["nodes"].items()] + [
            Count(kind="relationship", label=k, count=v) for k, v in stats["relationships"].items()
        ]

    @strawberry.field(
        description="How complete each computed property is (text embeddings, taxonomy and Poincaré "
        "vectors of papers; sentence embeddings), counted in the store when asked."
    )
    async def completeness(self, info: Info[Context, Any]) -> list[Completeness]:
        ctx = info.context
        rows = await ctx.call(ctx.service.completeness)
        return [Completeness(property=r.property, have=r.have, of=r.of, fraction=r.fraction) for r in rows]


__all__ = ["Completeness", "Count", "StatsQuery"]
