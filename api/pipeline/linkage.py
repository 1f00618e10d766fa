"""The sentence linker's step of the registry (``linkage train``) and what the server and the CLI share of it:
loading the trained linker, and the silver corpus of ScisummNet pairs.

The linker trains on CL-SciSumm 2018 gold (plus, with ``max_papers``, silver pairs from ScisummNet whose cosine
cutoff maximises ``criterion`` on the gold pairs: Singha Roy & Mercer), or, where the data folder has no
training set or ``from_store`` asks, on the store's own gold links and silver pairs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from api.pipeline.commands import option, switch
from api.pipeline.registry import Action, StepContext
from api.settings import AppSettings
from gnn.linkage import Example, Linker, LinkerSettings, train_linker
from gnn.linkage.corpus import (
    GoldCorpus,
    load_gold_corpus,
    load_silver_source,
    store_gold_corpus,
    store_link_data,
    store_silver_source,
)
from gnn.linkage.cross_encoder import CROSS_ENCODER_FILE, CrossEncoderSettings, train_cross_encoder
from gnn.linkage.evaluate import LinkageEvalSettings
from gnn.linkage.model import LINKER_FILE
from gnn.linkage.silver import (
    BinaryMetrics,
    SilverSource,
    balance,
    choose_cutoff,
    gold_pairs,
    silver_examples,
    silver_pairs,
)
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph.errors import ConfigError, DataError
from graph.files import StoreFiles

log = logging.getLogger("citegraph")

TRAINING_SET = Path("scisumm") / "Training-Set-2018"
# The silver cosine cutoff where a store has no gold to choose one on: the MCC-maximising cutoff on all
# 180,444 CL-SciSumm 2018 gold citance-sentence pairs (MiniLM; docs/results.md, "silver cutoffs").
DEFAULT_SILVER_CUTOFF = 0.517
SCISUMMNET = Path("scisumm") / "ScisummNet-2019"


def load_linker(path: str | None) -> Linker:
    """The linker at ``path`` (default ``$CITEGRAPH_CACHE/models/linker.json``), or a ConfigError saying how to train one."""
    model = Path(path) if path else LINKER_FILE.under(StoreFiles())
    if not model.is_file():
        raise ConfigError(f"no linker model at {model}; train one with `citegraph linkage train` (or pass --model)")
    return Linker.load(model)


def resolve_data(data: str | None) -> Path:
    """``data`` where given, else ``CITEGRAPH_DATA``."""
    return Path(data) if data else AppSettings.from_env().data_dir


def silver_corpus(
    data: Path,
    encoder: TextEncoder,
    gold_examples: list[Example],
    exclude: set[str],
    *,
    max_papers: int,
    criterion: str,
    seed: int,
) -> tuple[SilverSource, pd.DataFrame, float, BinaryMetrics]:
    """Silver source and the balanced corpus with the cutoff chosen on ``gold_examples``."""
    source = load_silver_source(data / SCISUMMNET, encoder, max_papers=max_papers, exclude=exclude)
    cutoff, metrics = choose_cutoff(*gold_pairs(gold_examples), criterion)
    corpus = balance(silver_pairs(source), cutoff, seed=seed)
    return source, corpus, cutoff, metrics


@dataclass(frozen=True)
class LinkerTraining:
    """``linkage train``: where the data is, the silver corpus (``max_papers`` 0: gold only, the default: silver
    lowered cross-validated F1, docs/history.md), the logistic regression, where the model goes, and the optional
    cross-encoder fine-tuned on the gold citances."""

    data: str | None = None
    seed: int = LinkageEvalSettings().seed
    device: str | None = None
    max_papers: int = 0
    criterion: str = LinkageEvalSettings().cutoff_criterion
    from_store: bool = False
    silver_cutoff: float = DEFAULT_SILVER_CUTOFF
    c: float = LinkerSettings().c
    silver_weight: float = LinkerSettings().silver_weight
    out: str | None = None
    cross_encoder: bool = False
    cross_encoder_epochs: float = CrossEncoderSettings().epochs
    cross_encoder_out: str | None = None

    def command(self) -> tuple[str, ...]:
        d = LinkerTraining()
        return (
            "linkage",
            "train",
            *option("--data", self.data),
            *option("--seed", self.seed, d.seed),
            *option("--device", self.device),
            *option("--max-papers", self.max_papers, d.max_papers),
            *option("--criterion", self.criterion, d.criterion),
            *switch("--from-store", self.from_store),
            *option("--silver-cutoff", self.silver_cutoff, d.silver_cutoff),
            *option("--c", self.c, d.c),
            *option("--silver-weight", self.silver_weight, d.silver_weight),
            *option("--out", self.out),
            *switch("--cross-encoder", self.cross_encoder),
            *option("--cross-encoder-epochs", self.cross_encoder_epochs, d.cross_encoder_epochs),
            *option("--cross-encoder-out", self.cross_encoder_out),
        )


def run_linker_training(context: StepContext, settings: LinkerTraining) -> None:
    """Train the linker and save it (``out``, default ``$CITEGRAPH_CACHE/models/linker.json``)."""
    linker_settings = LinkerSettings(c=settings.c, silver_weight=settings.silver_weight, seed=settings.seed)
    data = resolve_data(settings.data)
    training = data / TRAINING_SET
    from_store = settings.from_store or not training.is_dir()
    encoder = TextEncoder(EncoderSettings.from_env(device=settings.device))
    try:
        if from_store:
            log.info("no CL-SciSumm training set at %s: training on the store's own data", training)
            gold, examples, origin = _store_examples(context, settings, encoder, linker_settings)
        else:
            gold, origin = load_gold_corpus(training, encoder), str(training)
            examples = list(gold.examples)
            if settings.max_papers != 0:
                source, corpus, _, _ = silver_corpus(
                    data,
                    encoder,
                    gold.examples,
                    set(gold.papers),
                    max_papers=settings.max_papers,
                    criterion=settings.criterion,
                    seed=settings.seed,
                )
                examples += silver_examples(corpus, source, linker_settings.silver_weight)
        linker = train_linker(examples, linker_settings, selection_examples=gold.examples)
    finally:
        encoder.close()
    out = Path(settings.out) if settings.out else LINKER_FILE.under(StoreFiles())
    linker.save(out)
    print(
        f"linker trained on {len(gold.examples)} gold + {len(examples) - len(gold.examples)} silver citances "
        f"({origin}) -> {out}"
    )
    print(f"selection: {linker.selection}")
    if settings.cross_encoder:
        cross_settings = CrossEncoderSettings(
            epochs=settings.cross_encoder_epochs, seed=settings.seed, device=settings.device
        )
        cross = train_cross_encoder(gold.examples, linker, cross_settings)
        folder = (
            Path(settings.cross_encoder_out) if settings.cross_encoder_out else CROSS_ENCODER_FILE.under(StoreFiles())
        )
        cross.save(folder)
        print(f"cross-encoder fine-tuned on the {len(gold.examples)} gold citances -> {folder}")


def _store_examples(
    context: StepContext, settings: LinkerTraining, encoder: TextEncoder, linker_settings: LinkerSettings
) -> tuple[GoldCorpus, list[Example], str]:
    """The linker's examples on any corpus: the store's gold links, plus silver pairs from its citing sentences
    and the cited full texts it holds — always when it has no gold, else when ``--max-papers`` asks for them.
    The silver cutoff is chosen on the store's gold pairs when it has some, else ``--silver-cutoff``."""
    with context.open(read_only=True) as store:
        available = store_link_data(store)
        if available.to_full_texts == 0 and available.gold_links == 0:
            raise DataError(
                f"the store has nothing the linker learns from: {available.describe()}. The linker needs citing "
                "sentences (MENTIONS) of papers whose full text is in the store, or gold LINKS_TO; load the cited "
                f"papers' full texts, or train on CL-SciSumm with --data DIR holding {TRAINING_SET}"
            )
        gold = store_gold_corpus(store, encoder)
        use_silver = not gold.examples or settings.max_papers != 0
        source = (
            store_silver_source(
                store,
                encoder,
                max_papers=settings.max_papers if settings.max_papers > 0 else None,
                exclude=set(gold.papers),
            )
            if use_silver
            else None
        )
    examples, origin = list(gold.examples), f"the store: {available.describe()}"
    if source is not None:
        cutoff = (
            choose_cutoff(*gold_pairs(gold.examples), settings.criterion)[0]
            if gold.examples
            else settings.silver_cutoff
        )
        examples += silver_examples(
            balance(silver_pairs(source), cutoff, seed=settings.seed), source, linker_settings.silver_weight
        )
        origin += f"; silver labels at cosine >= {cutoff:.3f}"
    if not examples:
        raise DataError(
            f"no citing sentence of the store gave a training example ({available.describe()}): no sentence of a "
            f"cited full text reaches the silver cutoff {settings.silver_cutoff}; lower --silver-cutoff"
        )
    return gold, examples, origin


LINKER_TRAINING: Action[LinkerTraining] = Action("linkage train", run_linker_training)


__all__ = [
    "DEFAULT_SILVER_CUTOFF",
    "LINKER_TRAINING",
    "SCISUMMNET",
    "TRAINING_SET",
    "LinkerTraining",
    "load_linker",
    "resolve_data",
    "silver_corpus",
]
