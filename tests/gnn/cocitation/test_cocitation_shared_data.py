"""The whole co-citation step on a store built from the real shared data: invariants, not exact numbers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gnn.cocitation.clusters import read_cluster_labels
from gnn.cocitation.compute import CocitationReport, CocitationSettings, compute_cocitation
from gnn.cocitation.noise import NoiseDistributions, NoiseSampler
from graph import GraphStore, StoreConfig, ingest, open_store
from loaders import SOURCES

pytestmark = pytest.mark.shared_data

REAL_SOURCES = ("taxonomy", "scisumm2018", "scisummnet", "anthology")
SETTINGS = CocitationSettings(device="cpu", top_m=8)  # a small M so that many papers have a tail


@pytest.fixture(scope="module")
def real_store(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    """The real corpora ingested once for this module (~30 s)."""
    store = open_store(StoreConfig(db_path=tmp_path_factory.mktemp("real") / "graph.db"))
    try:
        for name in REAL_SOURCES:
            source = SOURCES[name]
            ingest(store, source.load(data_dir / source.path), on_error="skip")
        yield store
    finally:
        store.close()


@pytest.fixture(scope="module")
def report(real_store: GraphStore) -> CocitationReport:
    started = time.perf_counter()
    report = compute_cocitation(real_store, SETTINGS)
    print(f"\ncompute_cocitation on the shared data: {time.perf_counter() - started:.2f}s\n{report.summary()}")
    return report


def paper_rows(store: GraphStore) -> pd.DataFrame:
    text = (
        "MATCH (p:Paper) RETURN p.id AS id, p.n_cited AS n_cited, p.negative_weight AS negative_weight, "
        "p.cocite_partners AS partners, p.cocite_probs AS probs, p.cocite_tail AS tail, p.cocite_cluster AS cluster"
    )
    return store._conn.execute(text).get_as_arrow().to_pandas().set_index("id")  # type: ignore[attr-defined]


def test_edges_are_ordered_pairs_above_the_minimum(real_store: GraphStore, report: CocitationReport) -> None:
    edges = real_store.read_edges("CO_CITED")
    assert len(edges) == report.edges > 1000  # the corpora co-cite thousands of pairs
    assert (edges["source"] < edges["target"]).all()
    assert not edges.duplicated(["source", "target"]).any()
    assert (edges["count"] >= SETTINGS.min_count).all()
    # sentence_count counts sentences, so one citing paper may add several: it can exceed count
    assert (edges["sentence_count"] >= 0).all()
    assert (edges["sentence_count"] > 0).sum() == report.sentence_pairs > 0
    for bounded in ("cosine", "jaccard", "inclusion"):
        assert ((edges[bounded] > 0) & (edges[bounded] <= 1 + 1e-12)).all(), bounded
    assert (edges["jaccard"] <= edges["cosine"] + 1e-12).all() and (edges["cosine"] <= edges["inclusion"] + 1e-12).all()
    assert (edges["association"] > 0).all()


def test_paper_properties(real_store: GraphStore, report: CocitationReport) -> None:
    papers = paper_rows(real_store)
    assert len(papers) == report.papers_written
    in_degree = pd.DataFrame(real_store.query("in_degree")).set_index("id")["n_cited"]
    assert (papers.loc[in_degree.index, "n_cited"] == in_degree).all()
    assert (papers.drop(in_degree.index)["n_cited"] == 0).all()
    assert papers["negative_weight"].sum() == pytest.approx(1.0, abs=1e-9)
    assert ((papers["negative_weight"] > 0) == (papers["n_cited"] > 0)).all()

    with_partners = papers[papers["partners"].notna()]
    assert len(with_partners) > 500
    totals = with_partners["probs"].map(sum) + with_partners["tail"]
    np.testing.assert_allclose(totals.to_numpy(dtype=float), 1.0, atol=1e-9)
    assert (with_partners["partners"].map(len) <= SETTINGS.top_m).all()
    assert (with_partners["partners"].map(len) == with_partners["probs"].map(len)).all()
    assert (with_partners["tail"] > 0).any()  # some papers have more than top_m partners
    descending = with_partners["probs"].map(lambda p: all(a >= b for a, b in pairwise(p)))
    assert descending.all()


def test_clusters_and_labels(real_store: GraphStore, report: CocitationReport) -> None:
    papers = paper_rows(real_store)
    edges = real_store.read_edges("CO_CITED")
    linked = pd.Index(pd.concat([edges["source"], edges["target"]]).unique())
    assert papers.loc[linked, "cluster"].notna().all()
    assert papers.drop(linked)["cluster"].isna().all()
    labels = read_cluster_labels(report.clusters_path)
    assert labels == list(report.clusters) and len(labels) == papers["cluster"].nunique() > 1
    assert sum(label.size for label in labels) == len(linked)
    assert [label.size for label in labels] == sorted((label.size for label in labels), reverse=True)
    assert all(label.terms for label in labels[:5])


def test_sampler_on_the_real_distributions(real_store: GraphStore, report: CocitationReport) -> None:
    noise = NoiseDistributions.from_store(real_store)
    sampler = NoiseSampler(noise, seed=0, device="cpu")
    cites = pd.DataFrame(real_store.query("citation_pairs"))
    query = cites.groupby("citing_id")["cited_id"].apply(list)
    query = query[query.map(len) >= 3].head(64)  # 64 citing papers with 3+ references
    targets = noise.index([cited[0] for cited in query])
    exclude = [noise.index(cited).tolist() for cited in query]
    negatives = sampler.negatives(targets, 10, exclude=exclude)
    positives = sampler.positives(targets, 4)
    assert (negatives >= 0).all()
    for row, banned in zip(negatives.tolist(), exclude):
        assert not set(row) & set(banned)
    assert ((positives >= 0).sum(1) > 0).all()  # a target cited with others has partners


def test_rerun_replaces(real_store: GraphStore, report: CocitationReport) -> None:
    again = compute_cocitation(real_store, SETTINGS)
    assert again.edges == report.edges == real_store.count_rels("CO_CITED")
    assert [c.terms for c in again.clusters] == [c.terms for c in report.clusters]
