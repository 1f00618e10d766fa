"""arXiv categories and classification trees (ACM CCS 1998/2012, CoRA topics, the arXiv taxonomy).

A taxonomy is served as a tree: ``roots``, and for every class its ``parent`` and ``children``
(BROADER edges), or the whole scheme flat through ``classes`` (each with ``parentId`` and ``level``)
for clients that build the tree themselves. ``fused`` (the fused class vector) and ``poincare``
(Poincaré-ball coordinates) are null until the taxonomy-fusion and hyperbolic steps have run.

The arXiv taxonomy (scheme ``arxiv``) is flat in the graph; a category's parent is the category
named by its archive prefix when the graph has one (``astro-ph`` for ``astro-ph.GA``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from api.context import Context
from api.services import CategoryRecord, TaxonomyClassRecord
from api.types.common import Connection, NotFound, connection, cursor_scope, page_bounds, shown_id

ARXIV_SCHEME = "arxiv"


@dataclass
class SchemeIndex:
    """One scheme's classes by id and their children, loaded once per request."""

    scheme: str
    classes: dict[str, TaxonomyClassRecord]
    children: dict[str | None, list[str]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def build(cls, scheme: str, records: list[TaxonomyClassRecord]) -> SchemeIndex:
        index = cls(scheme, {})
        for record in records:  # a class with two BROADER parents comes twice: keep the first
            index.classes.setdefault(record.id, record)
        for record in index.classes.values():
            parent = record.parent_id if record.parent_id in index.classes else None
            index.children[parent].append(record.id)
        return index


async def scheme_index(info: Info[Context, Any], scheme: str) -> SchemeIndex | None:
    """The scheme's classes (memoised for the request); None when the graph holds no such scheme."""
    ctx = info.context
    key = f"taxonomy:{scheme}"
    if key not in ctx.memo:
        if scheme == ARXIV_SCHEME:
            categories = await ctx.call(ctx.service.all_categories)
            records = [_arxiv_class(c, {c.code for c in categories}) for c in categories]
        else:
            records = await ctx.call(ctx.service.acm_scheme, scheme)
        ctx.memo[key] = SchemeIndex.build(scheme, records) if records else None
    index: SchemeIndex | None = ctx.memo[key]
    return index


def _arxiv_class(category: CategoryRecord, codes: set[str]) -> TaxonomyClassRecord:
    archive = category.code.split(".", 1)[0]
    parent = archive if archive != category.code and archive in codes else None
    return TaxonomyClassRecord(
        id=category.code,
        code=category.code,
        name=category.name,
        level=2 if parent else 1,
        scheme=ARXIV_SCHEME,
        description=category.description,
        parent_id=parent,
    )


@strawberry.type(description="A class of a classification tree (an AcmClass node, or an arXiv category).")
class TaxonomyClass:
    id: strawberry.ID = strawberry.field(description="`<scheme>:<code>` for ACM classes, the code for arXiv.")
    code: str | None
    name: str | None
    level: int | None = strawberry.field(description="1 for a root.")
    scheme: str | None
    description: str | None
    parent_id: strawberry.ID | None

    @strawberry.field
    async def parent(self, info: Info[Context, Any]) -> TaxonomyClass | None:
        if self.parent_id is None or self.scheme is None:
            return None
        index = await scheme_index(info, self.scheme)
        record = index.classes.get(str(self.parent_id)) if index else None
        return taxonomy_class_from(record) if record else None

    @strawberry.field(description="The classes directly below this one, by code.")
    async def children(self, info: Info[Context, Any]) -> list[TaxonomyClass]:
        index = await scheme_index(info, self.scheme) if self.scheme else None
        if index is None:
            return []
        return [taxonomy_class_from(index.classes[i]) for i in index.children.get(str(self.id), [])]

    @strawberry.field(description="The fused class vector; null until taxonomy fusion has run.")
    async def fused(self, info: Info[Context, Any]) -> list[float] | None:
        return (await _coordinates(info, self)).vector

    @strawberry.field(description="Poincaré-ball coordinates; null until the hyperbolic step has run.")
    async def poincare(self, info: Info[Context, Any]) -> list[float] | None:
        return (await _coordinates(info, self)).poincare


async def _coordinates(info: Info[Context, Any], node: TaxonomyClass) -> Any:
    loader = info.context.category_coordinates if node.scheme == ARXIV_SCHEME else info.context.acm_coordinates
    return await loader.load(str(node.id))


def taxonomy_class_from(record: TaxonomyClassRecord) -> TaxonomyClass:
    return TaxonomyClass(
        id=strawberry.ID(record.id),
        code=record.code,
        name=record.name,
        level=record.level,
        scheme=record.scheme,
        description=record.description,
        parent_id=strawberry.ID(record.parent_id) if record.parent_id else None,
    )


@strawberry.type(description="An ACM class an arXiv category maps to (MAPS_TO).")
class ClassMapping:
    taxonomy_class: TaxonomyClass
    score: float | None
    inferred: bool | None = strawberry.field(description="True when a model proposed the mapping.")


@strawberry.type(description="An arXiv subject category such as cs.CL.")
class Category:
    code: strawberry.ID
    name: str | None
    description: str | None

    @strawberry.field(description="The ACM classes this category maps to, highest score first.")
    async def acm_classes(self, info: Info[Context, Any]) -> list[ClassMapping]:
        mappings = await info.context.category_mappings.load(str(self.code))
        records = await info.context.acm_classes.load_many([m.code for m in mappings])
        return [
            ClassMapping(taxonomy_class=taxonomy_class_from(r), score=m.score, inferred=m.inferred)
            for m, r in zip(mappings, records)
            if r is not None
        ]

    @strawberry.field(description="The fused class vector; null until taxonomy fusion has run.")
    async def fused(self, info: Info[Context, Any]) -> list[float] | None:
        return (await info.context.category_coordinates.load(str(self.code))).vector

    @strawberry.field(description="Poincaré-ball coordinates; null until the hyperbolic step has run.")
    async def poincare(self, info: Info[Context, Any]) -> list[float] | None:
        return (await info.context.category_coordinates.load(str(self.code))).poincare


def category_from(record: CategoryRecord) -> Category:
    return Category(code=strawberry.ID(record.code), name=record.name, description=record.description)


@strawberry.type(description="A classification tree.")
class Taxonomy:
    scheme: str
    size: int = strawberry.field(description="Classes in the scheme.")
    index: strawberry.Private[SchemeIndex]

    @strawberry.field(description="The top-level classes, by code.")
    def roots(self) -> list[TaxonomyClass]:
        return [taxonomy_class_from(self.index.classes[i]) for i in self.index.children.get(None, [])]

    @strawberry.field(description="Every class, flat, by level then code (each with `parentId`).")
    def classes(
        self, info: Info[Context, Any], first: int = 100, after: str | None = None
    ) -> Connection[TaxonomyClass]:
        page = page_bounds(info, first, after, cursor_scope("Taxonomy.classes", scheme=self.scheme))
        records = list(self.index.classes.values())
        nodes = [taxonomy_class_from(r) for r in records[page.start : page.start + page.size]]
        return connection(nodes, page=page, has_next=page.start + page.size < len(records), total=len(records))


@strawberry.type(description="A classification scheme held in the graph.")
class TaxonomySummary:
    scheme: str
    size: int


TaxonomyResult = Annotated[Taxonomy | NotFound, strawberry.union("TaxonomyResult")]


@strawberry.type
class TaxonomyQuery:
    @strawberry.field(description="One arXiv category by code (e.g. cs.CL); null when the graph has none.")
    async def category(self, info: Info[Context, Any], code: str) -> Category | None:
        record = await info.context.categories.load(code)
        return category_from(record) if record else None

    @strawberry.field(
        description="A classification tree by scheme: `1998` or `2012` (ACM CCS), `cora`, or `arxiv`; "
        "NotFound lists the schemes the graph holds."
    )
    async def taxonomy(self, info: Info[Context, Any], scheme: str) -> TaxonomyResult:
        index = await scheme_index(info, scheme)
        if index is None:
            known = ", ".join(s.scheme for s in await _summaries(info))
            shown = shown_id(scheme)
            return NotFound(kind="Taxonomy", id=shown, message=f"no scheme {shown!r} in the graph; known: {known}")
        return Taxonomy(scheme=scheme, size=len(index.classes), index=index)

    @strawberry.field(description="The classification schemes the graph holds, with their sizes.")
    async def taxonomies(self, info: Info[Context, Any]) -> list[TaxonomySummary]:
        return await _summaries(info)


async def _summaries(info: Info[Context, Any]) -> list[TaxonomySummary]:
    ctx = info.context
    schemes = await ctx.call(ctx.service.acm_schemes)
    categories = await ctx.call(ctx.service.all_categories)
    found = [TaxonomySummary(scheme=s, size=n) for s, n in schemes.items()]
    return found + ([TaxonomySummary(scheme=ARXIV_SCHEME, size=len(categories))] if categories else [])


__all__ = [
    "ARXIV_SCHEME",
    "Category",
    "ClassMapping",
    "Taxonomy",
    "TaxonomyClass",
    "TaxonomyQuery",
    "TaxonomyResult",
    "TaxonomySummary",
    "category_from",
    "taxonomy_class_from",
]
