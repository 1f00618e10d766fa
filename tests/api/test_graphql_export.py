"""``exportNetwork``: the subgraph a map shows, written by the project's exporter and read back as files."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import networkx as nx
import pandas as pd
from test_graphql import error, ok

from api.services import GraphService

EXPORT = """query($format: ExportFormat!, $measure: CoCitationMeasure! = ASSOCIATION, $nodes: [ExportNodeInput!]!,
  $edges: [ExportEdgeInput!]!) {
  exportNetwork(format: $format, measure: $measure, nodes: $nodes, edges: $edges) { name mediaType content } }"""
NODES = [
    {"id": "p2", "label": "Word alignment models", "year": 1993, "weight": 3, "cluster": 0},
    {"id": "p3", "label": "Phrase tables, again", "year": 1999, "weight": 2, "cluster": 0},
    {"id": "p1", "label": "Statistical machine translation", "year": 2001, "weight": 1, "cluster": None},
]
EDGES = [
    {"source": "p2", "target": "p3", "count": 2, "strength": 0.75},
    {"source": "p1", "target": "p2", "count": 1, "strength": 0.25},
]


def files(service: GraphService, fmt: str) -> dict[str, str]:
    answer = ok(service, EXPORT, {"format": fmt, "nodes": NODES, "edges": EDGES})["exportNetwork"]
    return {f["name"]: f["content"] for f in answer}


def test_graphml_and_gexf_hold_the_nodes_and_edges_sent(service: GraphService) -> None:
    for fmt, read in (("GRAPHML", nx.read_graphml), ("GEXF", nx.read_gexf)):
        written = files(service, fmt)
        (name, content), *rest = written.items()
        assert not rest and name == f"citegraph-map.{fmt.lower()}"
        ET.fromstring(content)  # well-formed XML
        graph = read(io.BytesIO(content.encode()))
        assert set(graph.nodes) == {"p1", "p2", "p3"} and graph.number_of_edges() == 2
        assert graph.nodes["p2"]["label"] == "Word alignment models" and int(graph.nodes["p2"]["n_cited"]) == 3
        assert float(graph.edges["p2", "p3"]["weight"]) == 0.75 and int(graph.edges["p2", "p3"]["count"]) == 2
        assert float(graph.edges["p2", "p3"]["association"]) == 0.75
    counted = ok(service, EXPORT, {"format": "GRAPHML", "measure": "COUNT", "nodes": NODES, "edges": EDGES})
    graph = nx.read_graphml(io.BytesIO(counted["exportNetwork"][0]["content"].encode()))
    assert int(graph.edges["p2", "p3"]["weight"]) == 2  # COUNT: the weight is the count


def test_vosviewer_and_csv_files(service: GraphService) -> None:
    vos = files(service, "VOSVIEWER")
    assert sorted(vos) == ["citegraph-map_map.txt", "citegraph-map_network.txt"]
    lines = vos["citegraph-map_map.txt"].splitlines()
    assert lines[0] == "id\tlabel\tdescription\tcluster\tweight<Citations>\tscore<Year>" and len(lines) == 4
    assert '"Phrase tables, again"' in vos["citegraph-map_map.txt"]  # VOSviewer's quoting of a comma
    assert len(vos["citegraph-map_network.txt"].splitlines()) == 2
    csv = files(service, "CSV")
    edges = pd.read_csv(io.StringIO(csv["citegraph-map.csv"]))
    nodes = pd.read_csv(io.StringIO(csv["citegraph-map_nodes.csv"]))
    assert sorted(edges["weight"]) == [0.25, 0.75] and sorted(nodes["id"]) == ["p1", "p2", "p3"]


def test_an_edge_to_a_node_not_sent_is_refused_with_what_to_do(service: GraphService) -> None:
    edges = [*EDGES, {"source": "p1", "target": "p9", "count": 1, "strength": 1.0}]
    message, code = error(service, EXPORT, {"format": "CSV", "nodes": NODES, "edges": edges})
    assert code == "BAD_USER_INPUT" and "p1–p9" in message and "send every node an edge names" in message


def test_characters_no_export_format_can_hold_are_refused(service: GraphService) -> None:
    """A control character or a lone surrogate (both can arrive in JSON) would make ill-formed XML or no UTF-8."""
    for label, shown in (("Word\x01alignment", "U+0001"), ("Word\ud800", "U+D800")):
        nodes = [{**NODES[0], "label": label}, *NODES[1:]]
        message, code = error(service, EXPORT, {"format": "GRAPHML", "nodes": nodes, "edges": EDGES})
        assert code == "BAD_USER_INPUT" and f"node 1's label holds {shown}" in message and "remove it" in message
