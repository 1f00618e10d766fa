"""Hierarchy reconstruction of the ACM CCS 1998 tree: Poincaré vs Euclidean embeddings, dims 2, 5, 10.

Trains on the ACM 1998 tree read from ``$CITEGRAPH_DATA/taxonomy/acm_ccs1998.txt`` (368 classes
under a virtual scheme node and root, as ``compute hyperbolic`` builds them) and ranks the
closure as in Nickel & Kiela (2017, §4.1; :func:`gnn.hyperbolic.hierarchy.reconstruction`): mean rank and
MAP, symmetric relation (ancestors and descendants relevant) and ancestors only. Variants:

* ``nk``: the paper's setup, uniform init ±1e-3, 10 sampled negatives, 1000 epochs (+20 burn-in);
* ``nk-all``: the same with every unrelated node as a negative (exact softmax);
* ``tree``: Sarkar's combinatorial tree embedding alone (no training; hyperbolic only);
* ``tree+nk``: the tree embedding refined by the exact-softmax loss, 300 epochs (the compute step's default).

Euclidean runs use the same loss, optimiser and epochs; ``tree+nk`` starts them from the tree
layout read in the tangent space at the origin. With ``--store PATH`` it also runs
``compute_hyperbolic`` on a store (train the joint taxonomy in each dim, write, read back) and
ranks the ACM 1998 tree from the coordinates read back.

Usage::

    nice -n 10 .venv/bin/python benchmarks/hyperbolic_quality.py [--dims 2 5 10] [--variants ...] [--store var/hyper.db]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gnn.hyperbolic.embedding import PoincareEmbeddingSettings, pairwise_distances, train_embedding
from gnn.hyperbolic.hierarchy import Hierarchy, reconstruction, taxonomy_hierarchy
from loaders.taxonomy import load_acm1998

VARIANTS = {
    "nk": PoincareEmbeddingSettings(init="random", negatives=10, epochs=1000),
    "nk-all": PoincareEmbeddingSettings(init="random", negatives=None, epochs=1000),
    "tree": PoincareEmbeddingSettings(init="tree", epochs=0, burn_in=0),
    "tree+nk": PoincareEmbeddingSettings(init="tree", negatives=None, epochs=300),
}


def acm1998_tree(data_dir: Path) -> tuple[Hierarchy, np.ndarray, Hierarchy]:
    """The training hierarchy (with its virtual root and scheme node), the kept indices, and the ranked tree."""
    batch = load_acm1998(data_dir / "taxonomy" / "acm_ccs1998.txt")
    joint = taxonomy_hierarchy(
        batch.nodes["AcmClass"][["id", "scheme"]],
        [],
        batch.rels["BROADER"][["source", "target"]],
        pd.DataFrame({"source": [], "target": []}),
    )
    training, _ = joint.subset(np.array([name != "scheme:arxiv" for name in joint.names]))
    ranked, kept = training.subset(~training.virtual)
    return training, kept, ranked


def run(
    variant: str, geometry: str, dim: int, training: Hierarchy, kept: np.ndarray, ranked: Hierarchy, seed: int
) -> dict[str, object]:
    settings = replace(VARIANTS[variant], geometry=geometry, dim=dim, seed=seed, device="cpu")
    trained = train_embedding(training, settings, progress=False)
    distances = pairwise_distances(trained.points, geometry)[np.ix_(kept, kept)]
    sym, anc = reconstruction(distances, ranked), reconstruction(distances, ranked, ancestors_only=True)
    return {
        "variant": variant,
        "geometry": geometry,
        "dim": dim,
        "mean_rank": round(sym.mean_rank, 3),
        "map": round(sym.map, 4),
        "mean_rank_ancestors": round(anc.mean_rank, 3),
        "map_ancestors": round(anc.map, 4),
        "epochs": settings.burn_in + settings.epochs,
        "seconds": round(trained.seconds, 1),
    }


def store_runs(path: Path, dims: list[int], seed: int) -> list[dict[str, object]]:
    from gnn.hyperbolic.compute import HyperbolicSettings, compute_hyperbolic
    from graph import StoreConfig, open_store

    rows = []
    with open_store(StoreConfig.from_env(db_path=path)) as store:
        for dim in dims:
            report = compute_hyperbolic(store, HyperbolicSettings(dim=dim, seed=seed, device="cpu"))
            assert report.acm1998 is not None
            rows.append(
                {
                    "variant": "store",
                    "geometry": "poincare",
                    "dim": dim,
                    "mean_rank": round(report.acm1998.mean_rank, 3),
                    "map": round(report.acm1998.map, 4),
                    "joint_map": round(report.joint.map, 4),
                    "seconds": round(report.seconds["train"], 1),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("CITEGRAPH_DATA", "../shared/data"))
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 5, 10])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--geometries", nargs="+", default=["poincare", "euclidean"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: a shared machine)")
    parser.add_argument("--store", help="also run compute_hyperbolic on this store and rank its written coordinates")
    parser.add_argument("--out", help="write the rows as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"# {datetime.date.today()} {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, threads {args.threads}"
    )
    training, kept, ranked = acm1998_tree(Path(args.data))
    rows = []
    for dim in args.dims:
        for variant in args.variants:
            for geometry in args.geometries:
                if variant == "tree" and geometry == "euclidean":
                    continue
                started = time.perf_counter()
                rows.append(run(variant, geometry, dim, training, kept, ranked, args.seed))
                rows[-1]["wall"] = round(time.perf_counter() - started, 1)
                print(json.dumps(rows[-1]), flush=True)
    if args.store:
        rows += store_runs(Path(args.store), args.dims, args.seed)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
