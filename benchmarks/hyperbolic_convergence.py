"""How many epochs the class embedding and h_θ of ``compute hyperbolic`` need: quality at checkpoints of one run.

Reads the joint taxonomy of a store (a copy: nothing is written) as ``compute hyperbolic`` does and trains,
once each, on the CPU:

* the class embedding (:func:`gnn.hyperbolic.embedding.train_embedding`) for the full ``--epochs`` after the
  burn-in, with the stopping rule off: the capped run is the baseline. At each ``--checkpoints`` epoch it
  records the mean loss, the reconstruction (mean rank, MAP) of the ACM 1998 tree and of the joint hierarchy,
  and the seconds since training began. Full batch and a seeded order make a run stopped early the exact
  prefix of this one, so every stopping rule of ``--rules`` (window W, tolerance; :func:`converged`) is
  evaluated on the same trace: the epoch it stops at, its MAPs there and the seconds it took;
* h_θ (:func:`gnn.hyperbolic.map.train_hyperbolic_map`) for ``--map-epochs`` steps, with the ACM 1998 MAP of
  its points every ``--map-every`` steps and the step a window rule on its per-step loss would stop at
  (``--map-rules``). Its learning rate is cosine-annealed over all the steps, so a step-k point of this run is
  what stopping early would give, not what a k-step schedule would.

Writes a ``docs/results`` record (``--out``) with the tables and the raw traces.

Usage::

    cp var/regression/store.db /tmp/hyp/store.db
    python benchmarks/hyperbolic_convergence.py --store /tmp/hyp/store.db --out docs/results/hyperbolic_convergence.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_record import commit, run_record, write_json

from gnn.hyperbolic.compute import (
    ACM1998,
    HyperbolicSettings,
    TaxonomyTables,
    acm1998_reconstruction,
    fused_class_hierarchy,
    read_taxonomy,
)
from gnn.hyperbolic.embedding import converged, pairwise_distances, train_embedding
from gnn.hyperbolic.hierarchy import Hierarchy, Reconstruction, reconstruction, taxonomy_hierarchy
from gnn.hyperbolic.map import HyperbolicMap, path_vectors, train_hyperbolic_map
from graph import StoreConfig, open_store

# candidate rules WINDOW:TOLERANCE, coarse to fine
RULES = ("5:3e-2", "5:2e-2", "5:1e-2", "10:2e-2", "10:1e-2", "10:5e-3", "10:3e-3", "10:1e-3", "20:1e-3")


def parse_rule(text: str) -> tuple[int, float]:
    window, tolerance = text.split(":")
    return int(window), float(tolerance)


def stop_epoch(losses: list[float], window: int, tolerance: float) -> int | None:
    """The first epoch after which :func:`converged` holds on ``losses[:epoch]``; None: never within the trace."""
    for epoch in range(1, len(losses) + 1):
        if converged(losses[:epoch], window, tolerance):
            return epoch
    return None


def class_embedding(
    tables: TaxonomyTables, hierarchy: Hierarchy, settings: HyperbolicSettings, dim: int, args: argparse.Namespace
) -> dict[str, Any]:
    """Train once to the cap; checkpoints and the stopping rules read off the trace."""
    points: dict[int, torch.Tensor] = {}
    clock: dict[int, float] = {}
    started = time.perf_counter()

    def keep(epoch: int, layout: torch.Tensor) -> None:
        clock[epoch] = time.perf_counter() - started
        points[epoch] = layout

    embedding = replace(settings.embedding(dim), tolerance=0.0, device="cpu")
    trained = train_embedding(hierarchy, embedding, checkpoint=keep)
    refinement = list(trained.losses[embedding.burn_in :])

    def ranked(epoch: int) -> dict[str, Any]:
        layout = points[epoch]
        acm = _acm(tables, hierarchy, layout)
        joint = reconstruction(pairwise_distances(layout), hierarchy)
        return {
            "epoch": epoch,
            "loss": round(refinement[epoch - 1], 5) if epoch else None,
            "acm1998_map": round(acm.map, 4),
            "acm1998_mean_rank": round(acm.mean_rank, 3),
            "joint_map": round(joint.map, 4),
            "joint_mean_rank": round(joint.mean_rank, 2),
            "seconds": round(clock[epoch], 1),
        }

    checkpoints = [ranked(epoch) for epoch in args.checkpoints if epoch in points]
    rules = []
    for window, tolerance in map(parse_rule, args.rules):
        stop = stop_epoch(refinement, window, tolerance)
        row = ranked(stop if stop is not None else len(refinement))
        rules.append({"window": window, "tolerance": tolerance, "stopped": stop is not None, **row})
        print(f"rule W={window} tol={tolerance:g}: {row}", flush=True)
    return {"checkpoints": checkpoints, "rules": rules, "losses": [round(x, 6) for x in trained.losses]}


def _acm(tables: TaxonomyTables, hierarchy: Hierarchy, layout: torch.Tensor) -> Reconstruction:
    series = pd.Series(list(layout.numpy()), index=list(hierarchy.names))
    result = acm1998_reconstruction(tables, series)
    if result is None:
        raise SystemExit("the store has no ACM 1998 classes; ingest the taxonomy first")
    return result


def hyperbolic_map(
    tables: TaxonomyTables, hierarchy: Hierarchy, settings: HyperbolicSettings, dim: int, args: argparse.Namespace
) -> dict[str, Any]:
    """Train h_θ once; the ACM 1998 MAP of its points every ``--map-every`` steps."""
    classes, fused = fused_class_hierarchy(tables, hierarchy)
    if len(classes) == 0:
        raise SystemExit("no class has `fused`; run `citegraph compute taxonomy` on the store first")
    map_settings = replace(settings.map_settings, epochs=args.map_epochs, seed=settings.seed, device="cpu")
    inputs = path_vectors(classes, fused) if map_settings.inputs == "path" else fused
    names = list(classes.names)
    scores: dict[int, tuple[float, float, float]] = {}
    started = time.perf_counter()

    spent = [0.0]  # seconds spent ranking, taken off the training clock

    def rank(step: int, model: HyperbolicMap) -> None:
        if step % args.map_every and step != args.map_epochs:
            return
        paused = time.perf_counter()
        acm = acm1998_reconstruction(tables, pd.Series(list(model.to_ball(inputs)), index=names))
        assert acm is not None
        scores[step] = (acm.map, acm.mean_rank, paused - started - spent[0])
        spent[0] += time.perf_counter() - paused

    train_hyperbolic_map(fused, classes, dim, map_settings, checkpoint=rank)
    checkpoints = [
        {
            "step": step,
            "acm1998_map": round(m, 4),
            "acm1998_mean_rank": round(r, 3),
            "seconds": round(s, 1),
        }
        for step, (m, r, s) in sorted(scores.items())
    ]
    return {"checkpoints": checkpoints, "classes": len(classes)}


def record_tables(
    setup: dict[str, Any], emb: dict[str, Any], hmap: dict[str, Any] | None, chosen: tuple[int, float]
) -> list:
    """The record's tables, from the raw results of a run (``chosen``: the rule marked as served)."""
    dim, nodes = setup["dim"], setup["nodes"]
    cap = emb["checkpoints"][-1]
    rows = []
    for row in emb["checkpoints"]:
        system = f"{row['epoch']} epochs" + (" (the cap)" if row is cap else "")
        rows += _rows(system, row)
    for rule in emb["rules"]:
        where = f"stops at {rule['epoch']}" if rule["stopped"] else f"runs to the cap ({rule['epoch']})"
        rows += _rows(f"rule W={rule['window']}, tol={rule['tolerance']:g}: {where}", rule)
    name = f"rule W={chosen[0]}, tol={chosen[1]:g}"
    served = next((r["system"] for r in rows if r["system"].startswith(name + ":")), None)
    out = [
        {
            "title": f"Class embedding ({nodes} nodes, dim {dim}): reconstruction by refinement epoch after "
            f"{setup['burn_in']} burn-in epochs, and where each stopping rule stops",
            "row_header": "epochs / rule",
            "baselines": [f"{cap['epoch']} epochs (the cap)"],
            "served": served,
            "rows": rows,
        }
    ]
    if hmap is not None:
        last = hmap["checkpoints"][-1]
        map_rows = []
        for row in hmap["checkpoints"]:
            system = f"step {row['step']}" + (" (the default)" if row is last else "")
            map_rows += [
                {"system": system, "metric": "ACM 1998 MAP", "value": row["acm1998_map"]},
                {"system": system, "metric": "ACM 1998 mean rank", "value": row["acm1998_mean_rank"]},
                {"system": system, "metric": "seconds", "value": row["seconds"]},
            ]
        out.append(
            {
                "title": f"h_θ ({hmap['classes']} classes, dim {dim}): ACM 1998 tree from its points by step of one "
                f"{setup['map_epochs']}-step run (learning rate cosine-annealed over all of them)",
                "row_header": "step",
                "baselines": [],
                "served": f"step {last['step']} (the default)",
                "rows": map_rows,
            }
        )
    return out


NOTES = [
    "The loss is the mean over the related pairs of one refinement epoch; MAP and mean rank as in "
    "Nickel & Kiela (2017, §4.1), symmetric relation. Seconds: since training began, the burn-in included.",
    "Full batch and a seeded order: a run stopped early is the exact prefix of the capped run, so every "
    "rule is read off the one trace.",
]


def _rows(system: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"system": system, "metric": "loss", "value": "–" if row["loss"] is None else row["loss"]},
        {"system": system, "metric": "ACM 1998 MAP", "value": row["acm1998_map"]},
        {"system": system, "metric": "ACM 1998 mean rank", "value": row["acm1998_mean_rank"]},
        {"system": system, "metric": "joint MAP", "value": row["joint_map"]},
        {"system": system, "metric": "joint mean rank", "value": row["joint_mean_rank"]},
        {"system": system, "metric": "seconds", "value": row["seconds"]},
    ]


def main() -> None:
    defaults = HyperbolicSettings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="a store with the taxonomy ingested (and `fused`, for h_θ)")
    parser.add_argument("--dim", type=int, help="dimension (default: the store's poincare size)")
    parser.add_argument("--epochs", type=int, default=300, help="refinement epochs of the capped run")
    parser.add_argument("--burn-in", type=int, default=defaults.burn_in)
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[0, 25, 50, 100, 150, 200, 300])
    parser.add_argument(
        "--rules",
        nargs="+",
        default=list(RULES),
        help="stopping rules WINDOW:TOLERANCE to read off the trace",
    )
    parser.add_argument(
        "--chosen",
        default=f"{defaults.window}:{defaults.tolerance:g}",
        help="the rule the step uses (marked served)",
    )
    parser.add_argument("--map-epochs", type=int, default=defaults.map_settings.epochs, help="h_θ steps; 0: skip h_θ")
    parser.add_argument("--map-every", type=int, default=250, help="rank h_θ's points every N steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--out", help="write the docs/results record here")
    parser.add_argument(
        "--rerender",
        help="a record this script wrote: rewrite its tables from its raw results with --chosen, training nothing",
    )
    args = parser.parse_args()
    if args.rerender:
        report = json.loads(Path(args.rerender).read_text(encoding="utf-8"))
        report["tables"] = record_tables(
            report["setup"], report["class_embedding"], report["h_theta"], parse_rule(args.chosen)
        )
        write_json(args.out or args.rerender, report)
        return
    if args.threads:
        torch.set_num_threads(args.threads)
    settings = HyperbolicSettings(
        dim=args.dim, epochs=args.epochs, burn_in=args.burn_in, seed=args.seed, device="cpu", tolerance=0.0
    )
    with open_store(StoreConfig.from_env(db_path=Path(args.store), read_only=True)) as store:
        tables = read_taxonomy(store)
        dim = args.dim or store.schema.sizes.poincare
    if (tables.acm["scheme"] == ACM1998).sum() == 0:
        raise SystemExit(f"{args.store} has no ACM 1998 classes; run `citegraph ingest taxonomy` on it")
    hierarchy = taxonomy_hierarchy(
        tables.acm[["id", "scheme"]], tables.arxiv["code"].tolist(), tables.broader, tables.maps_to
    )
    print(f"# {len(hierarchy)} nodes, {len(hierarchy.closure)} closure pairs, dim {dim}", flush=True)
    emb = class_embedding(tables, hierarchy, settings, dim, args)
    for row in emb["checkpoints"]:
        print(row, flush=True)
    hmap = hyperbolic_map(tables, hierarchy, settings, dim, args) if args.map_epochs else None
    if hmap is not None:
        for row in hmap["checkpoints"]:
            print(row, flush=True)
    setup = {"dim": dim, "nodes": len(hierarchy), "burn_in": args.burn_in, "map_epochs": args.map_epochs}
    report = {
        "capability": "hyperbolic",
        "kind": "speed",
        "title": "`compute hyperbolic`: epochs the class embedding and h_θ need (quality at checkpoints of one run)",
        **run_record("benchmarks/hyperbolic_convergence.py", args),
        "commit": commit(),
        "rank": 4,
        "notes": NOTES,
        "tables": record_tables(setup, emb, hmap, parse_rule(args.chosen)),
        "setup": setup,
        "class_embedding": emb,
        "h_theta": hmap,
    }
    if args.out:
        write_json(args.out, report)


if __name__ == "__main__":
    main()
