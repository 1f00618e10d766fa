"""The training steps of the registry: the recommendation reranker (``train reranker``) and the text encoder
fine-tuned on the store's citation contexts (``train encoder``), with the reasons the background build skips them.

The work is done by :mod:`gnn.recommend.train` (and :mod:`gnn.recommend.studies` for ``eval recommend
--ablation``), :mod:`gnn.recommend.finetune` and :mod:`gnn.recommend.encoder_eval`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from api.pipeline.commands import option, switch
from api.pipeline.registry import Action, StepContext
from gnn import reports
from gnn.recommend import studies, train
from gnn.recommend.citances import default_query_source
from gnn.recommend.encoder_eval import compare_dense
from gnn.recommend.examples import TrainSettings
from gnn.recommend.finetune import (
    EncoderTrainer,
    EncoderTrainingSettings,
    frozen_neighbours,
    put_in_service,
    training_data,
)
from gnn.rerank.lambdamart import LambdaMartSettings
from gnn.rerank.model import OBJECTIVES, RerankerSettings
from gnn.retrieval.index import IndexSettings, IndexUnavailableError, RetrievalIndex, built_digest
from gnn.text.encoder import FINE_TUNED_ENCODERS, EncoderSettings, TextEncoder, default_model_path
from graph.errors import ConfigError
from graph.files import StoreFiles, write_atomic
from graph.store import GraphStore

log = logging.getLogger("citegraph")


def print_report(report: dict[str, Any], out: Path, markdown: Callable[[dict[str, Any]], str], lead: str) -> int:
    """Write a harness report (JSON + Markdown beside it, :func:`gnn.reports.write_report`), print its
    table and where it went."""
    json_path, md_path = reports.write_report(report, out, markdown)
    print(markdown(report))
    print(f"\n{lead}: {json_path}, {md_path}")
    return 0


def query_source(queries: str | None, store: GraphStore) -> str:
    """``queries`` where given, else ``scisummnet`` when the store holds ScisummNet citing sentences, else
    ``store``."""
    source: str = queries or default_query_source(store)
    log.info("queries: %s", source)
    return source


def files_of(store: GraphStore, index_dir: str | None) -> StoreFiles:
    """The files of ``store``, with the index in ``index_dir`` where given."""
    return StoreFiles.of(store, index_dir=Path(index_dir) if index_dir else None)


# the reranker ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RerankerTraining:
    """``train reranker``: the objective(s), the split's size and folds, the LambdaMART booster (a bag of
    ``mart_seeds`` seeds, its shrinkage and patience), the neural model's patience, and what the run leaves out
    (the comparison row of trees over the features alone, the test queries, the example cache). ``ablation``:
    ``eval recommend --ablation``, every feature group left out in turn, its models saved beside its report."""

    objective: str | None = None
    limit: int | None = None
    queries: str | None = None
    seed: int = TrainSettings().seed
    lambdamart: bool = True
    mart_seeds: int | None = None
    plain_trees: bool = True
    latest_folds: int | None = None
    mart_learning_rate: float | None = LambdaMartSettings().learning_rate
    mart_patience: int | None = LambdaMartSettings().patience
    epoch_patience: int | None = None
    test: bool = True
    example_cache: bool = True
    out: str = "var/eval/reranker.json"
    index_dir: str | None = None
    ablation: bool = False

    def __post_init__(self) -> None:
        if self.latest_folds is not None and self.latest_folds < 1:
            raise ConfigError(f"--latest-folds is {self.latest_folds}; give 1 or more (or leave it out for every fold)")
        if self.epoch_patience is not None and self.epoch_patience < 1:
            raise ConfigError(f"--epoch-patience is {self.epoch_patience}; give 1 or more epochs")

    def command(self) -> tuple[str, ...]:
        d = LambdaMartSettings()
        return (
            "train",
            "reranker",
            *option("--objective", self.objective),
            *option("--limit", self.limit),
            *option("--queries", self.queries),
            *option("--seed", self.seed, TrainSettings().seed),
            *(() if self.lambdamart else ("--no-lambdamart",)),
            *option("--mart-seeds", self.mart_seeds),
            *option("--latest-folds", self.latest_folds),
            *option("--mart-learning-rate", self.mart_learning_rate, d.learning_rate),
            *option("--mart-patience", self.mart_patience, d.patience),
            *option("--epoch-patience", self.epoch_patience),
            *(() if self.plain_trees else ("--no-plain-trees",)),
            *(() if self.test else ("--no-test",)),
            *(() if self.example_cache else ("--no-example-cache",)),
            "--out",
            self.out,
            *option("--index-dir", self.index_dir),
        )

    def options(self, *, progress: bool) -> train.TrainingOptions:
        """The :class:`gnn.recommend.train.TrainingOptions` of :func:`gnn.recommend.train.run_training` (and of
        :func:`gnn.recommend.studies.run_ablation`) these settings give."""
        given: dict[str, Any] = {
            "bag": self.mart_seeds,
            "learning_rate": self.mart_learning_rate,
            "patience": self.mart_patience,
        }
        lambdamart = LambdaMartSettings(seed=self.seed, **{k: v for k, v in given.items() if v is not None})
        neural: dict[str, Any] = {"objective": self.objective} if self.objective else {}
        if self.epoch_patience is not None:
            neural["patience"] = self.epoch_patience
        return train.TrainingOptions(
            settings=TrainSettings(
                limit=self.limit, seed=self.seed, latest_folds=self.latest_folds, evaluate_test=self.test
            ),
            model_settings=RerankerSettings(seed=self.seed, **neural),
            objectives=(self.objective,) if self.objective else tuple(OBJECTIVES),
            lambdamart=lambdamart if self.lambdamart else None,
            cache_dir=StoreFiles().reranker_examples if self.example_cache else None,
            plain_trees=self.plain_trees,
            progress=progress,
        )


def ablation_models_dir(out: Path) -> Path:
    """Where ``eval recommend --ablation`` saves the models it trains: ``<report stem>.models/`` beside its
    report, so an evaluation never replaces the reranker that ``recommend`` and ``serve`` load."""
    return out.with_name(out.stem + ".models")


def run_reranker_training(context: StepContext, settings: RerankerTraining) -> None:
    """Train the reranker, save it beside the index and write the report."""
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    options = settings.options(progress=not context.quiet)
    # The reranker's matrices are small (a few thousand rows per step): a second thread gains 9% on a quiet
    # 2-core machine and costs 34% when the other core is busy (docs/results.md, reranker_threads.py). The
    # caller's count comes back afterwards (the server's, when its background build trains).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with context.open(read_only=True) as store:
            files = files_of(store, settings.index_dir)
            encoder = TextEncoder(EncoderSettings.from_env(served=files.served_encoder))  # the store's own
            try:
                if files.index is None or files.reranker is None:
                    raise ConfigError("pass --index-dir: a server store has no folder beside it for the index")
                options = replace(
                    options, settings=replace(options.settings, queries=query_source(settings.queries, store))
                )
                index, _ = RetrievalIndex.open(store, IndexSettings(), path=files.index, cache=encoder)
                out_dir = ablation_models_dir(Path(settings.out)) if settings.ablation else files.reranker
                training = studies.run_ablation if settings.ablation else train.run_training
                report = training(store, encoder, index, out_dir=out_dir, options=options)
            finally:
                encoder.close()
    finally:
        torch.set_num_threads(threads)
    saved = f"{'ablation models' if settings.ablation else 'reranker'} saved in {report['chosen']['saved']}; report"
    print_report(report, Path(settings.out), train.report_markdown, saved)


def why_retraining_is_skipped(store: GraphStore, settings: RerankerTraining) -> str | None:
    """Why the background build's ``train reranker`` step need not run on ``store``, or None when it must: the
    saved reranker was trained on candidates and vectors of an index other than the one built now (the
    default build's, from its most-cited papers only). A build that trained no reranker gets none."""
    files = files_of(store, settings.index_dir)
    if files.index is None or files.reranker is None:
        return "the store has no folder beside it for the reranker"
    if not (files.reranker / "config.json").is_file():
        return "the build trained no reranker"
    built = built_digest(files.index)
    if built is not None and train.trained_index_digest(files.reranker) == built:
        return "the reranker was trained on this index"
    return None


RERANKER_TRAINING: Action[RerankerTraining] = Action("train reranker", run_reranker_training, why_retraining_is_skipped)


# the encoder ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EncoderTraining:
    """``train encoder``: :class:`~gnn.recommend.finetune.EncoderTrainingSettings` (its seed and device are the
    command's), the query source, the model to start from, whether the fine-tuned model is compared with the
    frozen one and put in service for the store (``serve``), and where the report goes."""

    training: EncoderTrainingSettings = field(default_factory=EncoderTrainingSettings)
    queries: str | None = None
    base: str | None = None
    evaluate: bool = True
    serve: bool = False
    out: str = "var/eval/encoder.json"
    index_dir: str | None = None

    def __post_init__(self) -> None:
        if self.serve and self.training.encoders != "shared":
            raise ConfigError("--serve needs --encoders shared: the service encodes queries and papers with one model")

    def command(self) -> tuple[str, ...]:
        t, d = self.training, EncoderTrainingSettings()
        contexts = 0 if t.max_contexts is None else t.max_contexts
        return (
            "train",
            "encoder",
            *option("--objective", t.objective, d.objective),
            *option("--encoders", t.encoders, d.encoders),
            *option("--base", self.base),
            *option("--steps", t.steps, d.steps),
            *option("--batch-queries", t.batch_queries, d.batch_queries),
            *option("--accumulation", t.accumulation, d.accumulation),
            *option("--query-max-length", t.query_max_length, d.query_max_length),
            *option("--document-max-length", t.document_max_length, d.document_max_length),
            *option("--lr", t.lr, d.lr),
            *option("--train-layers", t.train_layers, d.train_layers),
            *option("--hard-negatives", t.hard_negatives, d.hard_negatives),
            *option("--max-contexts", contexts, d.max_contexts),
            *option("--queries", self.queries),
            *option("--seed", t.seed, d.seed),
            *option("--device", t.device, d.device),
            *switch("--serve", self.serve),
            *(() if self.evaluate else ("--no-eval",)),
            *option("--max-minutes", t.max_minutes, d.max_minutes),
            "--out",
            self.out,
            *option("--index-dir", self.index_dir),
        )


def run_encoder_training(context: StepContext, settings: EncoderTraining) -> None:
    """Train, evaluate (frozen vs fine-tuned, dense channel), put in service with ``serve``, report."""
    training_settings = settings.training
    with context.open(read_only=True) as store:
        files = files_of(store, settings.index_dir)
        split = TrainSettings(queries=settings.queries or default_query_source(store), seed=training_settings.seed)
        base = settings.base or default_model_path()
        frozen = TextEncoder(EncoderSettings.from_env(served=files.served_encoder))  # what the store's vectors are
        try:
            hard = None
            if training_settings.hard_negatives and files.index is not None:
                try:
                    index, _ = RetrievalIndex.open(store, IndexSettings(), path=files.index, cache=frozen, build=False)
                    hard = frozen_neighbours(frozen, index.vectors, index.ids, index.years)
                except IndexUnavailableError as exc:
                    log.warning("no hard negatives from the prefetch's dense channel: %s", exc)
            data = training_data(store, training_settings, split, hard_negatives=hard, progress=not context.quiet)
        finally:
            frozen.close()
        trainer = EncoderTrainer(base, training_settings, FINE_TUNED_ENCODERS.under(StoreFiles()))
        training = trainer.fit(data, progress=not context.quiet)
        report: dict[str, Any] = {
            "command": "citegraph train encoder",
            "query source": split.queries,
            "base": Path(base).name,
            "settings": training_settings.identity(),
            "training": dataclasses.asdict(training),
            "contexts": len(data.contexts),
            "contexts with a manuscript": sum(len(c.draft) > 1 for c in data.contexts),
        }
        folder = Path(training.folder)
        if settings.evaluate and training_settings.encoders == "shared":
            device = training_settings.device
            encoders = {
                "frozen": TextEncoder(dataclasses.replace(EncoderSettings.from_env(device=device), model=base)),
                "fine-tuned": TextEncoder(
                    dataclasses.replace(EncoderSettings.from_env(device=device), model=str(folder))
                ),
            }
            try:
                report["evaluation"] = compare_dense(store, encoders, split, progress=not context.quiet)
            finally:
                for encoder in encoders.values():
                    encoder.close()
    # A run its time budget stopped is served with the steps it took (the budget is the caller's choice, as in the
    # background build); its checkpoint stays, and running the command again resumes it and serves the result.
    if settings.serve and files.served_encoder is not None:
        put_in_service(files.served_encoder, folder, {"data_hash": training.data_hash, "steps": training.steps})
        report["served"] = True
    out = Path(settings.out)
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


def why_fine_tuning_is_skipped(store: GraphStore, settings: EncoderTraining) -> str | None:
    """Why the background build's ``train encoder`` step need not run on ``store``, or None when it must: a build
    that trained no reranker had no citation contexts to train on, and a server store has no file to say which
    encoder serves."""
    files = files_of(store, settings.index_dir)
    if files.served_encoder is None or files.reranker is None:
        return "the store has no file beside it to say which encoder serves"
    if not (files.reranker / "config.json").is_file():
        return "the build trained no reranker (no citation contexts to fine-tune on)"
    return None


def no_fine_tuned_encoder(store: GraphStore) -> str | None:
    """The guard of the steps after the encoder's fine-tuning: they only redo the work with the fine-tuned encoder,
    so they wait for one to serve."""
    pointer = StoreFiles.of(store).served_encoder
    return None if pointer is not None and pointer.is_file() else "no fine-tuned encoder in service"


ENCODER_TRAINING: Action[EncoderTraining] = Action("train encoder", run_encoder_training, why_fine_tuning_is_skipped)


__all__ = [
    "ENCODER_TRAINING",
    "RERANKER_TRAINING",
    "EncoderTraining",
    "RerankerTraining",
    "ablation_models_dir",
    "files_of",
    "no_fine_tuned_encoder",
    "print_report",
    "query_source",
    "summary",
    "why_fine_tuning_is_skipped",
    "why_retraining_is_skipped",
]
