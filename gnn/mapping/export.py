"""A science map as files: ``citegraph export network --unit ...`` for Gephi, VOSviewer and pandas.

:func:`export_network` builds a unit's map (:func:`gnn.mapping.networks.build_network`) and writes it with
the co-citation export's writers (:func:`gnn.cocitation.export.write_network`): GraphML/GEXF (Gephi),
VOSviewer's map and network files, CSV or Parquet. A node's ``n_cited`` column (VOSviewer's
``weight<Citations>``) is the map's weight (citing documents for cited units, documents for the others), its
``year`` the work's year where the unit has one; the CSV/Parquet node table adds ``avg_year``, ``first_year``, the burst,
betweenness and sigma columns. Each edge carries ``count`` and, under the measure's name, its strength.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path

import pandas as pd

from gnn.cocitation.export import FORMATS, ExportReport, write_network
from gnn.mapping.networks import MapNetwork, MapNode, MapUnit, NetworkFilters, build_network
from graph.errors import ConfigError
from graph.store import GraphStore


def network_tables(network: MapNetwork) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The map as an edge table (``source``, ``target``, ``count`` and the measure's column) and a node table
    (the columns :func:`gnn.cocitation.export.write_network` reads, then the map's own)."""
    measure = network.filters.measure.value
    edges = pd.DataFrame(
        {
            "source": [e.source for e in network.edges],
            "target": [e.target for e in network.edges],
            "count": pd.Series([e.count for e in network.edges], dtype="int64"),
        }
    )
    if measure != "count":
        edges[measure] = pd.Series([e.strength for e in network.edges], dtype="float64")
    rows = [asdict(n) for n in network.nodes]
    nodes = pd.DataFrame.from_records(rows, columns=[f.name for f in fields(MapNode)])  # an empty map has them too
    nodes = nodes.rename(columns={"weight": "n_cited"})
    nodes.insert(2, "title", None)
    for column in ("id", "label", "n_cited", "year", "cluster"):
        if column not in nodes.columns:
            nodes[column] = None
    nodes = nodes.astype({"year": "Int64", "n_cited": "Int64", "cluster": "Int64"})
    return edges, nodes


def export_network(
    store: GraphStore, unit: MapUnit, filters: NetworkFilters, out_path: Path | str, fmt: str
) -> ExportReport:
    """Write ``unit``'s map under ``filters`` to ``out_path`` in ``fmt`` (one of
    :data:`gnn.cocitation.export.FORMATS`; VOSviewer, CSV and Parquet add sibling files)."""
    if fmt not in FORMATS:
        raise ConfigError(f"export format {fmt!r} is not one of {', '.join(FORMATS)}")
    network = build_network(store, unit, filters)
    edges, nodes = network_tables(network)
    return write_network(edges, nodes, Path(out_path), fmt, filters.measure.value)


__all__ = ["export_network", "network_tables"]
