"""Time in science mapping: slices and their merge (gnn.mapping.slices), the overlay's average citing year
(gnn.mapping.overlay) and the cluster timeline (gnn.mapping.timeline), on cocite_graph's hand-checked graph:
x (2001) -> a, b, c; y (2003) -> a, b; z (2005) -> b, d, y."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest

from api.cli.main import main
from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.mapping import (
    average_citing_year,
    average_citing_years,
    cluster_timeline,
    export_slices,
    merge_slices,
    read_mapping_input,
    time_slices,
    timeline_counts,
)
from gnn.mapping.networks import MapEdge, MapNetwork, MapNode, MapUnit, NetworkFilters
from gnn.mapping.timeline import read_membership
from graph import GraphStore
from graph.errors import ConfigError
from tests.gnn.cocite_graph import open_cocite_store


@pytest.fixture
def cocite_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_cocite_store(tmp_path) as store:
        yield store


def test_time_slices_cut_the_window() -> None:
    assert time_slices(2000, 2004, 2) == [(2000, 2001), (2002, 2003), (2004, 2004)]
    assert time_slices(2000, 2000, 3) == [(2000, 2000)]
    with pytest.raises(ConfigError, match="--from"):
        time_slices(2001, 2000, 1)
    with pytest.raises(ConfigError, match="at least one year"):
        time_slices(2000, 2001, 0)


def network(edges: list[tuple[str, str, int]], weights: dict[str, int]) -> MapNetwork:
    return MapNetwork(
        MapUnit.REFERENCES,
        NetworkFilters(),
        [MapNode(p, p.upper(), w, year=2000) for p, w in weights.items()],
        [MapEdge(s, t, c, float(c)) for s, t, c in edges],
    )


def test_merge_keeps_each_links_first_slice_and_sums_counts() -> None:
    first = network([("a", "b", 2)], {"a": 3, "b": 2})
    second = network([("a", "b", 1), ("b", "c", 4)], {"a": 1, "b": 5, "c": 4})
    edges, nodes = merge_slices([((2000, 2001), first), ((2002, 2003), second)])
    rows = {(r.source, r.target): (r.count, r.slice) for r in edges.itertuples()}
    assert rows == {("a", "b"): (3, 2000), ("b", "c"): (4, 2002)}
    assert dict(zip(nodes["id"], nodes["n_cited"])) == {"a": 4, "b": 7, "c": 4}
    assert dict(zip(nodes["id"], nodes["label"])) == {"a": "A", "b": "B", "c": "C"}


def test_export_slices_writes_each_slice_and_the_merge(cocite_store: GraphStore, tmp_path: Path) -> None:
    out = tmp_path / "slices"
    report = export_slices(
        cocite_store,
        MapUnit.COUPLING,
        out,
        first=2001,
        last=2006,
        slice_years=3,
        fmt="graphml",
        filters=NetworkFilters(min_count=1),
    )
    # 2001-2003: x and y share a, b; 2004-2006: z alone
    assert report.slices == ((2001, 2003, 2, 1), (2004, 2006, 0, 0))
    merged = nx.read_graphml(out / "coupling_merged.graphml")
    assert merged.edges["x", "y"]["slice"] == 2001 and merged.edges["x", "y"]["count"] == 2
    assert (out / "coupling_2001-2003.graphml").is_file() and (out / "coupling_2004-2006.graphml").is_file()
    assert "merged: 2 nodes, 1 edges" in report.summary()


def test_average_citing_year_by_hand(cocite_store: GraphStore) -> None:
    data = read_mapping_input(cocite_store)
    avg = average_citing_year(data)
    assert avg.to_dict() == {"a": 2002.0, "b": 2003.0, "c": 2001.0, "d": 2005.0, "y": 2005.0}
    assert average_citing_year(data, year_min=2002).to_dict() == {"a": 2003.0, "b": 2004.0, "d": 2005.0, "y": 2005.0}
    assert average_citing_years(cocite_store, ["b", "c", "nothing"], year_max=2003) == {"b": 2002.0, "c": 2001.0}


def test_cluster_timeline_counts_citations_per_year(cocite_store: GraphStore) -> None:
    data = read_mapping_input(cocite_store)
    counts = timeline_counts(data, pd.Series({"a": 0, "b": 0, "d": 1}))
    assert counts == {0: [(2001, 2), (2003, 2), (2005, 1)], 1: [(2005, 1)]}
    assert timeline_counts(data, pd.Series({"a": 0, "b": 0}), year_min=2002, year_max=2004) == {0: [(2003, 2)]}
    assert cluster_timeline(cocite_store) == []  # before compute cocitation
    compute_cocitation(cocite_store, CocitationSettings(device="cpu"))
    membership = read_membership(cocite_store)
    timelines = cluster_timeline(cocite_store)
    assert [t.cluster for t in timelines] == sorted(membership.unique().tolist())
    for timeline in timelines:
        assert timeline.label and not timeline.label.startswith("cluster ")
        members = set(membership.index[membership == timeline.cluster])
        expected = pd.Series([2001, 2001, 2001, 2003, 2003, 2005, 2005, 2005], index=list("abcabbdy"))
        by_year = expected[expected.index.isin(members)].value_counts().sort_index()
        assert list(timeline.years) == [(int(y), int(n)) for y, n in by_year.items()]
    assert len(cluster_timeline(cocite_store, first=1)) == 1


def test_cli_compute_coupling_and_export_slices(
    cocite_store: GraphStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(cocite_store.path)  # type: ignore[attr-defined]
    cocite_store.close()
    assert main(["--db", db, "compute", "coupling", "--coupling-top-k", "0", "--no-label-abstracts"]) == 0
    assert "bibliographic coupling: 3 citing documents" in capsys.readouterr().out
    out = tmp_path / "csv"
    args = ["--db", db, "export", "slices", str(out), "--unit", "coupling", "--from", "2001", "--to", "2006"]
    assert main([*args, "--slice", "3", "--measure", "count"]) == 0
    assert "coupling network in 2 time slices" in capsys.readouterr().out
    merged = pd.read_csv(out / "coupling_merged.csv")
    assert merged[["source", "target", "count", "slice"]].values.tolist() == [["x", "y", 2, 2001]]
    assert main([*args[:-4], "--from", "2001"]) != 0  # no --to: refused with what to give
    assert "--from and --to" in capsys.readouterr().err
