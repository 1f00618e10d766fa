"""The saved class layout and h_θ of ``compute hyperbolic``: loaded on the same inputs, trained again on
other inputs or on a file that cannot be trusted; the rule that stops the class layout's training."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from taxonomy_graph import taxonomy_batch, write_fused

from gnn.hyperbolic import compute, embedding
from gnn.hyperbolic.compute import HyperbolicSettings, compute_hyperbolic
from gnn.hyperbolic.embedding import (
    PoincareEmbeddingSettings,
    cached_embedding,
    converged,
    load_embedding,
    save_embedding,
    train_embedding,
)
from gnn.hyperbolic.hierarchy import Hierarchy
from gnn.hyperbolic.map import MapSettings
from graph import GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError
from graph.schema import VectorSizes

SETTINGS = PoincareEmbeddingSettings(dim=2, epochs=40, burn_in=5, seed=0, device="cpu", tolerance=0.0)
SIZES = VectorSizes(embedding=8, taxonomy=8, poincare=4)
FAST = HyperbolicSettings(
    dim=2, epochs=30, burn_in=5, seed=0, device="cpu", map_settings=MapSettings(hidden=32, epochs=100, lr=1e-2)
)


def tree(names: tuple[str, ...] = ("root", "a", "b", "a1", "a2", "b1")) -> Hierarchy:
    """root > a > {a1, a2}; root > b > b1 (root virtual)."""
    edges = np.array([[1, 0], [2, 0], [3, 1], [4, 1], [5, 2]], dtype=np.int64)
    return Hierarchy(names, edges, np.array([True, False, False, False, False, False]))


def refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("trained although a saved one matches")


# the saved class layout ------------------------------------------------------------------------


def test_a_second_call_loads_the_trained_points_without_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = cached_embedding(tree(), SETTINGS, tmp_path, progress=False)
    assert not first.from_cache and first.path is not None and first.path.is_file()
    assert first.embedding.epochs == 40
    monkeypatch.setattr(embedding, "train_embedding", refuse)
    second = cached_embedding(tree(), SETTINGS, tmp_path)
    assert second.from_cache and second.path == first.path
    assert torch.equal(second.embedding.points, first.embedding.points)
    assert second.embedding.losses == first.embedding.losses and second.embedding.epochs == 40
    # the device does not change what is trained, so it is not part of the key
    assert cached_embedding(tree(), replace(SETTINGS, device=None), tmp_path).from_cache


CHANGES: dict[str, Callable[[Hierarchy, PoincareEmbeddingSettings], tuple[Hierarchy, PoincareEmbeddingSettings]]] = {
    "epochs": lambda h, s: (h, replace(s, epochs=41)),
    "learning rate": lambda h, s: (h, replace(s, lr=0.04)),
    "tolerance": lambda h, s: (h, replace(s, tolerance=1e-3)),
    "seed": lambda h, s: (h, replace(s, seed=1)),
    "dim": lambda h, s: (h, replace(s, dim=3)),
    "a renamed node": lambda h, s: (tree(("root", "a", "b", "a1", "a2", "b2")), s),
    "a moved edge": lambda h, s: (Hierarchy(h.names, np.vstack([h.edges[:4], [[5, 1]]]), h.virtual), s),  # b1 under a
    "a virtual flag": lambda h, s: (Hierarchy(h.names, h.edges, np.zeros(len(h), dtype=bool)), s),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_setting_or_hierarchy_trains_again(tmp_path: Path, change: str) -> None:
    first = cached_embedding(tree(), SETTINGS, tmp_path, progress=False)
    hierarchy, settings = CHANGES[change](tree(), SETTINGS)
    again = cached_embedding(hierarchy, settings, tmp_path, progress=False)
    assert not again.from_cache and again.path != first.path
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.path.name, again.path.name])  # type: ignore[union-attr]


def test_a_torn_or_tampered_file_is_trained_again_not_trusted(tmp_path: Path) -> None:
    first = cached_embedding(tree(), SETTINGS, tmp_path, progress=False)
    assert first.path is not None
    whole = first.path.read_bytes()
    first.path.write_bytes(whole[: len(whole) // 2])  # what a copy cut short leaves
    assert load_embedding(tree(), SETTINGS, tmp_path) is None
    again = cached_embedding(tree(), SETTINGS, tmp_path, progress=False)
    assert not again.from_cache and torch.equal(again.embedding.points, first.embedding.points)
    assert cached_embedding(tree(), SETTINGS, tmp_path).from_cache  # the retrained file replaced the torn one

    record = torch.load(first.path, weights_only=True)
    record["points"][1, 0] += 0.01  # loads, but is not what was saved
    torch.save(record, first.path)
    assert load_embedding(tree(), SETTINGS, tmp_path) is None
    first.path.write_bytes(b"not a torch file")
    assert load_embedding(tree(), SETTINGS, tmp_path) is None


def test_a_save_killed_mid_write_leaves_no_file_that_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trained = train_embedding(tree(), SETTINGS, progress=False)

    def killed(src: object, dst: object) -> None:
        raise KeyboardInterrupt  # the process dies between writing the temporary file and renaming it

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        save_embedding(trained, tree(), tmp_path)
    monkeypatch.undo()
    assert [p.suffix for p in tmp_path.iterdir()] == [".tmp"]  # only the temporary file, never loaded
    assert load_embedding(tree(), SETTINGS, tmp_path) is None
    assert not cached_embedding(tree(), SETTINGS, tmp_path, progress=False).from_cache


# the stopping rule -----------------------------------------------------------------------------


def first_stop(losses: list[float], window: int, tolerance: float) -> int | None:
    return next((t for t in range(1, len(losses) + 1) if converged(losses[:t], window, tolerance)), None)


def test_the_rule_stops_on_a_converged_loss_and_not_on_a_falling_one() -> None:
    flat = [1.0 + 1e-5 * (-1) ** t for t in range(60)]  # wobbles, no longer falls
    assert first_stop(flat, 10, 1e-3) == 20  # as soon as there are two windows to compare
    assert not converged(flat[:19], 10, 1e-3)  # fewer than two windows: never
    assert first_stop(flat, 10, 0.0) is None  # tolerance 0: run to the cap
    falling = [math.exp(-0.01 * t) for t in range(300)]  # each window ~10% below the one before
    assert first_stop(falling, 10, 1e-3) is None
    plateau = falling[:100] + [falling[99]] * 100  # falls for 100 epochs, then flat
    stop = first_stop(plateau, 10, 1e-3)
    assert stop is not None and 100 < stop <= 120


def test_training_stops_early_on_a_converged_loss_as_the_prefix_of_the_capped_run() -> None:
    capped = train_embedding(tree(), replace(SETTINGS, epochs=200), progress=False)
    assert capped.epochs == 200 and len(capped.losses) == 205
    # a tree's loss keeps falling towards 0 by a few percent per window: a coarse tolerance stops it
    expected = first_stop(list(capped.losses[5:]), 10, 0.1)
    assert expected is not None and 20 <= expected < 200
    stopped = train_embedding(tree(), replace(SETTINGS, epochs=200, tolerance=0.1), progress=False)
    assert stopped.epochs == expected and len(stopped.losses) == 5 + expected
    assert stopped.losses == capped.losses[: len(stopped.losses)]
    prefix = train_embedding(tree(), replace(SETTINGS, epochs=expected), progress=False)
    assert torch.equal(stopped.points, prefix.points)


def test_checkpoints_are_copies_of_the_layout_as_it_trains() -> None:
    seen: dict[int, torch.Tensor] = {}
    trained = train_embedding(
        tree(),
        replace(SETTINGS, epochs=10),
        progress=False,
        checkpoint=lambda epoch, points: seen.update({epoch: points}),
    )
    assert sorted(seen) == list(range(11))  # after the burn-in (0), then after every refinement epoch
    assert torch.equal(seen[10], trained.points) and not torch.equal(seen[0], seen[10])


def test_rule_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="tolerance"):
        PoincareEmbeddingSettings(tolerance=-1e-3)
    with pytest.raises(ConfigError, match="window"):
        PoincareEmbeddingSettings(window=0)


# compute hyperbolic ----------------------------------------------------------------------------


@pytest.fixture
def taxonomy_store(tmp_path: Path) -> Iterator[GraphStore]:
    store = open_store(StoreConfig(db_path=tmp_path / "taxonomy.db", sizes=SIZES))
    ingest(store, taxonomy_batch())
    write_fused(store, SIZES.taxonomy)
    yield store
    store.close()


def stored_points(store: GraphStore) -> dict[str, list[float]]:
    rows = [*store.query("acm_class_points"), *store.query("arxiv_category_points")]
    return {str(r.get("id") or r.get("code")): list(r["poincare"]) for r in rows} | {
        f"paper:{r['id']}": list(r["poincare"]) for r in store.query("papers_with_poincare")
    }


def test_a_second_run_loads_the_class_layout_and_h_theta(
    taxonomy_store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = {"map_dir": tmp_path / "map", "classes_dir": tmp_path / "classes"}
    first = compute_hyperbolic(taxonomy_store, FAST, **folders)
    assert not first.classes_from_cache and first.classes_path is not None and first.classes_path.is_file()
    assert first.map_fit is not None and not first.map_fit.from_cache
    written = stored_points(taxonomy_store)

    assert first.papers_written == 2 and first.papers_unchanged == 0

    monkeypatch.setattr(embedding, "train_embedding", refuse)
    monkeypatch.setattr(compute, "train_hyperbolic_map", refuse)
    writes: list[str] = []
    write = taxonomy_store.write_node_properties
    monkeypatch.setattr(
        taxonomy_store, "write_node_properties", lambda label, *args: writes.append(label) or write(label, *args)
    )
    second = compute_hyperbolic(taxonomy_store, FAST, **folders)
    assert second.papers_written == second.papers_unchanged == 2 and "Paper" not in writes  # nothing to rewrite
    assert second.classes_from_cache and second.classes_path == first.classes_path
    assert second.map_fit is not None and second.map_fit.from_cache and second.map_fit.path == first.map_fit.path
    assert "class layout loaded from cache" in second.summary() and "h_θ" in second.summary()
    assert f"loaded from cache {first.map_fit.path}" in second.summary()
    assert stored_points(taxonomy_store) == written  # the same coordinates, to the bit
    assert second.joint == first.joint and second.acm1998 == first.acm1998
    assert second.map_fit.hierarchy == first.map_fit.hierarchy and second.map_fit.final_loss == first.map_fit.final_loss

    monkeypatch.undo()
    first.map_fit.path.write_bytes(first.map_fit.path.read_bytes()[:100])  # a torn h_θ file is trained again
    third = compute_hyperbolic(taxonomy_store, FAST, **folders)
    assert third.classes_from_cache and third.map_fit is not None and not third.map_fit.from_cache
    changed = compute_hyperbolic(taxonomy_store, replace(FAST, burn_in=6), **folders)
    assert not changed.classes_from_cache and changed.papers_unchanged == 0  # a new layout moves every paper


def test_no_map_writes_the_coordinates_and_no_map(taxonomy_store: GraphStore, tmp_path: Path) -> None:
    report = compute_hyperbolic(
        taxonomy_store, replace(FAST, fit_map=False), map_dir=tmp_path / "map", classes_dir=tmp_path / "classes"
    )
    assert report.map_fit is None and "--no-map" in report.map_note and "h_theta" not in report.seconds
    assert (report.acm_written, report.arxiv_written, report.papers_written) == (7, 3, 2)
    assert len(stored_points(taxonomy_store)) == 12
    assert not (tmp_path / "map").exists()
    later = compute_hyperbolic(taxonomy_store, FAST, map_dir=tmp_path / "map", classes_dir=tmp_path / "classes")
    assert later.classes_from_cache and later.map_fit is not None and (tmp_path / "map" / "latest").is_file()
