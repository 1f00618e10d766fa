"""``citegraph train encoder``: fine-tune the text encoder on the store's citation contexts.

The work is done by :mod:`gnn.recommend.finetune` (training) and :mod:`gnn.recommend.encoder_eval` (frozen vs
fine-tuned, dense channel, on the time split's validation and test folds). With ``--serve`` the model is put in
service for the store (``<db>.encoder.json``): ``compute embeddings``, ``compute index``, the prefetch's dense and
profile channels and ``train reranker`` then use it — the background build runs those steps next.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

from api.cli.common import open_from_args, store_files
from gnn.recommend.citances import QUERY_SOURCES, default_query_source
from gnn.recommend.encoder_eval import compare_dense
from gnn.recommend.examples import TrainSettings
from gnn.recommend.finetune import (
    ENCODER_KINDS,
    EncoderTrainer,
    EncoderTrainingSettings,
    frozen_neighbours,
    put_in_service,
    training_data,
)
from gnn.rerank.model import OBJECTIVES
from gnn.retrieval.index import IndexSettings, IndexUnavailableError, RetrievalIndex
from gnn.text.encoder import FINE_TUNED_ENCODERS, EncoderSettings, TextEncoder, default_model_path
from graph.errors import ConfigError
from graph.files import StoreFiles, write_atomic
from graph.store import GraphStore

log = logging.getLogger("citegraph")
DEFAULTS = EncoderTrainingSettings()


def settings_from_args(args: argparse.Namespace) -> EncoderTrainingSettings:
    """The training settings the flags give (checked before the store opens)."""
    return EncoderTrainingSettings(
        objective=args.objective,
        encoders=args.encoders,
        query_max_length=args.query_max_length,
        document_max_length=args.document_max_length,
        batch_queries=args.batch_queries,
        accumulation=args.accumulation,
        steps=args.steps,
        lr=args.lr,
        max_contexts=None if args.max_contexts == 0 else args.max_contexts,
        train_layers=args.train_layers,
        hard_negatives=args.hard_negatives,
        max_minutes=args.max_minutes,
        seed=args.seed,
        device=args.device,
    )


def cmd_train_encoder(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.serve and settings.encoders != "shared":
        raise ConfigError("--serve needs --encoders shared: the service encodes queries and papers with one model")
    with open_from_args(args, read_only=True) as store:
        return train_encoder(store, args, settings)


def train_encoder(store: GraphStore, args: argparse.Namespace, settings: EncoderTrainingSettings | None = None) -> int:
    """``train encoder`` on an open store (the server's, in its background build): train, evaluate, serve, report."""
    settings = settings or settings_from_args(args)
    files = store_files(store, args)
    split = TrainSettings(queries=args.queries or default_query_source(store), seed=args.seed)
    base = args.base or default_model_path()
    frozen = TextEncoder(EncoderSettings.from_env(served=files.served_encoder))  # what the store's vectors are
    try:
        hard = None
        if settings.hard_negatives and files.index is not None:
            try:
                index, _ = RetrievalIndex.open(store, IndexSettings(), path=files.index, cache=frozen, build=False)
                hard = frozen_neighbours(frozen, index.vectors, index.ids, index.years)
            except IndexUnavailableError as exc:
                log.warning("no hard negatives from the prefetch's dense channel: %s", exc)
        data = training_data(store, settings, split, hard_negatives=hard, progress=not args.quiet)
    finally:
        frozen.close()
    trainer = EncoderTrainer(base, settings, FINE_TUNED_ENCODERS.under(StoreFiles()))
    training = trainer.fit(data, progress=not args.quiet)
    report: dict[str, Any] = {
        "command": "citegraph train encoder",
        "query source": split.queries,
        "base": Path(base).name,
        "settings": settings.identity(),
        "training": dataclasses.asdict(training),
        "contexts": len(data.contexts),
        "contexts with a manuscript": sum(len(c.draft) > 1 for c in data.contexts),
    }
    folder = Path(training.folder)
    if not args.no_eval and settings.encoders == "shared":
        encoders = {
            "frozen": TextEncoder(_at(base, args)),
            "fine-tuned": TextEncoder(_at(str(folder), args)),
        }
        try:
            report["evaluation"] = compare_dense(store, encoders, split, progress=not args.quiet)
        finally:
            for encoder in encoders.values():
                encoder.close()
    # A run its time budget stopped is served with the steps it took (the budget is the caller's choice, as in the
    # background build); its checkpoint stays, and running the command again resumes it and serves the result.
    if args.serve and files.served_encoder is not None:
        put_in_service(files.served_encoder, folder, {"data_hash": training.data_hash, "steps": training.steps})
        report["served"] = True
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps(report, indent=2, sort_keys=True, default=str))
    print(summary(report))
    print(f"\nreport: {out}")
    if training.stopped_early:
        print(
            f"the time budget ran out at step {training.steps} of {training.planned_steps}: run the same command again "
            "to resume from the checkpoint"
        )
    if report.get("served"):
        print(
            "next: citegraph compute embeddings --embed papers && citegraph compute index && citegraph train reranker"
        )
    return 0


def _at(model: str, args: argparse.Namespace) -> EncoderSettings:
    base = EncoderSettings.from_env(device=args.device)
    return dataclasses.replace(base, model=model)


def summary(report: dict[str, Any]) -> str:
    """The report in a few lines: the training, then each split's dense channel, frozen vs fine-tuned."""
    t = report["training"]
    lines = [
        f"trained {t['steps']}/{t['planned_steps']} steps ({t['resumed_from']} resumed) in {t['seconds']:.0f} s, "
        f"{t['pairs_per_second']:.2f} pairs/s on {report['contexts']} contexts; loss {t['losses'][:1]} -> "
        f"{t['losses'][-1:]}; saved in {t['folder']}"
    ]
    for name, split in report.get("evaluation", {}).get("splits", {}).items():
        lines.append(f"{name} ({split['queries']} contexts), dense channel over the cited papers:")
        for label, rows in split["encoders"].items():
            row = rows["all"]
            lines.append(f"  {label:10s} R@10 {row['R@10']:.4f}  MRR {row['MRR']:.4f}  R@300 {row['R@300']:.4f}")
        for label, paired in split["paired"].items():
            d = paired["all"]["R@10"]
            lines.append(f"  {label} − frozen: R@10 {d['mean']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]")
    return "\n".join(lines)


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    q = kinds.add_parser(
        "encoder",
        help="fine-tune the text encoder on the training fold's citation contexts (MP-BERT4CR), evaluate, serve",
    )
    q.add_argument("--objective", choices=OBJECTIVES, default=DEFAULTS.objective)
    q.add_argument(
        "--encoders",
        choices=ENCODER_KINDS,
        default=DEFAULTS.encoders,
        help="shared: one encoder for queries and papers (servable); dual: MP-BERT4CR's manuscript and citation "
        "encoders (evaluated by benchmarks/encoder_finetune.py, not served)",
    )
    q.add_argument("--base", help="model folder to start from (default: CITEGRAPH_ENCODER, else all-MiniLM-L6-v2)")
    q.add_argument("--steps", type=int, default=DEFAULTS.steps, help="optimiser steps (default %(default)s)")
    q.add_argument("--batch-queries", type=int, default=DEFAULTS.batch_queries, help="contexts per micro-batch")
    q.add_argument("--accumulation", type=int, default=DEFAULTS.accumulation, help="micro-batches per step")
    q.add_argument("--query-max-length", type=int, default=DEFAULTS.query_max_length, help="tokens per query")
    q.add_argument("--document-max-length", type=int, default=DEFAULTS.document_max_length, help="tokens per paper")
    q.add_argument("--lr", type=float, default=DEFAULTS.lr)
    q.add_argument(
        "--train-layers",
        type=int,
        help="fine-tune the top N transformer layers only (default: all; 2 on a CPU is about a third of the work)",
    )
    q.add_argument(
        "--hard-negatives",
        type=int,
        default=DEFAULTS.hard_negatives,
        help="papers per context and step from the frozen dense channel's top 20 (default %(default)s)",
    )
    q.add_argument(
        "--max-contexts",
        type=int,
        default=DEFAULTS.max_contexts,
        help="training contexts at most, a seeded subset (default %(default)s; 0: all)",
    )
    q.add_argument(
        "--max-minutes",
        type=float,
        help="stop after the step that passes this many minutes; the model is saved, and a rerun resumes",
    )
    q.add_argument(
        "--queries",
        choices=sorted(QUERY_SOURCES),
        help="scisummnet or store (any corpus with citation contexts), as train reranker takes them",
    )
    q.add_argument("--seed", type=int, default=DEFAULTS.seed)
    q.add_argument("--device", help="cpu or cuda (default: CUDA when present, with mixed precision)")
    q.add_argument("--no-eval", action="store_true", help="skip the frozen vs fine-tuned comparison")
    q.add_argument(
        "--serve",
        action="store_true",
        help="put the model in service for this store (<db>.encoder.json): embeddings, index, prefetch and "
        "reranker then use it once recomputed",
    )
    q.add_argument("--out", default="var/eval/encoder.json", help="report path (.json)")
    q.add_argument("--index-dir", help="where the retrieval index lives (default: <db>.index beside the store)")
    q.set_defaults(func=cmd_train_encoder)


__all__ = ["add_parser", "cmd_train_encoder", "settings_from_args", "summary", "train_encoder"]
