"""The named analyst queries of ``cypher/explore/`` (see :mod:`api.explore`); never arbitrary Cypher."""

from __future__ import annotations

from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from api.context import Context
from api.explore import ExploreArgumentError, ExploreQuery, catalogue, validate
from api.types.common import InvalidArgument, NotFound, shown_id


@strawberry.type
class ExploreParameter:
    name: str
    type: str = strawberry.field(description="`int` or `string`.")
    required: bool
    description: str = strawberry.field(description="What the query's header says about it.")
    minimum: int | None


@strawberry.type(description="A read-only query from cypher/explore/ that `explore` can run.")
class ExploreQueryInfo:
    name: str
    description: str
    parameters: list[ExploreParameter]
    columns: list[str]


@strawberry.type(description="The rows of one explore query.")
class ExploreRows:
    name: str
    columns: list[str]
    rows: JSON = strawberry.field(description="A list of objects, one per row, keyed by column.")
    row_count: int
    truncated: bool = strawberry.field(description="More rows than the API's result cap; only the first are shown.")


ExploreResult = Annotated[ExploreRows | NotFound | InvalidArgument, strawberry.union("ExploreResult")]


def _info(query: ExploreQuery) -> ExploreQueryInfo:
    return ExploreQueryInfo(
        name=query.name,
        description=query.description,
        parameters=[
            ExploreParameter(
                name=p.name, type=p.type, required=p.required, description=p.description, minimum=p.minimum
            )
            for p in query.parameters
        ],
        columns=list(query.columns),
    )


@strawberry.type
class ExploreQueries:
    @strawberry.field(description="The queries `explore` can run, with their parameters and columns.")
    def explore_queries(self) -> list[ExploreQueryInfo]:
        return [_info(q) for q in catalogue().values()]

    @strawberry.field(
        description="Run one named read-only query of cypher/explore/ with `params` (an object: parameter -> "
        "value, checked against the query's header). NotFound for an unknown name, InvalidArgument for "
        "parameters that do not fit."
    )
    async def explore(self, info: Info[Context, Any], name: str, params: JSON | None = None) -> ExploreResult:
        ctx = info.context
        query = catalogue().get(name)
        if query is None:
            known = ", ".join(catalogue())
            return NotFound(
                kind="ExploreQuery", id=shown_id(name), message=f"no explore query {shown_id(name)!r}; known: {known}"
            )
        if params is not None and not isinstance(params, dict):
            return InvalidArgument(argument="params", message="`params` must be an object: parameter name -> value")
        try:
            values = validate(query, dict(params or {}), max_limit=ctx.max_results)
        except ExploreArgumentError as exc:
            return InvalidArgument(argument=exc.argument[:100], message=str(exc)[:500])
        rows = await ctx.call(ctx.service.explore, query.name, values)
        shown = rows[: ctx.max_results]
        return ExploreRows(
            name=query.name,
            columns=list(query.columns),
            rows=cast(JSON, shown),
            row_count=len(shown),
            truncated=len(rows) > len(shown),
        )


__all__ = ["ExploreQueries", "ExploreQueryInfo", "ExploreResult", "ExploreRows"]
