"""The ``citegraph`` subcommands of sentence linkage (registered by :mod:`api.cli.main`; ``compute linkage``
by :mod:`api.cli.compute`).

::

    citegraph link --scisumm-dir DIR --out RUN_DIR [--model M]   fill Task 1A CSVs (no graph needed)
    citegraph linkage train [--max-papers N] [--out M]           train the linker on CL-SciSumm gold (+ silver)
    citegraph linkage train --from-store                          ... on the store's own gold links / silver pairs
    citegraph linkage silver --out CSV [--max-papers N]           Singha Roy & Mercer silver corpus from ScisummNet
    citegraph linkage eval [--folds 5]                            leave-papers-out CV with baselines (JSON)
    citegraph linkage task-input --out DIR                        CL-SciSumm 2018 annotations -> Task 1A inputs
    citegraph linkage score --run RUN_DIR                         score a run against the CL-SciSumm 2018 gold
    citegraph compute linkage [--model M]                         model LINKS_TO edges into the graph
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from api.cli.common import data_dir, step_context
from api.cli.flags import FlagSpec, add_settings_flags, settings_from_args
from api.pipeline.compute import LinkageStep
from api.pipeline.linkage import (
    DEFAULT_SILVER_CUTOFF,
    LINKER_TRAINING,
    SCISUMMNET,
    TRAINING_SET,
    LinkerTraining,
    load_linker,
    silver_corpus,
)
from gnn.linkage import Linker, LinkerSettings, score_task1a
from gnn.linkage.corpus import load_gold_corpus, load_silver_source
from gnn.linkage.cross_encoder import CrossEncodedLinker, CrossEncoderSettings
from gnn.linkage.evaluate import LinkageEvalSettings, cross_validate
from gnn.linkage.service import make_predictor
from gnn.text.encoder import EncoderSettings, TextEncoder
from loaders.task1a import link_folder, read_gold, read_run, write_task_inputs

log = logging.getLogger("citegraph")


# The settings fields `linkage train|eval` offer as flags (api/cli/flags.py).
LINKER_FLAGS: tuple[FlagSpec, ...] = ("c", "silver_weight")
CROSS_ENCODER_FLAGS: tuple[FlagSpec, ...] = ("epochs",)


def _encoder(args: argparse.Namespace) -> TextEncoder:
    return TextEncoder(EncoderSettings.from_env(device=getattr(args, "device", None)))


def cmd_linkage_silver(args: argparse.Namespace) -> int:
    encoder = _encoder(args)
    try:
        gold = load_gold_corpus(data_dir(args) / TRAINING_SET, encoder)
        _, corpus, cutoff, metrics = silver_corpus(
            data_dir(args),
            encoder,
            gold.examples,
            set(gold.papers),
            max_papers=args.max_papers,
            criterion=args.criterion,
            seed=args.seed,
        )
    finally:
        encoder.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    corpus.to_csv(tmp, index=False, encoding="utf-8")
    tmp.replace(out)
    print(
        f"silver corpus: {len(corpus)} pairs ({int(corpus['label'].sum())} positive) from "
        f"{corpus['citing_sentence_id'].nunique()} citances -> {out}"
    )
    print(
        f"cosine cutoff {cutoff:.4f} (max {args.criterion} on {len(gold.examples)} gold citances): {json.dumps(metrics.as_dict())}"
    )
    return 0


def linker_training_settings(args: argparse.Namespace) -> LinkerTraining:
    """``linkage train``'s flags as the step registry's settings."""
    return LinkerTraining(
        data=args.data,
        seed=args.seed,
        device=args.device,
        max_papers=args.max_papers,
        criterion=args.criterion,
        from_store=args.from_store,
        silver_cutoff=args.silver_cutoff,
        c=args.c,
        silver_weight=args.silver_weight,
        out=args.out,
        cross_encoder=args.cross_encoder,
        cross_encoder_epochs=args.cross_encoder_epochs,
        cross_encoder_out=args.cross_encoder_out,
    )


def cmd_linkage_train(args: argparse.Namespace) -> int:
    """Train the linker (the build's ``linker`` step, :mod:`api.pipeline.linkage`) with the flags' settings."""
    context = step_context(args)
    LINKER_TRAINING.run(context, linker_training_settings(args))
    return 0


def linker_from_args(args: argparse.Namespace) -> Linker | CrossEncodedLinker:
    """The linker of ``--model``; with ``--cross-encoder``, re-ordered by the cross-encoder of
    ``--cross-encoder-model`` (default ``$CITEGRAPH_CACHE/models/linker-cross-encoder``)."""
    step = LinkageStep(
        model=getattr(args, "model", None),
        cross_encoder=getattr(args, "cross_encoder", False),
        cross_encoder_model=getattr(args, "cross_encoder_model", None),
        device=getattr(args, "device", None),
    )
    linker: Linker | CrossEncodedLinker = step.linker()  # type: ignore[assignment]
    return linker


def add_cross_encoder_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--cross-encoder`` and ``--cross-encoder-model`` of the commands that link (read by :func:`linker_from_args`)."""
    parser.add_argument(
        "--cross-encoder",
        action="store_true",
        help="re-order the linker's top candidates with the fine-tuned cross-encoder (`linkage train "
        "--cross-encoder`; about 20 sentence pairs per citing sentence: slow on a CPU)",
    )
    parser.add_argument(
        "--cross-encoder-model", help="cross-encoder folder (default: $CITEGRAPH_CACHE/models/linker-cross-encoder)"
    )


def _cross_encoder_settings(args: argparse.Namespace) -> CrossEncoderSettings:
    return settings_from_args(
        CrossEncoderSettings,
        args,
        CROSS_ENCODER_FLAGS,
        prefix="cross-encoder-",
        seed=args.seed,
        device=getattr(args, "device", None),
    )


def cmd_linkage_eval(args: argparse.Namespace) -> int:
    encoder = _encoder(args)
    try:
        gold = load_gold_corpus(data_dir(args) / TRAINING_SET, encoder)
        silver = None
        if args.max_papers != 0:
            silver = load_silver_source(
                data_dir(args) / SCISUMMNET, encoder, max_papers=args.max_papers, exclude=set(gold.papers)
            )
        settings = LinkageEvalSettings(
            folds=args.folds,
            seed=args.seed,
            cutoff_criterion=args.criterion,
            boosting=False,
            linker=LinkerSettings(seed=args.seed),
            cross_encoder=_cross_encoder_settings(args) if args.cross_encoder else None,
        )
        report = cross_validate(gold, silver, settings)
    finally:
        encoder.close()
    print(json.dumps(report, indent=1, default=str))
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    linker = linker_from_args(args)
    encoder = _encoder(args)
    try:
        report = link_folder(Path(args.scisumm_dir), Path(args.out), make_predictor(linker, encoder))
    finally:
        encoder.close()
    print(report.summary())
    return 0


def cmd_linkage_task_input(args: argparse.Namespace) -> int:
    source = Path(args.source) if args.source else data_dir(args) / TRAINING_SET
    print(f"{write_task_inputs(source, Path(args.out))} citances written as Task 1A inputs under {args.out}")
    return 0


def cmd_linkage_score(args: argparse.Namespace) -> int:
    gold = Path(args.gold) if args.gold else data_dir(args) / TRAINING_SET
    score = score_task1a(read_run(Path(args.run)), read_gold(gold))  # type: ignore[arg-type]
    print(json.dumps(score.as_dict(), indent=1))
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``link`` and ``linkage ...`` on the top-level subparsers."""
    p = sub.add_parser("link", help="fill Task 1A run CSVs: which reference-paper sentences each citance cites")
    p.add_argument(
        "--scisumm-dir",
        required=True,
        help="folder of <RP>/annotation/<RP>.csv (any CL-SciSumm edition's Task 1A columns) + <RP>/Reference_XML/",
    )
    p.add_argument("--out", required=True, help="run folder to write <RP>.csv files into")
    p.add_argument("--model", help="linker model (default: $CITEGRAPH_CACHE/models/linker.json)")
    p.add_argument("--device", choices=["cpu", "cuda"], help="encoder device (default: cuda when present)")
    add_cross_encoder_arguments(p)
    p.set_defaults(func=cmd_link)

    _add_linkage(sub)


def _add_linkage(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``linkage silver|train|eval|task-input|score``."""
    p = sub.add_parser("linkage", help="sentence-linkage model: train, silver corpus, evaluation, task files")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    evaluation = LinkageEvalSettings()

    q = verbs.add_parser("silver", help="write the balanced silver corpus CSV (Singha Roy & Mercer)")
    _corpus_arguments(q)
    q.add_argument("--out", required=True, help="CSV to write")
    q.set_defaults(func=cmd_linkage_silver)

    q = verbs.add_parser(
        "train", help="train the linker on CL-SciSumm 2018 gold (+ silver), or on the store's own data, and save it"
    )
    # gold only by default: silver lowered cross-validated F1 (docs/history.md)
    _corpus_arguments(q, silver_papers=0)
    q.add_argument(
        "--from-store",
        action="store_true",
        help="train on the store (--db): its gold LINKS_TO, and silver pairs of its citing sentences with the cited "
        "full texts it holds (always without gold; --max-papers N caps the papers, 0: all). The default when the "
        f"data folder has no {TRAINING_SET}",
    )
    q.add_argument(
        "--silver-cutoff",
        type=float,
        default=DEFAULT_SILVER_CUTOFF,
        help="--from-store without gold links: the cosine at which a citing sentence and a cited sentence count as "
        f"linked (default {DEFAULT_SILVER_CUTOFF}, the MCC cutoff on CL-SciSumm 2018's gold pairs, docs/results.md)",
    )
    add_settings_flags(q, LinkerSettings, LINKER_FLAGS)
    q.add_argument("--out", help="model file (default: $CITEGRAPH_CACHE/models/linker.json)")
    q.add_argument(
        "--cross-encoder",
        action="store_true",
        help="also fine-tune the MiniLM cross-encoder on the gold citances (about 12 min on 2 CPU cores)",
    )
    add_settings_flags(q, CrossEncoderSettings, CROSS_ENCODER_FLAGS, prefix="cross-encoder-")
    q.add_argument(
        "--cross-encoder-out", help="cross-encoder folder (default: $CITEGRAPH_CACHE/models/linker-cross-encoder)"
    )
    q.set_defaults(func=cmd_linkage_train)

    q = verbs.add_parser("eval", help="leave-reference-papers-out CV on CL-SciSumm 2018 with baselines")
    _corpus_arguments(q)
    q.add_argument("--folds", type=int, default=evaluation.folds)
    q.add_argument(
        "--cross-encoder",
        action="store_true",
        help="also fine-tune a MiniLM cross-encoder per fold and score the linker re-ordered by it "
        "(about 10 min per fold on 2 CPU cores)",
    )
    add_settings_flags(q, CrossEncoderSettings, CROSS_ENCODER_FLAGS, prefix="cross-encoder-")
    q.set_defaults(func=cmd_linkage_eval)

    q = verbs.add_parser("task-input", help="write Task 1A input CSVs from CL-SciSumm .ann.txt annotations")
    q.add_argument("--data", help="data folder (default: $CITEGRAPH_DATA or ../shared/data)")
    q.add_argument("--from", dest="source", help="training folder (default: <data>/scisumm/Training-Set-2018)")
    q.add_argument("--out", required=True, help="folder to write <RP>/annotation/<RP>.csv + Reference_XML into")
    q.set_defaults(func=cmd_linkage_task_input)

    q = verbs.add_parser("score", help="score a Task 1A run folder against CL-SciSumm gold (micro/macro P/R/F1)")
    q.add_argument("--data", help="data folder (default: $CITEGRAPH_DATA or ../shared/data)")
    q.add_argument("--run", required=True, help="run folder of <RP>.csv files")
    q.add_argument("--gold", help="training folder with the gold .ann.txt (default: Training-Set-2018)")
    q.set_defaults(func=cmd_linkage_score)


def _corpus_arguments(q: argparse.ArgumentParser, *, silver_papers: int = 60) -> None:
    """The data, seed, device and silver-corpus flags of ``linkage silver|train|eval``."""
    defaults = LinkageEvalSettings()
    q.add_argument("--data", help="data folder (default: $CITEGRAPH_DATA or ../shared/data)")
    q.add_argument("--seed", type=int, default=defaults.seed, help="seed of folds and silver negatives")
    q.add_argument("--device", choices=["cpu", "cuda"], help="encoder device")
    q.add_argument(
        "--max-papers",
        type=int,
        default=silver_papers,
        help="ScisummNet reference papers for silver (most citances per sentence first; 0: no silver; "
        f"default {silver_papers})",
    )
    q.add_argument(
        "--criterion",
        choices=["balanced_accuracy", "mcc", "f1"],
        default=defaults.cutoff_criterion,
        help="what the silver cosine cutoff maximises on gold pairs",
    )


__all__ = [
    "TRAINING_SET",
    "add_commands",
    "add_cross_encoder_arguments",
    "linker_from_args",
    "linker_training_settings",
    "load_linker",
]
