"""Papers, authors, sentences: the bibliographic part of the schema.

Every list field loads through the request's DataLoaders (:mod:`api.context`), so the papers of a
page, their authors, categories or citations cost one store round trip per level of nesting.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum
from typing import Any

import strawberry
from strawberry.types import Info

from api.context import Context
from api.errors import UserInputError
from api.services import CoCitation, PaperRecord
from api.types.common import Connection, connection, cursor_scope, page_bounds, wants
from api.types.taxonomy import Category, category_from

MAX_SEARCH_CHARS = 200
YEAR_BOUNDS = (0, 9999)  # years outside this range are a client error, not an empty result


@strawberry.enum(description="Co-citation strengths (docs/cocitation.md).")
class CoCitationMeasure(Enum):
    COUNT = "count"  # papers citing both
    SENTENCE_COUNT = "sentence_count"  # sentences citing both
    ASSOCIATION = "association"  # N c_ij / (s_i s_j); 1 = chance
    COSINE = "cosine"  # c_ij / sqrt(s_i s_j)
    JACCARD = "jaccard"  # c_ij / (s_i + s_j - c_ij)
    INCLUSION = "inclusion"  # c_ij / min(s_i, s_j)


@strawberry.type(description="How many papers of one year (of the citing papers) count.")
class YearCount:
    year: int | None = strawberry.field(description="The year; null for papers without one.")
    count: int


def year_counts(years: list[int | None], first: int) -> list[YearCount]:
    """Papers per year, oldest first (unknown years last), the latest ``first`` years kept."""
    counts: dict[int | None, int] = {}
    for year in years:
        counts[year] = counts.get(year, 0) + 1
    known = sorted(y for y in counts if y is not None)[-first:]
    rows = [YearCount(year=y, count=counts[y]) for y in known]
    return rows + ([YearCount(year=None, count=counts[None])] if None in counts else [])


def check_years(year_min: int | None, year_max: int | None) -> None:
    """Both bounds in :data:`YEAR_BOUNDS` and in order, else :class:`UserInputError`."""
    _check_year("yearMin", year_min)
    _check_year("yearMax", year_max)
    if year_min is not None and year_max is not None and year_min > year_max:
        raise UserInputError(f"`yearMin` ({year_min}) is after `yearMax` ({year_max}); swap them")


def check_min_count(min_count: int) -> None:
    if not 1 <= min_count <= 1_000_000:
        raise UserInputError(f"`minCount` must be between 1 and 1000000, got {min_count}")


@strawberry.type
class Author:
    id: strawberry.ID
    name: str | None

    @strawberry.field(description="The author's papers, newest first.")
    async def papers(self, info: Info[Context, Any], first: int = 20, after: str | None = None) -> Connection[Paper]:
        ids = await info.context.author_papers.load(str(self.id))
        return await page_of_ids(info, ids, first, after, cursor_scope("Author.papers", author=str(self.id)))


@strawberry.type(description="A source: the venue (journal, proceedings) papers name, as stored.")
class Source:
    name: str
    paper_count: int = strawberry.field(description="Papers that name this source.")

    @strawberry.field(description="The source's papers, most cited first.")
    async def papers(self, info: Info[Context, Any], first: int = 20, after: str | None = None) -> Connection[Paper]:
        ids = await info.context.source_papers.load(self.name)
        return await page_of_ids(info, ids, first, after, cursor_scope("Source.papers", source=self.name))


@strawberry.type(description="A paper cited by a sentence (MENTIONS), with the marker the sentence used.")
class MentionedPaper:
    paper: Paper
    marker: str | None


@strawberry.type(description="One sentence of a paper's full text.")
class Sentence:
    id: strawberry.ID = strawberry.field(description="`<paper id>#<sid>`.")
    sid: int | None = strawberry.field(description="Position in the paper.")
    section: str | None
    text: str | None

    @strawberry.field(description="Papers this sentence cites (empty unless it is a citance).")
    async def mentions(self, info: Info[Context, Any]) -> list[MentionedPaper]:
        mentioned = await info.context.mentions.load(str(self.id))
        records = await info.context.papers.load_many([paper_id for paper_id, _ in mentioned])
        return [
            MentionedPaper(paper=paper_from(r), marker=marker)
            for (_, marker), r in zip(mentioned, records)
            if r is not None
        ]


@strawberry.type
class CoCitedPaper:
    paper: Paper
    count: int = strawberry.field(description="Papers citing both.")
    sentence_count: int | None = strawberry.field(description="Citing sentences citing both.")
    association: float | None
    cosine: float | None
    jaccard: float | None
    inclusion: float | None


@strawberry.type(description="An arXiv category of a paper (IN_CATEGORY).")
class PaperCategory:
    category: Category
    score: float | None = strawberry.field(description="Confidence; 1 for a category the source gave.")
    inferred: bool | None = strawberry.field(description="True when a model assigned the category.")


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
    label: str = strawberry.field(
        default="",
        description="How the paper reads in a map or a table: its stored label (a cited reference as analysts "
        'write it, e.g. "Goos F, 1947, Ann Phys-Berlin 1:333"), else its title, else its reference string, '
        'else its source (venue volume:first page), else its first author and year ("Ferrari D, 1994"), else '
        "its id. Never empty; the raw strings stay fields.",
    )
    reference: str | None = strawberry.field(
        default=None,
        description="A stub's reference string as a citing paper printed it (authors, title, venue, year); "
        "null where no source gave one. Search and recommendation use it as the text of a paper without "
        "title or abstract.",
    )
    burst_strength: float | None = strawberry.field(
        default=None,
        description="Weight of the paper's strongest citation burst (Kleinberg's automaton, as CiteSpace); null "
        "before `compute mapping` or without a burst.",
    )
    burst_begin: int | None = strawberry.field(default=None, description="First year of the strongest burst.")
    burst_end: int | None = strawberry.field(default=None, description="Last year of the strongest burst.")
    betweenness: float | None = strawberry.field(
        default=None,
        description="Normalised betweenness centrality in the co-citation network (`compute mapping`); null before.",
    )
    sigma: float | None = strawberry.field(
        default=None,
        description="CiteSpace's sigma, (betweenness + 1) ** burstStrength: structural and temporal novelty.",
    )

    @strawberry.field
    async def authors(self, info: Info[Context, Any]) -> list[Author]:
        return [Author(id=strawberry.ID(a.id), name=a.name) for a in await info.context.authors.load(str(self.id))]

    @strawberry.field(description="Papers this paper cites, most cited first.")
    async def citations(self, info: Info[Context, Any], first: int = 20, after: str | None = None) -> Connection[Paper]:
        ids = await info.context.cited.load(str(self.id))
        return await page_of_ids(info, ids, first, after, cursor_scope("Paper.citations", paper=str(self.id)))

    @strawberry.field(description="Papers citing this paper, newest first.")
    async def cited_by(self, info: Info[Context, Any], first: int = 20, after: str | None = None) -> Connection[Paper]:
        ids = await info.context.citing.load(str(self.id))
        return await page_of_ids(info, ids, first, after, cursor_scope("Paper.citedBy", paper=str(self.id)))

    @strawberry.field(
        description="Papers co-cited with this one, strongest first by `measure` (needs compute cocitation), "
        "co-cited by at least `minCount` papers. With `yearMin`/`yearMax` only citing papers of those years count: "
        "`count` is theirs (from the citations, so partners without a stored edge appear too), the strengths stay "
        "the stored all-years values."
    )
    async def co_cited(
        self,
        info: Info[Context, Any],
        measure: CoCitationMeasure = CoCitationMeasure.ASSOCIATION,
        first: int = 10,
        min_count: int = 1,
        year_min: int | None = None,
        year_max: int | None = None,
    ) -> list[CoCitedPaper]:
        ctx = info.context
        limit = ctx.cap(first)
        check_min_count(min_count)
        check_years(year_min, year_max)
        partners = await ctx.cocited.load(str(self.id))
        if year_min is not None or year_max is not None:
            partners = await in_years(ctx, str(self.id), partners, year_min, year_max)
        kept = [c for c in partners if c.count >= min_count]
        ranked = sorted(kept, key=lambda c: (-(getattr(c, measure.value) or 0), -c.count, c.other_id))[:limit]
        records = await ctx.papers.load_many([c.other_id for c in ranked])
        return [
            CoCitedPaper(
                paper=paper_from(record),
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

    @strawberry.field(description="The sentences of the paper's full text in reading order; empty without full text.")
    async def sentences(
        self, info: Info[Context, Any], first: int = 50, after: str | None = None
    ) -> Connection[Sentence]:
        page = page_bounds(info, first, after, cursor_scope("Paper.sentences", paper=str(self.id)))
        records = await info.context.sentences.load(str(self.id))
        window = records[page.start : page.start + page.size]
        nodes = [Sentence(id=strawberry.ID(s.id), sid=s.sid, section=s.section, text=s.text) for s in window]
        return connection(nodes, page=page, has_next=page.start + page.size < len(records), total=len(records))

    @strawberry.field(description="Whether the graph holds the paper's full text (its sentences).")
    async def has_full_text(self, info: Info[Context, Any]) -> bool:
        return bool(await info.context.sentences.load(str(self.id)))

    @strawberry.field(description="The paper's arXiv categories, given or inferred, highest score first.")
    async def categories(self, info: Info[Context, Any]) -> list[PaperCategory]:
        assigned = await info.context.paper_categories.load(str(self.id))
        records = await info.context.categories.load_many([a.code for a in assigned])
        return [
            PaperCategory(category=category_from(r), score=a.score, inferred=a.inferred)
            for a, r in zip(assigned, records)
            if r is not None
        ]

    @strawberry.field(description="The paper's fused taxonomy vector; null until the taxonomy step has run.")
    async def taxonomy(self, info: Info[Context, Any]) -> list[float] | None:
        return (await info.context.paper_coordinates.load(str(self.id))).vector

    @strawberry.field(description="The paper's Poincaré-ball coordinates; null until the hyperbolic step has run.")
    async def poincare(self, info: Info[Context, Any]) -> list[float] | None:
        return (await info.context.paper_coordinates.load(str(self.id))).poincare


async def in_years(
    ctx: Context, paper_id: str, stored: list[CoCitation], year_min: int | None, year_max: int | None
) -> list[CoCitation]:
    """A paper's co-cited partners counted over citing papers of [year_min, year_max] (CITES), with the stored
    all-years strengths of the partners that have them."""
    low, high = YEAR_BOUNDS[0] if year_min is None else year_min, YEAR_BOUNDS[1] if year_max is None else year_max
    counts = await ctx.cocited_in_years.load((paper_id, low, high))
    by_partner = {c.other_id: c for c in stored}
    out = []
    for other, count in counts.items():
        known = by_partner.get(other)
        if known is not None:
            out.append(replace(known, count=count))
        else:
            out.append(CoCitation(other, count, None, None, None, None, None))
    return out


def paper_from(record: PaperRecord) -> Paper:
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
        reference=record.reference,
        label=record.display_label,
        burst_strength=record.burst_strength,
        burst_begin=record.burst_begin,
        burst_end=record.burst_end,
        betweenness=record.betweenness,
        sigma=record.sigma,
    )


async def page_of_ids(
    info: Info[Context, Any], ids: list[str], first: int, after: str | None, scope: str
) -> Connection[Paper]:
    """One page of an ordered id list, as papers (ids without a stored paper are dropped)."""
    page = page_bounds(info, first, after, scope)
    records = await info.context.papers.load_many(ids[page.start : page.start + page.size])
    nodes = [paper_from(r) for r in records if r is not None]
    return connection(nodes, page=page, has_next=page.start + page.size < len(ids), total=len(ids))


def _search_text(search: str) -> str:
    text = search.strip()
    if not text or len(text) > MAX_SEARCH_CHARS:
        raise UserInputError(f"`search` takes 1 to {MAX_SEARCH_CHARS} characters of a name, got {len(text)}")
    return text


def _check_year(name: str, year: int | None) -> None:
    if year is not None and not YEAR_BOUNDS[0] <= year <= YEAR_BOUNDS[1]:
        raise UserInputError(f"`{name}` must be a year between {YEAR_BOUNDS[0]} and {YEAR_BOUNDS[1]}, got {year}")


@strawberry.type
class PaperQuery:
    @strawberry.field(
        description="One paper by any id a source gave it (its key, a DOI, an arXiv id with or without version, "
        "an OpenAlex W-id, a Semantic Scholar id, a PubMed id, an ACL id, your own); null when no paper has that id."
    )
    async def paper(self, info: Info[Context, Any], id: strawberry.ID) -> Paper | None:
        record = await info.context.papers.load(str(id))
        return paper_from(record) if record else None

    @strawberry.field(
        description="Papers whose title contains `search` (and, with `category`, of that arXiv category), "
        "most cited first. Give `search`, `category` or both."
    )
    async def papers(
        self,
        info: Info[Context, Any],
        search: str | None = None,
        year_min: int | None = None,
        year_max: int | None = None,
        category: str | None = None,
        first: int = 10,
        after: str | None = None,
    ) -> Connection[Paper]:
        ctx = info.context
        text = (search or "").strip()
        if len(text) > MAX_SEARCH_CHARS or (category is not None and len(category) > MAX_SEARCH_CHARS):
            raise UserInputError(f"`search` and `category` take at most {MAX_SEARCH_CHARS} characters")
        if not text and not category:
            raise UserInputError("give `search` (1 to 200 characters of a title), `category` (an arXiv code), or both")
        _check_year("yearMin", year_min)
        _check_year("yearMax", year_max)
        scope = cursor_scope("Query.papers", search=text, year_min=year_min, year_max=year_max, category=category)
        page = page_bounds(info, first, after, scope)  # a cursor of another search is refused here
        found = await ctx.call(
            ctx.service.search,
            text,
            year_min=year_min,
            year_max=year_max,
            category=category,
            skip=page.start,
            limit=page.size + 1,  # one more than asked: whether a next page exists
        )
        total = None
        if wants(info, "totalCount"):
            total = await ctx.call(
                ctx.service.count_search, text, year_min=year_min, year_max=year_max, category=category
            )
        records = await ctx.papers.load_many(found[: page.size])
        nodes = [paper_from(r) for r in records if r is not None]
        return connection(nodes, page=page, has_next=len(found) > page.size, total=total)

    @strawberry.field(
        description="Authors whose name contains `search` (case-insensitive, 1 to 200 characters), most papers first."
    )
    async def authors(
        self, info: Info[Context, Any], search: str, first: int = 10, after: str | None = None
    ) -> Connection[Author]:
        ctx = info.context
        text = _search_text(search)
        page = page_bounds(info, first, after, cursor_scope("Query.authors", search=text))
        start, size = page.start, page.size
        found = await ctx.call(ctx.service.search_authors, text, skip=start, limit=size + 1)
        total = await ctx.call(ctx.service.count_authors, text) if wants(info, "totalCount") else None
        nodes = [Author(id=strawberry.ID(a.id), name=a.name) for a in found[:size]]
        return connection(nodes, page=page, has_next=len(found) > size, total=total)

    @strawberry.field(
        description="Sources (the venue papers name: journals, proceedings) whose name contains `search` "
        "(case-insensitive, 1 to 200 characters), most papers first."
    )
    async def sources(
        self, info: Info[Context, Any], search: str, first: int = 10, after: str | None = None
    ) -> Connection[Source]:
        ctx = info.context
        text = _search_text(search)
        page = page_bounds(info, first, after, cursor_scope("Query.sources", search=text))
        start, size = page.start, page.size
        found = await ctx.call(ctx.service.search_sources, text, skip=start, limit=size + 1)
        total = await ctx.call(ctx.service.count_sources, text) if wants(info, "totalCount") else None
        nodes = [Source(name=r.name, paper_count=r.papers) for r in found[:size]]
        return connection(nodes, page=page, has_next=len(found) > size, total=total)

    @strawberry.field(description="One author by id (e.g. `author:kathleen mckeown`); null when unknown.")
    async def author(self, info: Info[Context, Any], id: strawberry.ID) -> Author | None:
        record = await info.context.author_records.load(str(id))
        return Author(id=strawberry.ID(record.id), name=record.name) if record else None


__all__ = [
    "Author",
    "CoCitationMeasure",
    "CoCitedPaper",
    "MentionedPaper",
    "Paper",
    "PaperCategory",
    "PaperQuery",
    "Sentence",
    "Source",
    "YearCount",
    "check_min_count",
    "check_years",
    "page_of_ids",
    "paper_from",
    "year_counts",
]
