"""The mapping analyses on stores: bursts, betweenness and sigma written onto Paper by ``compute mapping``,
the historiograph (function, recipe, export, CLI) on a collection worked by hand."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from api.cli.main import main
from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.mapping.centrality import betweenness, cocitation_network
from gnn.mapping.compute import compute_mapping
from gnn.mapping.historiograph import historiograph, write_historiograph
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
YEARS = list(range(2000, 2010))
PER_YEAR = 10  # citing records per year: d_t = 10
W_CITED = [1, 1, 1, 1, 8, 8, 1, 1, 1, 1]  # r_t of work w: a spike in 2004-2005
V_CITED = [3] * 10  # r_t of work v: flat


def burst_batch() -> GraphBatch:
    """Ten citing records a year, 2000-2009; each cites u (every record), some cite v and w (stubs)."""
    citing = [f"c{year}_{k}" for year in YEARS for k in range(PER_YEAR)]
    papers = pd.DataFrame(
        {
            "id": [*citing, "u", "v", "w"],
            "year": [int(p[1:5]) for p in citing] + [1990, 1992, 1995],
            "stub": [False] * len(citing) + [True, True, True],
        }
    )
    cites = [(p, "u") for p in citing]
    for t, year in enumerate(YEARS):
        cites += [(f"c{year}_{k}", "v") for k in range(V_CITED[t])]
        cites += [(f"c{year}_{k}", "w") for k in range(PER_YEAR - W_CITED[t], PER_YEAR)]  # others than v's
    return GraphBatch(
        "bursts", nodes={"Paper": papers}, rels={"CITES": pd.DataFrame(cites, columns=["source", "target"])}
    )


@pytest.fixture
def burst_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_store(StoreConfig(db_path=tmp_path / "bursts.db")) as store:
        ingest(store, burst_batch())
        yield store


def _papers(store: GraphStore) -> pd.DataFrame:
    return pd.concat(list(store.iter_nodes("Paper", 1000))).set_index("id")


def test_compute_mapping_writes_bursts_betweenness_and_sigma(burst_store: GraphStore) -> None:
    compute_cocitation(burst_store, CocitationSettings(device="cpu"), clusters_path=None)
    report = compute_mapping(burst_store)
    papers = _papers(burst_store)
    # w: the spike of 2004-2005 is its one burst; the weight from the two-state costs written out by hand:
    # sigma(0) - sigma(1) = ln L1 - ln L0 = r ln(p1 / p0) + (d - r) ln((1 - p1) / (1 - p0)) (the binomial cancels)
    p0 = sum(W_CITED) / (PER_YEAR * len(YEARS))
    p1 = 2 * p0
    strength = sum(r * math.log(p1 / p0) + (PER_YEAR - r) * math.log((1 - p1) / (1 - p0)) for r in W_CITED[4:6])
    assert (papers.loc["w", "burst_begin"], papers.loc["w", "burst_end"]) == (2004, 2005)
    assert papers.loc["w", "burst_strength"] == pytest.approx(strength, rel=1e-9)
    assert report.bursts["id"].tolist() == ["w"] and report.years == (2000, 2009)
    for flat in ("u", "v", "c2003_1"):  # cited by every record / evenly / never: no burst
        assert pd.isna(papers.loc[flat, "burst_strength"]) and pd.isna(papers.loc[flat, "burst_begin"])
    # betweenness on the CO_CITED network, checked with networkx on the edges read back
    edges = burst_store.read_edges("CO_CITED")
    expected = nx.betweenness_centrality(nx.from_pandas_edgelist(edges, "source", "target"), normalized=True)
    for work, value in expected.items():
        assert papers.loc[work, "betweenness"] == pytest.approx(value, abs=1e-12)
    assert papers.loc["w", "sigma"] == pytest.approx((expected["w"] + 1) ** strength, rel=1e-9)
    assert papers.loc["v", "sigma"] == pytest.approx(1.0)  # no burst: (b + 1)^0
    assert pd.isna(papers.loc["c2003_1", "betweenness"]) and pd.isna(papers.loc["c2003_1", "sigma"])
    # rerunning gives the same graph
    compute_mapping(burst_store)
    again = _papers(burst_store)
    columns = ["burst_strength", "burst_begin", "burst_end", "betweenness", "sigma"]
    pd.testing.assert_frame_equal(papers[columns], again[columns])


def test_without_cocitation_the_step_says_what_to_run(burst_store: GraphStore) -> None:
    report = compute_mapping(burst_store)
    assert report.network_works == 0 and "run `citegraph compute cocitation` first" in report.summary()
    assert _papers(burst_store).loc["w", "burst_begin"] == 2004


# The historiograph's collection: records r1 (2000) .. r4 (2003), the stub s1 (1990) they cite.
#   r2 -> r1    r3 -> r1, r2    r4 -> r1, r3, s1    r1 -> s1    r2 -> s1    q (not a record, 2004) -> r2, r4
# LCS (citations from records): r1 3, r2 1, r3 1, r4 0.  GCS (every citation): r1 3, r2 2, r3 1, r4 1.
HISTORY_CITES = [
    ("r2", "r1"),
    ("r3", "r1"),
    ("r3", "r2"),
    ("r4", "r1"),
    ("r4", "r3"),
    ("r4", "s1"),
    ("r1", "s1"),
    ("r2", "s1"),
    ("q", "r2"),
    ("q", "r4"),
]


@pytest.fixture
def history_db(tmp_path: Path) -> Path:
    papers = pd.DataFrame(
        {
            "id": ["r1", "r2", "r3", "r4", "s1", "q"],
            "year": [2000, 2001, 2002, 2003, 1990, 2004],
            "stub": [False, False, False, False, True, True],
            "title": ["One", "Two", "Three", "Four", None, None],
        }
    )
    path = tmp_path / "history.db"
    with open_store(StoreConfig(db_path=path)) as store:
        cites = pd.DataFrame(HISTORY_CITES, columns=["source", "target"])
        ingest(store, GraphBatch("history", nodes={"Paper": papers}, rels={"CITES": cites}))
    return path


def test_historiograph_by_hand(history_db: Path) -> None:
    with open_store(StoreConfig(db_path=history_db, read_only=True)) as store:
        top3 = historiograph(store, top_n=3)
        top2 = historiograph(store, top_n=2)
        everything = historiograph(store, top_n=10)
    assert top3.nodes.values.tolist() == [
        ["r1", 2000, 3, 3, "One"],
        ["r2", 2001, 1, 2, "Two"],
        ["r3", 2002, 1, 1, "Three"],
    ]
    assert top3.edges[["source", "target"]].values.tolist() == [["r2", "r1"], ["r3", "r1"], ["r3", "r2"]]
    assert top2.nodes["id"].tolist() == ["r1", "r2"]  # r2 and r3 tie on LCS 1: the lower id
    assert top2.edges[["source", "target"]].values.tolist() == [["r2", "r1"]]
    assert everything.nodes["id"].tolist() == ["r1", "r2", "r3"]  # r4 has no local citation (min_lcs 1)
    assert everything.records == 4 and "3 of 4 records" in everything.summary()


def test_the_recipe_gives_the_same_chronology(history_db: Path) -> None:
    text = (ROOT / "cypher" / "explore" / "historiograph.cypher").read_text(encoding="utf-8")
    with open_store(StoreConfig(db_path=history_db, read_only=True)) as store:
        for limit in (2, 3):
            columns, rows = store.read_only_query(text, {"limit": limit})
            graph = historiograph(store, top_n=limit)
            found = [dict(zip(columns, row)) for row in rows]
            assert [(r["id"], r["year"], r["lcs"], r["global_citations"]) for r in found] == [
                (n.id, n.year, n.lcs, n.gcs) for n in graph.nodes.itertuples()
            ]
            pairs = sorted((r["id"], cited) for r in found for cited in r["cites"])
            assert pairs == sorted(map(tuple, graph.edges[["source", "target"]].values.tolist()))


def test_historiograph_exports(history_db: Path, tmp_path: Path) -> None:
    with open_store(StoreConfig(db_path=history_db, read_only=True)) as store:
        graph = historiograph(store, top_n=3)
    edges_path, nodes_path = write_historiograph(graph, tmp_path / "h.csv", "csv")
    assert nodes_path.name == "h_nodes.csv"
    assert pd.read_csv(edges_path)[["source", "target"]].values.tolist() == [["r2", "r1"], ["r3", "r1"], ["r3", "r2"]]
    assert pd.read_csv(nodes_path)["lcs"].tolist() == [3, 1, 1]
    (graphml,) = write_historiograph(graph, tmp_path / "h.graphml", "graphml")
    read = nx.read_graphml(graphml)
    assert read.is_directed() and sorted(read.edges) == [("r2", "r1"), ("r3", "r1"), ("r3", "r2")]
    assert read.nodes["r1"] == {"label": "One", "lcs": 3, "gcs": 3, "year": 2000}
    with pytest.raises(ConfigError, match="not one of csv, graphml"):
        write_historiograph(graph, tmp_path / "h.gexf", "gexf")
    with (
        open_store(StoreConfig(db_path=history_db, read_only=True)) as store,
        pytest.raises(ConfigError, match="at least 1 work"),
    ):
        historiograph(store, top_n=0)


def test_cli_compute_mapping_and_export_historiograph(
    history_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(history_db)
    assert main(["--db", db, "compute", "cocitation", "--device", "cpu"]) == 0
    assert main(["--db", db, "compute", "mapping", "--min-burst-duration", "1", "--burst-s", "3"]) == 0
    assert "mapping:" in capsys.readouterr().out
    out = tmp_path / "history.csv"
    assert main(["--db", db, "export", "historiograph", str(out), "--top", "2"]) == 0
    assert "2 of 4 records" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "history_nodes.csv")["id"].tolist() == ["r1", "r2"]
    with open_store(StoreConfig(db_path=history_db, read_only=True)) as store:
        papers = _papers(store)
    # the co-citation network: q co-cites r2-r4, r3 co-cites r1-r2, r4 co-cites r1-r3, r1-s1, r3-s1; r2 co-cites r1-s1
    edges = [("r2", "r4"), ("r1", "r2"), ("r1", "r3"), ("r1", "s1"), ("r3", "s1")]
    network = cocitation_network(pd.DataFrame(edges, columns=["source", "target"]).assign(count=1))
    expected = betweenness(network)[0]
    np.testing.assert_allclose(papers.loc[expected.index, "betweenness"].to_numpy(float), expected.to_numpy())
