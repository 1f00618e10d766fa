"""One shape for every science-mapping network, whatever its unit of analysis.

bibliometrix's ``biblioNetwork`` and VOSviewer's maps choose a *unit* (cited references, their first or
all authors, their sources, co-authors, institutions, countries, keywords, bibliographically coupled
documents) and then the same filters: a year window of the citing documents, a minimum link count, a
normalisation, the top-N nodes. Each unit's builder returns a :class:`MapNetwork` for a
:class:`NetworkFilters`, so the CLI, the exports, GraphQL's ``mapNetwork`` and the dashboard draw any unit
the same way. Builders register themselves in :data:`UNIT_BUILDERS` under their :class:`MapUnit` value.

Strength of a link between nodes i and j with c_ij shared documents and s_i, s_j their own totals (van Eck
& Waltman 2009, "How to normalize cooccurrence data?"): association N·c_ij/(s_i·s_j) (N the documents in
the window), cosine c_ij/√(s_i·s_j), Jaccard c_ij/(s_i+s_j−c_ij), inclusion c_ij/min(s_i, s_j); count is
c_ij itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from graph.errors import ConfigError
from graph.store import GraphStore

MAX_NODES = 5_000  # the dashboard draws 5,000 nodes and 50,000 edges smoothly (WebGL); more is a file export
MAX_EDGES = 50_000


class MapUnit(Enum):
    """What a node of the network is (bibliometrix's ``analysis`` × ``network``)."""

    REFERENCES = "references"  # cited works, linked when co-cited
    AUTHORS = "authors"  # cited works' authors, linked when co-cited (author co-citation)
    SOURCES = "sources"  # cited works' journals/venues, linked when co-cited (source co-citation)
    COAUTHORS = "coauthors"  # authors, linked when they wrote a document together
    INSTITUTIONS = "institutions"  # co-authorship aggregated to institutions
    COUNTRIES = "countries"  # co-authorship aggregated to countries
    KEYWORDS = "keywords"  # keywords, linked when they occur in the same document
    COUPLING = "coupling"  # citing documents, linked when they cite the same works


class Measure(Enum):
    """A link's strength (see the module docstring for the formulas)."""

    COUNT = "count"
    ASSOCIATION = "association"
    COSINE = "cosine"
    JACCARD = "jaccard"
    INCLUSION = "inclusion"


@dataclass(frozen=True)
class NetworkFilters:
    """Which part of a unit's network to build.

    ``year_min``/``year_max`` bound the *citing* (or, for co-authorship and keywords, the *occurring*)
    documents' years, inclusive; ``min_count`` is the least c_ij a link keeps; ``top`` the most nodes,
    by weight; ``min_freq`` the least weight a node needs before the top-N (bibliometrix's ``minfreq``,
    VOSviewer's minimum number of occurrences: a keyword in fewer documents, a work cited fewer times, an author
    with fewer documents is left out; for COUPLING the least total link strength); ``seed`` keeps one node's
    neighbours only; ``cluster`` one cluster's members only;
    ``all_authors`` counts every author of a cited work, not just the first (bibliometrix's
    ``shortlabel``/first-author choice).
    """

    year_min: int | None = None
    year_max: int | None = None
    min_count: int = 2
    measure: Measure = Measure.COUNT
    top: int = 500
    min_freq: int = 1
    seed: str | None = None
    cluster: int | None = None
    all_authors: bool = False

    def __post_init__(self) -> None:
        if self.year_min is not None and self.year_max is not None and self.year_min > self.year_max:
            raise ConfigError(f"year window {self.year_min}–{self.year_max} is empty: give year_min ≤ year_max")
        if self.min_count < 1:
            raise ConfigError(f"min_count must be at least 1, not {self.min_count}")
        if self.min_freq < 1:
            raise ConfigError(f"min_freq must be at least 1, not {self.min_freq} (1 keeps every node)")
        if not 1 <= self.top <= MAX_NODES:
            raise ConfigError(f"top must be between 1 and {MAX_NODES:,}, not {self.top}; export a file for more")


@dataclass(frozen=True)
class MapNode:
    """One node: a work, author, source, institution, country or keyword.

    ``weight`` is what sizes it (citations in the window for cited units, documents for the others);
    ``avg_year`` the mean year of the documents behind it (VOSviewer's overlay), ``first_year`` the earliest
    (cited units: the year of its first citation in the window, CiteSpace's timeline position); burst and centrality are
    the stored values where the unit has them (cited works), else None.
    """

    id: str
    label: str
    weight: int
    year: int | None = None
    avg_year: float | None = None
    first_year: int | None = None  # cited units: the first year a document of the window cites it
    cluster: int | None = None
    cluster_label: str | None = None
    burst_strength: float | None = None
    burst_begin: int | None = None
    burst_end: int | None = None
    betweenness: float | None = None
    sigma: float | None = None


@dataclass(frozen=True)
class MapEdge:
    """One link: ``count`` shared documents, ``strength`` under the filters' measure."""

    source: str
    target: str
    count: int
    strength: float


@dataclass(frozen=True)
class MapNetwork:
    """A unit's network under some filters; ``truncated`` when ``top`` or :data:`MAX_EDGES` cut it."""

    unit: MapUnit
    filters: NetworkFilters
    nodes: list[MapNode] = field(default_factory=list)
    edges: list[MapEdge] = field(default_factory=list)
    truncated: bool = False


NetworkBuilder = Callable[[GraphStore, NetworkFilters], MapNetwork]
UNIT_BUILDERS: dict[MapUnit, NetworkBuilder] = {}


def register(unit: MapUnit) -> Callable[[NetworkBuilder], NetworkBuilder]:
    """Decorator: make ``builder`` the one that builds ``unit``'s network."""

    def decorate(builder: NetworkBuilder) -> NetworkBuilder:
        UNIT_BUILDERS[unit] = builder
        return builder

    return decorate


def build_network(store: GraphStore, unit: MapUnit, filters: NetworkFilters) -> MapNetwork:
    """``unit``'s network under ``filters``, by its registered builder."""
    try:
        builder = UNIT_BUILDERS[unit]
    except KeyError:
        known = ", ".join(sorted(u.value for u in UNIT_BUILDERS)) or "none"
        raise ConfigError(f"no network is built for unit {unit.value!r} (built: {known})") from None
    return builder(store, filters)


__all__ = [
    "MAX_EDGES",
    "MAX_NODES",
    "UNIT_BUILDERS",
    "MapEdge",
    "MapNetwork",
    "MapNode",
    "MapUnit",
    "Measure",
    "NetworkBuilder",
    "NetworkFilters",
    "build_network",
    "register",
]
