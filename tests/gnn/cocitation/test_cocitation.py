"""Co-citation tables, reads and write-back, on the hand-checkable graph of cocite_graph.py."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from gnn.cocitation.clusters import read_cluster_labels
from gnn.cocitation.compute import (
    CocitationSettings,
    cocitation_edges,
    cocitation_table,
    compute_cocitation,
    count_cocitation,
    coupling_table,
    read_citations,
    read_cocitation_input,
    read_mentions,
)
from gnn.cocitation.counts import cooccurrence
from graph import GraphStore
from graph.errors import ConfigError
from tests.gnn.cocite_graph import CITED_BY, CITES, COCITED, SENTENCE, citations, open_cocite_store, pairs_of

CPU = torch.device("cpu")


@pytest.fixture
def cocite_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_cocite_store(tmp_path) as store:
        yield store


def test_cocitation_table_by_hand(cocite_store: GraphStore) -> None:
    table = cocitation_table(cocite_store, device="cpu").set_index(["source", "target"])
    assert table["count"].to_dict() == COCITED
    assert table["sentence_count"].to_dict() == {pair: SENTENCE.get(pair, 0) for pair in COCITED}
    expected = {
        ("a", "b"): (1.0, 2 / math.sqrt(6), 2 / 3, 1.0),
        ("a", "c"): (1.5, 1 / math.sqrt(2), 1 / 2, 1.0),
        ("b", "c"): (1.0, 1 / math.sqrt(3), 1 / 3, 1.0),
        ("b", "d"): (1.0, 1 / math.sqrt(3), 1 / 3, 1.0),
        ("b", "y"): (1.0, 1 / math.sqrt(3), 1 / 3, 1.0),
        ("d", "y"): (3.0, 1.0, 1.0, 1.0),
    }
    for pair, values in expected.items():
        got = table.loc[pair, ["association", "cosine", "jaccard", "inclusion"]].to_numpy(dtype=float)
        np.testing.assert_allclose(got, values, rtol=1e-12, err_msg=str(pair))


def test_arrow_reads_equal_row_reads(cocite_store: GraphStore) -> None:
    """query_arrow returns what query returns; the code-based read names the same edges."""
    for name in ("citation_pairs", "sentence_mentions", "paper_ids"):
        rows = cocite_store.query(name)
        table = cocite_store.query_arrow(name)
        assert sorted(map(sorted, (r.items() for r in table.to_pylist()))) == sorted(
            map(sorted, (r.items() for r in rows))
        )
        assert len(rows) > 0
    data = read_cocitation_input(cocite_store)
    assert list(data.papers) == sorted(r["id"] for r in cocite_store.query("paper_ids"))
    by_codes = sorted(zip(data.papers[data.citing], data.papers[data.cited]))
    by_rows = sorted(read_citations(cocite_store).itertuples(index=False, name=None))
    assert by_codes == by_rows == sorted(CITES)
    mentions = read_mentions(cocite_store)
    assert sorted(data.papers[data.mentioned]) == sorted(mentions["cited_id"])
    # one distinct code per citing sentence
    assert len(np.unique(data.sentences)) == mentions["sentence_id"].nunique()


class KeyCodedStore:
    """Answers the *_codes statements as Neo4j does: the codes are the keys themselves."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def query_arrow(self, name: str) -> pa.Table:
        if name == "paper_codes":
            rows = self.store.query("cocitation_nodes", {"ids": [r["id"] for r in self.store.query("paper_ids")]})
            return pa.table(
                {"code": [r["id"] for r in rows], "id": [r["id"] for r in rows], "title": [r["title"] for r in rows]}
            )
        if name == "citation_codes":
            table = self.store.query_arrow("citation_pairs")
            return pa.table({"citing": table.column("citing_id"), "cited": table.column("cited_id")})
        table = self.store.query_arrow("sentence_mentions")
        return pa.table({"sentence": table.column("sentence_id"), "cited": table.column("cited_id")})


def test_key_coded_reads_give_the_same_counts(cocite_store: GraphStore) -> None:
    """Neo4j's key codes and the embedded store's row offsets lead to the same counts."""
    by_offsets = count_cocitation(read_cocitation_input(cocite_store), device=CPU)
    by_keys = count_cocitation(read_cocitation_input(KeyCodedStore(cocite_store)), device=CPU)  # type: ignore[arg-type]
    for offsets, keys in zip(by_offsets, by_keys):
        assert offsets.ids.equals(keys.ids)
        assert pairs_of(offsets) == pairs_of(keys)
    assert pairs_of(by_keys[0]) == COCITED and pairs_of(by_keys[1]) == SENTENCE


def test_coupling_table_by_hand(cocite_store: GraphStore) -> None:
    table = coupling_table(cocite_store, device="cpu").set_index(["source", "target"])
    # s = references: x 3, y 2, z 3; N = 5 cited papers
    expected = {
        ("x", "y"): (2, 5 * 2 / 6, 2 / math.sqrt(6), 2 / 3, 1.0),
        ("x", "z"): (1, 5 / 9, 1 / 3, 1 / 5, 1 / 3),
        ("y", "z"): (1, 5 / 6, 1 / math.sqrt(6), 1 / 4, 1 / 2),
    }
    assert set(table.index) == set(expected)
    for pair, values in expected.items():
        got = table.loc[pair, ["count", "association", "cosine", "jaccard", "inclusion"]].to_numpy(dtype=float)
        np.testing.assert_allclose(got, values, rtol=1e-12, err_msg=str(pair))
    assert len(coupling_table(cocite_store, min_count=2, device="cpu")) == 1


def test_sentence_pairs_without_a_paper_level_pair_are_left_out() -> None:
    cocite = cooccurrence(["x", "y"], ["a", "b"], device=CPU)  # a and b never cited together
    sentence = cooccurrence(["s", "s"], ["a", "b"], ids=cocite.ids, device=CPU)
    assert cocitation_edges(cocite, sentence).empty


def test_sentence_count_counts_sentences() -> None:
    cocite = cooccurrence(["x", "x"], ["a", "b"], device=CPU)
    sentence = cooccurrence(["x#1", "x#1", "x#2", "x#2"], ["a", "b", "a", "b"], ids=cocite.ids, device=CPU)
    edges = cocitation_edges(cocite, sentence)
    assert edges[["count", "sentence_count"]].values.tolist() == [[1, 2]]


def test_min_count_filters_edges() -> None:
    frame = citations()
    counts = cooccurrence(frame["citing"], frame["cited"], device=CPU)
    edges = cocitation_edges(counts, min_count=2)
    assert edges[["source", "target", "count"]].values.tolist() == [["a", "b", 2]]


# settings --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [("min_count", 0), ("top_m", 0), ("power", 1.5), ("power", -0.1), ("resolution", 0.0), ("label_terms", 0)],
)
def test_settings_refuse_bad_values(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=field):
        CocitationSettings(**{field: value})


def test_cuda_without_cuda_is_refused(cocite_store: GraphStore) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ConfigError, match="no CUDA device"):
        compute_cocitation(cocite_store, CocitationSettings(device="cuda"))


# write-back ------------------------------------------------------------------------------------


def paper_properties(store: GraphStore) -> pd.DataFrame:
    columns, rows = _read(
        store,
        "MATCH (p:Paper) RETURN p.id AS id, p.n_cited AS n_cited, p.negative_weight AS negative_weight, "
        "p.cocite_partners AS partners, p.cocite_probs AS probs, p.cocite_tail AS tail, "
        "p.cocite_cluster AS cluster ORDER BY id",
    )
    return pd.DataFrame(rows, columns=columns).set_index("id")


def _read(store: GraphStore, text: str) -> tuple[list[str], list[list]]:
    result = store._conn.execute(text)  # type: ignore[attr-defined]  # test-only peek at the embedded store
    table = result.get_as_arrow()
    return table.column_names, [list(row.values()) for row in table.to_pylist()]


def test_compute_writes_edges_and_paper_properties(cocite_store: GraphStore) -> None:
    report = compute_cocitation(cocite_store, CocitationSettings(device="cpu", top_m=2))
    assert (report.citations, report.citing_papers, report.cited_papers) == (8, 3, 5)
    assert (report.pairs, report.edges, report.sentence_pairs) == (6, 6, 2)
    assert report.papers_written == 7 and report.device == "cpu"
    assert cocite_store.count_rels("CO_CITED") == 6

    edges = cocite_store.read_edges("CO_CITED").set_index(["source", "target"])
    assert edges["count"].to_dict() == COCITED
    assert edges.loc[("d", "y"), "association"] == pytest.approx(3.0)

    papers = paper_properties(cocite_store)
    assert papers["n_cited"].to_dict() == {**CITED_BY, "x": 0, "z": 0}
    # b's partners: a (freq 2), then c, d, y (freq 1, ties by id); top_m = 2 keeps a, c
    b = papers.loc["b"]
    w = 2**0.75
    assert b["partners"] == ["a", "c"]
    np.testing.assert_allclose(b["probs"], [w / (w + 3), 1 / (w + 3)], rtol=1e-12)
    assert b["tail"] == pytest.approx(2 / (w + 3), rel=1e-12)
    assert sum(b["probs"]) + b["tail"] == pytest.approx(1.0, abs=1e-12)
    weights = {p: n**0.75 for p, n in CITED_BY.items()}
    for paper, weight in weights.items():
        assert papers.loc[paper, "negative_weight"] == pytest.approx(weight / sum(weights.values()), rel=1e-12)
    for uncited in ("x", "z"):
        row = papers.loc[uncited]
        assert row["negative_weight"] == 0.0
        assert row["partners"] is None and row["probs"] is None and pd.isna(row["tail"])
        assert pd.isna(row["cluster"])  # x and z are never co-cited
    assert papers.loc[list(CITED_BY), "cluster"].notna().all()


def test_compute_is_idempotent(cocite_store: GraphStore) -> None:
    settings = CocitationSettings(device="cpu")
    compute_cocitation(cocite_store, settings)
    edges_once = cocite_store.read_edges("CO_CITED").sort_values(["source", "target"], ignore_index=True)
    papers_once = paper_properties(cocite_store)
    compute_cocitation(cocite_store, settings)
    assert cocite_store.count_rels("CO_CITED") == 6
    edges_twice = cocite_store.read_edges("CO_CITED").sort_values(["source", "target"], ignore_index=True)
    pd.testing.assert_frame_equal(edges_once, edges_twice)
    pd.testing.assert_frame_equal(papers_once, paper_properties(cocite_store))


def test_rerun_with_other_settings_replaces(cocite_store: GraphStore) -> None:
    compute_cocitation(cocite_store, CocitationSettings(device="cpu"))
    report = compute_cocitation(cocite_store, CocitationSettings(device="cpu", min_count=2))
    assert report.edges == 1
    edges = cocite_store.read_edges("CO_CITED")
    assert edges[["source", "target", "count"]].values.tolist() == [["a", "b", 2]]
    papers = paper_properties(cocite_store)
    # the noise distributions still use every co-cited pair; clusters follow the (now single) edge
    assert papers.loc["b", "partners"] == ["a", "c", "d", "y"]
    assert papers.loc["a", "cluster"] == papers.loc["b", "cluster"] == 0
    assert papers.loc[["c", "d", "y"], "cluster"].isna().all()


def test_cluster_labels_are_written_next_to_the_store(cocite_store: GraphStore) -> None:
    report = compute_cocitation(cocite_store, CocitationSettings(device="cpu"))
    path = cocite_store.path.with_name(cocite_store.path.name + ".clusters.json")  # type: ignore[attr-defined]
    assert report.clusters_path == path and path.is_file()
    labels = read_cluster_labels(path)
    assert labels == list(report.clusters)
    assert sum(label.size for label in labels) == 5
    papers = paper_properties(cocite_store)
    for label in labels:
        assert set(papers.index[papers["cluster"] == label.cluster]) >= set(label.papers)
        assert label.terms  # every cluster here has titled papers


def test_explore_queries_on_the_computed_graph(cocite_store: GraphStore) -> None:
    compute_cocitation(cocite_store, CocitationSettings(device="cpu"))
    top = cocite_store.query("explore/top_cocited_pairs", {"min_count": 1, "limit": 3})
    assert [(r["source"], r["target"], r["count"]) for r in top] == [("a", "b", 2), ("d", "y", 1), ("a", "c", 1)]
    near = cocite_store.query("explore/cocitation_neighbourhood", {"paper_id": "b", "limit": 10})
    assert [(r["id"], r["count"], r["sentence_count"]) for r in near] == [
        ("a", 2, 2),
        ("c", 1, 0),
        ("d", 1, 1),
        ("y", 1, 0),
    ]
    over_time = cocite_store.query("explore/cocitation_over_time", {"paper_a": "a", "paper_b": "b"})
    assert over_time == [{"year": 2001, "citing_papers": 1}, {"year": 2003, "citing_papers": 1}]
    papers = paper_properties(cocite_store)
    cluster_a, cluster_d = int(papers.loc["a", "cluster"]), int(papers.loc["d", "cluster"])
    bridges = cocite_store.query(
        "explore/cluster_bridges", {"cluster_a": cluster_a, "cluster_b": cluster_d, "limit": 5}
    )
    # b is co-cited with a (cluster of a) and with d (cluster of d): always a bridge
    assert "b" in [r["id"] for r in bridges]
    assert all(r["partners_a"] >= 1 and r["partners_b"] >= 1 for r in bridges)
    assert all(r["strength"] == min(r["cocitations_a"], r["cocitations_b"]) for r in bridges)
