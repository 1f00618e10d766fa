"""The network on a dashboard's screen as files for Gephi, VOSviewer and pandas.

A map in the browser is whatever its filters chose (unit, years, minimum count, measure, top-N, a seed):
the dashboard sends the nodes and edges it draws and ``exportNetwork`` writes them with the project's
own exporter (:func:`gnn.cocitation.export.write_network`), so a file from the dashboard and one from
``citegraph export`` read the same: GraphML and GEXF for Gephi, the VOSviewer map + network pair, and
CSV (edges + nodes). Parquet is left to the CLI (binary files do not travel in a JSON answer).

A request body holds the whole subgraph; at the default ``CITEGRAPH_MAX_BODY_BYTES`` (1 MB) that is about
10,000 edges; raise it for larger maps.
"""

from __future__ import annotations

import re
import tempfile
from enum import Enum
from pathlib import Path
from typing import Any

import pandas as pd
import strawberry
from strawberry.types import Info

from api.context import Context
from api.errors import UserInputError
from api.types.papers import CoCitationMeasure
from gnn.cocitation.export import NODE_COLUMNS, write_network

STEM = "citegraph-map"  # the files' base name (VOSviewer and CSV add _map/_network/_nodes)


@strawberry.enum(description="A file format of the existing exporters (docs/cocitation.md).")
class ExportFormat(Enum):
    GRAPHML = "graphml"  # Gephi
    GEXF = "gexf"  # Gephi
    VOSVIEWER = "vosviewer"  # two tab-separated files: map and network
    CSV = "csv"  # edges, then nodes


@strawberry.input(description="A node as a map draws it.")
class ExportNodeInput:
    id: strawberry.ID
    label: str
    year: int | None = None
    weight: int | None = strawberry.field(default=None, description="What sizes it: citations (written as n_cited).")
    cluster: int | None = None


@strawberry.input(description="An edge as a map draws it.")
class ExportEdgeInput:
    source: strawberry.ID
    target: strawberry.ID
    count: int
    strength: float = strawberry.field(description="The map's measure; the files' `weight`.")


@strawberry.type(description="One written file: its name and its text.")
class ExportFile:
    name: str
    media_type: str
    content: str


# what XML 1.0 (GraphML, GEXF) cannot hold, and UTF-8 cannot encode (lone surrogates): control characters but
# tab, newline and carriage return; U+D800–U+DFFF; U+FFFE and U+FFFF
UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MEDIA_TYPES = {".graphml": "application/xml", ".gexf": "application/xml", ".txt": "text/plain", ".csv": "text/csv"}


def export_files(
    fmt: ExportFormat, measure: CoCitationMeasure, nodes: list[ExportNodeInput], edges: list[ExportEdgeInput]
) -> list[ExportFile]:
    """Write ``nodes`` and ``edges`` with :func:`write_network` into a scratch folder and read the files back.

    The edge table has ``count`` and the edges' ``strength`` under the measure's name (the exporter's ``weight``);
    the node table :data:`NODE_COLUMNS`, with the map's ``weight`` as ``n_cited`` and the label as the title.
    """
    if measure is CoCitationMeasure.SENTENCE_COUNT:
        raise UserInputError("a map's edges have no sentence count; export with COUNT or a normalised measure")
    for kind, items in (("node", nodes), ("edge", edges)):
        for k, item in enumerate(items):
            for name in ("id", "label") if kind == "node" else ("source", "target"):
                bad = UNWRITABLE.search(str(getattr(item, name)))
                if bad:
                    raise UserInputError(
                        f"{kind} {k + 1}'s {name} holds U+{ord(bad.group()):04X}, a character the export formats "
                        "cannot hold (a control character or a lone surrogate); remove it and export again"
                    )
    known = {str(n.id) for n in nodes}
    loose = [f"{e.source}–{e.target}" for e in edges if str(e.source) not in known or str(e.target) not in known]
    if loose:
        raise UserInputError(
            f"{len(loose)} edge(s) join nodes that are not in `nodes`, e.g. {loose[0]}; send every node an edge names"
        )
    node_table = pd.DataFrame.from_records(
        [(str(n.id), n.label, n.label, n.year, n.weight, n.cluster) for n in nodes], columns=NODE_COLUMNS
    ).astype({"year": "Int64", "n_cited": "Int64", "cluster": "Int64"})
    rows: list[tuple[Any, ...]]
    if measure is CoCitationMeasure.COUNT:
        rows = [(str(e.source), str(e.target), e.count) for e in edges]
        edge_table = pd.DataFrame.from_records(rows, columns=["source", "target", "count"])
    else:
        rows = [(str(e.source), str(e.target), e.count, e.strength) for e in edges]
        edge_table = pd.DataFrame.from_records(rows, columns=["source", "target", "count", measure.value])
    suffix = {"graphml": ".graphml", "gexf": ".gexf", "vosviewer": ".txt", "csv": ".csv"}[fmt.value]
    with tempfile.TemporaryDirectory(prefix="citegraph-export-") as folder:
        report = write_network(edge_table, node_table, Path(folder) / f"{STEM}{suffix}", fmt.value, measure.value)
        return [
            ExportFile(name=p.name, media_type=MEDIA_TYPES[p.suffix], content=p.read_text(encoding="utf-8"))
            for p in report.paths
        ]


@strawberry.type
class ExportQuery:
    @strawberry.field(
        description="The given subgraph (what a map shows) as files of the project's exporters: GraphML or GEXF "
        "for Gephi, VOSviewer's map and network files, or CSV edges and nodes. `strength` is each edge's value of `measure` (the map's), the files' weight."
    )
    async def export_network(
        self,
        info: Info[Context, Any],
        format: ExportFormat,
        measure: CoCitationMeasure,
        nodes: list[ExportNodeInput],
        edges: list[ExportEdgeInput],
    ) -> list[ExportFile]:
        return await info.context.call(export_files, format, measure, nodes, edges)


__all__ = ["ExportEdgeInput", "ExportFile", "ExportFormat", "ExportNodeInput", "ExportQuery", "export_files"]
