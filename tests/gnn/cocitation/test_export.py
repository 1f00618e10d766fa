"""Exports of the co-citation network: written, read back with networkx/pandas, same edges and weights."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest

from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.cocitation.export import _vos_text, export_cocitation, export_coupling
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError
from tests.gnn.cocite_graph import cocite_batch, open_cocite_store


@pytest.fixture
def computed_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_cocite_store(tmp_path) as store:
        compute_cocitation(store, CocitationSettings(device="cpu"))
        yield store


def stored_edges(store: GraphStore, measure: str) -> dict[frozenset[str], float]:
    edges = store.read_edges("CO_CITED")
    return {frozenset((s, t)): float(w) for s, t, w in zip(edges["source"], edges["target"], edges[measure])}


def graph_edges(graph: nx.Graph, attribute: str = "weight") -> dict[frozenset[str], float]:
    return {frozenset((s, t)): float(data[attribute]) for s, t, data in graph.edges(data=True)}


@pytest.mark.parametrize("fmt, read", [("graphml", nx.read_graphml), ("gexf", nx.read_gexf)])
@pytest.mark.parametrize("measure", ["association", "count", "jaccard"])
def test_graph_formats_round_trip(computed_store: GraphStore, tmp_path: Path, fmt: str, read, measure: str) -> None:
    path = tmp_path / f"cocitation.{fmt}"
    report = export_cocitation(computed_store, path, fmt, measure=measure)
    assert report.paths == (path,) and (report.nodes, report.edges) == (5, 6)
    graph = read(path)
    assert graph_edges(graph) == pytest.approx(stored_edges(computed_store, measure))
    assert graph_edges(graph, "count") == stored_edges(computed_store, "count")
    assert graph_edges(graph, "sentence_count") == stored_edges(computed_store, "sentence_count")
    assert set(graph.nodes) == {"a", "b", "c", "d", "y"}
    node = graph.nodes["b"]
    assert node["label"] == "Word alignment for machine translation"
    assert int(node["n_cited"]) == 3 and int(node["year"]) == 1992 and "cluster" in node


def test_neighbourhood_export(computed_store: GraphStore, tmp_path: Path) -> None:
    path = tmp_path / "near_a.graphml"
    # depth 1 around a: a, b, c and the edges among them
    report = export_cocitation(computed_store, path, "graphml", measure="count", seed_paper="a", depth=1)
    graph = nx.read_graphml(path)
    assert set(graph.nodes) == {"a", "b", "c"} and report.edges == 3
    assert graph_edges(graph) == {frozenset("ab"): 2.0, frozenset("ac"): 1.0, frozenset("bc"): 1.0}
    # depth 2 reaches d and y through b
    export_cocitation(computed_store, path, "graphml", seed_paper="a", depth=2)
    assert set(nx.read_graphml(path).nodes) == {"a", "b", "c", "d", "y"}
    # a paper never co-cited stands alone
    alone = export_cocitation(computed_store, path, "graphml", seed_paper="x")
    assert (alone.nodes, alone.edges) == (1, 0)


def test_min_count_export(computed_store: GraphStore, tmp_path: Path) -> None:
    report = export_cocitation(computed_store, tmp_path / "strong.gexf", "gexf", measure="count", min_count=2)
    assert graph_edges(nx.read_gexf(tmp_path / "strong.gexf")) == {frozenset("ab"): 2.0}
    assert report.edges == 1


@pytest.mark.parametrize("fmt, reader", [("csv", pd.read_csv), ("parquet", pd.read_parquet)])
def test_tables_round_trip(computed_store: GraphStore, tmp_path: Path, fmt: str, reader) -> None:
    path = tmp_path / f"cocitation.{fmt}"
    report = export_cocitation(computed_store, path, fmt, measure="cosine")
    nodes_path = tmp_path / f"cocitation_nodes.{fmt}"
    assert report.paths == (path, nodes_path)
    edges = reader(path)
    assert list(edges.columns) == [
        "source",
        "target",
        "count",
        "sentence_count",
        "association",
        "cosine",
        "jaccard",
        "inclusion",
        "weight",
    ]
    assert {frozenset((s, t)): w for s, t, w in zip(edges["source"], edges["target"], edges["weight"])} == (
        pytest.approx(stored_edges(computed_store, "cosine"))
    )
    nodes = reader(nodes_path)
    assert nodes["id"].tolist() == ["a", "b", "c", "d", "y"]
    assert nodes.set_index("id")["n_cited"].to_dict() == {"a": 2, "b": 3, "c": 1, "d": 1, "y": 1}


def test_vosviewer_map_and_network(computed_store: GraphStore, tmp_path: Path) -> None:
    report = export_cocitation(computed_store, tmp_path / "cocitation.txt", "vosviewer", measure="count")
    map_path, network_path = report.paths
    assert (map_path.name, network_path.name) == ("cocitation_map.txt", "cocitation_network.txt")
    items = pd.read_csv(map_path, sep="\t")
    assert list(items.columns) == ["id", "label", "description", "cluster", "weight<Citations>", "score<Year>"]
    assert items["id"].tolist() == [1, 2, 3, 4, 5] and items["description"].tolist() == ["a", "b", "c", "d", "y"]
    assert items["cluster"].min() >= 1  # VOSviewer numbers clusters from 1
    assert items.set_index("description")["weight<Citations>"].to_dict() == {"a": 2, "b": 3, "c": 1, "d": 1, "y": 1}
    links = pd.read_csv(network_path, sep="\t", header=None, names=["from", "to", "strength"])
    paper = dict(zip(items["id"], items["description"]))
    read_back = {frozenset((paper[f], paper[t])): s for f, t, s in links.itertuples(index=False)}
    assert read_back == stored_edges(computed_store, "count")


def test_vosviewer_quotes_labels_with_commas() -> None:
    # Titles with a comma or semicolon must be quoted in a map file.
    assert _vos_text("Parsing, tagging; and more") == '"Parsing, tagging; and more"'
    assert _vos_text('Say "hi"') == '"Say ""hi"""'
    assert _vos_text("Two\tlines\nhere") == "Two lines here"


def test_coupling_export(computed_store: GraphStore, tmp_path: Path) -> None:
    report = export_coupling(computed_store, tmp_path / "coupling.graphml", "graphml", measure="count", device="cpu")
    graph = nx.read_graphml(tmp_path / "coupling.graphml")
    assert graph_edges(graph) == {frozenset("xy"): 2.0, frozenset("xz"): 1.0, frozenset("yz"): 1.0}
    assert report.nodes == 3


def test_export_before_compute_writes_an_empty_network(tmp_path: Path) -> None:
    with open_cocite_store(tmp_path) as store:
        report = export_cocitation(store, tmp_path / "empty.graphml", "graphml")
    assert report.edges == 0 and "compute cocitation" in report.summary()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"fmt": "pajek"}, "format"),
        ({"fmt": "csv", "measure": "pagerank"}, "measure"),
        ({"fmt": "csv", "min_count": 0}, "min_count"),
        ({"fmt": "csv", "seed_paper": "a", "depth": 0}, "depth"),
    ],
)
def test_bad_arguments_are_refused(computed_store: GraphStore, tmp_path: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        export_cocitation(computed_store, tmp_path / "out", **kwargs)


@pytest.fixture
def stub_store(tmp_path: Path) -> Iterator[GraphStore]:
    """The co-citation graph with c and d as title-less cited-reference stubs: c with a stored label, d with
    only the reference string a citing record printed."""
    batch = cocite_batch()
    papers = batch.nodes["Paper"].copy()
    papers["title"] = papers["title"].astype(object)
    papers.loc[papers["id"] == "c", "title"] = None
    papers.loc[papers["id"] == "d", "title"] = None
    papers["stub"] = papers["id"].isin(["c", "d"])
    papers["label"] = [None, None, "Och F, 1995, Comput Linguist 19:263", None, None, None, None]
    papers["reference"] = [None, None, None, "NIVRE J, 1998, P ACL, P12", None, None, None]
    stubbed = GraphBatch(batch.source, nodes={**batch.nodes, "Paper": papers}, rels=batch.rels)
    store = open_store(StoreConfig(db_path=tmp_path / "stubs.db"))
    try:
        ingest(store, stubbed)
        compute_cocitation(store, CocitationSettings(device="cpu"))
        yield store
    finally:
        store.close()


STUB_LABELS = {"c": "Och F, 1995, Comput Linguist 19:263", "d": "NIVRE J, 1998, P ACL, P12"}


@pytest.mark.parametrize("fmt, read", [("graphml", nx.read_graphml), ("gexf", nx.read_gexf)])
def test_stubs_are_labelled_in_gephi_files(stub_store: GraphStore, tmp_path: Path, fmt: str, read) -> None:
    path = tmp_path / f"stubs.{fmt}"
    export_cocitation(stub_store, path, fmt)
    graph = read(path)
    assert {paper: graph.nodes[paper]["label"] for paper in STUB_LABELS} == STUB_LABELS
    assert graph.nodes["b"]["label"] == "Word alignment for machine translation"


def test_stubs_are_labelled_in_vosviewer_and_tables(stub_store: GraphStore, tmp_path: Path) -> None:
    report = export_cocitation(stub_store, tmp_path / "stubs", "vosviewer")
    map_file = pd.read_csv(report.paths[0], sep="\t")
    labels = dict(zip(map_file["description"], map_file["label"]))
    assert labels["c"] == STUB_LABELS["c"] and labels["d"] == STUB_LABELS["d"]
    export_cocitation(stub_store, tmp_path / "stubs.csv", "csv")
    nodes = pd.read_csv(tmp_path / "stubs_nodes.csv").set_index("id")
    assert nodes.loc["c", "label"] == STUB_LABELS["c"] and nodes.loc["d", "label"] == STUB_LABELS["d"]
    assert pd.isna(nodes.loc["c", "title"])  # the raw title stays as it is


def test_export_counts_only_citing_papers_of_the_years(computed_store: GraphStore, tmp_path: Path) -> None:
    # citing papers: x (2001) -> a, b, c; y (2003) -> a, b; z (2005) -> b, d, y
    path = tmp_path / "years.csv"
    report = export_cocitation(computed_store, path, "csv", measure="count", year_min=2002, year_max=2003)
    edges = pd.read_csv(path)
    assert report.edges == 1 and list(zip(edges["source"], edges["target"], edges["count"])) == [("a", "b", 1)]
    assert edges["association"][0] == pytest.approx(stored_edges(computed_store, "association")[frozenset("ab")])
    export_cocitation(computed_store, path, "csv", measure="count", year_max=2003, min_count=2)
    assert list(zip(*(pd.read_csv(path)[c] for c in ("source", "target", "count")))) == [("a", "b", 2)]
    export_cocitation(computed_store, path, "csv", measure="count", year_min=2004)
    assert set(zip(*(pd.read_csv(path)[c] for c in ("source", "target")))) == {("b", "d"), ("b", "y"), ("d", "y")}
    with pytest.raises(ConfigError, match=r"year range 2005\.\.2001 is empty"):
        export_cocitation(computed_store, path, "csv", year_min=2005, year_max=2001)
