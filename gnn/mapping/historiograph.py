r"""Garfield's historiograph: the direct-citation chronology of the collection's most locally cited works.

Garfield, Pudovkin & Istomin (2003), "Why do we need algorithmic historiography?" (JASIST 54(5)); the
same construction as bibliometrix's ``histNetwork`` (Aria & Cuccurullo 2017). The *collection* is the
set of records a user loaded (Paper nodes that are not stubs: a stub is known only as somebody's cited
reference). For a record :math:`x`

.. math::

    \mathrm{LCS}(x) = |\{\, y \in \text{collection},\ y \ne x : y \to x \,\}|, \qquad
    \mathrm{GCS}(x) = |\{\, y : y \to x \,\}|,

the local citation score counts citations from inside the collection; the global one every citation the
store holds (a Web of Science export's ``TC``, its citations from outside the export, is not loaded, so
GCS here is the store's in-degree). The historiograph keeps the ``top_n`` records by LCS (at least
``min_lcs``; ties by id), the citations among them, and orders them by year.

:func:`historiograph` computes it from the store; :func:`write_historiograph` writes it for Gephi
(GraphML, a directed graph with ``year``, ``lcs``, ``gcs`` and ``label`` on each node) or as two CSV
tables. ``cypher/explore/historiograph.cypher`` gives analysts the same chronology in Cypher.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

from gnn.mapping.data import MappingInput, read_mapping_input
from graph.errors import ConfigError
from graph.store import GraphStore

HISTORIOGRAPH_FORMATS = ("csv", "graphml")
NODE_COLUMNS = ["id", "year", "lcs", "gcs", "label"]
EDGE_COLUMNS = ["source", "target", "source_year", "target_year"]


@dataclass(frozen=True)
class Historiograph:
    """The chronology: ``nodes`` (:data:`NODE_COLUMNS`, by year then id) and ``edges`` (citing -> cited)."""

    nodes: pd.DataFrame
    edges: pd.DataFrame
    records: int  # records of the collection (non-stub papers) the scores were computed over

    def summary(self) -> str:
        if self.nodes.empty:
            return (
                f"historiograph: no record of the {self.records} in the collection is cited by another; "
                "load an export whose records cite each other (or lower --min-lcs)"
            )
        years = self.nodes["year"].dropna()
        span = f", {int(years.min())}-{int(years.max())}" if len(years) else ""
        return (
            f"historiograph: {len(self.nodes)} of {self.records} records (LCS {int(self.nodes['lcs'].min())}-"
            f"{int(self.nodes['lcs'].max())}{span}), {len(self.edges)} citations among them"
        )


def local_citation_scores(data: MappingInput) -> pd.DataFrame:
    """LCS and GCS of every record of the collection: ``id``, ``year``, ``lcs``, ``gcs``, sorted by id."""
    n = len(data.papers)
    known = (data.citing >= 0) & (data.cited >= 0) & (data.citing != data.cited)
    pairs = np.unique(data.citing[known] * max(n, 1) + data.cited[known])  # distinct (citing, cited)
    citing, cited = pairs // max(n, 1), pairs % max(n, 1)
    gcs = np.bincount(cited, minlength=n)
    local = data.record[citing] & data.record[cited]
    lcs = np.bincount(cited[local], minlength=n)
    records = np.flatnonzero(data.record)
    return pd.DataFrame(
        {
            "id": data.papers[records].array,
            "year": pd.array(data.years[records], dtype="Int64"),
            "lcs": lcs[records].astype(np.int64),
            "gcs": gcs[records].astype(np.int64),
        }
    )


def historiograph_of(data: MappingInput, top_n: int = 20, min_lcs: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The nodes (without labels) and edges of the historiograph of ``data`` (see the module)."""
    if top_n < 1:
        raise ConfigError(f"historiograph size is {top_n}; keep at least 1 work (bibliometrix's default is 20)")
    if min_lcs < 1:
        raise ConfigError(f"min_lcs is {min_lcs}; a work in the historiograph is cited at least once locally")
    scores = local_citation_scores(data)
    scores = scores[scores["lcs"] >= min_lcs]
    top = scores.sort_values(["lcs", "id"], ascending=[False, True], kind="stable").head(top_n)
    nodes = top.sort_values(["year", "id"], na_position="last", kind="stable").reset_index(drop=True)
    at = data.papers.get_indexer(pd.Index(nodes["id"]))
    inside = np.zeros(len(data.papers), dtype=bool)
    inside[at] = True
    keep = (data.citing >= 0) & (data.cited >= 0) & (data.citing != data.cited)
    keep[keep] = inside[data.citing[keep]] & inside[data.cited[keep]]
    pairs = np.unique(np.stack([data.citing[keep], data.cited[keep]], axis=1), axis=0).reshape(-1, 2)
    years = pd.array(data.years, dtype="Int64")
    edges = pd.DataFrame(
        {
            "source": data.papers[pairs[:, 0]].array,
            "target": data.papers[pairs[:, 1]].array,
            "source_year": years[pairs[:, 0]],
            "target_year": years[pairs[:, 1]],
        }
    )
    edges = edges.sort_values(["source_year", "source", "target"], na_position="last", kind="stable")
    return nodes, edges.reset_index(drop=True)


def historiograph(store: GraphStore, top_n: int = 20, min_lcs: int = 1) -> Historiograph:
    """The historiograph of the store's collection: the ``top_n`` records by LCS and the citations among them.

    Node labels are the works' titles (their ``label`` where they have one, e.g. a cited-reference
    string such as "Goos F, 1947, Ann Phys-Berlin 1:333"; else the id).
    """
    data = read_mapping_input(store)
    nodes, edges = historiograph_of(data, top_n, min_lcs)
    labels = {}
    if len(nodes):
        for row in store.query("historiograph_labels", {"ids": nodes["id"].tolist()}):
            labels[row["id"]] = row["label"] or row["title"] or row["id"]
    nodes = nodes.assign(label=[labels.get(paper, paper) for paper in nodes["id"]])
    return Historiograph(nodes[NODE_COLUMNS], edges[EDGE_COLUMNS], records=int(data.record.sum()))


def write_historiograph(graph: Historiograph, out_path: Path | str, fmt: str = "csv") -> tuple[Path, ...]:
    """Write the historiograph: ``csv`` (edges at ``out_path``, nodes at ``<stem>_nodes.csv``) or ``graphml``."""
    if fmt not in HISTORIOGRAPH_FORMATS:
        raise ConfigError(f"historiograph format {fmt!r} is not one of {', '.join(HISTORIOGRAPH_FORMATS)}")
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        nodes_path = out.with_name(f"{out.stem}_nodes{out.suffix or '.csv'}")
        graph.edges.to_csv(out, index=False)
        graph.nodes.to_csv(nodes_path, index=False)
        return out, nodes_path
    network = nx.DiGraph()
    for row in graph.nodes.itertuples(index=False):
        attributes = {"label": str(row.label), "lcs": int(row.lcs), "gcs": int(row.gcs)}
        if not pd.isna(row.year):
            attributes["year"] = int(row.year)  # GraphML has no null: a missing year is left out
        network.add_node(row.id, **attributes)
    network.add_edges_from(zip(graph.edges["source"], graph.edges["target"]))
    nx.write_graphml(network, out)
    return (out,)


__all__ = [
    "EDGE_COLUMNS",
    "HISTORIOGRAPH_FORMATS",
    "NODE_COLUMNS",
    "Historiograph",
    "historiograph",
    "historiograph_of",
    "local_citation_scores",
    "write_historiograph",
]
