"""h_θ quality on a store's taxonomy: does the map's own geometry keep the hierarchy, and where do unseen classes land?

Reads the classes with ``fused`` (``compute taxonomy``) and their hierarchy from a store, read-only,
as ``compute hyperbolic`` does (:func:`gnn.hyperbolic.compute.fused_class_hierarchy`), and trains h_θ
(:mod:`gnn.hyperbolic.map`) with the default settings:

* **fit**, per dim and input (path vectors, the default, and the classes' own fused vectors): the
  ACM 1998 tree and the whole class hierarchy reconstructed from h_θ's points of the classes it
  was trained on (mean rank, MAP; :func:`gnn.hyperbolic.hierarchy.reconstruction`), and the training time;
* **held out** (``--holdout F``): a seeded fraction F of the ACM 1998 leaves (classes without any
  child in the joint hierarchy, so no arXiv category was fused from them) is removed from the
  hierarchy before training; each held-out leaf is then mapped from its *own* fused vector (a new
  class or text knows no position in the tree) and its true parent ranked among the trained
  classes by h_θ distance: among all classes and among the ACM 1998 ones (mean, median,
  hits@1/@10, MRR), with the MAP of its ACM 1998 ancestors. Beside it: the same leaves mapped from
  their path vectors (their true ancestors given: not a generalisation figure) and a text-only
  baseline, the parent's rank by cosine between fused vectors. One run per ``--holdout-seeds``
  seed (each its own leaves and training); the figures pool the leaves of all runs.

Usage::

    nice -n 10 .venv/bin/python benchmarks/hyperbolic_map_quality.py --store /tmp/taxonomy.db \\
        [--dims 16 2 5 10] [--holdout 0.1] [--holdout-seeds 0 1 2] [--seed 0] [--threads 1] [--out var/hyp/map.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gnn.hyperbolic import poincare
from gnn.hyperbolic.compute import ACM1998, acm1998_hierarchy, fused_class_hierarchy, read_taxonomy
from gnn.hyperbolic.hierarchy import Hierarchy, reconstruction, taxonomy_hierarchy
from gnn.hyperbolic.map import MapSettings, TrainedMap, path_vectors, train_hyperbolic_map
from graph import StoreConfig, open_store


def rank_figures(ranks: np.ndarray) -> dict[str, float]:
    return {
        "mean_rank": round(float(ranks.mean()), 2),
        "median_rank": float(np.median(ranks)),
        "hits1": round(float((ranks == 1).mean()), 3),
        "hits10": round(float((ranks <= 10).mean()), 3),
        "mrr": round(float((1 / ranks).mean()), 3),
    }


def acm1998_figures(trained: TrainedMap, classes: Hierarchy, tree: Hierarchy) -> dict[str, float]:
    at = np.array([classes.index[name] for name in tree.names])
    rec = reconstruction(trained.distances()[np.ix_(at, at)], tree)
    return {"map": round(rec.map, 4), "mean_rank": round(rec.mean_rank, 3)}


def fit(classes: Hierarchy, fused: np.ndarray, tree: Hierarchy, dim: int, settings: MapSettings) -> dict[str, object]:
    trained = train_hyperbolic_map(fused, classes, dim, settings, progress=False)
    whole = reconstruction(trained.distances(), classes)
    return {
        "dim": dim,
        "inputs": settings.inputs,
        "acm1998": acm1998_figures(trained, classes, tree),
        "hierarchy": {"map": round(whole.map, 4), "mean_rank": round(whole.mean_rank, 3), "nodes": whole.nodes},
        "max_radius_reached": round(float(poincare.dist0(torch.from_numpy(trained.points)).max()), 3),
        "seconds": round(trained.seconds, 1),
    }


def held_out(
    classes: Hierarchy, fused: np.ndarray, tree_names: set[str], fraction: float, dim: int, settings: MapSettings
) -> dict[str, Any]:
    """One held-out run (module docstring) with ``settings.seed``: per-leaf ranks and precisions of each method."""
    rng = np.random.default_rng(settings.seed)
    leaves = [
        i
        for i, name in enumerate(classes.names)
        if name in tree_names and classes.parents[i] and not classes.children[i]
    ]
    held = np.sort(rng.choice(leaves, size=round(fraction * len(leaves)), replace=False))
    keep = np.ones(len(classes), dtype=bool)
    keep[held] = False
    train, kept = classes.subset(keep)
    trained = train_hyperbolic_map(fused[kept], train, dim, settings, progress=False)
    in_tree = np.array([name in tree_names for name in train.names])
    parent = np.array([train.index[classes.names[classes.parents[i][0]]] for i in held])  # ACM 1998: one parent
    ancestors = [[train.index[classes.names[a]] for a in classes.closure[classes.closure[:, 0] == i, 1]] for i in held]

    def placement(distances: np.ndarray) -> dict[str, list[float]]:
        """distances [held, trained classes], smaller = nearer."""
        d_parent = distances[np.arange(len(held)), parent][:, None]
        precisions = []
        for k, anc in enumerate(ancestors):
            d_anc = np.sort(distances[k, anc])
            others = np.sort(distances[k, in_tree & ~np.isin(np.arange(len(train)), anc)])
            hits = np.arange(1, len(anc) + 1)
            precisions.append(float(np.mean(hits / (hits + np.searchsorted(others, d_anc, side="right")))))
        return {
            "all": (1 + (distances < d_parent).sum(axis=1)).tolist(),
            "acm1998": (1 + (distances[:, in_tree] < d_parent).sum(axis=1)).tolist(),
            "ap": precisions,
        }

    def h_distances(vectors: np.ndarray) -> np.ndarray:
        ball = torch.from_numpy(trained.model.to_ball(vectors))
        return poincare.pairwise_dist(ball, torch.from_numpy(trained.points)).numpy()

    unit = fused / np.linalg.norm(fused, axis=1, keepdims=True)
    return {
        "seed": settings.seed,
        "held_out_leaves": len(held),
        "of_leaves": len(leaves),
        "trained_classes": len(train),
        "candidates_acm1998": int(in_tree.sum()),
        "training_acm1998_fit": acm1998_figures(trained, train, train.subset(in_tree)[0]),
        "seconds": round(trained.seconds, 1),
        "h_theta_own_vector": placement(h_distances(fused[held])),
        # with the true ancestors in the input: the position given away, not a generalisation figure
        "h_theta_path_vector": placement(h_distances(path_vectors(classes, fused)[held])),
        "text_cosine": placement(-(unit[held] @ unit[kept].T)),
    }


def pooled(runs: list[dict[str, Any]]) -> dict[str, object]:
    """Figures over the held-out leaves of every run together."""
    out: dict[str, object] = {
        "leaves": sum(int(run["held_out_leaves"]) for run in runs),
        "random_expected_rank_acm1998": round((int(runs[0]["candidates_acm1998"]) + 1) / 2, 1),
    }
    for method in ("h_theta_own_vector", "text_cosine", "h_theta_path_vector"):
        per = [run[method] for run in runs]
        out[method] = {
            "parent_among_all": rank_figures(np.concatenate([p["all"] for p in per])),
            "parent_among_acm1998": rank_figures(np.concatenate([p["acm1998"] for p in per])),
            "ancestors_map_acm1998": round(float(np.mean(np.concatenate([p["ap"] for p in per]))), 4),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="store with fused class vectors (opened read-only)")
    parser.add_argument("--dims", type=int, nargs="+", default=[16, 2, 5, 10], help="first: the held-out run's dim")
    parser.add_argument("--holdout", type=float, default=0.1, help="fraction of ACM 1998 leaves held out (0: none)")
    parser.add_argument("--holdout-seeds", type=int, nargs="+", default=[0, 1, 2], help="one held-out run per seed")
    parser.add_argument("--skip-fused", action="store_true", help="skip the own-fused-vector input row")
    parser.add_argument("--epochs", type=int, default=MapSettings.epochs, help="h_θ steps (default: the default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    store = open_store(StoreConfig(db_path=args.store, read_only=True), ensure_schema=False)
    try:
        tables = read_taxonomy(store)
    finally:
        store.close()
    joint = taxonomy_hierarchy(
        tables.acm[["id", "scheme"]], tables.arxiv["code"].tolist(), tables.broader, tables.maps_to
    )
    classes, fused = fused_class_hierarchy(tables, joint)
    tree = acm1998_hierarchy(tables)
    settings = MapSettings(epochs=args.epochs, seed=args.seed, device="cpu")
    result: dict[str, Any] = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, {args.threads} thread(s)",
        "store": str(args.store),
        "classes": len(classes),
        "closure_pairs": len(classes.closure),
        "acm1998_classes": len(tree),
        "settings": asdict(settings),
        "fit": [],
    }
    runs = [(dim, "path") for dim in args.dims] + ([] if args.skip_fused else [(args.dims[0], "fused")])
    for dim, inputs in runs:
        row = fit(classes, fused, tree, dim, replace(settings, inputs=inputs))
        print(json.dumps(row), flush=True)
        result["fit"].append(row)
    if args.holdout > 0:
        tree_names = set(tables.acm.loc[tables.acm["scheme"] == ACM1998, "id"])
        runs = []
        for seed in args.holdout_seeds:
            run = held_out(classes, fused, tree_names, args.holdout, args.dims[0], replace(settings, seed=seed))
            print(json.dumps({k: v for k, v in run.items() if not isinstance(v, dict) or "all" not in v}), flush=True)
            runs.append(run)
        result["held_out"] = {"pooled": pooled(runs), "runs": runs}
        print(json.dumps(result["held_out"]["pooled"], indent=1), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
