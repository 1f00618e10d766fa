"""Time slices: a unit's network in each slice of ``slice_years`` years, and their merge (CiteSpace).

CiteSpace builds one network per time slice of the citing documents and merges them, each link keeping the
slice in which it first appears, so that a map shows when each part of a field formed (Chen, 2006, JASIST
57:359). :func:`slice_networks` builds each slice's network with the unit's registered builder
(:func:`gnn.mapping.networks.build_network`, ``year_min``/``year_max`` set to the slice, the other filters
as given); :func:`merge_slices` unions them (a link's ``count`` summed over slices, its ``slice`` the first
year of the slice it first appears in; a node's weight summed); :func:`export_slices` writes each slice and
the merged network with :func:`gnn.cocitation.export.write_network` (GraphML, GEXF, VOSviewer, CSV,
Parquet), ``citegraph export slices``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from gnn.cocitation.export import FORMATS, NODE_COLUMNS, write_network
from gnn.mapping.networks import MapNetwork, MapUnit, Measure, NetworkFilters, build_network
from graph.errors import ConfigError
from graph.store import GraphStore

log = logging.getLogger(__name__)


def time_slices(first: int, last: int, slice_years: int) -> list[tuple[int, int]]:
    """``[first, last]`` cut into consecutive slices of ``slice_years`` years (the last one may be shorter)."""
    if first > last:
        raise ConfigError(f"years {first}–{last} are empty: give --from ≤ --to")
    if slice_years < 1:
        raise ConfigError(f"a slice is at least one year, not {slice_years}")
    return [(start, min(start + slice_years - 1, last)) for start in range(first, last + 1, slice_years)]


def slice_networks(
    store: GraphStore, unit: MapUnit, first: int, last: int, slice_years: int, filters: NetworkFilters | None = None
) -> list[tuple[tuple[int, int], MapNetwork]]:
    """Each slice's network of ``unit`` (``filters`` minus their year window, which the slice sets)."""
    base = filters or NetworkFilters()
    return [
        (window, build_network(store, unit, replace(base, year_min=window[0], year_max=window[1])))
        for window in time_slices(first, last, slice_years)
    ]


def network_frames(network: MapNetwork) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A network as the edge table (``source``, ``target``, ``count``, the measure's column) and the node table
    (:data:`gnn.cocitation.export.NODE_COLUMNS`, ``n_cited`` the node's weight) the export writers take."""
    measure = network.filters.measure.value
    edges = pd.DataFrame(
        {
            "source": [e.source for e in network.edges],
            "target": [e.target for e in network.edges],
            "count": pd.array([e.count for e in network.edges], dtype="int64"),
        }
    )
    if measure != "count":
        edges[measure] = pd.array([e.strength for e in network.edges], dtype="float64")
    nodes = pd.DataFrame(
        {
            "id": [n.id for n in network.nodes],
            "label": [n.label for n in network.nodes],
            "title": [None] * len(network.nodes),
            "year": pd.array([n.year for n in network.nodes], dtype="Int64"),
            "n_cited": pd.array([n.weight for n in network.nodes], dtype="Int64"),
            "cluster": pd.array([n.cluster for n in network.nodes], dtype="Int64"),
        },
        columns=NODE_COLUMNS,
    )
    return edges, nodes


def merge_slices(slices: list[tuple[tuple[int, int], MapNetwork]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The merged network: every link of any slice, ``slice`` = the first year of the earliest slice holding it,
    ``count`` summed over the slices (the measure's column, if any, is the earliest slice's); nodes with their
    weights summed and their other attributes from the earliest slice holding them."""
    edge_frames, node_frames = [], []
    for (start, _), network in slices:
        edges, nodes = network_frames(network)
        edge_frames.append(edges.assign(slice=start))
        node_frames.append(nodes)
    if not edge_frames:
        return pd.DataFrame(columns=["source", "target", "count", "slice"]), pd.DataFrame(columns=NODE_COLUMNS)
    edges = pd.concat(edge_frames, ignore_index=True)
    totals = edges.groupby(["source", "target"], sort=False)["count"].transform("sum")
    merged = edges.assign(count=totals).drop_duplicates(["source", "target"], keep="first").reset_index(drop=True)
    nodes = pd.concat(node_frames, ignore_index=True)
    weights = nodes.groupby("id", sort=False)["n_cited"].transform("sum")
    nodes = nodes.assign(n_cited=weights).drop_duplicates("id", keep="first").reset_index(drop=True)
    return merged.astype({"count": "int64", "slice": "int64"}), nodes


@dataclass(frozen=True)
class SlicesReport:
    """What :func:`export_slices` wrote."""

    unit: MapUnit
    slices: tuple[tuple[int, int, int, int], ...]  # (first year, last year, nodes, edges) per slice
    paths: tuple[Path, ...]  # every file written, the merged network's last
    merged_nodes: int
    merged_edges: int

    def summary(self) -> str:
        lines = [f"{self.unit.value} network in {len(self.slices)} time slices:"]
        lines += [f"  {a}-{b}: {n} nodes, {e} edges" for a, b, n, e in self.slices]
        lines.append(f"  merged: {self.merged_nodes} nodes, {self.merged_edges} edges (each with its first slice)")
        lines.append(f"  -> {', '.join(map(str, self.paths))}")
        return "\n".join(lines)


def export_slices(
    store: GraphStore,
    unit: MapUnit,
    out_dir: Path | str,
    *,
    first: int,
    last: int,
    slice_years: int,
    fmt: str = "csv",
    filters: NetworkFilters | None = None,
) -> SlicesReport:
    """Write ``<unit>_<from>-<to>.<ext>`` per slice and ``<unit>_merged.<ext>`` into ``out_dir``."""
    if fmt not in FORMATS:
        raise ConfigError(f"export format {fmt!r} is not one of {', '.join(FORMATS)}")
    base = filters or NetworkFilters()
    measure = base.measure.value if base.measure is not Measure.COUNT else "count"
    extension = {"graphml": "graphml", "gexf": "gexf", "vosviewer": "txt", "csv": "csv", "parquet": "parquet"}[fmt]
    out = Path(out_dir)
    slices = slice_networks(store, unit, first, last, slice_years, base)
    paths: list[Path] = []
    rows = []
    for (a, b), network in slices:
        edges, nodes = network_frames(network)
        report = write_network(edges, nodes, out / f"{unit.value}_{a}-{b}.{extension}", fmt, measure)
        paths.extend(report.paths)
        rows.append((a, b, len(nodes), len(edges)))
    merged_edges, merged_nodes = merge_slices(slices)
    report = write_network(merged_edges, merged_nodes, out / f"{unit.value}_merged.{extension}", fmt, measure)
    paths.extend(report.paths)
    return SlicesReport(unit, tuple(rows), tuple(paths), len(merged_nodes), len(merged_edges))


__all__ = ["SlicesReport", "export_slices", "merge_slices", "network_frames", "slice_networks", "time_slices"]
