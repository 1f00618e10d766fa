"""The plans: which steps ``citegraph build`` (default and ``--full``), ``compute all`` and the server's background
build run, in order, each step declared once with its action and typed settings (:mod:`api.pipeline.registry`).

:data:`PLANS` names every plan; ``update`` is the place of the incremental update's plan (new records merged into
a built store, then each computation brought up to date for what changed): register it with
:func:`register_plan` where its actions are defined, and run it with :class:`~api.pipeline.registry.PlanRun` and
:func:`~api.pipeline.registry.plan_fingerprint` as the background build does (docs/architecture.md, "The step
registry").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from api.pipeline.compute import (
    COMPUTE_ALL,
    EMBEDDINGS,
    HYPERBOLIC,
    INDEX,
    LINKAGE,
    TAXONOMY,
    ComputeAll,
    EmbeddingsStep,
    HyperbolicStep,
    IndexStep,
    LinkageStep,
    TaxonomyStep,
)
from api.pipeline.ingest import INGEST, IngestSettings
from api.pipeline.linkage import LINKER_TRAINING, LinkerTraining
from api.pipeline.registry import Step, read_state
from api.pipeline.train import (
    ENCODER_TRAINING,
    RERANKER_TRAINING,
    EncoderTraining,
    RerankerTraining,
    no_fine_tuned_encoder,
)
from gnn.hyperbolic.compute import HyperbolicSettings
from gnn.recommend.finetune import EncoderTrainingSettings

# The default build's reranker: one objective, one seed of trees at twice the default rate, trained on the latest
# training fold, the neural model stopped after 2 epochs without a gain (in the first builds' runs no gain came
# after two epochs without one: the same models, 6 fewer epochs), without the comparison row, the test queries or
# the example cache (docs/results.md: what it gives up against FULL=1, test figures included, from
# benchmarks/default_vs_full.py).
DEFAULT_RERANKER = RerankerTraining(
    objective="triplet",
    mart_seeds=1,
    latest_folds=1,
    mart_learning_rate=0.1,
    mart_patience=50,
    epoch_patience=2,
    plain_trees=False,
    test=False,
    example_cache=False,
)
FULL_RERANKER = RerankerTraining()  # every objective on every fold, the bag of seeds


@dataclass(frozen=True)
class BuildSettings:
    """``citegraph build``: ``full`` runs every step at full scale (``make build FULL=1``); the default build embeds
    the ``embed_limit`` most-cited papers (and as many sentences) and serves; ``data``: the data folder."""

    full: bool = False
    embed_limit: int | None = 10_000
    data: Path = Path("data")


def build_plan(settings: BuildSettings) -> list[Step]:
    """The build's steps.

    The default build serves sooner and leaves to the server's background build (:func:`background_plan`) what the
    API can do without at first: the papers beyond the ``embed_limit`` most cited, the stored sentence vectors and
    h_θ (``fit_map`` False). Nothing served reads the last two: the linker and the citation profiles encode
    sentences through the encoder's cache. Its reranker (:data:`DEFAULT_RERANKER`) is one objective (triplet)
    trained on the latest training fold, with one LambdaMART seed at twice the learning rate and without the
    comparison row of trees over the features alone; ``full`` trains every objective on every fold and the bag of
    seeds.
    """
    full = settings.full
    limit = None if full else settings.embed_limit
    compute = ComputeAll(
        embeddings=EmbeddingsStep(embed="all" if full else "papers", limit=limit),
        hyperbolic=HyperbolicStep(HyperbolicSettings(fit_map=full)),
    )
    chosen = [
        Step("ingest", INGEST, IngestSettings(data=str(settings.data), on_error="skip"), reads=settings.data),
        Step("compute", COMPUTE_ALL, compute),
        Step("index", INDEX, IndexStep()),
        Step("reranker", RERANKER_TRAINING, FULL_RERANKER if full else DEFAULT_RERANKER),
        # The linker reads the CL-SciSumm files, not the store; the reranker's examples are one core's Python.
        Step("linker", LINKER_TRAINING, LinkerTraining(), beside="reranker"),
    ]
    if full:
        chosen.append(Step("linkage links", LINKAGE, LinkageStep()))
        # the full build's reranker (every objective, every fold) for the one retrained on the new encoder
        chosen.extend(encoder_steps(FULL_RERANKER))
    return chosen


# Each step's time in the first default build from a fresh clone on the project's 2-core CPU, nothing else
# running (docs/results/first_run_serving.json): what a step's line says before this store has a time of its own.
FIRST_BUILD_SECONDS = {"ingest": 48.0, "compute": 203.0, "index": 80.0, "reranker": 329.0, "linker": 86.0}

# The encoder's fine-tuning, bounded by 45 minutes (what it learnt by then is served, and running the step again
# resumes its checkpoint), without the frozen vs fine-tuned comparison.
ENCODER = EncoderTraining(
    training=EncoderTrainingSettings(max_minutes=45), evaluate=False, serve=True, out="var/eval/encoder.json"
)


def encoder_steps(reranker: RerankerTraining = DEFAULT_RERANKER) -> tuple[Step, ...]:
    """The encoder fine-tuned on the store's citation contexts and what reads it, after everything else (the first
    run's serving time is unchanged): the fine-tuning, every paper embedded again by the fine-tuned model, the index
    the server swaps in, and the reranker (``reranker``'s settings) retrained on that index (swapped in too). The
    background build skips them where the build trained no reranker (no citation contexts to learn from), and the
    three after the fine-tuning where no fine-tuned encoder serves."""
    return (
        Step("encoder", ENCODER_TRAINING, ENCODER),
        Step("encoder embeddings", EMBEDDINGS, EmbeddingsStep(embed="papers"), guard=no_fine_tuned_encoder),
        Step("encoder index", INDEX, IndexStep(), guard=no_fine_tuned_encoder),
        Step("encoder reranker", RERANKER_TRAINING, reranker, guard=no_fine_tuned_encoder),
    )


def background_plan(
    db: Path | None, *, reranker: RerankerTraining | None = None, sentences: int | None = None
) -> tuple[Step, ...]:
    """What ``citegraph serve --complete`` computes after a default build, in a thread of the server
    (:mod:`api.background`): every paper's embedding, then what reads it, then the index the server swaps in, then
    the reranker trained again on that index's candidates (the server swaps it in too: a scorer trained while dense
    search knew the 10,000 most-cited papers ranks worse once it knows them all, docs/results.md), then the stored
    vectors of the default build's sentences (those of the most-cited papers first), then :func:`encoder_steps`.

    Its reranker trains with the settings of the build's reranker step and its sentence step stores as many
    sentences as the build's ``compute`` step embedded papers, both read from ``<db>.build.json``; the default
    build's where the record has none (or is of an older citegraph). ``reranker`` and ``sentences`` override them.
    """
    state = read_state(db) if db is not None else {}
    if reranker is None:
        reranker = _recorded(state, "reranker", RerankerTraining) or DEFAULT_RERANKER
    if sentences is None:
        compute = _recorded(state, "compute", ComputeAll)
        sentences = compute.embeddings.limit if compute is not None and compute.embeddings.limit else 10_000
    return (
        Step("embeddings", EMBEDDINGS, EmbeddingsStep(embed="papers")),
        Step("taxonomy", TAXONOMY, TaxonomyStep()),
        Step("hyperbolic", HYPERBOLIC, HyperbolicStep()),
        Step("index", INDEX, IndexStep()),
        Step("reranker", RERANKER_TRAINING, reranker),
        Step("sentences", EMBEDDINGS, EmbeddingsStep(embed="sentences", limit=sentences)),
        *encoder_steps(reranker),
    )


def _recorded(state: dict[str, dict[str, Any]], name: str, kind: Callable[..., Any]) -> Any:
    """The settings recorded for the build's step ``name``, rebuilt as ``kind``; None where there are none or they
    do not fit ``kind`` (a record of another citegraph)."""
    recorded = state.get(name, {}).get("settings")
    if not isinstance(recorded, dict):
        return None
    try:
        return _rebuild(kind, recorded)
    except (TypeError, ValueError):
        return None


def _rebuild(kind: Callable[..., Any], data: dict[str, Any]) -> Any:
    """A settings dataclass from its :func:`~api.pipeline.registry.settings_record` (nested dataclasses by their
    fields' declared defaults)."""
    assert dataclasses.is_dataclass(kind)
    default = kind()
    values: dict[str, Any] = {}
    for f in dataclasses.fields(kind):
        if f.name not in data:
            raise ValueError(f"{kind.__name__} record has no {f.name}")
        current = getattr(default, f.name)
        value = data[f.name]
        if dataclasses.is_dataclass(current) and isinstance(value, dict):
            value = _rebuild(type(current), value)
        elif isinstance(current, tuple) and isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return kind(**values)


def compute_all_plan(settings: ComputeAll | None = None) -> list[Step]:
    """``compute all``'s steps (:meth:`~api.pipeline.compute.ComputeAll.plan`)."""
    return (settings or ComputeAll()).plan()


# Every plan by name: a function of its settings that lists its steps. `update` is registered where its actions
# live (register_plan); the background build and an update run alike (PlanRun, plan_fingerprint).
PLANS: dict[str, Callable[..., Sequence[Step]]] = {
    "build": build_plan,
    "compute all": compute_all_plan,
    "background": background_plan,
}


def register_plan(name: str, plan: Callable[..., Sequence[Step]]) -> None:
    """Add a plan (``update``) to :data:`PLANS`; a name taken already is refused (one declaration per plan)."""
    if name in PLANS and PLANS[name] is not plan:
        raise ValueError(f"a plan named {name!r} is registered already ({PLANS[name].__qualname__})")
    PLANS[name] = plan


def with_settings(step: Step, **changes: Any) -> Step:
    """``step`` with some of its settings changed (a test's smaller run, a benchmark's variant)."""
    return replace(step, settings=replace(step.settings, **changes))


__all__ = [
    "DEFAULT_RERANKER",
    "ENCODER",
    "FIRST_BUILD_SECONDS",
    "FULL_RERANKER",
    "PLANS",
    "BuildSettings",
    "background_plan",
    "build_plan",
    "compute_all_plan",
    "encoder_steps",
    "register_plan",
    "with_settings",
]
