"""Bibliographic coupling clusters and the COUPLING unit (gnn.mapping.coupling) on the hand-checked graph of
cocite_graph: coupling (x,y) = 2 [a, b], (x,z) = (y,z) = 1 [b]; x 2001, y 2003, z 2005."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gnn.cocitation.clusters import read_cluster_labels
from gnn.cocitation.compute import coupling_table
from gnn.mapping import CouplingSettings, compute_coupling, coupling_counts, coupling_cut, read_mapping_input
from gnn.mapping.networks import MapUnit, Measure, NetworkFilters, build_network
from graph import GraphStore
from graph.errors import ConfigError
from tests.gnn.cocite_graph import open_cocite_store, pairs_of


@pytest.fixture
def cocite_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_cocite_store(tmp_path) as store:
        yield store


def pairs(network_edges: list) -> dict[tuple[str, str], int]:
    return {(e.source, e.target): e.count for e in network_edges}


def test_coupling_counts_by_hand_and_as_the_coupling_table(cocite_store: GraphStore) -> None:
    counts = coupling_counts(read_mapping_input(cocite_store))
    found = {(counts.ids[i], counts.ids[j]): int(c) for i, j, c in zip(counts.i, counts.j, counts.count)}
    assert found == {("x", "y"): 2, ("x", "z"): 1, ("y", "z"): 1}
    table = coupling_table(cocite_store, device="cpu")  # the existing on-demand computation, another code path
    assert found == {(s, t): int(c) for s, t, c in zip(table["source"], table["target"], table["count"])}
    assert counts.occurrences.tolist() == [3, 2, 3]  # references of x, y, z
    window = coupling_counts(read_mapping_input(cocite_store), year_min=2000, year_max=2003)
    assert list(window.ids) == ["x", "y"] and window.count.tolist() == [2]


def test_the_coupling_unit_builds_the_network(cocite_store: GraphStore) -> None:
    network = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters(min_count=1))
    assert pairs(network.edges) == {("x", "y"): 2, ("x", "z"): 1, ("y", "z"): 1}
    assert [(n.id, n.weight) for n in network.nodes] == [("x", 3), ("y", 3), ("z", 2)]  # total link strength
    assert {n.id: n.year for n in network.nodes} == {"x": 2001, "y": 2003, "z": 2005}
    assert network.edges[0].source == "x" and network.edges[0].target == "y"  # strongest first
    assert not network.truncated
    twice = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters())  # default min_count 2
    assert pairs(twice.edges) == {("x", "y"): 2}
    cosine = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters(min_count=1, measure=Measure.COSINE))
    strength = {(e.source, e.target): e.strength for e in cosine.edges}
    assert strength[("x", "y")] == pytest.approx(2 / math.sqrt(3 * 2))
    assert strength[("x", "z")] == pytest.approx(1 / 3)
    top = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters(min_count=1, top=2))
    assert [n.id for n in top.nodes] == ["x", "y"] and top.truncated and pairs(top.edges) == {("x", "y"): 2}
    windowed = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters(min_count=1, year_min=2003))
    assert pairs(windowed.edges) == {("y", "z"): 1}  # only y and z are of 2003 on; they share b
    seeded = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters(min_count=2, seed="z"))
    assert seeded.nodes == []


def test_compute_coupling_writes_clusters_and_labels(cocite_store: GraphStore) -> None:
    report = compute_coupling(cocite_store, CouplingSettings(top_k=0))
    assert report.documents == 3 and report.pairs == 3 and report.links == 3
    assert report.clusters_path is not None and report.clusters_path.name.endswith(".coupling_clusters.json")
    labels = read_cluster_labels(report.clusters_path)
    assert labels == list(report.clusters)
    assert sum(label.size for label in labels) == 3
    for label in labels:
        assert label.llr_terms or label.ctfidf_terms or label.name  # never a bare number
        assert not label.label.startswith("cluster ")
    rows = cocite_store.query_arrow("paper_coupling_clusters").to_pandas().set_index("id")["cluster"]
    assert set(rows.index) == {"x", "y", "z"}
    network = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters(min_count=1))
    assert {n.id: n.cluster for n in network.nodes} == rows.to_dict()
    assert all(n.cluster_label for n in network.nodes)
    inside = build_network(cocite_store, MapUnit.COUPLING, NetworkFilters(min_count=1, cluster=int(rows["x"])))
    assert {n.id for n in inside.nodes} <= {p for p, c in rows.items() if c == rows["x"]}
    assert "modularity Q" in report.summary()


def test_a_coupling_over_the_budget_cuts_the_most_cited_references(
    cocite_store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gnn.mapping.coupling as coupling

    data = read_mapping_input(cocite_store)
    assert pairs_of(coupling_counts(data)) == {("x", "y"): 2, ("x", "z"): 1, ("y", "z"): 1}
    # b has 3 citers (3 pairs), a 2 (1 pair): 4 expansions; a budget of 3 cuts b, the most cited
    monkeypatch.setattr(coupling, "MAX_EXPANSIONS", 3)
    assert pairs_of(coupling_counts(data)) == {("x", "y"): 1}  # x and y still share a
    citers = np.bincount(data.cited[data.cited >= 0], minlength=len(data.papers))
    cut = coupling_cut(citers, 3)
    assert (cut.max_citers, cut.references_cut, cut.citations_cut, cut.why) == (2, 1, 3, "budget")
    assert (cut.expansions, cut.exact_expansions) == (1, 4)
    assert "more than 2 of 3 documents cut" in cut.summary()
    monkeypatch.setattr(coupling, "MAX_EXPANSIONS", 0)  # nothing fits: every reference cited twice or more goes
    assert coupling_cut(citers, 3).max_citers == 1 and len(coupling_counts(data)) == 0


def test_a_share_cuts_the_references_cited_by_more_of_the_documents(cocite_store: GraphStore) -> None:
    data = read_mapping_input(cocite_store)
    citers = np.bincount(data.cited[data.cited >= 0], minlength=len(data.papers))
    # 3 citing documents: a share of 0.7 allows 2 citers (a stays, b goes); 0.5 allows 1 (a and b go)
    assert coupling_cut(citers, 3, max_share=0.7).max_citers == 2
    assert pairs_of(coupling_counts(data, max_share=0.7)) == {("x", "y"): 1}
    assert coupling_counts(data, max_share=0.5).count.size == 0
    assert coupling_cut(citers, 3, max_share=1.0).max_citers is None  # nothing is cited by more than all
    assert pairs_of(coupling_counts(data, min_count=2)) == {("x", "y"): 2}
    with pytest.raises(ConfigError, match=r"max_share is 0.*\(0, 1\]"):
        CouplingSettings(max_share=0)
    report = compute_coupling(cocite_store, CouplingSettings(max_share=0.7))
    assert report.cut is not None and report.cut.max_citers == 2 and report.pairs == 1
    assert "--coupling-max-share" in report.summary()


def test_settings_refuse_bad_values() -> None:
    with pytest.raises(ConfigError, match="top_k"):
        CouplingSettings(top_k=-1)
