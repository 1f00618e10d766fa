"""The GraphQL schema (strawberry): types, per-request DataLoaders, limits.

Limits: query depth, token and alias counts are capped by schema extensions; list arguments
(``first``) are capped at ``AppSettings.max_results``; errors are masked (no stack traces or Cypher
reach clients) except :class:`UserInputError`, whose message is written for the client.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.dataloader import DataLoader
from strawberry.extensions import MaskErrors, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.fastapi import BaseContext
from strawberry.types import Info

from api.services import AuthorRecord, CoCitation, GraphService, PaperRecord

MAX_DEPTH = 8  # deep enough for paper -> citations -> citedBy -> authors, shallow enough to bound fan-out
MAX_TOKENS = 2_000
MAX_ALIASES = 15


class UserInputError(Exception):
    """A client's argument is out of range; its message is shown to the client."""


class Context(BaseContext):
    """Per-request state: the service, the result cap, and DataLoaders that live for one request."""

    def __init__(self, service: GraphService, max_results: int) -> None:
        super().__init__()
        self.service = service
        self.max_results = max_results

        async def load_papers(ids: list[str]) -> list[PaperRecord | None]:
            return service.papers(ids)

        async def load_authors(ids: list[str]) -> list[list[AuthorRecord]]:
            return service.authors(ids)

        async def load_cocited(ids: list[str]) -> list[list[CoCitation]]:
            return service.cocited(ids)

        self.papers: DataLoader[str, PaperRecord | None] = DataLoader(load_fn=load_papers)
        self.authors: DataLoader[str, list[AuthorRecord]] = DataLoader(load_fn=load_authors)
        self.cocited: DataLoader[str, list[CoCitation]] = DataLoader(load_fn=load_cocited)

    @classmethod
    def create(cls, service: GraphService, max_results: int) -> Context:
        return cls(service, max_results)

    def cap(self, first: int) -> int:
        if first < 1 or first > self.max_results:
            raise UserInputError(f"`first` must be between 1 and {self.max_results}, got {first}")
        return first


@strawberry.type
class Author:
    id: strawberry.ID
    name: str | None


@strawberry.enum(description="Co-citation strengths (docs/cocitation.md).")
class CoCitationMeasure(Enum):
    COUNT = "count"  # papers citing both
    SENTENCE_COUNT = "sentence_count"  # sentences citing both
    ASSOCIATION = "association"  # N c_ij / (s_i s_j); 1 = chance
    COSINE = "cosine"  # c_ij / sqrt(s_i s_j)
    JACCARD = "jaccard"  # c_ij / (s_i + s_j - c_ij)
    INCLUSION = "inclusion"  # c_ij / min(s_i, s_j)


@strawberry.type
class CoCitedPaper:
    paper: Paper
    count: int = strawberry.field(description="Papers citing both.")
    sentence_count: int | None = strawberry.field(description="Citing sentences citing both.")
    association: float | None
    cosine: float | None
    jaccard: float | None
    inclusion: float | None


@strawberry.type
class Paper:
    id: strawberry.ID
    title: str | None
    abstract: str | None
    year: int | None
    venue: str | None
    doi: str | None
    arxiv_id: str | None
    n_cited: int | None = strawberry.field(description="Number of papers in the graph that cite this one.")
    stub: bool | None = strawberry.field(description="Known only as a citation target, without metadata of its own.")

    @strawberry.field
    async def authors(self, info: Info[Context, Any]) -> list[Author]:
        return [Author(id=strawberry.ID(a.id), name=a.name) for a in await info.context.authors.load(self.id)]

    @strawberry.field(description="Papers this paper cites, most cited first.")
    async def citations(self, info: Info[Context, Any], first: int = 20) -> list[Paper]:
        return await _neighbours(info, self.id, "out", first)

    @strawberry.field(description="Papers citing this paper, newest first.")
    async def cited_by(self, info: Info[Context, Any], first: int = 20) -> list[Paper]:
        return await _neighbours(info, self.id, "in", first)

    @strawberry.field(
        description="Papers co-cited with this one, strongest first by `measure` (needs compute cocitation)."
    )
    async def co_cited(
        self, info: Info[Context, Any], measure: CoCitationMeasure = CoCitationMeasure.ASSOCIATION, first: int = 10
    ) -> list[CoCitedPaper]:
        ctx = info.context
        limit = ctx.cap(first)
        partners = await ctx.cocited.load(self.id)
        ranked = sorted(partners, key=lambda c: (-(getattr(c, measure.value) or 0), -c.count, c.other_id))[:limit]
        records = await ctx.papers.load_many([c.other_id for c in ranked])
        return [
            CoCitedPaper(
                paper=_paper(record),
                count=c.count,
                sentence_count=c.sentence_count,
                association=c.association,
                cosine=c.cosine,
                jaccard=c.jaccard,
                inclusion=c.inclusion,
            )
            for c, record in zip(ranked, records)
            if record is not None
        ]


async def _neighbours(info: Info[Context, Any], paper_id: str, direction: str, first: int) -> list[Paper]:
    ctx = info.context
    ids = ctx.service.neighbours([paper_id], direction=direction, limit=ctx.cap(first))[0]
    return [_paper(r) for r in await ctx.papers.load_many(ids) if r is not None]


def _paper(record: PaperRecord) -> Paper:
    return Paper(
        id=strawberry.ID(record.id),
        title=record.title,
        abstract=record.abstract,
        year=record.year,
        venue=record.venue,
        doi=record.doi,
        arxiv_id=record.arxiv_id,
        n_cited=record.n_cited,
        stub=record.stub,
    )


@strawberry.type
class Count:
    kind: str  # "node" or "relationship"
    label: str
    count: int


@strawberry.type
class Query:
    @strawberry.field(description="One paper by id; null when no paper has that id.")
    async def paper(self, info: Info[Context, Any], id: strawberry.ID) -> Paper | None:
        record = await info.context.papers.load(str(id))
        return _paper(record) if record else None

    @strawberry.field(description="Papers whose title contains `search`, most cited first.")
    async def papers(
        self,
        info: Info[Context, Any],
        search: str,
        year_min: int | None = None,
        year_max: int | None = None,
        first: int = 10,
    ) -> list[Paper]:
        ctx = info.context
        if not search.strip() or len(search) > 200:
            raise UserInputError("`search` must be 1 to 200 characters")
        ids = ctx.service.search(search.strip(), year_min=year_min, year_max=year_max, limit=ctx.cap(first))
        return [_paper(r) for r in await ctx.papers.load_many(ids) if r is not None]

    @strawberry.field(description="Node counts per label and relationship counts per type.")
    def stats(self, info: Info[Context, Any]) -> list[Count]:
        stats = info.context.service.stats()
        return [Count(kind="node", label=k, count=v) for k, v in stats["nodes"].items()] + [
            Count(kind="relationship", label=k, count=v) for k, v in stats["relationships"].items()
        ]


def _client_visible(error: GraphQLError) -> bool:
    """Errors whose message is meant for the client: bad arguments and validation (limits, syntax)."""
    return error.original_error is None or isinstance(error.original_error, UserInputError)


schema = strawberry.Schema(
    query=Query,
    extensions=[
        lambda: QueryDepthLimiter(max_depth=MAX_DEPTH),
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        lambda: MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        lambda: MaskErrors(should_mask_error=lambda error: not _client_visible(error)),
    ],
)
