r"""Co-authorship maps: authors, institutions and countries linked by the documents they wrote together
(bibliometrix's ``biblioNetwork(analysis = "collaboration", network = "authors" | "universities" |
"countries")``, VOSviewer's co-authorship maps).

With :math:`B` the document × unit incidence of the documents of the year window (:math:`B_{du} = 1` when
an author of document :math:`d` is, or is affiliated with, unit :math:`u`), the co-authorship of units
:math:`i \ne j` is

.. math::

    C = B^\top B, \qquad c_{ij} = \#\{d : i \text{ and } j \text{ both wrote } d\},

each document counted once per pair however many of its authors share an institution or a country (full
counting, as bibliometrix and VOSviewer's default); a node's weight :math:`s_i = C_{ii}` is its documents.
Counted by :func:`gnn.cocitation.counts.count_pairs` (expand–sort–compress of the upper triangle).

* **COAUTHORS**: a node is an Author (its id; label its name); the incidence is WROTE.
* **INSTITUTIONS**: a node is an Institution; the incidence is ``(Paper)-[:AFFILIATION]->(Institution)``,
  written by the WoS (``C1``), Scopus (``Affiliations``) and OpenAlex (``authorships[].institutions``)
  loaders.
* **COUNTRIES**: a node is a country (ISO 3166-1 alpha-2 code); a document's countries are its
  institutions' countries and the countries its source names without an institution (OpenAlex).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gnn.cocitation.counts import count_pairs
from gnn.mapping.assemble import map_edges, map_nodes, mean_years, pair_frame, select, weights_of
from gnn.mapping.networks import MapNetwork, MapUnit, NetworkFilters, register
from graph.store import GraphStore


def _years(store: GraphStore) -> pd.Series:
    """Every paper's year (NaN where unknown), by id."""
    table = store.query_arrow("paper_years_stubs").to_pandas()
    return pd.Series(pd.to_numeric(table["year"], errors="coerce").astype("float64").to_numpy(), index=table["id"])


def collaboration_network(
    unit: MapUnit, filters: NetworkFilters, documents: pd.Series, units: pd.Series, labels: pd.Series, years: pd.Series
) -> MapNetwork:
    """The co-authorship map of ``unit``: ``documents[k]`` (paper ids) was written by ``units[k]`` (unit ids);
    ``labels`` names the units (by id), ``years`` dates the documents (by id)."""
    year = years.reindex(pd.Index(documents)).to_numpy(dtype=np.float64)
    inside = np.ones(len(year), dtype=bool)
    if filters.year_min is not None or filters.year_max is not None:
        inside = ~np.isnan(year)
        if filters.year_min is not None:
            inside &= year >= filters.year_min
        if filters.year_max is not None:
            inside &= year <= filters.year_max
    doc_codes, doc_ids = pd.factorize(pd.Series(documents).to_numpy()[inside])
    unit_codes, ids = pd.factorize(pd.Series(units).to_numpy()[inside], sort=True)
    ids = pd.Index(ids)
    pairs = count_pairs(doc_codes.astype(np.int64), unit_codes.astype(np.int64), ids, device="cpu")
    edges = pair_frame(pairs, filters.measure, min_count=filters.min_count)
    chosen = select(unit, filters, weights_of(pairs), edges)
    members = np.unique(doc_codes.astype(np.int64) * max(len(ids), 1) + unit_codes)
    doc_years = years.reindex(pd.Index(doc_ids)).to_numpy(dtype=np.float64)
    attributes = pd.DataFrame(
        {
            "label": labels.reindex(ids).to_numpy(),
            "avg_year": mean_years(members // max(len(ids), 1), members % max(len(ids), 1), doc_years, len(ids)),
        },
        index=ids,
    )
    return MapNetwork(
        unit, filters, map_nodes(chosen, attributes.loc[chosen.nodes.index]), map_edges(chosen.edges), chosen.truncated
    )


@register(MapUnit.COAUTHORS)
def coauthor_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """Authors linked by the documents they wrote together (WROTE)."""
    wrote = store.query_arrow("work_authors").to_pandas()
    labels = wrote.drop_duplicates("author_id").set_index("author_id")["name"]
    return collaboration_network(
        MapUnit.COAUTHORS, filters, wrote["paper_id"], wrote["author_id"], labels, _years(store)
    )


def _affiliation_network(store: GraphStore, unit: MapUnit, statement: str, filters: NetworkFilters) -> MapNetwork:
    rows = store.query_arrow(statement).to_pandas()
    labels = rows.drop_duplicates("unit_id").set_index("unit_id")["name"]
    return collaboration_network(unit, filters, rows["paper_id"], rows["unit_id"], labels, _years(store))


@register(MapUnit.INSTITUTIONS)
def institution_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """Institutions linked by the documents their authors wrote together (AFFILIATION)."""
    return _affiliation_network(store, MapUnit.INSTITUTIONS, "paper_institutions", filters)


@register(MapUnit.COUNTRIES)
def country_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """Countries linked by the documents their authors wrote together (IN_COUNTRY)."""
    return _affiliation_network(store, MapUnit.COUNTRIES, "paper_countries", filters)


__all__ = ["coauthor_network", "collaboration_network", "country_network", "institution_network"]
