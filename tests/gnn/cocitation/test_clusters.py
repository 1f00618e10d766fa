"""Leiden (and networkx Louvain) clusters of the co-citation network and their c-TF-IDF labels."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gnn.cocitation.clusters import (
    ClusterLabel,
    ctfidf,
    label_bare_clusters,
    label_clusters,
    leiden_clusters,
    leiden_membership,
    louvain_clusters,
    prune_pairs,
    read_cluster_labels,
    title_terms,
    write_cluster_labels,
)


def two_triangles() -> pd.DataFrame:
    """Two dense triangles joined by one weak edge: Leiden and Louvain must split them."""
    edges = [("a", "b", 5), ("a", "c", 5), ("b", "c", 5), ("d", "e", 4), ("d", "f", 4), ("e", "f", 4), ("c", "d", 1)]
    return pd.DataFrame(edges, columns=["source", "target", "count"])


def test_leiden_finds_the_two_triangles() -> None:
    clusters = leiden_clusters(two_triangles(), seed=0)
    assert clusters.to_dict() == {"a": 0, "b": 0, "c": 0, "d": 1, "e": 1, "f": 1}


def ring_of_cliques(seed: int) -> pd.DataFrame:
    """12 cliques of 6 papers in a ring, joined by weak links, with seeded random weights."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(12):
        members = [f"p{c:02d}{k}" for k in range(6)]
        rows += [(a, b, int(rng.integers(2, 6))) for x, a in enumerate(members) for b in members[x + 1 :]]
        rows.append((members[0], f"p{(c + 1) % 12:02d}0", 1))
    return pd.DataFrame(rows, columns=["source", "target", "count"])


def test_leiden_is_seeded_and_resolution_matters() -> None:
    edges = ring_of_cliques(1)
    assert leiden_clusters(edges, seed=3).equals(leiden_clusters(edges, seed=3))
    assert leiden_clusters(edges, seed=0).nunique() == 12  # one community per clique
    assert leiden_clusters(edges, resolution=0.01, seed=0).nunique() < 12  # low γ: cliques merge
    assert leiden_clusters(edges, resolution=50.0, seed=0).nunique() > 12  # high γ: cliques split
    assert leiden_clusters(edges, resolution=0.01, seed=0).index.equals(leiden_clusters(edges).index)


def test_leiden_membership_numbers_by_size_and_leaves_isolated_nodes_out() -> None:
    # nodes 0-2 a triangle, 3-4 a pair, 5 isolated
    i, j, w = np.array([0, 0, 1, 3]), np.array([1, 2, 2, 4]), np.array([3, 3, 3, 1])
    membership = leiden_membership(i, j, w, 6, seed=0)
    assert membership.tolist() == [0, 0, 0, 1, 1, -1]


def test_prune_pairs_keeps_each_papers_top_k_partners() -> None:
    # CSR rows (strongest first): 0 -> 1 (5), 2 (3), 3 (1); 1 -> 0 (5), 2 (2); 2 -> 0 (3), 1 (2); 3 -> 0 (1)
    rows = np.array([0, 0, 0, 1, 1, 2, 2, 3])
    partners = np.array([1, 2, 3, 0, 2, 0, 1, 0])
    freq = np.array([5, 3, 1, 5, 2, 3, 2, 1])
    i, j, w = prune_pairs(rows, partners, freq, 4, top_k=1)
    # 0's top-1 is 1, 1's is 0, 2's is 0, 3's is 0: pairs (0,1), (0,2), (0,3)
    assert list(zip(i.tolist(), j.tolist(), w.tolist())) == [(0, 1, 5), (0, 2, 3), (0, 3, 1)]
    i, j, w = prune_pairs(rows, partners, freq, 4, top_k=0, min_count=2)  # every pair co-cited twice or more
    assert list(zip(i.tolist(), j.tolist(), w.tolist())) == [(0, 1, 5), (0, 2, 3), (1, 2, 2)]


def test_louvain_finds_the_two_triangles() -> None:
    clusters = louvain_clusters(two_triangles(), seed=0)
    # equal sizes: numbered by smallest id, so {a, b, c} is 0
    assert clusters.to_dict() == {"a": 0, "b": 0, "c": 0, "d": 1, "e": 1, "f": 1}


def test_louvain_is_seeded_and_resolution_matters() -> None:
    edges = two_triangles()
    assert louvain_clusters(edges, seed=3).equals(louvain_clusters(edges, seed=3))
    assert louvain_clusters(edges, resolution=0.01, seed=0).nunique() == 1  # low γ: one community
    assert louvain_clusters(edges, resolution=50.0, seed=0).nunique() > 2  # high γ: smaller ones


def test_clusters_are_numbered_by_size() -> None:
    edges = pd.DataFrame(
        [("a", "b", 1), ("p", "q", 3), ("q", "r", 3), ("p", "r", 3)], columns=["source", "target", "count"]
    )
    assert louvain_clusters(edges).to_dict() == {"a": 1, "b": 1, "p": 0, "q": 0, "r": 0}


def test_no_edges_no_clusters() -> None:
    empty = pd.DataFrame({"source": [], "target": [], "count": []})
    assert louvain_clusters(empty).empty


def test_title_terms() -> None:
    assert title_terms("Using Word Alignment for Statistical Machine Translation") == [
        "word",
        "alignment",
        "statistical",
        "machine",
        "translation",
    ]
    assert title_terms("Part-of-speech tagging of BERT-based models") == [
        "part-of-speech",
        "tagging",
        "bert-based",
        "models",
    ]
    assert title_terms(None) == []


def test_ctfidf_by_hand() -> None:
    # tf: class 0 = translation 2, alignment 1; class 1 = parsing 1, translation 1
    # f: translation 3, alignment 1, parsing 1; A = 5 terms / 2 classes = 2.5
    weights = ctfidf({0: ["translation", "translation", "alignment"], 1: ["parsing", "translation"]})
    assert weights[0] == [
        ("alignment", pytest.approx(math.log(1 + 2.5 / 1))),
        ("translation", pytest.approx(2 * math.log(1 + 2.5 / 3))),
    ]
    assert weights[1] == [
        ("parsing", pytest.approx(math.log(3.5))),
        ("translation", pytest.approx(math.log(1 + 2.5 / 3))),
    ]


def test_label_clusters() -> None:
    membership = pd.Series({"a": 0, "b": 0, "c": 1, "d": 1, "e": 1})
    titles = pd.Series(
        {
            "a": "Machine translation with phrases",
            "b": "Phrase-based machine translation",
            "c": "Dependency parsing",
            "d": "Parsing with graphs",
            "e": None,
        }
    )
    labels = label_clusters(membership, titles, popularity=pd.Series({"a": 1, "b": 5, "d": 2}), top_k=2)
    assert [(label.cluster, label.size) for label in labels] == [(0, 2), (1, 3)]
    assert labels[0].terms == ("machine", "translation")
    assert labels[0].papers == ("b", "a")  # most cited first
    assert labels[1].terms[0] == "parsing" and labels[1].papers == ("d", "c", "e")
    assert labels[1].label == ", ".join(labels[1].terms)


def test_labels_json_round_trip(tmp_path: Path) -> None:
    labels = [ClusterLabel(0, 3, ("parsing", "dependency"), ("p1", "p2")), ClusterLabel(1, 2, (), ("p3",))]
    path = write_cluster_labels(tmp_path / "db.clusters.json", labels, settings={"seed": 0})
    assert read_cluster_labels(path) == labels
    assert labels[1].label == "p3"  # no term, no name: the most cited member, never a bare "cluster 1"
    assert read_cluster_labels(tmp_path / "missing.json") == []


def test_bare_clusters_take_their_citers_titles_or_their_members_labels() -> None:
    membership = pd.Series({"a": 0, "b": 0, "ref:goos": 1, "ref:artmann": 1, "ref:x": 2, "ref:y": 2})
    titles = pd.Series({"a": "Machine translation", "b": "Phrase translation"})  # the stubs have none
    labels = label_clusters(membership, titles, popularity=pd.Series({"ref:goos": 3, "ref:x": 2}), top_k=2)
    assert [label.terms == () for label in labels] == [False, True, True]
    citing = {"ref:goos": ["Lateral shift of reflected beams", "Goos-Hanchen shift of beams"], "ref:artmann": []}
    named = {"ref:x": "Xu Y, 1999, Phys Rev 1:2", "ref:y": "Yang Z, 2001, Opt Lett"}
    relabelled = label_bare_clusters(labels, membership, citing_titles=citing, member_labels=named, top_k=2)
    assert relabelled[0] == labels[0]
    assert relabelled[1].terms == ("beams", "shift") and relabelled[1].terms_from == "citing titles"
    assert relabelled[2].terms == () and relabelled[2].label == "Xu Y, 1999, Phys Rev 1:2; Yang Z, 2001, Opt Lett"
    assert not any(label.label.startswith("cluster ") for label in relabelled)


def test_compute_labels_a_cluster_of_stubs_from_its_citers(tmp_path: Path) -> None:
    from gnn.cocitation.compute import CocitationSettings, compute_cocitation
    from graph import GraphBatch, StoreConfig, ingest, open_store

    # two separate co-citation groups: titled papers a, b; title-less stubs s1, s2 (cited by titled papers)
    papers = pd.DataFrame(
        {
            "id": ["a", "b", "s1", "s2", "x1", "x2", "y1", "y2"],
            "title": [
                "Phrase translation",
                "Word translation",
                None,
                None,
                "Lateral shift of reflected beams",
                "Shift of beams at interfaces",
                "Translation tables",
                "Translation models",
            ],
            "reference": [
                None,
                None,
                "GOOS F, 1947, ANN PHYS-BERLIN, V1, P333",
                "ARTMANN K, 1948, ANN PHYS",
                *[None] * 4,
            ],
            "stub": [False, False, True, True, *[False] * 4],
        }
    )
    cites = pd.DataFrame(
        [("x1", "s1"), ("x1", "s2"), ("x2", "s1"), ("x2", "s2"), ("y1", "a"), ("y1", "b"), ("y2", "a"), ("y2", "b")],
        columns=["source", "target"],
    )
    with open_store(StoreConfig(db_path=tmp_path / "stubs.db")) as store:
        ingest(store, GraphBatch("stubs", nodes={"Paper": papers}, rels={"CITES": cites}))
        report = compute_cocitation(store, CocitationSettings(device="cpu"))
    by_member = {label.papers[0][0]: label for label in report.clusters}
    assert by_member["s"].terms_from == "citing titles" and set(by_member["s"].terms) >= {"shift", "beams"}
    assert by_member["a"].terms_from == "titles" and "translation" in by_member["a"].terms
    saved = read_cluster_labels(report.clusters_path)
    assert [label.label for label in saved] == [label.label for label in report.clusters]
