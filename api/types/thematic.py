"""The thematic map (``thematicMap``): keyword clusters placed by Callon centrality and density.

Computed when asked (:func:`gnn.mapping.thematic.thematic_map`) from the stored keywords under the
arguments' window and filters, so a year window gives that window's themes; ``citegraph compute
thematic-map`` writes the all-years map onto the Keyword nodes for Cypher users.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import strawberry
from strawberry.types import Info

from api.context import Context
from api.errors import UserInputError
from api.services import GraphService
from gnn.mapping.networks import NetworkFilters
from gnn.mapping.thematic import BASIC, DEFAULT_TOP, EMERGING, MOTOR, NICHE, ThematicMap, thematic_map
from graph.errors import ConfigError


@strawberry.enum(description="A theme's place on the strategic diagram (Cobo et al. 2011).")
class ThemeQuadrant(Enum):
    MOTOR = MOTOR  # high centrality, high density
    NICHE = NICHE  # low centrality, high density
    EMERGING_OR_DECLINING = EMERGING  # low centrality, low density
    BASIC = BASIC  # high centrality, low density


@strawberry.type(description="One keyword cluster of the thematic map.")
class Theme:
    cluster: int = strawberry.field(description="Cluster number; 0 has the most keywords.")
    label: str = strawberry.field(description="Its keyword with the most documents (as bibliometrix names themes).")
    keywords: list[str] = strawberry.field(description="Its keywords' names, most documents first.")
    keyword_ids: list[strawberry.ID] = strawberry.field(description="The same keywords' Keyword ids.")
    centrality: float = strawberry.field(
        description="Callon centrality: 10 × the sum of the equivalence indices c_ij²/(c_i·c_j) of its links to "
        "keywords of other clusters."
    )
    density: float = strawberry.field(
        description="Callon density: 100 × the sum of the equivalence indices of the links among its own "
        "keywords, divided by its number of keywords."
    )
    quadrant: ThemeQuadrant = strawberry.field(
        description="Split at the medians of centrality and density over the map's themes (the median counts as high)."
    )
    documents: int = strawberry.field(description="Documents of the window carrying at least one of its keywords.")
    occurrences: int = strawberry.field(description="The sum of its keywords' documents (bibliometrix's freq).")


@strawberry.type(description="The themes of the stored keywords under the query's filters.")
class ThematicMapResult:
    kinds: list[str] = strawberry.field(
        description="The keyword kinds mapped: author keywords, else Keywords Plus, else index keywords, ..."
    )
    documents: int = strawberry.field(description="Documents of the window with a keyword of those kinds.")
    keywords: int = strawberry.field(description="Keywords in the co-occurrence network (at most `top`).")
    themes: list[Theme]


def _map(service: GraphService, filters: NetworkFilters) -> ThematicMap:
    with service.lock:
        service.round_trips += 2  # the keyword uses, then the names of the kept keywords
        return thematic_map(service.store, filters)


def _theme_type(themes: ThematicMap) -> ThematicMapResult:
    return ThematicMapResult(
        kinds=list(themes.kinds),
        documents=themes.documents,
        keywords=themes.keywords,
        themes=[
            Theme(
                cluster=t.cluster,
                label=t.label,
                keywords=list(t.keywords),
                keyword_ids=[strawberry.ID(k) for k in t.keyword_ids],
                centrality=t.centrality,
                density=t.density,
                quadrant=ThemeQuadrant(t.quadrant),
                documents=t.documents,
                occurrences=t.occurrences,
            )
            for t in themes.themes
        ],
    )


@strawberry.type
class ThematicQuery:
    @strawberry.field(
        description="The thematic map (bibliometrix's thematicMap): Leiden clusters of the keyword co-occurrence "
        "network of the `top` keywords with the most documents, linked where they share at least `minCount` "
        "documents of `yearMin`..`yearMax` (keywords of fewer than `minFreq` documents left out), each with Callon centrality, density and quadrant."
    )
    async def thematic_map(
        self,
        info: Info[Context, Any],
        year_min: int | None = None,
        year_max: int | None = None,
        min_count: int = 2,
        top: int = DEFAULT_TOP,
        min_freq: int = 1,
    ) -> ThematicMapResult:
        ctx = info.context
        try:
            filters = NetworkFilters(
                year_min=year_min, year_max=year_max, min_count=min_count, top=top, min_freq=min_freq
            )
        except ConfigError as exc:
            raise UserInputError(
                str(exc)
                .replace("year_min", "yearMin")
                .replace("year_max", "yearMax")
                .replace("min_count", "minCount")
                .replace("min_freq", "minFreq")
            ) from exc
        return _theme_type(await ctx.call(_map, ctx.service, filters))


__all__ = ["ThematicMapResult", "ThematicQuery", "Theme", "ThemeQuadrant"]
