"""compute_hyperbolic on a tiny taxonomy store: coordinates, paper midpoints, h_θ, idempotence."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from taxonomy_graph import taxonomy_batch

from gnn.hyperbolic import poincare
from gnn.hyperbolic.compute import HyperbolicSettings, compute_hyperbolic, paper_points
from gnn.hyperbolic.map import MapSettings, load_class_points, load_hyperbolic_map
from graph import GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError
from graph.schema import VectorSizes

SIZES = VectorSizes(embedding=8, taxonomy=8, poincare=4)
FAST = HyperbolicSettings(
    dim=2, epochs=30, burn_in=5, seed=0, device="cpu", map_settings=MapSettings(hidden=32, epochs=200, lr=1e-2)
)


@pytest.fixture
def taxonomy_store(tmp_path: Path) -> GraphStore:
    store = open_store(StoreConfig(db_path=tmp_path / "taxonomy.db", sizes=SIZES))
    ingest(store, taxonomy_batch())
    yield store
    store.close()


def stored_points(store: GraphStore) -> dict[str, np.ndarray]:
    acm = {r["id"]: np.asarray(r["poincare"]) for r in store.query("acm_class_points")}
    arxiv = {r["code"]: np.asarray(r["poincare"]) for r in store.query("arxiv_category_points")}
    papers = {r["id"]: np.asarray(r["poincare"]) for r in store.query("papers_with_poincare")}
    return {**acm, **arxiv, **{f"paper:{k}": v for k, v in papers.items()}}


def test_writes_every_class_and_categorised_paper_and_is_idempotent(
    taxonomy_store: GraphStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    report = compute_hyperbolic(taxonomy_store, FAST, map_dir=tmp_path / "models")
    assert report.summary().splitlines()[0] not in caplog.text  # the caller prints the report, once
    assert (report.acm_written, report.arxiv_written, report.papers_written) == (7, 3, 2)
    assert report.map_fit is None and "compute taxonomy" in report.map_note  # no fused vectors yet
    assert report.acm1998 is not None and report.acm1998.map > 0.9
    first = stored_points(taxonomy_store)
    assert set(first) == {
        *(f"1998:{c}" for c in ["I", "I.2", "I.2.6", "I.2.7", "I.5", "H", "H.3"]),
        "cs.CL",
        "cs.LG",
        "math.AG",
        "paper:p1",
        "paper:p2",
    }
    for point in first.values():
        assert point.shape == (4,) and np.linalg.norm(point) < 1
        assert np.all(point[2:] == 0)  # trained in 2-d, written zero-padded into the store's 4-d
    np.testing.assert_allclose(first["paper:p1"], first["cs.CL"], atol=1e-9)  # one category: its point
    # two inferred categories: nearer the one with the higher score
    p2 = torch.from_numpy(first["paper:p2"])
    assert poincare.dist(p2, torch.from_numpy(first["cs.CL"])) < poincare.dist(p2, torch.from_numpy(first["cs.LG"]))

    compute_hyperbolic(taxonomy_store, FAST, map_dir=tmp_path / "models")
    again = stored_points(taxonomy_store)
    assert again.keys() == first.keys()
    for key, value in first.items():
        np.testing.assert_array_equal(again[key], value)


def test_fused_vectors_train_a_map_that_loads(taxonomy_store: GraphStore, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)  # fused vectors made here, for the test only (fusion is another step)
    acm_ids = [r["id"] for r in taxonomy_store.query("acm_class_points")]
    fused = lambda n: [v.astype(np.float32) for v in rng.normal(size=(n, SIZES.taxonomy))]  # noqa: E731
    taxonomy_store.write_node_properties("AcmClass", "id", pd.DataFrame({"id": acm_ids, "fused": fused(len(acm_ids))}))
    taxonomy_store.write_node_properties(
        "ArxivCategory", "code", pd.DataFrame({"code": ["cs.CL", "cs.LG", "math.AG"], "fused": fused(3)})
    )
    report = compute_hyperbolic(taxonomy_store, FAST, map_dir=tmp_path / "models")
    fit = report.map_fit
    assert fit is not None and fit.classes == 10 and fit.path.is_file() and fit.inputs == "path"
    # h_θ's own points keep the hierarchy of the 10 classes; virtual nodes have no vector and are left out, so
    # math.AG (under the virtual arxiv:math only) has no related class and is not ranked
    assert fit.hierarchy.nodes == 9 and fit.hierarchy.map > 0.9
    assert fit.acm1998 is not None and fit.acm1998.map > 0.9
    assert "ACM 1998 tree from h_θ's points" in report.summary()
    model = load_hyperbolic_map(tmp_path / "models")
    assert model.out_dim == 2  # the dimension trained in, not the store's padded size
    out = model.to_ball(rng.normal(size=(5, SIZES.taxonomy)))
    assert out.shape == (5, 2) and (np.linalg.norm(out, axis=1) < 1).all()
    points = load_class_points(tmp_path / "models")
    assert set(points.index) == {*acm_ids, "cs.CL", "cs.LG", "math.AG"}
    with pytest.raises(ConfigError, match="8-d"):
        model.to_ball(np.zeros(3))


def test_papers_without_categories_are_placed_by_their_text(taxonomy_store: GraphStore, tmp_path: Path) -> None:
    """p3 has no category but an embedding: it sits at the cosine-weighted midpoint of its two nearest
    categories by fused vector (cs.CL 0.8, cs.LG 0.6; math.AG is orthogonal to it); p1 keeps its category's
    point; without an embedding or with place_top_k 0 a paper stays unplaced."""
    unit = np.eye(SIZES.taxonomy, dtype=np.float32)
    taxonomy_store.write_node_properties(
        "ArxivCategory",
        "code",
        pd.DataFrame({"code": ["cs.CL", "cs.LG", "math.AG"], "fused": [unit[0], unit[1], unit[2]]}),
    )
    text = (0.8 * unit[0] + 0.6 * unit[1]).astype(np.float32)
    taxonomy_store.write_node_properties(
        "Paper", "id", pd.DataFrame({"id": ["p1", "p3"], "embedding": [unit[2], text]})
    )
    report = compute_hyperbolic(taxonomy_store, replace(FAST, place_top_k=2), map_dir=tmp_path / "models")
    assert (report.papers_written, report.papers_placed_by_text) == (3, 1)
    assert "1 of them placed by their text" in report.summary()
    points = stored_points(taxonomy_store)
    expected = poincare.weighted_midpoint(
        torch.from_numpy(np.stack([points["cs.CL"], points["cs.LG"]]))[None],
        torch.tensor([[0.8, 0.6]], dtype=torch.float64),
    )[0].numpy()
    np.testing.assert_allclose(points["paper:p3"], expected, atol=1e-6)
    np.testing.assert_allclose(points["paper:p1"], points["cs.CL"], atol=1e-9)  # its category, not its text

    off = compute_hyperbolic(taxonomy_store, replace(FAST, place_top_k=0), map_dir=tmp_path / "models")
    assert (
        off.papers_placed_by_text == 0 and off.papers_cleared == 1 and "paper:p3" not in stored_points(taxonomy_store)
    )
    with pytest.raises(ConfigError, match="place_top_k"):
        HyperbolicSettings(place_top_k=-1)


def test_paper_points_weights_and_missing_categories() -> None:
    a, b = np.array([0.5, 0.0]), np.array([0.0, 0.5])
    points = pd.Series([a, b], index=["cs.CL", "cs.LG"])
    edges = pd.DataFrame(
        {
            "source": ["p1", "p1", "p2", "p3"],
            "target": ["cs.CL", "cs.LG", "cs.LG", "cs.XX"],
            "score": [0.5, 0.5, None, 0.9],
            "inferred": [True, True, False, True],
        }
    )
    frame = paper_points(edges, points).set_index("id")
    assert list(frame.index) == ["p1", "p2"]  # p3's only category has no point
    mid = torch.from_numpy(frame.loc["p1", "poincare"])
    torch.testing.assert_close(poincare.dist(mid, torch.from_numpy(a)), poincare.dist(mid, torch.from_numpy(b)))
    np.testing.assert_allclose(frame.loc["p2", "poincare"], b, atol=1e-12)


def test_dim_larger_than_the_store_is_refused(taxonomy_store: GraphStore) -> None:
    with pytest.raises(ConfigError, match="CITEGRAPH_POINCARE_DIM"):
        compute_hyperbolic(taxonomy_store, HyperbolicSettings(dim=8, device="cpu"))
