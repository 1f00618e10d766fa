"""Science maps for dashboards: one network shape for every unit of analysis (``mapNetwork``).

The field dispatches to the unit builders of :mod:`gnn.mapping` (:func:`gnn.mapping.networks.build_network`):
cited references, their authors and sources (co-citation), co-authors, institutions and countries
(co-authorship), keywords, coupled documents, whichever are built. The filters are those of
``citegraph export network`` and bibliometrix's ``biblioNetwork``: a year window of the citing (or
occurring) documents, a minimum link count, a normalisation, the top nodes by weight, one node's
neighbourhood (``seed``) or one cluster (``clusterId``). Formulas: docs/cocitation.md.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import strawberry
from strawberry.types import Info

import gnn.mapping  # noqa: F401  (imported for its side effect: the unit builders register themselves)
from api.context import Context
from api.errors import UserInputError
from api.types.common import Connection, cursor_scope, paper_key
from api.types.papers import Paper, check_min_count, check_years, page_of_ids
from gnn.mapping import networks
from graph.errors import ConfigError

DEFAULT_TOP = 500  # nodes of a map unless asked: VOSviewer's and bibliometrix's usual map size
DEFAULT_MIN_COUNT = 2  # a link needs two documents: one-off co-occurrences are noise (bibliometrix's default)


@strawberry.enum(description="What a node of a science map is (bibliometrix's `analysis` × `network`).")
class MapUnit(Enum):
    REFERENCES = "references"  # cited works, linked when co-cited
    AUTHORS = "authors"  # cited works' authors, linked when co-cited
    SOURCES = "sources"  # cited works' sources, linked when co-cited
    COAUTHORS = "coauthors"  # authors, linked when they wrote a document together
    INSTITUTIONS = "institutions"  # institutions, linked when their authors wrote a document together
    COUNTRIES = "countries"  # countries, linked when their authors wrote a document together
    KEYWORDS = "keywords"  # keywords, linked when they occur in one document
    COUPLING = "coupling"  # citing documents, linked when they cite the same works


@strawberry.enum(description="A link's strength (van Eck & Waltman 2009; docs/cocitation.md).")
class MapMeasure(Enum):
    COUNT = "count"  # c_ij, documents shared
    ASSOCIATION = "association"  # N c_ij / (s_i s_j); 1 = chance
    COSINE = "cosine"  # c_ij / sqrt(s_i s_j)
    JACCARD = "jaccard"  # c_ij / (s_i + s_j - c_ij)
    INCLUSION = "inclusion"  # c_ij / min(s_i, s_j)


@strawberry.type(description="A node of a science map: a work, author, source, institution, country or keyword.")
class MapNode:
    id: strawberry.ID
    label: str = strawberry.field(description="How reference lists and bibliometric tools print it.")
    weight: int = strawberry.field(
        description="What sizes it: citing documents in the window for cited units, documents for the others."
    )
    year: int | None = strawberry.field(description="Publication year (cited works only).")
    avg_year: float | None = strawberry.field(description="Mean year of the documents behind it (overlay colour).")
    first_year: int | None = strawberry.field(
        description="First year a document of the window cites it (cited works, authors, sources): where "
        "CiteSpace's timeline places it."
    )
    cluster: int | None = strawberry.field(description="Cluster number, where the unit has clusters.")
    cluster_label: str | None = strawberry.field(description="The cluster's label terms.")
    burst_strength: float | None = strawberry.field(description="Strongest Kleinberg citation burst (cited works).")
    burst_begin: int | None
    burst_end: int | None
    betweenness: float | None = strawberry.field(description="Betweenness in the co-citation network (cited works).")
    sigma: float | None = strawberry.field(description="CiteSpace's sigma, (betweenness + 1)^burst_strength.")


@strawberry.type(description="A link of a science map: documents shared and their strength under the measure.")
class MapEdge:
    source: strawberry.ID
    target: strawberry.ID
    count: int = strawberry.field(description="Documents behind the link (c_ij).")
    strength: float = strawberry.field(description="c_ij under the asked measure.")


@strawberry.type(description="A unit's network under the filters, heaviest nodes and strongest links first.")
class MapNetwork:
    unit: MapUnit
    nodes: list[MapNode]
    edges: list[MapEdge]
    truncated: bool = strawberry.field(
        description=f"`top` or the link cap ({networks.MAX_EDGES:,}) left nodes or links out."
    )


@strawberry.type(description="Whether this store can map a unit, and what loads it when it cannot.")
class MapUnitStatus:
    unit: MapUnit
    built: bool = strawberry.field(description="The store has the relationships the unit's map is counted from.")
    links: int = strawberry.field(description="How many of those relationships the store has.")
    command: str | None = strawberry.field(description="What to run to build the unit (null when built).")


def _filters(
    min_count: int,
    measure: MapMeasure,
    top: int,
    year_min: int | None,
    year_max: int | None,
    seed: str | None,
    cluster_id: int | None,
    all_authors: bool,
    min_freq: int = 1,
) -> networks.NetworkFilters:
    return networks.NetworkFilters(
        year_min=year_min,
        year_max=year_max,
        min_count=min_count,
        measure=networks.Measure(measure.value),
        top=top,
        seed=seed,
        cluster=cluster_id,
        all_authors=all_authors,
        min_freq=min_freq,
    )


def _built_unit(unit: MapUnit) -> networks.MapUnit:
    built = networks.MapUnit(unit.value)
    if built not in networks.UNIT_BUILDERS:
        known = ", ".join(u.name for u in networks.MapUnit if u in networks.UNIT_BUILDERS)
        raise UserInputError(f"no map is built for unit {unit.name} yet; the built units are: {known}")
    return built


def network_type(network: networks.MapNetwork) -> MapNetwork:
    """The GraphQL object of a built network."""
    nodes = [
        MapNode(
            id=strawberry.ID(n.id),
            label=n.label,
            weight=n.weight,
            year=n.year,
            avg_year=n.avg_year,
            first_year=n.first_year,
            cluster=n.cluster,
            cluster_label=n.cluster_label,
            burst_strength=n.burst_strength,
            burst_begin=n.burst_begin,
            burst_end=n.burst_end,
            betweenness=n.betweenness,
            sigma=n.sigma,
        )
        for n in network.nodes
    ]
    edges = [
        MapEdge(source=strawberry.ID(e.source), target=strawberry.ID(e.target), count=e.count, strength=e.strength)
        for e in network.edges
    ]
    return MapNetwork(unit=MapUnit(network.unit.value), nodes=nodes, edges=edges, truncated=network.truncated)


@strawberry.type
class MappingQuery:
    @strawberry.field(
        description="A science map of one unit: nodes (the `top` heaviest units linked at least `minCount` times) "
        "and their links, strongest first by `measure`. `yearMin`/`yearMax` bound the citing (or occurring) "
        "documents; `seed` keeps one node and its partners; `clusterId` one cluster's members; `allAuthors` "
        "counts every author of a cited work (AUTHORS), not just the first; `minFreq` leaves out nodes of fewer "
        "documents (keywords: occurrences, bibliometrix's minfreq; cited units: citations; COUPLING: link strength)."
    )
    async def map_network(
        self,
        info: Info[Context, Any],
        unit: MapUnit = MapUnit.REFERENCES,
        year_min: int | None = None,
        year_max: int | None = None,
        min_count: int | None = DEFAULT_MIN_COUNT,
        measure: MapMeasure | None = MapMeasure.COUNT,
        top: int | None = DEFAULT_TOP,
        seed: strawberry.ID | None = None,
        cluster_id: int | None = None,
        all_authors: bool | None = False,
        min_freq: int | None = 1,
    ) -> MapNetwork:
        ctx = info.context
        # the contract's optional arguments: an explicit null means the default
        min_count = DEFAULT_MIN_COUNT if min_count is None else min_count
        measure = MapMeasure.COUNT if measure is None else measure
        top = DEFAULT_TOP if top is None else top
        check_years(year_min, year_max)
        check_min_count(min_count)
        min_freq = 1 if min_freq is None else min_freq
        if not 1 <= min_freq <= 1_000_000:
            raise UserInputError(f"`minFreq` must be between 1 and 1000000, got {min_freq}")
        if not 1 <= top <= networks.MAX_NODES:
            raise UserInputError(
                f"`top` must be between 1 and {networks.MAX_NODES}, got {top}; "
                "`citegraph export network` writes larger maps to a file"
            )
        built = _built_unit(unit)
        seed_id = None if seed is None else str(seed)
        if seed_id is not None and built is networks.MapUnit.REFERENCES:  # a work: any id a source gave it
            seed_id = await paper_key(ctx, seed_id) or seed_id
        filters = _filters(
            min_count, measure, top, year_min, year_max, seed_id, cluster_id, bool(all_authors), min_freq
        )
        try:
            network = await ctx.call(ctx.service.map_network, built, filters)
        except ConfigError as exc:  # an unknown seed, a cluster filter on a unit without clusters
            raise UserInputError(str(exc)) from exc
        return network_type(network)

    @strawberry.field(
        description="Every unit of `mapNetwork`, whether this store can map it (it holds the relationships the "
        "unit's map is counted from) and, when it cannot, the command that loads them."
    )
    async def map_units(self, info: Info[Context, Any]) -> list[MapUnitStatus]:
        ctx = info.context
        found = await ctx.call(ctx.service.map_unit_status)
        return [
            MapUnitStatus(unit=MapUnit(s.unit.value), built=s.built, links=s.links, command=s.command) for s in found
        ]

    @strawberry.field(
        description="The documents behind one link of a `mapNetwork` map (same `unit`, `yearMin`, `yearMax`, "
        "`allAuthors`), newest first: the documents citing both works, authors or sources (co-citation), both "
        "authors, institutions or countries wrote (co-authorship), where both keywords occur, or, for COUPLING, "
        "the works both documents cite. `totalCount` is the link's count; empty when the two are not linked."
    )
    async def map_edge_documents(
        self,
        info: Info[Context, Any],
        source: strawberry.ID,
        target: strawberry.ID,
        unit: MapUnit = MapUnit.REFERENCES,
        year_min: int | None = None,
        year_max: int | None = None,
        all_authors: bool | None = False,
        first: int = 10,
        after: str | None = None,
    ) -> Connection[Paper]:
        ctx = info.context
        check_years(year_min, year_max)
        built = _built_unit(unit)
        ends = [str(source), str(target)]
        if built in (networks.MapUnit.REFERENCES, networks.MapUnit.COUPLING):  # works: any id a source gave them
            ends = [await paper_key(ctx, end) or end for end in ends]
        filters = _filters(
            DEFAULT_MIN_COUNT, MapMeasure.COUNT, DEFAULT_TOP, year_min, year_max, None, None, bool(all_authors)
        )
        found = await ctx.call(ctx.service.map_edge_documents, built, ends[0], ends[1], filters)
        scope = cursor_scope(
            "Query.mapEdgeDocuments",
            unit=unit.name,
            source=ends[0],
            target=ends[1],
            years=f"{year_min}-{year_max}",
            all_authors=bool(all_authors),
        )
        return await page_of_ids(info, [d.id for d in found], first, after, scope)


__all__ = [
    "MapEdge",
    "MapMeasure",
    "MapNetwork",
    "MapNode",
    "MapUnit",
    "MapUnitStatus",
    "MappingQuery",
    "network_type",
]
