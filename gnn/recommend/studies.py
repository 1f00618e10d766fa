r"""Studies built on the reranker's training: the ablation and the objectives compared over seeds.

**Ablation** (``citegraph eval recommend --ablation``, :func:`run_ablation`): every objective trained as
``train reranker`` trains them (:func:`gnn.recommend.train.train_scorer`); then, for the chosen objective, −
hyperbolic (Euclidean distance between the same taxonomy points), − taxonomy (no taxonomy feature), −
co-citation (no co-citation features, no co-cited candidates), − enricher (no references features, no
candidates only the references stage proposed), − authors, − per-field overlap. Each row is a model trained
without the part (and, when the final scorer is the blend, one seed of trees retrained without it and blended
with the same α: it compares with the chosen objective's one-seed row), evaluated on validation, the
multi-citation subset (sentences citing ≥ 2 papers, R@10 over all their targets) and test.

**Objectives over seeds** (:func:`compare_objectives`, ``benchmarks/reranker_objectives.py``): each objective
trained once per model seed on the same examples, with paired bootstrap intervals (:func:`paired_bootstrap`)
of the multi-citation R@10 against the single-positive and triplet references — MP-BERT4CR's claim, tested.

Nothing here is served: the models an ablation trains are saved beside its report, never over the served scorer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gnn.metrics import recall_at_k
from gnn.recommend.examples import SplitData, TrainSettings, load_splits
from gnn.recommend.train import (
    OneSeedBlend,
    TrainingOptions,
    TrainingRun,
    blend_rankings,
    fit_stacked_mart,
    model_rankings,
    multi_citation_queries,
    ranking_metrics,
    train_scorer,
)
from gnn.rerank.examples import QueryExample
from gnn.rerank.features import FEATURE_NAMES, FeatureBuilder, FeatureSettings
from gnn.rerank.knowledge import Knowledge, TaxonomyPlaces
from gnn.rerank.model import OBJECTIVES, RerankerSettings, RerankerTrainer
from gnn.retrieval.enricher import Candidate, read_citations_with_years
from gnn.retrieval.index import RetrievalIndex
from gnn.text.encoder import TextEncoder
from graph.store import GraphStore

log = logging.getLogger(__name__)

ABLATION_COMMAND = "citegraph eval recommend --ablation"


def run_ablation(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    *,
    out_dir: Path,
    options: TrainingOptions | None = None,
) -> dict[str, Any]:
    """Train as :func:`gnn.recommend.train.run_training` does (its arguments; every objective unless
    ``options.objectives`` names some), saving the models in ``out_dir``, then add the ablation rows (module
    docstring). Returns the report."""
    options = options or TrainingOptions()
    trained = train_scorer(
        store,
        encoder,
        index,
        out_dir=out_dir,
        options=replace(options, objectives=options.objectives or OBJECTIVES),
        command=ABLATION_COMMAND,
    )
    start = time.perf_counter()
    ablation_rows(trained.run, store, trained.best, trained.reference)
    seconds = trained.report["seconds"]
    seconds["ablation"] = round(time.perf_counter() - start, 1)
    seconds["total"] = round(seconds["total"] + seconds["ablation"], 1)
    return trained.report


# (label, the stage whose own candidates are dropped, the features switched off) of each ablation row
ABLATIONS: tuple[tuple[str, str | None, FeatureSettings], ...] = (
    ("− hyperbolic (Euclidean distance)", None, FeatureSettings(euclidean=True)),
    ("− taxonomy", None, FeatureSettings(disabled=("taxonomy",))),
    ("− co-citation", "cocited", FeatureSettings(disabled=("cocitation",))),
    ("− enricher", "references", FeatureSettings(disabled=("enricher",))),
    ("− authors", None, FeatureSettings(disabled=("authors",))),
    ("− title and names (per-field overlap)", None, FeatureSettings(disabled=("fields",))),
)


def ablation_rows(run: TrainingRun, store: GraphStore, best: str, reference: OneSeedBlend | None) -> None:
    """A row per :data:`ABLATIONS` entry: the ``best`` objective's model retrained without the part, and with
    ``reference`` (the served scorer is the blend) one seed of trees retrained without it, blended with
    ``reference``'s α — the one-seed row it compares with (a whole bag per row would double the run's time)."""
    settings = replace(run.model_settings, objective=best)
    for label, stage, feature_settings in ABLATIONS:
        if feature_settings.euclidean:
            places = TaxonomyPlaces.from_store(store)
            citations = read_citations_with_years(store)
            parts = {
                name: euclidean_features(split, run.index, places, citations) for name, split in run.splits.items()
            }
        else:
            mask = feature_settings.mask()
            parts = {name: ablated(split, stage, mask) for name, split in run.splits.items()}
        folds = [exs for name, exs in parts.items() if name.startswith("train")]
        validation, test = parts["validation"], parts["test"]
        model, training = RerankerTrainer(run.index.vectors, settings).fit(
            [ex for fold in folds for ex in fold], validation
        )
        description = f"best epoch {training.best_epoch}/{training.epochs}"
        if reference is None:
            name = f"reranker ({best}) {label}"
            val_rank = model_rankings(model, run.scorer, validation)
            test_rank = model_rankings(model, run.scorer, test)
        else:
            val_neural = run.scorer.score_many(model, validation)
            test_neural = run.scorer.score_many(model, test)
            mart, _ = fit_stacked_mart(
                folds, validation, val_neural, run.index.vectors, settings, reference.mart.settings
            )
            name = f"LambdaMART + reranker ({best}), one seed {label}"
            description += f"; LambdaMART {mart.describe_trees()}; α = {reference.alpha:g}"
            val_rank = blend_rankings(mart, reference.alpha, validation, val_neural)
            test_rank = blend_rankings(mart, reference.alpha, test, test_neural)
        run.systems.append(
            {
                "name": name,
                "description": description,
                "validation": ranking_metrics(val_rank, validation),
                "test": ranking_metrics(test_rank, test),
                "training_seconds": round(training.seconds, 1),
            }
        )


def ablated(split: SplitData, drop_stage: str | None, mask: np.ndarray) -> list[QueryExample]:
    """``split``'s examples with features masked and, for ``drop_stage``, the candidates only it proposed removed."""
    out = []
    for ex in split.examples:
        keep = np.asarray(
            [not (drop_stage and set(st) <= {drop_stage}) for st in ex.stages] if drop_stage else [True] * len(ex.ids),
            dtype=bool,
        )
        out.append(
            replace(
                ex,
                rows=ex.rows[keep],
                features=ex.features[keep] * mask,
                ids=[p for p, k in zip(ex.ids, keep) if k],
                stages=[s for s, k in zip(ex.stages, keep) if k],
                extra_features=ex.extra_features * mask,
            )
        )
    return out


def paired_bootstrap(differences: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """Mean of per-query ``differences`` and its 95% percentile-bootstrap interval (queries resampled)."""
    draws = rng.integers(0, len(differences), size=(resamples, len(differences)))
    means = differences[draws].mean(axis=1)
    return float(differences.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def compare_objectives(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    *,
    seeds: Sequence[int],
    objectives: Sequence[str] = OBJECTIVES,
    references: Sequence[str] = ("single_positive", "triplet"),
    settings: TrainSettings | None = None,
    model_settings: RerankerSettings | None = None,
    disabled: Sequence[str] = (),
    resamples: int = 2000,
    cache_dir: Path | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    r"""The neural reranker's objectives side by side, each trained once per model seed on the same examples.

    The examples are those of :func:`run_training` (same cache); only the model's seed (initialisation,
    batch order, sampled pool negatives) changes. Per objective and split: the mean and standard
    deviation over seeds of R@10, MRR and the multi-citation R@10 (sentences citing at least two
    papers, R@10 over all their targets). Against each of ``references`` that was trained (the
    single-positive triplet and the triplet over all of a context's targets): per seed the difference
    of the multi-citation R@10, and a paired bootstrap over the multi-citation sentences
    (``resamples`` draws, seeded) of the difference of their R@10 averaged over the seeds,
    :math:`\Delta = \frac{1}{|M|}\sum_{q \in M} (\bar r_q^{o} - \bar r_q^{\mathrm{ref}})`,
    with its 95% interval: whether a multi-positive objective beats plain triplet on the
    multi-citation subset, with the seed noise and the query sample both in view.

    Args:
        store, encoder, index: as for :func:`gnn.recommend.train.run_training`.
        seeds: the model seeds; each objective is trained once per seed.
        objectives: the objectives compared.
        references: the objectives each other one is paired against (when trained).
        settings: which queries and folds; model_settings: the neural reranker's settings (objective and seed
            are set per run).
        disabled: feature groups switched off (:data:`gnn.rerank.features.FEATURE_GROUPS`, their features 0
            in every split, the candidates unchanged): e.g. whether the objectives differ once the model no
            longer sees the co-citation counts that the multi-positive objectives draw their partners from.
        resamples: bootstrap draws per interval.
        cache_dir: the example cache (None: build the examples afresh); progress: progress bars.
    """
    start = time.perf_counter()
    settings = settings or TrainSettings()
    model_settings = model_settings or RerankerSettings()
    splits = load_splits(store, encoder, index, settings, cache_dir, progress)
    if disabled:
        mask = FeatureSettings(disabled=tuple(disabled)).mask()
        splits = {name: replace(split, examples=ablated(split, None, mask)) for name, split in splits.items()}
    train = [ex for name, split in splits.items() if name.startswith("train") for ex in split.examples]
    evaluated = {"validation": splits["validation"].examples, "test": splits["test"].examples}
    multi = {name: multi_citation_queries(exs) for name, exs in evaluated.items()}
    runs, per_query = _objective_runs(index, train, evaluated, seeds, objectives, model_settings, progress)
    rng = np.random.default_rng(0)  # one stream for every bootstrap, drawn in this order
    summary = {
        objective: {
            name: _objective_summary(
                objective,
                name,
                runs,
                per_query,
                [r for r in references if r in objectives and multi[name]],
                resamples,
                rng,
            )
            for name in evaluated
        }
        for objective in objectives
    }
    return {
        "seeds": list(seeds),
        "objectives": list(objectives),
        "references": [r for r in references if r in objectives],
        "disabled": list(disabled),
        "queries": {name: {"all": len(exs), "multi-citation": len(multi[name])} for name, exs in evaluated.items()},
        "model": {k: v for k, v in asdict(model_settings).items() if k not in ("device", "seed", "objective")},
        "runs": runs,
        "summary": summary,
        "seconds": round(time.perf_counter() - start, 1),
    }


def _objective_runs(
    index: RetrievalIndex,
    train: list[QueryExample],
    evaluated: dict[str, list[QueryExample]],
    seeds: Sequence[int],
    objectives: Sequence[str],
    model_settings: RerankerSettings,
    progress: bool,
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], list[np.ndarray]]]:
    """Train every objective once per seed; each run's metrics per split, and per (objective, split) the
    multi-citation sentences' R@10 of each seed."""
    runs: list[dict[str, Any]] = []
    per_query: dict[tuple[str, str], list[np.ndarray]] = {}
    for seed in seeds:
        for objective in objectives:
            trainer = RerankerTrainer(index.vectors, replace(model_settings, objective=objective, seed=seed))
            model, training = trainer.fit(train, evaluated["validation"], progress=progress)
            run: dict[str, Any] = {
                "objective": objective,
                "seed": seed,
                "best_epoch": training.best_epoch,
                "seconds": round(training.seconds, 1),
            }
            for name, examples in evaluated.items():
                rankings = model_rankings(model, trainer, examples)
                run[name] = ranking_metrics(rankings, examples)
                per_query.setdefault((objective, name), []).append(
                    np.asarray(
                        [recall_at_k(rankings[k], examples[k].targets, 10) for k in multi_citation_queries(examples)]
                    )
                )
            log.info("objective %s seed %d: %s", objective, seed, run["validation"])
            runs.append(run)
    return runs, per_query


def _objective_summary(
    objective: str,
    split: str,
    runs: list[dict[str, Any]],
    per_query: dict[tuple[str, str], list[np.ndarray]],
    references: Sequence[str],
    resamples: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """One objective on one split over the seeds: mean and deviation of each metric, and the paired
    bootstrap of its multi-citation R@10 against each of ``references`` (trained, with multi-citation sentences)."""
    chosen = [r[split] for r in runs if r["objective"] == objective]
    entry: dict[str, Any] = {
        metric: {
            "mean": float(np.mean([c[metric] for c in chosen])),
            "sd": float(np.std([c[metric] for c in chosen], ddof=1)) if len(chosen) > 1 else 0.0,
        }
        for metric in ("R@10", "MRR", "multi_R@10")
    }
    for reference in references:
        if objective == reference:
            continue
        ours, theirs = per_query[(objective, split)], per_query[(reference, split)]
        diff = np.mean(ours, axis=0) - np.mean(theirs, axis=0)
        mean, low, high = paired_bootstrap(diff, resamples, rng)
        entry[f"multi_R@10 vs {reference}"] = {
            "difference": mean,
            "ci95": [low, high],
            "per_seed": [float(a.mean() - b.mean()) for a, b in zip(ours, theirs)],
            "sentences": len(diff),
        }
    return entry


def euclidean_features(
    split: SplitData, index: RetrievalIndex, places: TaxonomyPlaces, citations: pd.DataFrame
) -> list[QueryExample]:
    """``split`` re-featurised with the Euclidean instead of the Poincaré distance (nothing else changes)."""
    column = FEATURE_NAMES.index("hyperbolic")
    builder = FeatureBuilder(
        index, Knowledge.from_citations(citations, split.until), places, FeatureSettings(euclidean=True)
    )
    out = []
    for ex, pool, q in zip(split.examples, split.pools, split.inputs):
        features = ex.features.copy()
        features[:, column] = builder.features(q, pool)[:, column]
        extra = ex.extra_features.copy()
        if len(ex.extra_rows):
            extra[:, column] = builder.features(q, [Candidate(p) for p in (str(index.ids[r]) for r in ex.extra_rows)])[
                :, column
            ]
        out.append(replace(ex, features=features, extra_features=extra))
    return out


__all__ = [
    "ABLATIONS",
    "ABLATION_COMMAND",
    "ablated",
    "ablation_rows",
    "compare_objectives",
    "euclidean_features",
    "paired_bootstrap",
    "run_ablation",
]
