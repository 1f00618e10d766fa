"""Taxonomy fusion quality: link prediction (vector vs GAT vs APPNP), category inference, MAPS_TO inference.

Reads a store built by ``citegraph ingest all`` (read-only; nothing is written) and measures, in one run:

* **inferred MAPS_TO** for the cs categories whose description names no ACM class (the edges the
  compute step writes), and, as a check of the method, how well text similarity alone recovers the
  *given* mappings of the other cs categories (share of categories whose top-1 / top-3 ACM 1998
  classes by cosine contain a given class, and recall of the given classes within the top 3);
* **link prediction** on held-out taxonomy edges (:func:`gnn.taxonomy.links.split_links`: 10% validation,
  10% test of the given BROADER + MAPS_TO edges, seeded) for the raw text vectors, vector fusion
  (``own`` and ``ancestors``), GAT and APPNP: AUC and AP against uniform negatives and against
  hard negatives (the true end swapped for a class of the same scheme), per seed, and training time;
* **category inference** on the unarXive papers with given categories, split in half by the seed:
  τ is chosen on the tuning half, precision@1 / @3, hit@3 and thresholded precision / recall are
  reported on the held-out half, for each fusion's class vectors and for the raw class texts.

Paper embeddings come from the project's encoder on the same text as ``compute embeddings``
(:func:`gnn.text.embeddings.paper_texts`), served from the encoder cache where present, so the store
needs no computed properties. Each graph fusion trains from scratch (models go to a temporary
folder, never loaded from ``$CITEGRAPH_CACHE``), so its training time is measured.

Usage::

    CITEGRAPH_DB=var/taxonomy.db .venv/bin/python benchmarks/taxonomy_quality.py --seeds 0 1 2 --out-json var/taxonomy_quality.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from gnn.taxonomy.categories import CategorySettings, calibrate, candidate_categories, canonical_codes
from gnn.taxonomy.fusion import FusionSettings, fuse
from gnn.taxonomy.graph import (
    ACM_1998,
    apply_maps_to,
    encode_classes,
    infer_maps_to,
    read_taxonomy,
)
from gnn.text.embeddings import paper_texts
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph import StoreConfig, open_store

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("vector (own)", {"method": "vector", "acm_vector": "own"}),
    ("vector (ancestors)", {"method": "vector", "acm_vector": "ancestors"}),
    ("gat", {"method": "gat"}),
    ("appnp", {"method": "appnp"}),
]


def maps_to_recovery(taxonomy: Any, features: np.ndarray) -> dict[str, float]:
    """How often text similarity finds a given ACM class of a mapped cs category (top-1 / top-3 hit, recall@3)."""
    unit = features / np.linalg.norm(features, axis=1, keepdims=True)
    classes = np.array([i for i, s in enumerate(taxonomy.schemes) if s == ACM_1998])
    given = taxonomy.given_maps_to()
    by_category: dict[int, set[int]] = {}
    for c, a in given.maps_to.tolist():
        if taxonomy.keys[c].startswith("cs."):
            by_category.setdefault(c, set()).add(a)
    hit1 = hit3 = recall3 = 0.0
    for c, gold in by_category.items():
        top = classes[np.argsort(-(unit[classes] @ unit[c]), kind="stable")[:3]].tolist()
        hit1 += top[0] in gold
        hit3 += bool(set(top) & gold)
        recall3 += len(set(top) & gold) / len(gold)
    n = len(by_category)
    return {"categories": n, "hit_at_1": hit1 / n, "hit_at_3": hit3 / n, "recall_at_3": recall3 / n}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", default=os.environ.get("CITEGRAPH_DB", "var/citegraph.db"), help="store after ingest all"
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds of the split, negatives and training")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--device", help="torch device (default: cuda when present, else cpu)")
    parser.add_argument("--out-json", help="write every figure here as JSON")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    started = dt.datetime.now(dt.UTC)
    store = open_store(StoreConfig(db_path=Path(args.db), read_only=True))
    taxonomy = read_taxonomy(store)
    encoder = TextEncoder(EncoderSettings.from_env(device=args.device))
    t0 = time.perf_counter()
    features = encode_classes(taxonomy, encoder)
    class_seconds = time.perf_counter() - t0

    inference = infer_maps_to(taxonomy, features)
    recovery = maps_to_recovery(taxonomy, features)
    joint = apply_maps_to(taxonomy, inference.edges)

    # papers with given categories: the text `compute embeddings` encodes, through the same encoder
    edges = store.read_edges("IN_CATEGORY")
    given = edges[~edges["inferred"].fillna(False).astype(bool)]
    texts = paper_texts(store).set_index("id")["text"]
    store.close()
    codes_of = given.groupby("source")["target"].agg(list)
    known_ids = sorted(p for p in codes_of.index if texts.get(p, "") != "")
    known = pd.DataFrame({"id": known_ids, "codes": [codes_of[p] for p in known_ids]})
    known_vectors = encoder.encode([texts[p] for p in known_ids])
    canonical = canonical_codes(joint)

    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as models:
        for seed in args.seeds:
            for name, options in VARIANTS:
                settings = FusionSettings(**options, seed=seed, device=args.device)
                result = fuse(joint, features, settings, cache_root=Path(models), out_channels=features.shape[1])
                candidates = candidate_categories(joint, result.fused, features, given["target"].astype(str).tolist())
                calibration = calibrate(
                    candidates, known, known_vectors, canonical, CategorySettings(infer_from="fused", seed=seed)
                )
                run = {
                    "seed": seed,
                    "variant": name,
                    "test": result.metrics["test"],
                    "val": result.metrics["val"],
                    "text_test": result.baseline["test"],
                    "train_seconds": result.seconds,
                    "epochs": result.epochs,
                    "best_epoch": result.best_epoch,
                    "held_out_edges": result.held_out,
                    "inference_fused": calibration.held_out["fused"].as_dict(),
                    "inference_text": calibration.held_out["text"].as_dict(),
                    "threshold_fused": calibration.thresholds["fused"],
                    "threshold_text": calibration.thresholds["text"],
                }
                runs.append(run)
                print(
                    f"seed {seed} {name:<20} test AUC {run['test']['auc']:.4f} AP {run['test']['ap']:.4f} "
                    f"hard AUC {run['test'].get('auc_hard', float('nan')):.4f}  "
                    f"P@1 {run['inference_fused']['precision_at_1']:.3f} P@3 {run['inference_fused']['precision_at_3']:.3f}  "
                    f"{result.seconds:.1f}s {result.epochs} epochs (best {result.best_epoch})",
                    flush=True,
                )

    frame = pd.DataFrame(
        [
            {
                "variant": r["variant"],
                "seed": r["seed"],
                "auc": r["test"]["auc"],
                "ap": r["test"]["ap"],
                "auc_hard": r["test"].get("auc_hard"),
                "ap_hard": r["test"].get("ap_hard"),
                "p_at_1": r["inference_fused"]["precision_at_1"],
                "p_at_3": r["inference_fused"]["precision_at_3"],
                "hit_at_3": r["inference_fused"]["hit_at_3"],
                "precision": r["inference_fused"]["precision"],
                "recall": r["inference_fused"]["recall"],
                "train_s": r["train_seconds"],
                "epochs": r["epochs"],
            }
            for r in runs
        ]
    )
    text_rows = pd.DataFrame(
        [
            {
                "variant": "text only",
                "seed": r["seed"],
                "auc": r["text_test"]["auc"],
                "ap": r["text_test"]["ap"],
                "auc_hard": r["text_test"].get("auc_hard"),
                "ap_hard": r["text_test"].get("ap_hard"),
                "p_at_1": r["inference_text"]["precision_at_1"],
                "p_at_3": r["inference_text"]["precision_at_3"],
                "hit_at_3": r["inference_text"]["hit_at_3"],
                "precision": r["inference_text"]["precision"],
                "recall": r["inference_text"]["recall"],
                "train_s": 0.0,
                "epochs": 0,
            }
            for r in runs
            if r["variant"] == VARIANTS[0][0]
        ]
    )
    table = pd.concat([text_rows, frame]).groupby("variant", sort=False).agg(["mean", "std"])
    print()
    print(table.round(4).to_string())
    load = os.getloadavg()
    out = {
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "date": started.isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "device": args.device or ("cuda" if torch.cuda.is_available() else "cpu"),
            "load_average_at_end": load,
        },
        "nodes": len(joint),
        "broader": len(joint.broader),
        "maps_to_given": int((~joint.maps_inferred).sum()),
        "class_encoding_seconds": class_seconds,
        "maps_to_inferred": inference.edges.to_dict("records"),
        "maps_to_threshold": inference.threshold,
        "maps_to_given_score_quartiles": np.quantile(inference.given_scores, [0.25, 0.5, 0.75]).tolist(),
        "maps_to_recovery": recovery,
        "known_papers": len(known),
        "runs": runs,
        "summary": {
            variant: {f"{metric}_{stat}": value for (metric, stat), value in row.items()}
            for variant, row in table.iterrows()
        },
    }
    print(f"\nMAPS_TO recovery on given mappings: {recovery}")
    print(f"inferred MAPS_TO (threshold {inference.threshold:.3f}):")
    print(inference.edges.to_string(index=False))
    print(f"known papers: {len(known)}; load average at end {load}")
    if args.out_json:
        Path(args.out_json).write_text(json.dumps(out, indent=2, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
