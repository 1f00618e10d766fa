"""Taxonomy fusion on a tiny inline taxonomy: joint graph, vector and graph fusion, category inference, write-back."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from gnn.taxonomy.categories import CategorySettings, choose_threshold, evaluate, paper_vectors, top_categories
from gnn.taxonomy.compute import TaxonomySettings, compute_taxonomy
from gnn.taxonomy.fusion import FusionSettings, fuse, model_path, vector_fusion
from gnn.taxonomy.fusion_models import APPNPFusion, GATFusion, LinkScorer
from gnn.taxonomy.graph import alias_target, class_text, infer_maps_to, read_taxonomy
from gnn.taxonomy.links import average_precision, roc_auc, split_links
from gnn.text.embeddings import EmbeddingSettings, compute_embeddings
from graph import GraphBatch, GraphStore, ingest

CL = "Covers natural language processing. Roughly includes material in ACM Subject Class I.2.7."
LG = "Papers on all aspects of machine learning research (supervised, unsupervised, reinforcement learning)."
PR = "Theory and applications of probability and stochastic processes."


def taxonomy_batch() -> GraphBatch:
    """Three arXiv categories, six ACM 1998 classes (two trees), one given mapping, one alias.

    cs.CL -> I.2.7 is given; cs.LG names no ACM class (its MAPS_TO is inferred); cs.SY is an alias.
    """
    categories = pd.DataFrame(
        {
            "code": ["cs.CL", "cs.LG", "math.PR", "cs.SY", "eess.SY"],
            "name": [
                "Computation and Language",
                "Machine Learning",
                "Probability",
                "Systems and Control",
                "Systems and Control",
            ],
            "description": [CL, LG, PR, "cs.SY is an alias for eess.SY. Automatic control.", "Automatic control."],
        }
    )
    codes = ["I", "I.2", "I.2.6", "I.2.7", "G", "G.3"]
    names = [
        "Computing Methodologies",
        "Artificial Intelligence",
        "Learning",
        "Natural Language Processing",
        "Mathematics of Computing",
        "Probability and Statistics",
    ]
    classes = pd.DataFrame(
        {
            "id": [f"1998:{c}" for c in codes],
            "code": codes,
            "name": names,
            "scheme": "1998",
            "level": [c.count(".") + 1 for c in codes],
            "description": [
                None,
                None,
                "Concept learning; Induction; Parameter learning",
                "Language parsing; Machine translation",
                None,
                "Stochastic processes",
            ],
        }
    )
    broader = pd.DataFrame(
        {
            "source": ["1998:I.2", "1998:I.2.6", "1998:I.2.7", "1998:G.3"],
            "target": ["1998:I", "1998:I.2", "1998:I.2", "1998:G"],
        }
    )
    maps_to = pd.DataFrame({"source": ["cs.CL"], "target": ["1998:I.2.7"], "score": [1.0], "inferred": [False]})
    papers = pd.DataFrame(
        {
            "id": ["k1", "k2", "k3", "k4", "acl1", "acl2", "stub"],
            "title": [
                "Parsing English sentences with a neural grammar",
                "Martingale limits of random walks",
                "Translating German news into English",
                "Brownian motion and stochastic integrals",
                "A treebank parser for Czech",
                "Gradient descent learns deep networks",
                None,
            ],
        }
    )
    in_category = pd.DataFrame(
        {
            "source": ["k1", "k2", "k3", "k4", "k4"],
            "target": ["cs.CL", "math.PR", "cs.CL", "math.PR", "cs.LG"],
            "score": [1.0, 1.0, 1.0, None, 1.0],
            "inferred": [False, False, None, False, False],
        }
    )
    return GraphBatch(
        "tiny-taxonomy",
        nodes={"ArxivCategory": categories, "AcmClass": classes, "Paper": papers},
        rels={"BROADER": broader, "MAPS_TO": maps_to, "IN_CATEGORY": in_category},
    )


@pytest.fixture
def taxonomy_store(
    empty_store: GraphStore, encoder: object, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> GraphStore:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))  # trained models go here, not to ~/.cache
    ingest(empty_store, taxonomy_batch())
    compute_embeddings(empty_store, encoder, EmbeddingSettings(targets=("papers",)))  # type: ignore[arg-type]
    return empty_store


# pieces -------------------------------------------------------------------------------------------
def test_class_text_drops_acm_and_alias_sentences() -> None:
    assert (
        class_text("Computation and Language", CL, arxiv=True)
        == "Computation and Language. Covers natural language processing."
    )
    assert class_text("Systems and Control", "cs.SY is an alias for eess.SY. Automatic control.", arxiv=True) == (
        "Systems and Control. Automatic control."
    )
    assert class_text("Learning", "Induction; Parameter learning") == "Learning. Induction; Parameter learning"
    assert class_text("Learning", None) == "Learning"
    assert alias_target("cs.SY is an alias for eess.SY. Automatic control.") == "eess.SY"
    assert alias_target(CL) is None


def test_vector_fusion_formula() -> None:
    # nodes: 0 category, 1 class, 2 its parent, 3 its grandparent; 0 MAPS_TO 1; 1 -> 2 -> 3 BROADER
    x = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 3, 4]], dtype=np.float32)
    broader = np.array([[1, 2], [2, 3]])
    maps_to = np.array([[0, 1]])
    own = vector_fusion(x, broader, maps_to, acm_vector="own")
    np.testing.assert_allclose(own[0], np.array([1, 1, 0]) / np.sqrt(2), rtol=1e-6)  # mean of its own and I.2.7's
    np.testing.assert_allclose(own[1:3], x[1:3], rtol=1e-6)  # ACM classes keep their own vectors
    np.testing.assert_allclose(own[3], [0, 0.6, 0.8], rtol=1e-6)  # normalised
    ancestors = vector_fusion(x, broader, maps_to, acm_vector="ancestors")
    expected_1 = np.array([0, 1 + 3, 1 + 4]) / 3  # class 1: itself, its parent and grandparent
    np.testing.assert_allclose(ancestors[1], expected_1 / np.linalg.norm(expected_1), rtol=1e-6)
    expected_0 = (np.array([1, 0, 0]) + expected_1) / 2  # the category takes the class's fused mean (f_a)
    np.testing.assert_allclose(ancestors[0], expected_0 / np.linalg.norm(expected_0), rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ancestors, axis=1), 1.0, rtol=1e-6)


def test_link_metrics_by_hand() -> None:
    assert roc_auc(np.array([0.9, 0.8]), np.array([0.1, 0.85])) == pytest.approx(0.75)
    assert roc_auc(np.array([0.5]), np.array([0.5])) == pytest.approx(0.5)  # a tie counts half
    # ranking: 0.9 (+), 0.85 (-), 0.8 (+), 0.1 (-): AP = (1/1 + 2/3) / 2
    assert average_precision(np.array([0.9, 0.8]), np.array([0.1, 0.85])) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision(np.array([0.5]), np.array([0.5])) == pytest.approx(0.5)  # ties: negatives first


@pytest.mark.parametrize("model_class", [GATFusion, APPNPFusion])
def test_graph_fusion_shapes_determinism_and_start(model_class: type) -> None:
    x = torch.nn.functional.normalize(torch.randn(6, 8, generator=torch.Generator().manual_seed(1)), dim=-1)
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])

    def run(seed: int) -> torch.Tensor:
        torch.manual_seed(seed)
        model = model_class(8, 8, hidden_channels=4, dropout=0.5)
        with torch.no_grad():
            model.gate.fill_(0.7)  # a trained-looking gate, so the GNN branch shows
        model.eval()
        return model(x, edge_index)

    out = run(0)
    assert out.shape == (6, 8)
    torch.testing.assert_close(out.norm(dim=-1), torch.ones(6))
    torch.testing.assert_close(run(0), out)  # same seed, same output
    assert not torch.allclose(run(1), out)  # the seed matters
    fresh = model_class(8, 4, hidden_channels=4)  # other output size: a linear skip
    assert fresh(x, edge_index).shape == (6, 4)
    untrained = model_class(8, 8, hidden_channels=4).eval()
    if model_class is GATFusion:  # the gate starts at 0: an untrained GAT fusion is the text vector
        torch.testing.assert_close(untrained(x, edge_index), x)
    scorer = LinkScorer()
    logits = scorer(out, torch.tensor([[0, 1], [1, 2]]))
    assert logits.shape == (2,)


def test_choose_threshold_and_evaluate() -> None:
    scores = np.array([[0.9, 0.5], [0.8, 0.3]])
    correct = np.array([[True, False], [True, False]])
    # keeping the two 0.8+ predictions gives P = R = 1
    assert choose_threshold(scores, correct, n_relevant=2) == pytest.approx(0.8)
    quality = evaluate(np.array([[0, 1], [2, 0]]), scores, [{0}, {0}], top_k=2, threshold=0.8)
    assert quality.precision_at_1 == pytest.approx(0.5)
    assert quality.hit_at_3 == pytest.approx(1.0)
    assert quality.precision == pytest.approx(0.5) and quality.recall == pytest.approx(0.5)
    indices, top = top_categories(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0], [0.6, 0.8]]), 2)
    assert indices.tolist() == [[1, 2]] and top[0].tolist() == pytest.approx([1.0, 0.6])


def test_paper_vectors_mean_and_weighted() -> None:
    fused = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}
    edges = pd.DataFrame({"source": ["p", "p", "q"], "target": ["a", "b", "a"], "score": [0.3, 0.1, 0.5]})
    ids, plain = paper_vectors(edges, fused, weighted=False)
    assert ids == ["p", "q"]
    np.testing.assert_allclose(plain[0], [2**-0.5, 2**-0.5], rtol=1e-6)
    _, weighted = paper_vectors(edges, fused, weighted=True)
    np.testing.assert_allclose(weighted[0], np.array([0.3, 0.1]) / np.hypot(0.3, 0.1), rtol=1e-6)


# on a store -------------------------------------------------------------------------------------------
def test_inferred_maps_to_is_flagged_and_scored(taxonomy_store: GraphStore, encoder: object) -> None:
    taxonomy = read_taxonomy(taxonomy_store)
    features = encoder.encode(list(taxonomy.texts))  # type: ignore[attr-defined]
    inference = infer_maps_to(taxonomy, features, top_k=2, min_score=-1.0)
    assert inference.categories == ("cs.LG", "cs.SY")  # cs.CL is mapped; math.PR and eess.SY are not cs
    assert inference.edges.groupby("source").size().to_dict() == {"cs.LG": 2, "cs.SY": 2}
    assert inference.edges["inferred"].all()
    assert inference.edges["target"].str.startswith("1998:").all()
    assert "1998:I.2.6" in set(inference.edges["target"])  # "Learning" is the nearest class to Machine Learning


def test_split_holds_out_only_given_edges(taxonomy_store: GraphStore) -> None:
    taxonomy = read_taxonomy(taxonomy_store)
    split = split_links(taxonomy, val_fraction=0.2, test_fraction=0.2, seed=3)
    assert (split.part == 1).sum() == 1 and (split.part == 2).sum() == 1
    linked = {tuple(p) for p in split.pairs.tolist()} | {tuple(p[::-1]) for p in split.pairs.tolist()}
    for name in ("val", "test", "test_hard"):
        assert not {tuple(p) for p in split.negatives[name].tolist()} & linked
    again = split_links(taxonomy, val_fraction=0.2, test_fraction=0.2, seed=3)
    assert (again.part == split.part).all() and (again.negatives["test"] == split.negatives["test"]).all()


def _in_category(store: GraphStore) -> pd.DataFrame:
    edges = store.read_edges("IN_CATEGORY")
    return edges.sort_values(["source", "target"], ignore_index=True)


def test_compute_taxonomy_writes_back_and_is_idempotent(
    taxonomy_store: GraphStore, encoder: object, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    store = taxonomy_store
    before = _in_category(store)
    settings = TaxonomySettings(
        fusion=FusionSettings(
            method="gat", max_epochs=5, patience=2, val_fraction=0.2, test_fraction=0.2, device="cpu"
        ),
        categories=CategorySettings(top_k=2, min_score=0.0, infer_from="fused"),
        maps_to_min_score=0.0,  # one given mapping is too few to calibrate on
    )
    report = compute_taxonomy(store, encoder, settings)  # type: ignore[arg-type]
    assert report.categories == 5 and report.classes == 6
    assert "inferred MAPS_TO" in report.summary()  # said there, so not logged as well (the CLI prints the report)
    assert not [r for r in caplog.records if r.levelno >= logging.INFO and "MAPS_TO" in r.getMessage()]
    assert report.fusion.model_file is not None and Path(report.fusion.model_file).is_file()
    assert Path(report.fusion.model_file).parent == tmp_path / "cache" / "models"

    rows = store.query("acm_classes")  # every class node has `fused`, unit length
    fused = store.query(
        "nodes_by_keys",
        {"keys": [r["id"] for r in rows]},
        {"LABEL": "AcmClass", "KEY": "id", "NODE_COLUMNS": ", n.fused AS fused"},
    )
    assert len(fused) == 6 and all(np.linalg.norm(r["fused"]) == pytest.approx(1.0, abs=1e-5) for r in fused)
    maps = store.read_edges("MAPS_TO")
    assert maps.loc[maps["source"] == "cs.CL", "inferred"].tolist() == [False]
    assert maps.loc[maps["source"] == "cs.LG", "inferred"].all() and (maps["source"] == "cs.LG").any()

    after = _in_category(store)
    given_after = after[~after["inferred"].fillna(False).astype(bool)].reset_index(drop=True)
    pd.testing.assert_frame_equal(given_after, before)  # given edges untouched, nulls included
    inferred = after[after["inferred"].fillna(False).astype(bool)]
    assert set(inferred["source"]) == {"acl1", "acl2"}  # the stub has no embedding; k1..k4 have given categories
    assert (inferred.groupby("source").size() <= 2).all() and (inferred["score"] >= 0.0).all()
    assert not set(inferred["target"]) & {"cs.SY"}  # aliases are never inferred

    status = {r["id"]: r["has_taxonomy"] for r in store.query("paper_vector_status")}
    assert status == {"k1": True, "k2": True, "k3": True, "k4": True, "acl1": True, "acl2": True, "stub": False}

    # a second run replaces the inferred edges (none added) and loads the model instead of training
    again = compute_taxonomy(store, encoder, settings)  # type: ignore[arg-type]
    assert again.fusion.from_cache
    pd.testing.assert_frame_equal(_in_category(store), after)
    # a stricter threshold replaces inferred edges: fewer or equal, and still none on the given papers
    strict = TaxonomySettings(
        fusion=settings.fusion,
        categories=CategorySettings(top_k=1, min_score=0.0, infer_from="fused"),
        maps_to_min_score=0.0,
    )
    compute_taxonomy(store, encoder, strict)  # type: ignore[arg-type]
    final = _in_category(store)
    assert (final[final["inferred"].fillna(False).astype(bool)].groupby("source").size() == 1).all()
    pd.testing.assert_frame_equal(final[~final["inferred"].fillna(False).astype(bool)].reset_index(drop=True), before)


def test_threshold_above_every_score_removes_edges_but_keeps_nearest_vectors(
    taxonomy_store: GraphStore, encoder: object
) -> None:
    """With a threshold no score reaches, the inferred IN_CATEGORY edges go, and acl1/acl2 get their
    taxonomy vector from their 3 nearest categories instead (the same vector as at threshold 0, where
    those 3 were their inferred edges); the stub, without embedding, gets none."""
    store = taxonomy_store

    def taxonomy_vectors() -> dict[str, np.ndarray | None]:
        rows = [r for frame in store.iter_nodes("Paper", 100) for r in frame.to_dict("records")]
        return {r["id"]: None if r["taxonomy"] is None else np.asarray(r["taxonomy"]) for r in rows}

    compute_taxonomy(store, encoder, TaxonomySettings(categories=CategorySettings(min_score=0.0)))  # type: ignore[arg-type]
    before = taxonomy_vectors()
    report = compute_taxonomy(store, encoder, TaxonomySettings(categories=CategorySettings(min_score=1.5)))  # type: ignore[arg-type]
    assert report.inferred_edges == 0 and report.cleared == 0 and report.papers_uncategorised == 2
    assert not set(_in_category(store)["source"]) & {"acl1", "acl2"}
    after = taxonomy_vectors()
    assert after["stub"] is None and after["k1"] is not None
    for paper in ("acl1", "acl2"):
        np.testing.assert_allclose(after[paper], before[paper], atol=1e-5)


def test_model_path_depends_on_settings_and_data(tmp_path: Path) -> None:
    a = model_path(FusionSettings(method="gat"), "abc", tmp_path)
    assert a.parent == tmp_path / "models" and a.name.startswith("taxonomy-gat-")
    assert model_path(FusionSettings(method="gat", seed=1), "abc", tmp_path) != a
    assert model_path(FusionSettings(method="gat"), "abd", tmp_path) != a
    assert model_path(FusionSettings(method="gat", device="cpu"), "abc", tmp_path) == a  # the device does not matter


def test_without_embeddings_the_error_says_what_to_run(empty_store: GraphStore, encoder: object) -> None:
    batch = taxonomy_batch()
    ingest(empty_store, batch)
    from graph.errors import DataError

    with pytest.raises(DataError, match="citegraph compute embeddings"):
        compute_taxonomy(empty_store, encoder, TaxonomySettings())  # type: ignore[arg-type]


def test_vector_fusion_through_fuse_reports_metrics(taxonomy_store: GraphStore, encoder: object) -> None:
    taxonomy = read_taxonomy(taxonomy_store)
    features = encoder.encode(list(taxonomy.texts))  # type: ignore[attr-defined]
    result = fuse(taxonomy, features, FusionSettings(method="vector", val_fraction=0.2, test_fraction=0.2))
    assert result.fused.shape == (len(taxonomy), features.shape[1])
    assert set(result.metrics["test"]) >= {"auc", "ap"} and result.model_file is None
