"""The GraphQL types, one module per domain; each module's ``*Query`` class holds its root fields.

=============  ==================================================================================
module         root fields
=============  ==================================================================================
``papers``     ``paper``, ``papers``, ``author``, ``authors``, ``sources``
``taxonomy``   ``category``, ``taxonomy``, ``taxonomies``
``network``    ``egoNetwork``, ``coCitations``, ``coCitationPairs``, ``coCitationPair``, ``clusters``
``mapping``    ``mapNetwork``
``export``     ``exportNetwork``
``recommend``  ``recommend``
``linkage``    ``linkage``, ``citanceLinks``
``explore``    ``explore``, ``exploreQueries``
``stats``      ``stats``, ``completeness``
``thematic``   ``thematicMap``
=============  ==================================================================================

To add an area: write ``api/types/<area>.py`` with its types and
a ``<Area>Query`` class, and add that class to :data:`api.schema.QUERY_TYPES`. Shared building blocks
(connections, ``NotFound``, ``InvalidArgument``) are in :mod:`api.types.common`; per-request loaders
and the deadline-aware :meth:`api.context.Context.call` in :mod:`api.context`.
"""

from __future__ import annotations

from api.types.common import Connection, Edge, InvalidArgument, NotFound, PageInfo
from api.types.explore import ExploreQueries
from api.types.export import ExportQuery
from api.types.linkage import LinkageQuery
from api.types.mapping import MappingQuery
from api.types.network import NetworkQuery
from api.types.papers import Author, Paper, PaperQuery, Sentence
from api.types.recommend import RecommendQuery
from api.types.stats import StatsQuery
from api.types.taxonomy import Category, TaxonomyClass, TaxonomyQuery
from api.types.thematic import ThematicQuery

__all__ = [
    "Author",
    "Category",
    "Connection",
    "Edge",
    "ExploreQueries",
    "ExportQuery",
    "InvalidArgument",
    "LinkageQuery",
    "MappingQuery",
    "NetworkQuery",
    "NotFound",
    "PageInfo",
    "Paper",
    "PaperQuery",
    "RecommendQuery",
    "Sentence",
    "StatsQuery",
    "TaxonomyClass",
    "TaxonomyQuery",
    "ThematicQuery",
]
