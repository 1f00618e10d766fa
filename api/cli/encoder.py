"""``citegraph train encoder``: fine-tune the text encoder on the store's citation contexts.

The work is done by :mod:`gnn.recommend.finetune` (training) and :mod:`gnn.recommend.encoder_eval` (frozen vs
fine-tuned, dense channel, on the time split's validation and test folds). With ``--serve`` the model is put in
service for the store (``<db>.encoder.json``): ``compute embeddings``, ``compute index``, the prefetch's dense and
profile channels and ``train reranker`` then use it — the background build runs those steps next.
"""

from __future__ import annotations

import argparse
import logging

from api.cli.common import step_context
from api.pipeline.train import ENCODER_TRAINING, EncoderTraining, summary
from gnn.recommend.citances import QUERY_SOURCES
from gnn.recommend.finetune import (
    ENCODER_KINDS,
    EncoderTrainingSettings,
)
from gnn.rerank.model import OBJECTIVES

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


def encoder_training(args: argparse.Namespace) -> EncoderTraining:
    """``train encoder``'s flags as the step registry's settings (checked before the store opens)."""
    return EncoderTraining(
        training=settings_from_args(args),
        queries=args.queries,
        base=args.base,
        evaluate=not args.no_eval,
        serve=args.serve,
        out=args.out,
        index_dir=args.index_dir,
    )


def cmd_train_encoder(args: argparse.Namespace) -> int:
    """Fine-tune, evaluate, serve, report: the step registry's action (:mod:`api.pipeline.train`)."""
    ENCODER_TRAINING.run(step_context(args), encoder_training(args))
    return 0


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


__all__ = ["add_parser", "cmd_train_encoder", "encoder_training", "settings_from_args", "summary"]
