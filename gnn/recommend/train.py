r"""``citegraph train reranker``: the reranker on the time split, the scorer that is served chosen and saved.

The examples are those of :mod:`gnn.recommend.examples`: the time-split ScisummNet citances (or, with
``--queries store``, the store's own citing sentences split by :mod:`gnn.recommend.split`), each
with the candidates the service really returns for it and the features known before it was written.
Only queries with a target among their candidates train (the "strict" regime of Medić & Šnajder
2020); how many were left out is reported. Every figure is end to end over the whole pool: a target
the prefetch missed counts as a miss.

**Baselines of the same run**, on the same queries, each the served prefetch channel
(:class:`gnn.retrieval.prefetch.Prefetcher`): BM25 (title+abstract, the tuned k1/b of the index),
the strongest lexical baseline — the bm25 channel over each candidate's title, abstract *and*
citation-context profile, with the citing paper's title and abstract weighted as the service weighs
them (:math:`\mathrm{BM25}(c, d) + \lambda\,\mathrm{BM25}(g, d)`) — dense retrieval on the context, and the
service's transparent fusion score (the ranking without a trained reranker).

**The final scorer**: a neural reranker blended with LambdaMART over the same features and that
model's score (:mod:`gnn.rerank.lambdamart`, stacking; the training queries' neural scores cross-fitted,
:func:`cross_fitted_scores`). Each objective trained gets one seed of stacked trees and its blend;
the objective whose blend has the best validation MRR is kept — the scorer that is served decides,
not the neural model alone. Its trees then grow into a bag of seeds (``LambdaMartSettings.bag``,
scores averaged), blended anew, and saved when that blend's validation MRR beats the neural model's.
The run also reports LambdaMART over the features alone, so the stacking's share is measured.

The module holds the whole run — baselines, objectives, trees, the choice of the served scorer —
because each step reads the rows and models of the one before; every step is a function of its own
(:func:`train_scorer` reads as their list). The research built on a run (the ablation, the objectives
compared over seeds) is :mod:`gnn.recommend.studies`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gnn.metrics import evaluate_rankings, recall_at_k
from gnn.recommend.citances import profile_citances
from gnn.recommend.examples import SplitData, TrainSettings, load_splits
from gnn.recommend.split import rule_text
from gnn.rerank.examples import QueryExample, ranked_ids
from gnn.rerank.lambdamart import (
    LambdaMart,
    LambdaMartSettings,
    blend,
    choose_alpha,
    fit_lambdamart,
    load_blend,
    save_blend,
)
from gnn.rerank.model import (
    RerankerModel,
    RerankerSettings,
    RerankerTrainer,
    TrainingReport,
    data_hash,
    load_reranker,
    save_reranker,
)
from gnn.rerank.scorer import FusionScorer
from gnn.retrieval.index import RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex
from gnn.retrieval.prefetch import Prefetcher
from gnn.retrieval.profiles import field_lexical_index
from gnn.text.encoder import TextEncoder
from graph.errors import DataError
from graph.files import publish_folder, staging_folder
from graph.store import GraphStore

log = logging.getLogger(__name__)

DEFAULT_LAMBDAMART = LambdaMartSettings()  # run_training's default; None there skips LambdaMART


# --- systems and metrics -----------------------------------------------------------------------


def multi_citation_queries(examples: Sequence[QueryExample]) -> list[int]:
    """Positions of the queries whose sentence cites at least two papers (the multi-citation subset)."""
    return [k for k, ex in enumerate(examples) if len(ex.targets) >= 2]


def ranking_metrics(rankings: Sequence[Sequence[str]], examples: Sequence[QueryExample]) -> dict[str, Any]:
    relevant = [ex.targets for ex in examples]
    metrics: dict[str, Any] = dict(evaluate_rankings(rankings, relevant).as_dict())
    multi = multi_citation_queries(examples)
    metrics["multi_R@10"] = (
        float(np.mean([recall_at_k(rankings[k], relevant[k], 10) for k in multi])) if multi else None
    )
    metrics["multi_queries"] = len(multi)
    return metrics


def model_rankings(model: RerankerModel, trainer: RerankerTrainer, examples: Sequence[QueryExample]) -> list[list[str]]:
    return _ranked(trainer.score_many(model, examples), examples)


def _ranked(scores: Sequence[np.ndarray], examples: Sequence[QueryExample]) -> list[list[str]]:
    return [ranked_ids(s, ex.ids) for s, ex in zip(scores, examples, strict=True)]


def _mart_rankings(mart: LambdaMart, examples: Sequence[QueryExample], neural: Sequence[np.ndarray]) -> list[list[str]]:
    return _ranked(mart.score_pools([ex.features for ex in examples], neural), examples)


def blend_rankings(
    mart: LambdaMart, alpha: float, examples: Sequence[QueryExample], neural: Sequence[np.ndarray]
) -> list[list[str]]:
    scores = mart.score_pools([ex.features for ex in examples], neural)
    return [ranked_ids(blend(m, n, alpha), ex.ids) for ex, m, n in zip(examples, scores, neural, strict=True)]


def _blend_description(mrr_by_alpha: dict[float, float]) -> str:
    return (
        "z(LambdaMART) + α·z(neural), α from "
        + ", ".join(f"{a:g}: MRR {m:.4f}" for a, m in mrr_by_alpha.items())
        + " on validation"
    )


def cross_fitted_scores(
    folds: Sequence[Sequence[QueryExample]],
    vectors: np.ndarray,
    settings: RerankerSettings,
    validation: Sequence[QueryExample],
) -> list[np.ndarray]:
    """The neural score of every training query's candidates from a model that never trained on that
    query (stacking, :mod:`gnn.rerank.lambdamart`), in the order of the folds' concatenation.

    With training folds :math:`F_1..F_k`, :math:`k \\ge 2`, the queries of :math:`F_i` are scored by a
    model trained on the other folds (each early-stopped on ``validation`` like the final model). A
    single fold is cut into its first and second half, which keeps a citing paper's sentences
    (adjacent in the query frame) mostly on one side.
    """
    parts = [list(fold) for fold in folds if len(fold)]
    if len(parts) == 1:
        half = len(parts[0]) // 2
        parts = [parts[0][:half], parts[0][half:]]
    if len(parts) < 2 or any(not any(ex.label.any() for ex in part) for part in parts):
        raise DataError("cross-fitting needs two groups of training queries, each with a target among its candidates")
    trainer = RerankerTrainer(vectors, settings)
    out: list[np.ndarray] = []
    for held_out in range(len(parts)):
        others = [ex for k, part in enumerate(parts) if k != held_out for ex in part]
        model, _ = trainer.fit(others, validation)
        out.extend(trainer.score_many(model, parts[held_out]))
    return out


def fit_stacked_mart(
    folds: Sequence[Sequence[QueryExample]],
    validation: Sequence[QueryExample],
    validation_neural: Sequence[np.ndarray],
    vectors: np.ndarray,
    model_settings: RerankerSettings,
    settings: LambdaMartSettings,
) -> tuple[LambdaMart, list[np.ndarray] | None]:
    """LambdaMART on the training folds, stacked on the neural scores when ``settings.stacked``
    (``validation_neural``: the scores of the model trained on every fold with ``model_settings``;
    the training queries' are cross-fitted; ``vectors``: the index's), and those cross-fitted scores
    (None when unstacked), which more seeds of the same trees train on."""
    train = [ex for fold in folds for ex in fold]
    if not settings.stacked:
        return fit_lambdamart(train, validation, settings), None
    cross = cross_fitted_scores(folds, vectors, model_settings, validation)
    mart = fit_lambdamart(train, validation, settings, train_neural=cross, validation_neural=validation_neural)
    return mart, cross


def _fusion_rankings(split: SplitData) -> list[list[str]]:
    scorer = FusionScorer()
    return [
        [c.paper_id for c, _ in sorted(zip(pool, scorer.score(q.query, pool)), key=lambda cs: (-cs[1], cs[0].paper_id))]
        for pool, q in zip(split.pools, split.inputs)
    ]


# --- the run -----------------------------------------------------------------------------------

BASELINE_DEPTH = 1000  # papers each retrieval baseline ranks per query


@dataclass
class NeuralScores:
    """One objective's neural reranker and its scores of every validation and test query's pool."""

    model: RerankerModel
    training: TrainingReport
    validation: list[np.ndarray]
    test: list[np.ndarray]


@dataclass
class OneSeedBlend:
    """One seed of stacked trees on an objective's model, its blend's α and the cross-fitted scores."""

    mart: LambdaMart
    alpha: float
    mrr_by_alpha: dict[float, float]
    cross: list[np.ndarray] | None  # the training queries' cross-fitted neural scores (None: unstacked)

    @property
    def mrr(self) -> float:
        """The blend's validation MRR at its α."""
        return self.mrr_by_alpha[self.alpha]


@dataclass
class TrainingRun:
    """One training run: the splits, the index's vectors, and the rows of the report as they are added."""

    index: RetrievalIndex
    splits: dict[str, SplitData]
    model_settings: RerankerSettings
    systems: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.scorer = RerankerTrainer(self.index.vectors, self.model_settings)  # scores any model's pools

    @property
    def folds(self) -> list[list[QueryExample]]:
        return [split.examples for name, split in self.splits.items() if name.startswith("train")]

    @property
    def train(self) -> list[QueryExample]:
        return [ex for fold in self.folds for ex in fold]

    @property
    def val(self) -> list[QueryExample]:
        return self.splits["validation"].examples

    @property
    def test(self) -> list[QueryExample]:
        return self.splits["test"].examples

    def add(
        self, name: str, description: str, val_rank: list[list[str]], test_rank: list[list[str]], **extra: Any
    ) -> None:
        self.systems.append(
            {
                "name": name,
                "description": description,
                "validation": ranking_metrics(val_rank, self.val),
                "test": ranking_metrics(test_rank, self.test),
                **extra,
            }
        )


@dataclass(frozen=True)
class TrainingOptions:
    """What a training run trains and how: the one record :func:`run_training`, :func:`train_scorer` and
    :func:`gnn.recommend.studies.run_ablation` take (``citegraph train reranker`` fills it from its flags)."""

    # Which queries and folds (gnn.recommend.examples.TrainSettings).
    settings: TrainSettings = field(default_factory=TrainSettings)
    # The neural reranker's settings; its objective is the one trained when `objectives` is None.
    model_settings: RerankerSettings = field(default_factory=RerankerSettings)
    # The objectives trained side by side, the best kept (None: model_settings.objective; the ablation: all).
    objectives: tuple[str, ...] | None = None
    # The stacked trees' settings; None trains the neural model alone.
    lambdamart: LambdaMartSettings | None = DEFAULT_LAMBDAMART
    # The example cache (None: build the examples afresh).
    cache_dir: Path | None = None
    # False leaves out the comparison row of LambdaMART over the features alone (about a quarter of a one-seed
    # run); the scorer saved is the same.
    plain_trees: bool = True
    # Progress bars on the terminal.
    progress: bool = False


def run_training(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    *,
    out_dir: Path,
    options: TrainingOptions | None = None,
) -> dict[str, Any]:
    """Build the examples and train the neural reranker with each objective of ``options.objectives`` (or
    ``options.model_settings.objective``). With ``options.lambdamart`` (None: skip) each gets one seed of stacked trees and
    its blend (:mod:`gnn.rerank.lambdamart`, α chosen on validation MRR), and the objective whose blend has the best
    validation MRR is kept (without: the best neural model); its trees grow to ``lambdamart.bag`` seeds and are
    blended anew. Save the final scorer — the blend when its validation MRR is higher, else the neural model
    alone — into ``out_dir`` and evaluate every model with the baselines. Returns the report
    (:attr:`TrainedScorer.report` of :func:`train_scorer`, which this is).

    The scorer is saved into ``<out_dir>.tmp`` and put in place of ``out_dir`` whole
    (:func:`graph.files.publish_folder`) once every part of it is written: a killed run leaves the
    previous scorer, never a new model beside older trees.

    Args:
        store, encoder, index: the store the queries come from, the text encoder, the retrieval index whose
            candidates and vectors the examples use.
        out_dir: the folder the scorer is saved in (published whole).
        options: what is trained and how (:class:`TrainingOptions`; None: its defaults).
    """
    return train_scorer(store, encoder, index, out_dir=out_dir, options=options).report


@dataclass
class TrainedScorer:
    """What a training run leaves besides its saved scorer: the report, and what a study continues from."""

    report: dict[str, Any]
    run: TrainingRun
    best: str  # the objective kept
    reference: OneSeedBlend | None  # its one-seed blend when the saved scorer is the blend, else None


def train_scorer(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    *,
    out_dir: Path,
    options: TrainingOptions | None = None,
    command: str = "citegraph train reranker",
) -> TrainedScorer:
    """:func:`run_training` (its arguments), keeping the run for a study that continues it
    (:func:`gnn.recommend.studies.run_ablation`); ``command`` is the report's."""
    start = time.perf_counter()
    options = options or TrainingOptions()
    settings, objectives, lambdamart, progress = (
        options.settings,
        options.objectives,
        options.lambdamart,
        options.progress,
    )
    run = TrainingRun(
        index, load_splits(store, encoder, index, settings, options.cache_dir, progress), options.model_settings
    )
    _check_learnable(run)
    timings: dict[str, float] = {"examples": round(time.perf_counter() - start, 1)}
    report = _report_head(run, settings, command)
    log.info("baselines on the same queries")
    _baselines(run, store, settings)
    chosen = list(objectives) if objectives else [run.model_settings.objective]
    neural = {objective: _neural_row(run, objective, progress) for objective in chosen}
    if lambdamart is not None and not any(ex.label.any() for ex in run.val):
        log.warning("LambdaMART skipped: no validation query has a target among their candidates to stop on")
        lambdamart = None
    # One seed of stacked trees per objective: the objective is chosen by the validation MRR of the scorer
    # that is served (trees blended with the neural model), not of the neural model alone, whose lead can
    # be smaller than the trees' seed-to-seed spread (docs/results.md).
    one_seed = _one_seed_rows(run, neural, lambdamart, options.plain_trees) if lambdamart is not None else {}
    if one_seed:
        best = max(chosen, key=lambda o: one_seed[o].mrr)
    else:
        best = max(neural, key=lambda o: neural[o].training.validation_mrr)
    hash_ = data_hash(run.train)
    staging = staging_folder(out_dir)
    _save_neural(run, best, neural[best], staging, settings, hash_)
    final = None if lambdamart is None else _bag_rows(run, best, neural[best], one_seed[best], lambdamart, staging)
    publish_folder(staging, out_dir)
    report["chosen"] = {
        "objective": best,
        "saved": str(out_dir),
        "data_hash": hash_,
        "lambdamart": None
        if final is None
        else {"alpha": final[0], "trees": list(final[1].trees), "seeds": final[1].settings.bag},
        # what chose the objective: each one-seed blend's validation MRR, else each neural model's
        "validation_mrr_by_objective": {
            o: round(one_seed[o].mrr if one_seed else neural[o].training.validation_mrr, 6) for o in chosen
        },
    }
    timings["total"] = round(time.perf_counter() - start, 1)
    report["seconds"] = timings
    return TrainedScorer(report, run, best, one_seed[best] if final is not None else None)


def evaluate_saved_scorer(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    folder: Path,
    *,
    settings: TrainSettings | None = None,
    cache_dir: Path | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """The scorer saved in ``folder`` — what ``recommend`` and ``serve`` load — on the store as it is now:
    its validation and test queries' candidates and features built from the current index and graph, ranked
    by the saved neural model and by its blend with the saved trees (when it has them), beside the
    baselines of the same run. It answers how a reranker trained on one state of the store ranks on
    another: the default build's, trained while 10,000 papers had vectors, once the server's background
    build has embedded every paper and swapped in the new index. Nothing is trained or saved."""
    start = time.perf_counter()
    settings = settings or TrainSettings()
    model, record = load_reranker(folder)
    splits = load_splits(store, encoder, index, settings, cache_dir, progress, names=("validation", "test"))
    run = TrainingRun(index, splits, RerankerSettings())
    report = _report_head(run, settings, "citegraph eval reranker")
    report["saved"] = {
        "folder": str(folder),
        "data_hash": record.get("data_hash"),
        "objective": record["settings"].get("objective"),
    }
    _baselines(run, store, settings)
    val_neural, test_neural = run.scorer.score_many(model, run.val), run.scorer.score_many(model, run.test)
    run.add(
        f"saved reranker, neural model ({record['settings'].get('objective')})",
        f"{folder}, trained on examples {record.get('data_hash')}",
        _ranked(val_neural, run.val),
        _ranked(test_neural, run.test),
    )
    saved_blend = load_blend(folder, record)
    if saved_blend is not None:
        mart, alpha = saved_blend
        run.add(
            f"saved scorer: LambdaMART ({mart.settings.bag} seeds) + neural, α = {alpha:g} (served)",
            "the blend `recommend` and `serve` rank with",
            blend_rankings(mart, alpha, run.val, val_neural),
            blend_rankings(mart, alpha, run.test, test_neural),
        )
    report["seconds"] = {"total": round(time.perf_counter() - start, 1)}
    return report


def _check_learnable(run: TrainingRun) -> None:
    """A DataError saying why, when no training query has a target among its candidates."""
    if any(ex.label.any() for ex in run.train):
        return
    targets = {t for ex in run.train for t in ex.targets}
    indexed = sum(1 for t in targets if t in run.index.row_of)
    raise DataError(
        f"no training query ({len(run.train)}) has a target among its candidates: of the {len(targets)} papers they "
        f"cite, {indexed} are in the retrieval index, which holds the papers with a title, an abstract or a reference "
        "string; the others are known by an id only (stubs) and can never be recommended. Load the cited works' metadata (an OpenAlex, "
        "Semantic Scholar or Crossref import of them, or titles in your JSONL), run `citegraph compute embeddings` "
        "and `citegraph compute index`, and train again"
    )


def _report_head(run: TrainingRun, settings: TrainSettings, command: str) -> dict[str, Any]:
    """The report's command, settings and query counts; its ``systems`` are the run's rows."""
    queries: dict[str, dict[str, Any]] = {
        name: {"queries": len(split.examples), "no target among candidates": split.dropped, "knows until": split.until}
        for name, split in run.splits.items()
    }
    head: dict[str, Any] = {
        "command": command,
        "query source": settings.queries,
        "settings": asdict(settings),
        "model": {k: v for k, v in asdict(run.model_settings).items() if k != "device"},
        "queries": queries,
        "systems": run.systems,
    }
    if settings.queries == "store":
        head["split"] = {"rule": rule_text(settings.store_split)}
        for name, split in run.splits.items():
            queries[name]["citing papers"] = len({q.query.citing_id for q in split.inputs})
    return head


def _baselines(run: TrainingRun, store: GraphStore, settings: TrainSettings) -> None:
    """BM25, the strongest lexical baseline, dense and the service's fusion on the same queries: the served
    channels (:class:`gnn.retrieval.prefetch.Prefetcher`), the context vectors those of the examples."""
    index = run.index
    prefetcher = Prefetcher(index, None)
    lam = settings.prefetch.global_weight_bm25
    # what validation and test know (settings.known_until for ScisummNet, the computed split's for a store)
    validation = run.splits["validation"]
    strong = validation.field_index or field_lexical_index(index, profile_citances(store), validation.until)

    def bm25(split: SplitData, lexical: LexicalIndex, global_weight: float) -> list[list[str]]:
        queries = [q.query for q in split.inputs]
        return [c.ids for c in prefetcher.bm25(queries, BASELINE_DEPTH, global_weight=global_weight, lexical=lexical)]

    def dense(split: SplitData) -> list[list[str]]:
        if not split.inputs:
            return []
        vectors = np.stack([q.context_vector for q in split.inputs])
        lists = prefetcher.dense([q.query for q in split.inputs], BASELINE_DEPTH, context_vectors=vectors)
        return [c.ids for c in lists]

    val, test = run.splits["validation"], run.splits["test"]
    run.add(
        "BM25 (tuned)",
        f"title+abstract, k1={index.settings.bm25_k1}, b={index.settings.bm25_b}",
        bm25(val, index.lexical, 0.0),
        bm25(test, index.lexical, 0.0),
    )
    run.add(
        "BM25 + profile + global",
        f"title+abstract+citation-context profile; the bm25 channel with global information (λ = {lam:g})",
        bm25(val, strong, lam),
        bm25(test, strong, lam),
    )
    run.add("dense", "all-MiniLM-L6-v2 inner product, context only", dense(val), dense(test))
    run.add(
        "service fusion (no reranker)",
        "prefetch (4 channels) → enricher → transparent RRF fusion",
        _fusion_rankings(val),
        _fusion_rankings(test),
    )


def _neural_row(run: TrainingRun, objective: str, progress: bool) -> NeuralScores:
    """Train the neural reranker with ``objective``, score the validation and test pools, add its row."""
    settings = replace(run.model_settings, objective=objective)
    model, training = RerankerTrainer(run.index.vectors, settings).fit(run.train, run.val, progress=progress)
    neural = NeuralScores(
        model,
        training,
        run.scorer.score_many(model, run.val),
        run.scorer.score_many(model, run.test),
    )
    run.add(
        f"reranker ({objective})",
        f"objective {objective}; best epoch {training.best_epoch}/{training.epochs}",
        _ranked(neural.validation, run.val),
        _ranked(neural.test, run.test),
        training_seconds=round(training.seconds, 1),
    )
    return neural


def _one_seed_rows(
    run: TrainingRun, neural: dict[str, NeuralScores], lambdamart: LambdaMartSettings, plain_trees: bool = True
) -> dict[str, OneSeedBlend]:
    """LambdaMART over the features alone (when stacked and ``plain_trees``, for comparison), then per
    objective one seed of trees stacked on its model and their blend, α chosen on validation MRR; a row each."""
    first = next(iter(neural.values()))
    if lambdamart.stacked and plain_trees:
        plain = fit_lambdamart(run.train, run.val, replace(lambdamart, stacked=False, bag=1))
        run.add(
            "LambdaMART (features only)",
            f"{plain.describe_trees()} (early-stopped on validation NDCG@10), {lambdamart.leaves} leaves",
            _mart_rankings(plain, run.val, first.validation),
            _mart_rankings(plain, run.test, first.test),
            training_seconds=round(plain.seconds, 1),
        )
    out: dict[str, OneSeedBlend] = {}
    for objective, scores in neural.items():
        log.info("LambdaMART (one seed) stacked on the %s model, and its blend with it", objective)
        mart, cross = fit_stacked_mart(
            run.folds,
            run.val,
            scores.validation,
            run.index.vectors,
            replace(run.model_settings, objective=objective),
            replace(lambdamart, bag=1),
        )
        alpha, mrr_by_alpha = choose_alpha(mart, run.val, scores.validation)
        out[objective] = OneSeedBlend(mart, alpha, mrr_by_alpha, cross)
        run.add(
            f"LambdaMART + reranker ({objective}), α = {alpha:g}, one seed",
            f"{mart.describe_trees()}, seed {lambdamart.seed}; {_blend_description(mrr_by_alpha)}",
            blend_rankings(mart, alpha, run.val, scores.validation),
            blend_rankings(mart, alpha, run.test, scores.test),
            training_seconds=round(mart.seconds, 1),
        )
    return out


def _save_neural(
    run: TrainingRun, best: str, neural: NeuralScores, out_dir: Path, settings: TrainSettings, hash_: str
) -> None:
    save_reranker(
        neural.model,
        out_dir,
        settings=replace(run.model_settings, objective=best),
        info={
            "data_hash": hash_,
            # what the background build compares with the index it swaps in (trained_index_digest)
            "index_digest": run.index.digest(),
            "split": asdict(settings),
            "validation_mrr": neural.training.validation_mrr,
            "trained_on_queries": len([ex for ex in run.train if ex.label.any()]),
        },
    )


def trained_index_digest(folder: Path) -> str | None:
    """The digest of the retrieval index (:meth:`RetrievalIndex.digest`) whose candidates and vectors trained the
    scorer saved in ``folder``; None when no scorer is saved there or it predates the record."""
    try:
        record = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    digest = record.get("index_digest") if isinstance(record, dict) else None
    return digest if isinstance(digest, str) else None


def _bag_rows(
    run: TrainingRun,
    best: str,
    neural: NeuralScores,
    first: OneSeedBlend,
    lambdamart: LambdaMartSettings,
    out_dir: Path,
) -> tuple[float, LambdaMart] | None:
    """Grow the chosen objective's trees into the bag of ``lambdamart.bag`` seeds, blend anew, add both rows,
    and save the blend beside the neural model (in ``out_dir``) when its validation MRR is higher.
    Returns the saved blend's α and trees, or None."""
    mart = first.mart
    if lambdamart.bag > 1:
        log.info("LambdaMART: %d more seeds stacked on the %s model", lambdamart.bag - 1, best)
        more = fit_lambdamart(
            run.train,
            run.val,
            replace(lambdamart, seed=lambdamart.seed + 1, bag=lambdamart.bag - 1),
            train_neural=first.cross,
            validation_neural=neural.validation,
        )
        mart = first.mart.joined(more)
    stacked_name = f"features + {best} score, stacked" if lambdamart.stacked else "features only"
    run.add(
        f"LambdaMART ({stacked_name}, {mart.settings.bag} seeds)",
        f"{mart.describe_trees()} (each early-stopped on validation NDCG@10), {lambdamart.leaves} leaves"
        + ("; training queries' neural scores cross-fitted over the folds" if lambdamart.stacked else ""),
        _mart_rankings(mart, run.val, neural.validation),
        _mart_rankings(mart, run.test, neural.test),
        training_seconds=round(mart.seconds, 1),
    )
    alpha, mrr_by_alpha = choose_alpha(mart, run.val, neural.validation)
    run.add(
        f"LambdaMART ({mart.settings.bag} seeds) + reranker ({best}), α = {alpha:g}",
        _blend_description(mrr_by_alpha),
        blend_rankings(mart, alpha, run.val, neural.validation),
        blend_rankings(mart, alpha, run.test, neural.test),
    )
    if mrr_by_alpha[alpha] > neural.training.validation_mrr:
        save_blend(out_dir, mart, alpha, mrr_by_alpha)
        return alpha, mart
    return None


def report_markdown(report: dict[str, Any]) -> str:
    """The training report as Markdown: one row per system, then the queries and timings."""
    lines = [
        f"`{report['command']}` — {report['chosen']['objective']} chosen on validation MRR"
        if "chosen" in report
        else f"`{report['command']}` — the scorer saved in {report.get('saved', {}).get('folder', '?')}",
        "",
        "| system | val R@10 | val MRR | val R@50 | multi R@10 (val) | test R@10 | test MRR | test hit@1 | test hit@10 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["systems"]:
        v, t = row["validation"], row["test"]
        multi = v.get("multi_R@10")
        test = (
            "– | – | – | –"  # no test queries (train reranker --no-test)
            if t.get("queries") == 0
            else f"{t['R@10']:.3f} | {t['MRR']:.3f} | {t.get('hit@1', float('nan')):.3f} | {t.get('hit@10', float('nan')):.3f}"
        )
        lines.append(
            f"| {row['name']} | {v['R@10']:.3f} | {v['MRR']:.3f} | {v.get('R@50', float('nan')):.3f} | "
            f"{'' if multi is None else f'{multi:.3f}'} | {test} |"
        )
    lines.append("")
    lines.append(f"query source: {report.get('query source', 'scisummnet')}")
    if "split" in report:
        lines.append(f"split: {report['split']['rule']}")
    lines.append("queries: " + "; ".join(f"{k}: {v}" for k, v in report["queries"].items()))
    lines.append(f"seconds: {report['seconds']}")
    return "\n".join(lines)


__all__ = [
    "DEFAULT_LAMBDAMART",
    "NeuralScores",
    "OneSeedBlend",
    "TrainedScorer",
    "TrainingOptions",
    "TrainingRun",
    "blend_rankings",
    "cross_fitted_scores",
    "evaluate_saved_scorer",
    "fit_stacked_mart",
    "model_rankings",
    "multi_citation_queries",
    "ranking_metrics",
    "report_markdown",
    "run_training",
    "train_scorer",
    "trained_index_digest",
]
