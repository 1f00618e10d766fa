r"""The documents behind a link of a science map, for every unit of :mod:`gnn.mapping.networks`.

A link's count :math:`c_{ij} = (B^\top B)_{ij}` counts the documents :math:`d` with :math:`B_{di} = B_{dj} = 1`
(the incidence :math:`B` of each unit: docs/cocitation.md, :mod:`gnn.mapping.cited`,
:mod:`gnn.mapping.coauthorship`, :mod:`gnn.mapping.keywords`); this module lists those documents, so that an
analyst clicking a link reads what it stands for (bibliometrix and CiteSpace show the same lists):

=================  ==========================================================================================
REFERENCES         the documents of the window citing both works
AUTHORS, SOURCES   the documents of the window citing a work of each author (source): the same incidence as
                   the map (first or every author, normalised sources), computed from the citations in bulk
COAUTHORS          the documents both authors wrote
INSTITUTIONS       the documents with authors at both institutions
COUNTRIES          the documents with authors in both countries
KEYWORDS           the documents where both keywords occur
COUPLING           the works both coupled documents cite (the link's count is their number)
=================  ==========================================================================================

Each list is newest first, then by id; its length is the link's count on the map of the same window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gnn.mapping.cited import author_rows, source_rows, window_citations
from gnn.mapping.data import read_mapping_input
from gnn.mapping.networks import MapUnit, NetworkFilters
from graph.errors import ConfigError
from graph.store import GraphStore

YEAR_FLOOR = -9999  # the window's ends when a statement's window is off ($windowed false): never compared then
YEAR_CEILING = 9999
STATEMENTS = {  # units whose link is a two-hop pattern from the two nodes: one statement each (cypher/)
    MapUnit.REFERENCES: "map_edge_documents_references",
    MapUnit.COAUTHORS: "map_edge_documents_coauthors",
    MapUnit.INSTITUTIONS: "map_edge_documents_institutions",
    MapUnit.COUNTRIES: "map_edge_documents_countries",
    MapUnit.KEYWORDS: "map_edge_documents_keywords",
    MapUnit.COUPLING: "map_edge_documents_coupling",
}
WINDOWLESS = {MapUnit.COUPLING}  # the window bounds the coupled documents, not the works they share


@dataclass(frozen=True)
class EdgeDocument:
    """One document behind a link: a Paper id and its year (None when unknown)."""

    id: str
    year: int | None


def edge_documents(
    store: GraphStore, unit: MapUnit, source: str, target: str, filters: NetworkFilters
) -> list[EdgeDocument]:
    """The documents behind the link ``source``–``target`` of ``unit``'s map under ``filters`` (its year window and,
    for AUTHORS, ``all_authors``), newest first, then by id; empty when the two are not linked."""
    if source == target:
        return []
    if unit in STATEMENTS:
        params: dict[str, object] = {"source": source, "target": target}
        if unit not in WINDOWLESS:
            params |= {
                "windowed": filters.year_min is not None or filters.year_max is not None,
                "year_min": YEAR_FLOOR if filters.year_min is None else filters.year_min,
                "year_max": YEAR_CEILING if filters.year_max is None else filters.year_max,
            }
        rows = store.query(STATEMENTS[unit], params)
        return [EdgeDocument(str(r["id"]), None if r["year"] is None else int(r["year"])) for r in rows]
    return _cited_unit_documents(store, unit, source, target, filters)


def _cited_unit_documents(
    store: GraphStore, unit: MapUnit, source: str, target: str, filters: NetworkFilters
) -> list[EdgeDocument]:
    """AUTHORS and SOURCES: their node ids are computed from names and venues, so the documents come from the
    map's own incidence (:func:`gnn.mapping.cited.author_rows`, :func:`~gnn.mapping.cited.source_rows`)."""
    data = read_mapping_input(store)
    citations = window_citations(data, filters)
    if unit is MapUnit.AUTHORS:
        rows = author_rows(store, citations, all_authors=filters.all_authors)
    elif unit is MapUnit.SOURCES:
        rows = source_rows(store, citations)
    else:
        raise ConfigError(
            f"no documents are listed for the links of unit {unit.value!r}; add it to gnn.mapping.documents"
        )
    works = rows[rows["unit"].isin([source, target])]
    position = data.papers.get_indexer(pd.Index(works["paper_id"]))
    of_source = np.zeros(len(data.papers), dtype=bool)
    of_target = np.zeros(len(data.papers), dtype=bool)
    found = position >= 0
    is_source = (works["unit"] == source).to_numpy()
    of_source[position[found & is_source]] = True
    of_target[position[found & ~is_source]] = True
    cites_source = np.unique(citations.citing[of_source[citations.cited]])
    cites_target = np.unique(citations.citing[of_target[citations.cited]])
    both = np.intersect1d(cites_source, cites_target)
    found_years = data.years[both]
    documents = [
        EdgeDocument(str(data.papers[k]), None if np.isnan(y) else int(y)) for k, y in zip(both.tolist(), found_years)
    ]
    documents.sort(key=lambda d: (-(d.year or 0), d.id))
    return documents


__all__ = ["EdgeDocument", "edge_documents"]
