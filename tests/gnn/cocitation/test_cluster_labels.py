"""Cluster labels by log-likelihood ratio and c-TF-IDF (gnn.cocitation.terms) and clustering quality
(gnn.cocitation.quality), each against an independent computation."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import igraph as ig
import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import chi2_contingency
from sklearn.metrics import silhouette_samples

from gnn.cocitation.clusters import ctfidf, read_cluster_labels, read_cluster_quality
from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.cocitation.quality import clustering_quality, modularity, silhouettes
from gnn.cocitation.terms import (
    candidate_terms,
    class_term_counts,
    class_tfidf,
    log_likelihood_ratios,
    rank_labels,
    term_matrix,
)
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from tests.gnn.cocite_graph import open_cocite_store


def test_llr_of_a_hand_computed_two_by_two_table() -> None:
    # term t in class 0: 10 of its 100 term occurrences; t occurs 30 times in 1,000 overall:
    # O = [[10, 90], [20, 880]], E = [[3, 97], [27, 873]],
    # G² = 2 (10 ln 10/3 + 90 ln 90/97 + 20 ln 20/27 + 880 ln 880/873) = 12.649015790807...
    counts = sp.csr_matrix(np.array([[10, 90], [20, 880]]))
    g2 = log_likelihood_ratios(counts).toarray()
    assert g2[0, 0] == pytest.approx(12.64901579080787, rel=1e-12)
    scipy_g = chi2_contingency([[10, 90], [20, 880]], correction=False, lambda_="log-likelihood").statistic
    assert g2[0, 0] == pytest.approx(scipy_g, rel=1e-12)
    assert g2[0, 1] == pytest.approx(-scipy_g, rel=1e-12)  # the other term is under-represented in class 0: signed


def test_llr_of_every_cell_equals_scipys_g_test() -> None:
    rng = np.random.default_rng(7)
    counts = sp.random(6, 15, density=0.5, random_state=rng, data_rvs=lambda n: rng.integers(1, 20, n)).tocsr()
    counts = sp.csr_matrix(counts, dtype=np.int64)
    g2 = log_likelihood_ratios(counts).toarray()
    dense = counts.toarray()
    total, n_c, k_t = dense.sum(), dense.sum(axis=1), dense.sum(axis=0)
    for c, t in zip(*np.nonzero(dense)):
        k = dense[c, t]
        table = [[k, n_c[c] - k], [k_t[t] - k, total - n_c[c] - k_t[t] + k]]
        expected = chi2_contingency(table, correction=False, lambda_="log-likelihood").statistic
        sign = 1.0 if k >= n_c[c] * k_t[t] / total else -1.0
        assert g2[c, t] == pytest.approx(sign * expected, rel=1e-9, abs=1e-9)


def test_class_tfidf_equals_the_title_ctfidf() -> None:
    documents = {0: ["neural", "translation", "neural"], 1: ["parsing", "neural"], 2: ["graph", "parsing", "graph"]}
    terms = np.array(sorted({t for d in documents.values() for t in d}), dtype=object)
    column = {t: k for k, t in enumerate(terms)}
    rows = [c for c, d in documents.items() for _ in d]
    cols = [column[t] for d in documents.values() for t in d]
    counts = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(3, len(terms)))
    weights = class_tfidf(counts).toarray()
    for c, ranked in ctfidf(documents).items():
        for term, weight in ranked:
            assert weights[c, column[term]] == pytest.approx(weight, rel=1e-12)


def test_candidate_terms_are_ngrams_inside_runs_of_content_words() -> None:
    terms = candidate_terms("Neural machine translation, with attention for low-resource languages")
    assert "neural machine translation" in terms and "machine translation" in terms and "translation" in terms
    assert "low-resource languages" in terms and "attention" in terms
    assert "translation attention" not in terms  # a comma and "with" break the run
    assert not any(t in terms for t in ("with", "for"))
    assert candidate_terms(None) == [] and candidate_terms("of the and") == []


def test_labels_rank_the_citers_distinctive_terms() -> None:
    # cluster 0 is cited by documents 0, 1 (translation); cluster 1 by 2, 3 (parsing); document 4 cites both
    texts = [
        "Neural machine translation",
        "Machine translation evaluation",
        "Dependency parsing",
        "Graph-based dependency parsing",
        "Machine translation and dependency parsing",
    ]
    doc_terms, terms = term_matrix(texts)
    classes = np.array([0, 0, 0, 1, 1, 1, 0])
    documents = np.array([0, 1, 4, 2, 3, 4, 0])  # document 0 listed twice for cluster 0: it counts once
    counts = class_term_counts(classes, documents, doc_terms, 2)
    assert counts[0, list(terms).index("neural")] == 1
    llr, ctf = rank_labels(counts, terms, 2)
    assert llr[0][0] in ("machine translation", "translation", "machine") and "parsing" not in llr[0]
    assert "dependency parsing" in llr[1] or "parsing" in llr[1] or "dependency" in llr[1]
    assert not set(llr[0]) & set(llr[1]) and ctf[0] and ctf[1]


def random_clustered_graph(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """30 nodes in 4 planted groups (one of size 1), links denser inside; seeded weights and similarities."""
    rng = np.random.default_rng(seed)
    membership = np.array([0] * 10 + [1] * 9 + [2] * 10 + [3])
    i, j = np.triu_indices(len(membership), k=1)
    same = membership[i] == membership[j]
    keep = rng.random(len(i)) < np.where(same, 0.6, 0.08)
    i, j = i[keep], j[keep]
    weight = rng.integers(1, 6, len(i)).astype(float)
    similarity = rng.random(len(i))
    return i, j, weight, similarity, membership


def test_modularity_equals_networkx_and_igraph() -> None:
    i, j, weight, _, membership = random_clustered_graph(3)
    graph = nx.Graph()
    graph.add_nodes_from(range(len(membership)))
    graph.add_weighted_edges_from(zip(i.tolist(), j.tolist(), weight.tolist()))
    communities = [set(np.flatnonzero(membership == c).tolist()) for c in range(4)]
    for gamma in (1.0, 0.5):
        q = modularity(i, j, weight, membership, resolution=gamma)
        assert q.sum() == pytest.approx(nx.community.modularity(graph, communities, resolution=gamma), rel=1e-12)
    igraph = ig.Graph(n=len(membership), edges=np.column_stack([i, j]).tolist())
    assert modularity(i, j, weight, membership).sum() == pytest.approx(
        igraph.modularity(membership.tolist(), weights=weight.tolist()), rel=1e-12
    )


def test_silhouettes_equal_sklearn_on_the_dense_distance() -> None:
    i, j, _, similarity, membership = random_clustered_graph(5)
    n = len(membership)
    distance = np.ones((n, n))
    distance[i, j] = distance[j, i] = 1.0 - similarity
    np.fill_diagonal(distance, 0.0)
    expected = silhouette_samples(distance, membership, metric="precomputed")
    assert np.allclose(silhouettes(i, j, similarity, membership), expected, atol=1e-12)
    quality = clustering_quality(i, j, np.ones(len(i)), similarity, membership)
    assert quality.silhouette == pytest.approx(expected.mean(), rel=1e-12)
    for c in range(4):
        assert quality.cluster_silhouette[c] == pytest.approx(expected[membership == c].mean(), abs=1e-12)
    assert quality.cluster_silhouette[3] == 0.0  # a cluster of one: s = 0, as sklearn


def test_one_cluster_has_no_silhouette() -> None:
    i, j, membership = np.array([0, 1]), np.array([1, 2]), np.array([0, 0, 0, -1])
    quality = clustering_quality(i, j, np.ones(2), np.ones(2), membership)
    assert quality.silhouette is None and np.isnan(silhouettes(i, j, np.ones(2), membership)).all()
    assert quality.modularity == pytest.approx(1.0 - 1.0)  # all links inside the one cluster: Q = 1 - 1


@pytest.fixture
def cocite_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_cocite_store(tmp_path) as store:
        yield store


def test_compute_writes_llr_labels_and_quality(cocite_store: GraphStore) -> None:
    report = compute_cocitation(cocite_store, CocitationSettings(device="cpu"))
    assert report.clusters_path is not None
    labels = read_cluster_labels(report.clusters_path)
    assert labels == list(report.clusters)
    for label in labels:
        assert label.llr_terms and label.ctfidf_terms  # every cluster here has titled citers
        assert label.label == ", ".join(label.llr_terms[:3])  # the LLR label is the one shown
        assert label.silhouette is not None and -1.0 <= label.silhouette <= 1.0
    quality = read_cluster_quality(report.clusters_path)
    assert quality is not None and quality.modularity == pytest.approx(report.quality.modularity)
    assert (quality.nodes, quality.links) == (report.quality.nodes, report.quality.links)
    assert math.isclose(sum(label.modularity or 0.0 for label in labels), report.quality.modularity, abs_tol=1e-5)
    assert "modularity Q" in report.summary()


def test_keywords_are_whole_terms_beside_the_text_ngrams() -> None:
    doc_terms, terms = term_matrix(
        ["Neural parsing", "Tagging"], keywords=[["Word Sense  Disambiguation", "word sense disambiguation"], []]
    )
    row = dict(zip(terms[doc_terms[0].indices], doc_terms[0].data))
    assert row == {"neural": 1, "parsing": 1, "neural parsing": 1, "word sense disambiguation": 1}
    assert list(terms[doc_terms[1].indices]) == ["tagging"]  # the second document has no keyword
    with pytest.raises(ValueError, match="one list per document"):
        term_matrix(["a"], keywords=[])


def keyword_store(path: Path) -> GraphStore:
    """Two co-citation clusters whose citing papers share one bland title and differ only by their keywords.

    Works a1, a2, a3 are cited together by p1..p4; works b1, b2, b3 by q1..q4. Every citing paper is titled
    "A study of methods"; p1..p3 carry the keyword "word sense disambiguation", q1..q3 "sentiment analysis",
    p4 and q4 none. Only the keywords tell the clusters' citers apart.
    """
    citing = [f"p{k}" for k in range(1, 5)] + [f"q{k}" for k in range(1, 5)]
    works = ["a1", "a2", "a3", "b1", "b2", "b3"]
    papers = pd.DataFrame(
        {
            "id": works + citing,
            "title": [f"Work {w}" for w in works] + ["A study of methods"] * len(citing),
            "year": [1990] * len(works) + [2000] * len(citing),
        }
    )
    cites = pd.DataFrame(
        [(p, w) for p in citing for w in (works[:3] if p.startswith("p") else works[3:])], columns=["source", "target"]
    )
    keywords = pd.DataFrame(
        {
            "id": ["author:word sense disambiguation", "author:sentiment analysis"],
            "name": ["Word sense disambiguation", "Sentiment analysis"],
            "kind": ["author", "author"],
        }
    )
    has_keyword = pd.DataFrame(
        [(f"p{k}", keywords["id"][0]) for k in (1, 2, 3)] + [(f"q{k}", keywords["id"][1]) for k in (1, 2, 3)],
        columns=["source", "target"],
    )
    store = open_store(StoreConfig(db_path=path / "kw.db"))
    ingest(
        store,
        GraphBatch(
            "keywords",
            nodes={"Paper": papers, "Keyword": keywords},
            rels={"CITES": cites, "HAS_KEYWORD": has_keyword},
        ),
    )
    return store


@pytest.mark.parametrize("label_keywords", [True, False])
def test_a_citing_papers_keyword_decides_the_cluster_label(tmp_path: Path, label_keywords: bool) -> None:
    with keyword_store(tmp_path) as store:
        report = compute_cocitation(
            store, CocitationSettings(device="cpu", label_abstracts=False, label_keywords=label_keywords)
        )
    by_members = {frozenset(label.papers): label for label in report.clusters}
    a = next(label for members, label in by_members.items() if "a1" in members)
    b = next(label for members, label in by_members.items() if "b1" in members)
    assert a.cluster != b.cluster
    if label_keywords:
        assert a.llr_terms[0] == "word sense disambiguation" and b.llr_terms[0] == "sentiment analysis"
        assert a.ctfidf_terms[0] == "word sense disambiguation" and b.ctfidf_terms[0] == "sentiment analysis"
    else:  # titles alone: the same terms in both clusters' citers, nothing over-represented
        assert "word sense disambiguation" not in a.llr_terms + a.ctfidf_terms
        assert not a.llr_terms and not b.llr_terms
