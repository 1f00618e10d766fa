"""Co-citation networks for analysts: Gephi (GraphML, GEXF), VOSviewer, CSV and Parquet.

:func:`export_cocitation` reads the CO_CITED edges that ``citegraph compute cocitation`` stored
(with their count, sentence count and normalised strengths) and the papers they join (title,
year, ``n_cited``, ``cocite_cluster``), optionally cut to a paper's neighbourhood, and writes:

* ``graphml`` / ``gexf``: one file, written by networkx; open it in Gephi. Every edge carries all
  measures plus ``weight`` = the chosen measure; nodes carry ``label`` (the paper's display label,
  :mod:`graph.labels`: a cited reference stub reads "Goos F, 1947, Ann Phys-Berlin 1:333", not its key),
  ``title``, ``year``, ``n_cited`` and ``cluster`` (absent values are left out: neither format has a null).
* ``vosviewer``: a map file and a network file (``<stem>_map.txt``, ``<stem>_network.txt``), the
  tab-separated formats VOSviewer reads with "Create a map based on network data". The map file
  has ``id`` (1..n), ``label`` (the display label), ``description`` (the paper id), ``cluster`` (``cocite_cluster`` + 1:
  VOSviewer numbers clusters 1..1000, larger numbers are left blank), ``weight<Citations>`` and
  ``score<Year>``; the network file has no header and one ``id id strength`` line per edge.
* ``csv`` / ``parquet``: the edge table at ``out_path`` and the node table (:data:`NODE_COLUMNS`: ``id``,
  ``label``, ``title``, ...) at ``<stem>_nodes.<ext>``.

:func:`export_coupling` writes bibliographic coupling (computed on the fly, not stored) the same way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

from gnn.cocitation.compute import MEASURES, coupling_table
from graph.errors import ConfigError
from graph.labels import complete_labels, paper_label
from graph.store import GraphStore

log = logging.getLogger(__name__)

FORMATS = ("graphml", "gexf", "vosviewer", "csv", "parquet")
NODE_COLUMNS = ["id", "label", "title", "year", "n_cited", "cluster"]
VOSVIEWER_MAX_CLUSTER = 1000  # VOSviewer accepts cluster numbers 1..1000
# edge columns GraphML/GEXF carry besides the measures: a merged time-sliced network's first slice (gnn.mapping.slices)
EXTRA_EDGE_COLUMNS = ("slice",)


@dataclass(frozen=True)
class ExportReport:
    fmt: str
    measure: str
    paths: tuple[Path, ...]  # the files written
    nodes: int
    edges: int

    def summary(self) -> str:
        text = f"{self.edges} edges between {self.nodes} papers ({self.measure}) -> {', '.join(map(str, self.paths))}"
        if self.edges == 0:
            text += "\n  no edges: run `citegraph compute cocitation` first, or lower --min-count"
        return text


def export_cocitation(
    store: GraphStore,
    out_path: Path | str,
    fmt: str,
    measure: str = "association",
    min_count: int = 1,
    seed_paper: str | None = None,
    depth: int = 1,
    year_min: int | None = None,
    year_max: int | None = None,
) -> ExportReport:
    """Write the stored co-citation network (or a paper's neighbourhood in it) for Gephi, VOSviewer or pandas.

    Args:
        out_path: the file to write (VOSviewer, CSV and Parquet add sibling files, see the module).
        fmt: one of :data:`FORMATS`.
        measure: the edge ``weight``: one of :data:`gnn.cocitation.compute.MEASURES` (default association strength).
        min_count: keep edges co-cited at least this often.
        seed_paper: keep only papers within ``depth`` co-citation hops of this paper (edges among them).
        year_min, year_max: count only citing papers published in these years (inclusive; either may be open):
            ``count`` is then the number of such papers citing both (from CITES, so pairs below the compute
            step's ``min_count`` appear too), the strengths stay the stored all-years values (empty without one).
    """
    _check(fmt, measure, min_count, depth)
    if year_min is not None and year_max is not None and year_min > year_max:
        raise ConfigError(f"year range {year_min}..{year_max} is empty; give the first year first")
    if year_min is None and year_max is None:
        edges = store.read_edges("CO_CITED")
        edges = edges[edges["count"] >= min_count]
    else:
        edges = _edges_in_years(store, min_count, year_min, year_max)
    if seed_paper is not None:
        edges = neighbourhood(edges, seed_paper, depth)
    ids = sorted(set(edges["source"]) | set(edges["target"]) | ({seed_paper} if seed_paper else set()))
    nodes = _nodes(store, ids)
    return write_network(edges, nodes, Path(out_path), fmt, measure)


def export_coupling(
    store: GraphStore,
    out_path: Path | str,
    fmt: str,
    measure: str = "association",
    min_count: int = 1,
    device: str | None = None,
) -> ExportReport:
    """Write the bibliographic coupling network of citing papers (``gnn.cocitation.compute.coupling_table``)."""
    _check(fmt, measure, min_count, 1)
    if measure == "sentence_count":
        raise ConfigError(
            "bibliographic coupling has no sentence_count; use count, association, cosine, jaccard, inclusion"
        )
    edges = coupling_table(store, min_count=min_count, device=device)
    ids = sorted(set(edges["source"]) | set(edges["target"]))
    return write_network(edges, _nodes(store, ids), Path(out_path), fmt, measure)


def neighbourhood(edges: pd.DataFrame, seed_paper: str, depth: int) -> pd.DataFrame:
    """The edges among the papers within ``depth`` hops of ``seed_paper`` (breadth-first over ``edges``)."""
    graph = nx.from_pandas_edgelist(edges, "source", "target")
    if seed_paper not in graph:
        return edges.iloc[0:0]
    reached = nx.single_source_shortest_path_length(graph, seed_paper, cutoff=depth)
    inside = edges["source"].isin(reached) & edges["target"].isin(reached)
    return edges[inside]


def to_networkx(edges: pd.DataFrame, nodes: pd.DataFrame, measure: str) -> nx.Graph:
    """Undirected graph; nodes: ``label``, ``title``, ``year``, ``n_cited``, ``cluster``; edges: every measure, ``weight``
    and any of :data:`EXTRA_EDGE_COLUMNS` the table has."""
    graph = nx.Graph()
    for row in nodes.itertuples(index=False):
        attributes = {
            "label": _label(row),
            "title": row.title,
            "year": row.year,
            "n_cited": row.n_cited,
            "cluster": row.cluster,
        }
        graph.add_node(row.id, **_plain(attributes))
    measures = [m for m in MEASURES if m in edges.columns]
    extras = [c for c in EXTRA_EDGE_COLUMNS if c in edges.columns]
    for row in edges[["source", "target", *measures, *extras]].itertuples(index=False):
        values = dict(zip(measures, row[2 : 2 + len(measures)]))
        more = dict(zip(extras, row[2 + len(measures) :]))
        graph.add_edge(row.source, row.target, **_plain({**values, "weight": values[measure], **more}))
    return graph


def write_network(edges: pd.DataFrame, nodes: pd.DataFrame, out_path: Path, fmt: str, measure: str) -> ExportReport:
    """Write ``edges`` (``source``, ``target``, measures) and ``nodes`` (:data:`NODE_COLUMNS`) in ``fmt``."""
    edges = edges.sort_values(["source", "target"]).reset_index(drop=True)
    nodes = nodes.sort_values("id").reset_index(drop=True)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("graphml", "gexf"):
        graph = to_networkx(edges, nodes, measure)
        (nx.write_graphml if fmt == "graphml" else nx.write_gexf)(graph, out_path)
        paths: tuple[Path, ...] = (out_path,)
    elif fmt == "vosviewer":
        paths = _write_vosviewer(edges, nodes, out_path, measure)
    else:
        table = edges.assign(weight=edges[measure])
        nodes_path = out_path.with_name(f"{out_path.stem}_nodes{out_path.suffix}")
        if fmt == "csv":
            table.to_csv(out_path, index=False)
            nodes.to_csv(nodes_path, index=False)
        else:
            table.to_parquet(out_path, index=False)
            nodes.to_parquet(nodes_path, index=False)
        paths = (out_path, nodes_path)
    log.debug("exported %d edges, %d nodes as %s to %s", len(edges), len(nodes), fmt, ", ".join(map(str, paths)))
    return ExportReport(fmt, measure, paths, len(nodes), len(edges))


def _write_vosviewer(edges: pd.DataFrame, nodes: pd.DataFrame, out_path: Path, measure: str) -> tuple[Path, Path]:
    map_path = out_path.with_name(f"{out_path.stem}_map.txt")
    network_path = out_path.with_name(f"{out_path.stem}_network.txt")
    number = {paper: k for k, paper in enumerate(nodes["id"], start=1)}  # VOSviewer ids: 1..n
    lines = ["id\tlabel\tdescription\tcluster\tweight<Citations>\tscore<Year>"]
    for row in nodes.itertuples(index=False):
        cluster = "" if pd.isna(row.cluster) or row.cluster + 1 > VOSVIEWER_MAX_CLUSTER else str(int(row.cluster) + 1)
        cells = [
            str(number[row.id]),
            _vos_text(_label(row)),
            _vos_text(row.id),
            cluster,
            "0" if pd.isna(row.n_cited) else str(int(row.n_cited)),
            "" if pd.isna(row.year) else str(int(row.year)),
        ]
        lines.append("\t".join(cells))
    map_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    links = (
        f"{number[s]}\t{number[t]}\t{float(w):.10g}"
        for s, t, w in zip(edges["source"], edges["target"], edges[measure])
    )
    network_path.write_text("".join(f"{line}\n" for line in links), encoding="utf-8")
    return map_path, network_path


def _label(row: Any) -> str:
    """The node's display label: the store's (``cocitation_nodes``), else :func:`graph.labels.paper_label` of the row."""
    label = getattr(row, "label", None)
    if isinstance(label, str) and label:
        return label
    return paper_label(str(row.id), title=getattr(row, "title", None))


def _vos_text(text: str) -> str:
    """A map-file cell: one line, no tabs; quoted when it holds a comma, semicolon or quote (VOSviewer's rule)."""
    text = " ".join(str(text).split())
    if any(ch in text for ch in ',;"'):
        return '"' + text.replace('"', '""') + '"'
    return text


YEAR_OPEN = (0, 9999)  # the bounds an open end of a year range stands for (statements take integers)
EDGE_COLUMNS = ["source", "target", "count", "sentence_count", "association", "cosine", "jaccard", "inclusion"]


def _edges_in_years(store: GraphStore, min_count: int, year_min: int | None, year_max: int | None) -> pd.DataFrame:
    """Co-cited pairs counted over citing papers of [year_min, year_max] (``top_cocitations_in_years``, unpaged)."""
    params = {
        "measure": "count",
        "min_count": min_count,
        "year_min": YEAR_OPEN[0] if year_min is None else year_min,
        "year_max": YEAR_OPEN[1] if year_max is None else year_max,
        "skip": 0,
        "limit": 2**62,  # every pair: the statement pages, an export takes them all
    }
    rows = store.query("top_cocitations_in_years", params)
    frame = pd.DataFrame.from_records(rows, columns=[*EDGE_COLUMNS, "rank_key"]).drop(columns="rank_key")
    return frame.astype({"count": "int64", "sentence_count": "Int64"})


def _nodes(store: GraphStore, ids: list[str]) -> pd.DataFrame:
    rows = complete_labels(store.query("cocitation_nodes", {"ids": ids}), store.query) if ids else []
    frame = pd.DataFrame.from_records(rows, columns=NODE_COLUMNS)
    # nullable integers: a missing year or cluster must not turn the others into floats (3.0) in the files
    return frame.astype({"year": "Int64", "n_cited": "Int64", "cluster": "Int64"})


def _plain(attributes: dict[str, Any]) -> dict[str, Any]:
    """Python scalars only, absent values dropped: GraphML and GEXF writers reject None and numpy types."""
    plain = {}
    for key, value in attributes.items():
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            continue
        plain[key] = value.item() if hasattr(value, "item") else value
    return plain


def _check(fmt: str, measure: str, min_count: int, depth: int) -> None:
    if fmt not in FORMATS:
        raise ConfigError(f"export format {fmt!r} is not one of {', '.join(FORMATS)}")
    if measure not in MEASURES:
        raise ConfigError(f"measure {measure!r} is not one of {', '.join(MEASURES)}")
    if min_count < 1:
        raise ConfigError(f"min_count is {min_count}; use 1 or more")
    if depth < 1:
        raise ConfigError(f"depth is {depth}; use 1 (direct co-citation partners) or more")


__all__ = [
    "FORMATS",
    "ExportReport",
    "export_cocitation",
    "export_coupling",
    "neighbourhood",
    "to_networkx",
    "write_network",
]
