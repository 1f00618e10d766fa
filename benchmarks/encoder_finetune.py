"""Fine-tuning the text encoder on citation contexts (``citegraph train encoder``): frozen vs fine-tuned.

For each seed and objective, the encoder is fine-tuned on the time split's training contexts
(:mod:`gnn.recommend.finetune`, the settings below) and its dense channel compared with the frozen
encoder's on the validation and test folds (:func:`gnn.recommend.encoder_eval.compare_dense`): R@10, MRR
and R@300 over the cited papers (all targets of the evaluated contexts plus a seeded sample of the
other cited papers, ``--universe``), on all contexts and on MP-BERT4CR's subsets (one citation vs
several; rarely vs often co-cited targets), each fine-tuned model paired with the frozen one by a
bootstrap over contexts. Training throughput ((context, target) pairs per second, forward and backward)
is measured in the same run.

Usage (what docs/results/encoder_finetune.json ran; a GPU run drops --train-layers and raises --steps)::

    nice -n 10 python benchmarks/encoder_finetune.py --db var/citegraph.db --seeds 0 --objectives source_target \\
        --steps 40 --train-layers 2 --limit 300 --universe 2000 --record docs/results/encoder_finetune.json
    python benchmarks/encoder_finetune.py --seeds 0 1 2 --objectives single_positive triplet target source source_target

The store must have a retrieval index (hard negatives come from its dense channel) and the frozen
encoder's vectors of the papers in the embedding cache (``make build`` leaves both).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from run_record import commit, run_record, write_json

from gnn.recommend import encoder_eval
from gnn.recommend.citances import default_query_source
from gnn.recommend.examples import TrainSettings
from gnn.recommend.finetune import (
    EncoderTrainer,
    EncoderTrainingData,
    EncoderTrainingSettings,
    frozen_neighbours,
    training_data,
)
from gnn.rerank.model import OBJECTIVES
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.text.encoder import EncoderSettings, TextEncoder, default_model_path
from graph import StoreConfig, open_store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="var/citegraph.db")
    parser.add_argument("--index-dir", help="default: <db>.index")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=["source_target"])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-queries", type=int, default=8)
    parser.add_argument("--train-layers", type=int, default=2, help="0: every layer")
    parser.add_argument("--query-max-length", type=int, default=64)
    parser.add_argument("--document-max-length", type=int, default=96)
    parser.add_argument("--hard-negatives", type=int, default=1)
    parser.add_argument("--noise-negatives", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max-contexts", type=int, default=4000)
    parser.add_argument("--max-minutes", type=float, help="training time per model at most (then it stops and is used)")
    parser.add_argument("--limit", type=int, default=300, help="validation and test contexts each at most")
    parser.add_argument("--universe", type=int, default=2000, help="cited papers besides the targets; 0: all")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default="var/bench/encoder_finetune.json")
    parser.add_argument("--record", help="also write the docs/results record here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    logging.basicConfig(level=logging.WARNING)
    record = run_record("benchmarks/encoder_finetune.py", args)

    db = Path(args.db)
    store = open_store(StoreConfig(db_path=db, read_only=True))
    split = TrainSettings(queries=default_query_source(store), limit=args.limit)
    frozen = TextEncoder(EncoderSettings.from_env(device=args.device))
    folder = Path(args.index_dir) if args.index_dir else db.with_name(db.name + ".index")
    index, _ = RetrievalIndex.open(store, IndexSettings(), path=folder, cache=frozen, build=False)
    hard = frozen_neighbours(frozen, index.vectors, index.ids, index.years)
    runs: list[dict[str, Any]] = []
    models: dict[str, TextEncoder] = {"frozen": frozen}
    data_by_seed: dict[int, EncoderTrainingData] = {}
    with tempfile.TemporaryDirectory(prefix="encoder-finetune-") as tmp:
        for seed in args.seeds:
            for objective in args.objectives:
                settings = EncoderTrainingSettings(
                    objective=objective,
                    batch_queries=args.batch_queries,
                    steps=args.steps,
                    lr=args.lr,
                    train_layers=args.train_layers or None,
                    query_max_length=args.query_max_length,
                    document_max_length=args.document_max_length,
                    hard_negatives=args.hard_negatives,
                    noise_negatives=args.noise_negatives,
                    max_contexts=args.max_contexts,
                    max_minutes=args.max_minutes,
                    checkpoint_every=max(args.steps // 4, 1),
                    seed=seed,
                    device=args.device,
                )
                started = time.perf_counter()
                if seed not in data_by_seed:  # the contexts depend on the seed (the subset), not on the objective
                    data_by_seed[seed] = training_data(
                        store, settings, dataclasses.replace(split, limit=None), hard_negatives=hard
                    )
                data = data_by_seed[seed]
                prepare = time.perf_counter() - started
                report = EncoderTrainer(default_model_path(), settings, Path(tmp)).fit(data, progress=True)
                label = f"{objective} seed {seed}"
                runs.append({"label": label, "prepare_s": round(prepare, 1), **dataclasses.asdict(report)})
                base = EncoderSettings.from_env(device=args.device)
                models[label] = TextEncoder(dataclasses.replace(base, model=report.folder))
        started = time.perf_counter()
        evaluation = encoder_eval.compare_dense(store, models, split, distractors=args.universe or None, progress=True)
        evaluation["seconds"] = round(time.perf_counter() - started, 1)
    out = {
        **record,
        "commit": commit(short=True),
        "load_average": os.getloadavg(),
        "training": runs,
        "evaluation": evaluation,
    }
    print(f"wrote {write_json(args.out, out)}")
    if args.record:
        write_json(args.record, results_record(out, args))


def results_record(out: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The docs/results record: quality per split and subset, paired differences, and the training throughput."""
    tables = []
    for name, split in out["evaluation"]["splits"].items():
        rows = []
        for label, subsets in split["encoders"].items():
            for subset, values in subsets.items():
                if values.get("queries"):
                    rows += [
                        {"system": f"{label}: {subset} ({values['queries']})", "metric": m, "value": values[m]}
                        for m in ("R@10", "MRR", "R@300")
                    ]
        for label, subsets in split["paired"].items():
            for subset, metrics in subsets.items():
                rows += [
                    {
                        "system": f"{label} − frozen: {subset}",
                        "metric": f"Δ{m} [95% CI]",
                        "value": f"{d['mean']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]",
                    }
                    for m, d in metrics.items()
                ]
        tables.append(
            {
                "title": f"{name}: dense channel alone over {out['evaluation']['universe']['papers']} cited papers",
                "row_header": "encoder: contexts (count)",
                "baselines": ["frozen"],
                "served": None,
                "rows": rows,
            }
        )
    tables.append(
        {
            "title": "training on the CPU",
            "row_header": "run",
            "baselines": [],
            "served": None,
            "rows": [
                row
                for run in out["training"]
                for row in (
                    {"system": run["label"], "metric": "steps", "value": run["steps"]},
                    {"system": run["label"], "metric": "seconds", "value": run["seconds"]},
                    {"system": run["label"], "metric": "pairs/s", "value": run["pairs_per_second"]},
                    {
                        "system": run["label"],
                        "metric": "loss first → last interval",
                        "value": f"{run['losses'][0]:.4f} → {run['losses'][-1]:.4f}",
                    },
                )
            ],
        }
    )
    load = ", ".join(f"{x:.1f}" for x in out["load_average"])
    return {
        "capability": "recommend",
        "kind": "quality",
        "title": "Encoder fine-tuned on citation contexts (train encoder) vs frozen: dense channel, time split",
        "command": out["command"],
        "machine": f"{out['machine']}; load average {load} at the end (2 cores shared with other jobs)",
        "date": out["date"],
        "commit": out["commit"],
        "rank": 40,
        "notes": [],
        "tables": tables,
    }


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
