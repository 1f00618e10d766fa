"""h_θ on tiny hand-made trees: path vectors, reconstruction, seeding, save/load, the radius bound."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gnn.hyperbolic import poincare
from gnn.hyperbolic.hierarchy import Hierarchy, reconstruction
from gnn.hyperbolic.map import (
    HyperbolicMap,
    MapSettings,
    load_class_points,
    load_hyperbolic_map,
    path_vectors,
    save_hyperbolic_map,
    train_hyperbolic_map,
)
from graph.errors import ConfigError

FAST = MapSettings(hidden=64, epochs=300, batch_size=64, lr=1e-2, seed=0, device="cpu")


def tree(parents: dict[str, str | None]) -> Hierarchy:
    names = tuple(parents)
    index = {name: i for i, name in enumerate(names)}
    edges = [(index[child], index[parent]) for child, parent in parents.items() if parent is not None]
    return Hierarchy(names, np.asarray(edges, dtype=np.int64).reshape(-1, 2), np.zeros(len(names), dtype=bool))


def acm_like() -> tuple[Hierarchy, np.ndarray]:
    """Two top classes, each with two subclasses and a "Miscellaneous" child; every subclass has two leaves and
    its own "Miscellaneous". Every "Miscellaneous" class has the same vector, as in the ACM 1998 scheme."""
    parents: dict[str, str | None] = {}
    for top in ("A", "B"):
        parents[top] = None
        parents[f"{top}.m"] = top
        for sub in ("1", "2"):
            parents[f"{top}.{sub}"] = top
            parents[f"{top}.{sub}.m"] = f"{top}.{sub}"
            for leaf in ("1", "2"):
                parents[f"{top}.{sub}.{leaf}"] = f"{top}.{sub}"
    h = tree(parents)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(h), 24))
    misc = rng.normal(size=24)
    for i, name in enumerate(h.names):
        if name.endswith(".m"):
            vectors[i] = misc
    return h, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_path_vectors_are_the_normalised_mean_over_ancestors() -> None:
    h = tree({"a": None, "b": "a", "c": "b"})
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    p = path_vectors(h, x)
    np.testing.assert_allclose(p[0], [1.0, 0.0])  # a root: its own vector
    np.testing.assert_allclose(p[1], [math.sqrt(0.5), math.sqrt(0.5)])  # (a + b) / 2, normalised
    np.testing.assert_allclose(p[2], np.array([1.0, 2.0]) / math.sqrt(5))  # (a + b + c) / 3, normalised
    with pytest.raises(ConfigError, match="one per node"):
        path_vectors(h, x[:2])


def test_map_reconstructs_a_tiny_tree_and_path_vectors_separate_shared_labels() -> None:
    h, vectors = acm_like()  # 20 nodes
    trained = train_hyperbolic_map(vectors, h, 4, FAST, progress=False)
    rec = reconstruction(trained.distances(), h)
    assert rec.map > 0.9, rec
    assert trained.losses[-1] < trained.losses[0]
    own = train_hyperbolic_map(vectors, h, 4, MapSettings(**{**FAST.__dict__, "inputs": "fused"}), progress=False)
    misc = [h.index[name] for name in h.names if name.endswith(".m")]
    # from the classes' own vectors every "Miscellaneous" lands on one point, and the tree cannot be recovered
    np.testing.assert_allclose(own.points[misc], np.repeat(own.points[misc[:1]], len(misc), axis=0), atol=1e-12)
    assert reconstruction(own.distances(), h).map < rec.map - 0.05


def test_training_is_seeded() -> None:
    h, vectors = acm_like()
    settings = MapSettings(**{**FAST.__dict__, "epochs": 30})
    first = train_hyperbolic_map(vectors, h, 3, settings, progress=False)
    again = train_hyperbolic_map(vectors, h, 3, settings, progress=False)
    np.testing.assert_array_equal(first.points, again.points)
    other = train_hyperbolic_map(vectors, h, 3, MapSettings(**{**settings.__dict__, "seed": 1}), progress=False)
    assert not np.allclose(first.points, other.points)


def test_save_and_load_give_identical_points(tmp_path: Path) -> None:
    h, vectors = acm_like()
    trained = train_hyperbolic_map(vectors, h, 3, MapSettings(**{**FAST.__dict__, "epochs": 20}), progress=False)
    path = save_hyperbolic_map(
        trained.model, tmp_path, config={"dim": 3}, data_hash="x", classes=list(h.names), points=trained.points
    )
    assert path.is_file() and (tmp_path / "latest").read_text().strip() == path.name
    loaded = load_hyperbolic_map(tmp_path)
    assert repr(loaded) == repr(trained.model)
    np.testing.assert_array_equal(loaded.to_ball(trained.inputs), trained.points)
    np.testing.assert_array_equal(loaded.to_ball(vectors[0]), trained.model.to_ball(vectors[0]))  # one vector
    points = load_class_points(tmp_path, path.stem)
    assert list(points.index) == list(h.names)
    np.testing.assert_array_equal(np.stack(points.to_list()), trained.points)
    with pytest.raises(ConfigError, match="24-d"):
        loaded.to_ball(np.zeros(5))


def test_a_save_killed_mid_write_leaves_the_saved_map_loadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saving the same h_θ again (same config and data: the same file name) and dying half-way through
    the write leaves the map saved before, whole, where ``latest`` points."""
    h, vectors = acm_like()
    trained = train_hyperbolic_map(vectors, h, 3, MapSettings(**{**FAST.__dict__, "epochs": 20}), progress=False)
    saved = {"config": {"dim": 3}, "data_hash": "x", "classes": list(h.names), "points": trained.points}
    path = save_hyperbolic_map(trained.model, tmp_path, **saved)
    real = torch.save

    def killed_mid_write(obj: object, f: Any) -> None:
        scratch = io.BytesIO()
        real(obj, scratch)
        half = scratch.getvalue()[: len(scratch.getvalue()) // 2]
        if isinstance(f, (str, Path)):
            Path(f).write_bytes(half)
        else:
            f.write(half)
        raise KeyboardInterrupt  # the process dies here

    monkeypatch.setattr(torch, "save", killed_mid_write)
    with pytest.raises(KeyboardInterrupt):
        save_hyperbolic_map(trained.model, tmp_path, **saved)
    monkeypatch.setattr(torch, "save", real)
    assert (tmp_path / "latest").read_text().strip() == path.name
    np.testing.assert_array_equal(load_hyperbolic_map(tmp_path).to_ball(trained.inputs), trained.points)


def test_points_stay_inside_the_radius_bound_with_finite_gradients() -> None:
    torch.manual_seed(0)
    model = HyperbolicMap(8, 3, hidden=16, max_radius=6.0)
    bound = math.tanh(3.0)  # ‖exp_0(v)‖ = tanh ‖v‖, ‖v‖ < R/2
    huge = torch.randn(5, 8, dtype=torch.float64) * 1e6  # far past where exp_0 of the raw output would round to 1
    zero_output = HyperbolicMap(8, 3, hidden=16)
    with torch.no_grad():  # the MLP's output is exactly 0: the norm's clamp keeps the gradient finite
        zero_output.mlp[2].weight.zero_()
        zero_output.mlp[2].bias.zero_()
    for net, inputs in ((model, huge), (model, torch.zeros(2, 8, dtype=torch.float64)), (zero_output, huge)):
        net.zero_grad()
        points = net(inputs)
        norms = points.norm(dim=-1)
        assert (norms <= bound + 1e-15).all() and (norms < 1).all()
        assert (poincare.dist0(points) <= 6.0 + 1e-9).all()
        (poincare.dist0(points).sum() + points.sum()).backward()
        for parameter in net.parameters():
            assert parameter.grad is not None and torch.isfinite(parameter.grad).all()


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="inputs"):
        MapSettings(inputs="text")
    with pytest.raises(ConfigError, match="temperature"):
        MapSettings(temperature=0)
    with pytest.raises(ConfigError, match="own_rate"):
        MapSettings(own_rate=1.0)
