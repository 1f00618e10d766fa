r"""``citegraph train reranker`` and ``citegraph eval recommend --ablation``: the reranker on the time split.

**Data, strictly as the service sees it.** The queries are the ScisummNet citing sentences of
:mod:`gnn.recommend.evaluate` (every cited paper's marker masked). Each query's candidates are what
:class:`gnn.recommend.service.RecommendationService` really returns for it (prefetch → enricher), and its
features what was known before it was written (:class:`gnn.rerank.features.Knowledge`):

* **training folds**: queries of 2006–2007 see the graph, citation-context profiles and co-citation
  counts up to 2005; queries of 2008–2009 those up to 2007. A query never sees its own citation, nor
  anything from the validation and test years;
* **validation** (2010; early stopping, model selection, the issue's targets) and **test** (2011,
  reported, never used to choose) see everything up to 2009, like :mod:`gnn.recommend.evaluate`.

Only queries with a target among their candidates train (the "strict" regime of Medić & Šnajder
2020); how many were left out is reported. Every figure is end to end over the whole pool: a target
the prefetch missed counts as a miss.

**Baselines of the same run**, on the same queries: BM25 (title+abstract, the tuned k1/b of the
index), the strongest lexical baseline — BM25 over each candidate's title, abstract *and*
citation-context profile, queried with the context plus the citing paper's title and abstract —
dense retrieval, and the service's transparent fusion score (the ranking before this reranker).

**The final scorer**: a neural reranker blended with LambdaMART over the same features and that
model's score (:mod:`gnn.rerank.lambdamart`, stacking; the training queries' neural scores cross-fitted,
:func:`cross_fitted_scores`). Each objective trained gets one seed of stacked trees and its blend;
the objective whose blend has the best validation MRR is kept — the scorer that is served decides,
not the neural model alone. Its trees then grow into a bag of seeds (``LambdaMartSettings.bag``,
scores averaged), blended anew, and saved when that blend's validation MRR beats the neural model's.
The run also reports LambdaMART over the features alone, so the stacking's share is measured.

**Ablation** (``--ablation``): every objective; then, for the chosen objective, − hyperbolic
(Euclidean distance between the same taxonomy points), − taxonomy (no taxonomy feature), −
co-citation (no co-citation features, no co-cited candidates), − enricher (no references
features, no candidates only the references stage proposed), − authors, − per-field overlap. Each
row is a model trained without the part (and, when the final scorer is the blend, one seed of trees
retrained without it and blended with the same α: it compares with the chosen objective's one-seed
row), evaluated on validation, the multi-citation subset (sentences citing ≥ 2 papers, R@10 over
all their targets) and test.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from gnn.cocitation.noise import NoiseSampler, noise_distributions
from gnn.metrics import evaluate_rankings, recall_at_k
from gnn.recommend.evaluate import build_queries, profile_citances
from gnn.recommend.service import FusionScorer, RecommendationService, RecommendRequest, ServiceSettings, reranker_dir
from gnn.rerank.features import (
    FeatureBuilder,
    FeatureSettings,
    Knowledge,
    QueryInput,
    TaxonomyPlaces,
    known_citations,
)
from gnn.rerank.lambdamart import (
    LambdaMart,
    LambdaMartSettings,
    blend,
    choose_alpha,
    fit_lambdamart,
    remove_saved,
    save_blend,
)
from gnn.rerank.model import (
    OBJECTIVES,
    QueryExample,
    RerankerModel,
    RerankerSettings,
    RerankerTrainer,
    data_hash,
    ranked_ids,
    save_reranker,
)
from gnn.retrieval.enricher import Candidate, CitationLists, EnricherSettings, read_citations_with_years
from gnn.retrieval.index import LexicalIndex, RetrievalIndex, tokenize
from gnn.retrieval.prefetch import PrefetchSettings
from gnn.retrieval.profiles import ProfileIndex, ProfileSettings, field_lexical_index
from gnn.text.embeddings import titles_and_abstracts
from gnn.text.encoder import TextEncoder
from graph.errors import DataError
from graph.store import GraphStore

log = logging.getLogger(__name__)

DEFAULT_LAMBDAMART = LambdaMartSettings()  # run_training's default; None there skips LambdaMART


@dataclass(frozen=True)
class Fold:
    """Training queries of ``years`` (inclusive) that know the graph up to ``until``."""

    until: int
    years: tuple[int, int]


@dataclass(frozen=True)
class TrainSettings:
    """The split and the sampling of extra positives / negatives."""

    folds: tuple[Fold, ...] = (Fold(2005, (2006, 2007)), Fold(2007, (2008, 2009)))
    known_until: int = 2009  # what validation and test queries know (as in gnn.recommend.evaluate)
    validation: tuple[int, int] = (2010, 2010)
    test: tuple[int, int] = (2011, 2011)
    partners_per_target: int = 4  # co-cited partners drawn per target from p(j|t) (extra positives)
    noise_negatives: int = 8  # papers drawn per query from p(i) (extra negatives)
    power: float = 0.75  # α of both noise distributions
    limit: int | None = None  # queries per split at most (a quick run); None: all
    seed: int = 0
    # The pool the examples are drawn from: the service's own prefetch (part of the example cache's key).
    prefetch: PrefetchSettings = field(default_factory=PrefetchSettings)


# --- examples ----------------------------------------------------------------------------------


@dataclass
class SplitData:
    name: str
    examples: list[QueryExample]
    pools: list[list[Candidate]]  # the service's candidates, for re-featurising (ablations)
    inputs: list[QueryInput]
    until: int
    dropped: int = 0  # queries without a target among the candidates (left out of training)


def _requests(frame: pd.DataFrame) -> list[RecommendRequest]:
    return [
        RecommendRequest(context=ctx, citing_paper_id=citing, year=int(year), k=1, cited_ids=tuple(cited), id=sentence)
        for ctx, citing, year, cited, sentence in zip(
            frame["context"], frame["citing_id"], frame["citing_year"], frame["cited_elsewhere"], frame["sentence_id"]
        )
    ]


class ExampleBuilder:
    """Turns query frames into :class:`QueryExample` lists through the service, per knowledge cutoff."""

    def __init__(
        self,
        store: GraphStore,
        index: RetrievalIndex,
        encoder: TextEncoder,
        settings: TrainSettings,
        *,
        progress: bool = False,
    ) -> None:
        self.store, self.index, self.encoder, self.settings, self.progress = store, index, encoder, settings, progress
        self.citances = profile_citances(store)
        self.citations = read_citations_with_years(store)
        self.places = TaxonomyPlaces.from_store(store)
        self.lists = CitationLists.from_rows(self.citations, store)
        self._fields: dict[int, LexicalIndex] = {}  # title + abstract + profile BM25 per knowledge cutoff
        self.authorships = pd.DataFrame(store.query("authorships"), columns=["author_id", "paper_id"])
        self.features = (
            FeatureBuilder(index, Knowledge.from_citations(self.citations, None), self.places)
            .with_authorships(self.authorships)
            .with_texts(titles_and_abstracts(store))
        )

    def split(self, name: str, frame: pd.DataFrame, until: int, *, extras: bool) -> SplitData:
        index, encoder, s = self.index, self.encoder, self.settings
        profiles = ProfileIndex.build(index, self.citances, encoder, ProfileSettings(until=until))
        service_settings = replace(
            ServiceSettings(),
            index=index.settings,
            profiles=ProfileSettings(until=until),
            enricher=EnricherSettings(known_until=until),
            prefetch=s.prefetch,
        )
        service = RecommendationService(
            self.store, index, encoder, profiles=profiles, settings=service_settings, citations=self.lists
        )
        knowledge = Knowledge.from_citations(self.citations, until)
        if until not in self._fields:
            self._fields[until] = field_lexical_index(index, self.citances, until)
        builder = self.features.with_knowledge(knowledge).with_field_index(self._fields[until])
        sampler = _sampler(self.citations, until, s) if extras else None
        requests = _requests(frame)
        out = SplitData(name, [], [], [], until)
        chunks = range(0, len(requests), 128)
        for begin in tqdm(chunks, desc=f"candidates ({name})", disable=not self.progress):
            chunk = requests[begin : begin + 128]
            pools = service.candidates(chunk)
            queries = [q for q, _ in pools]
            contexts = encoder.encode([q.context for q in queries])
            globals_ = service.prefetcher.global_vectors(queries)
            for k, (request, (query, candidates)) in enumerate(zip(chunk, pools)):
                row = frame.iloc[begin + k]
                q = QueryInput(query, request.cited_ids, contexts[k], globals_[k] if np.any(globals_[k]) else None)
                example = _example(q, candidates, set(row["targets"]), builder, index)
                if sampler is not None:
                    _add_extras(example, q, builder, sampler, index, s)
                out.examples.append(example)
                out.pools.append(candidates)
                out.inputs.append(q)
        out.dropped = sum(1 for ex in out.examples if not ex.label.any())
        log.info("%s: %d queries, %d without a target among the candidates", name, len(out.examples), out.dropped)
        return out


def _example(
    q: QueryInput, candidates: Sequence[Candidate], targets: set[str], builder: FeatureBuilder, index: RetrievalIndex
) -> QueryExample:
    ids = [c.paper_id for c in candidates]
    return QueryExample(
        context=q.context_vector.astype(np.float32),
        global_=(q.global_vector if q.global_vector is not None else np.zeros_like(q.context_vector)).astype(
            np.float32
        ),
        rows=np.asarray([index.row_of.get(p, -1) for p in ids], dtype=np.int64),
        features=builder.features(q, candidates),
        ids=ids,
        targets=targets,
        stages=[tuple(c.stages) for c in candidates],
    )


def _sampler(citations: pd.DataFrame, until: int, settings: TrainSettings) -> NoiseSampler:
    """Noise distributions (MP-BERT4CR eq. 1–2) from the co-citations known up to ``until``."""
    from gnn.cocitation.compute import count_pairs

    kept = known_citations(citations, until)
    ids = pd.Index(sorted(set(kept["cited_id"].astype(str))))
    members, _ = pd.factorize(kept["citing_id"].astype(str))
    pairs = count_pairs(members, ids.get_indexer(kept["cited_id"].astype(str)), ids, device="cpu")
    return NoiseSampler(
        noise_distributions(pairs, power=settings.power, device="cpu"), seed=settings.seed, device="cpu"
    )


def _add_extras(
    example: QueryExample,
    q: QueryInput,
    builder: FeatureBuilder,
    sampler: NoiseSampler,
    index: RetrievalIndex,
    settings: TrainSettings,
) -> None:
    """Co-cited partners of the targets (extra positives), popularity negatives, and target-based triples."""
    noise_ids = sampler.noise.ids
    targets = [t for t in sorted(example.targets) if t in set(example.ids) and noise_ids.get_indexer([t])[0] >= 0]
    if not targets:
        return
    banned = set(example.targets) | set(q.cited_ids) | {q.query.citing_id or ""}
    codes = sampler.noise.index(targets)
    exclude = [[int(c) for c in noise_ids.get_indexer(sorted(banned)) if c >= 0]] * len(targets)
    partners = sampler.positives(codes, settings.partners_per_target, exclude=exclude)
    negatives = sampler.negatives(codes[:1], settings.noise_negatives, exclude=exclude[:1])[0]
    year = q.query.year

    def usable(code: int) -> str | None:
        if code < 0:
            return None
        paper = str(noise_ids[code])
        row = index.row_of.get(paper)
        if row is None or paper in banned:
            return None
        if year is not None and index.years[row] > year:
            return None
        return paper

    positive_ids = sorted({p for p in (usable(int(c)) for c in partners.flatten()) if p})
    negative_ids = sorted({p for p in (usable(int(c)) for c in negatives) if p} - set(positive_ids))
    extra = positive_ids + negative_ids
    if extra:
        example.extra_rows = np.asarray([index.row_of[p] for p in extra], dtype=np.int64)
        example.extra_features = builder.features(
            q, [Candidate(p) for p in extra], pool_max=builder.pool_max(example.features)
        )
        example.extra_positive = np.asarray([True] * len(positive_ids) + [False] * len(negative_ids))
    triples = []
    negative_rows = [index.row_of[p] for p in negative_ids]
    for target, row in zip(targets, partners.tolist()):
        target_row = index.row_of.get(target)
        partner_rows = [index.row_of[p] for p in (usable(int(c)) for c in row) if p]
        if target_row is None or not negative_rows:
            continue
        for k, partner_row in enumerate(partner_rows):
            triples.append((target_row, partner_row, negative_rows[k % len(negative_rows)]))
    if triples:
        example.triples = np.asarray(triples, dtype=np.int64)


# --- systems and metrics -----------------------------------------------------------------------


def _multi_citation(examples: Sequence[QueryExample]) -> list[int]:
    """Positions of the queries whose sentence cites at least two papers (the multi-citation subset)."""
    return [k for k, ex in enumerate(examples) if len(ex.targets) >= 2]


def _metrics(rankings: Sequence[Sequence[str]], examples: Sequence[QueryExample]) -> dict[str, Any]:
    relevant = [ex.targets for ex in examples]
    metrics: dict[str, Any] = dict(evaluate_rankings(rankings, relevant).as_dict())
    multi = _multi_citation(examples)
    metrics["multi_R@10"] = (
        float(np.mean([recall_at_k(rankings[k], relevant[k], 10) for k in multi])) if multi else None
    )
    metrics["multi_queries"] = len(multi)
    return metrics


def _model_rankings(
    model: RerankerModel, trainer: RerankerTrainer, examples: Sequence[QueryExample]
) -> list[list[str]]:
    return [ranked_ids(trainer.score(model, ex), ex.ids) for ex in examples]


def _ranked(scores: Sequence[np.ndarray], examples: Sequence[QueryExample]) -> list[list[str]]:
    return [ranked_ids(s, ex.ids) for s, ex in zip(scores, examples, strict=True)]


def _mart_rankings(mart: LambdaMart, examples: Sequence[QueryExample], neural: Sequence[np.ndarray]) -> list[list[str]]:
    return [ranked_ids(mart.score(ex.features, n), ex.ids) for ex, n in zip(examples, neural)]


def _blend_rankings(
    mart: LambdaMart, alpha: float, examples: Sequence[QueryExample], neural: Sequence[np.ndarray]
) -> list[list[str]]:
    return [ranked_ids(blend(mart.score(ex.features, n), n, alpha), ex.ids) for ex, n in zip(examples, neural)]


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
        out.extend(trainer.score(model, ex) for ex in parts[held_out])
    return out


def _fit_mart(
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


def _lexical_rankings(
    index: RetrievalIndex, lexical: LexicalIndex, split: SplitData, *, with_global: bool, depth: int = 1000
) -> list[list[str]]:
    out = []
    for q in split.inputs:
        tokens = tokenize(q.query.context) + (tokenize(q.query.global_text) if with_global else [])
        scores = lexical.scores(tokens)
        cut = index.cut(q.query.year)
        scores[cut:] = -np.inf
        for paper in q.query.exclude:
            row = index.row_of.get(paper)
            if row is not None:
                scores[row] = -np.inf
        top = _top_rows(scores[:cut], depth)
        out.append([str(index.ids[r]) for r in top if np.isfinite(scores[r])])
    return out


def _top_rows(scores: np.ndarray, depth: int) -> np.ndarray:
    """Rows of the ``depth`` best scores, best first, ties by row (argpartition, then a sort of the few)."""
    part = np.argpartition(-scores, depth - 1)[:depth] if len(scores) > depth else np.arange(len(scores))
    return part[np.lexsort((part, -scores[part]))]


def _dense_rankings(index: RetrievalIndex, split: SplitData, depth: int = 1000) -> list[list[str]]:
    out = []
    for q in split.inputs:
        cut = index.cut(q.query.year)
        scores = index.vectors[:cut] @ q.context_vector
        for paper in q.query.exclude:
            row = index.row_of.get(paper)
            if row is not None and row < cut:
                scores[row] = -np.inf
        out.append([str(index.ids[r]) for r in _top_rows(scores, depth)])
    return out


# --- the run -----------------------------------------------------------------------------------


def _ablated(split: SplitData, drop_stage: str | None, mask: np.ndarray) -> list[QueryExample]:
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


def run_training(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    *,
    out_dir: Path,
    settings: TrainSettings = TrainSettings(),
    model_settings: RerankerSettings | None = None,
    objectives: Sequence[str] | None = None,
    ablation: bool = False,
    lambdamart: LambdaMartSettings | None = DEFAULT_LAMBDAMART,
    cache_dir: Path | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Build the examples and train the neural reranker with each objective of ``objectives`` (or
    ``model_settings.objective``). With ``lambdamart`` (None: skip) each gets one seed of stacked trees and
    its blend (:mod:`gnn.rerank.lambdamart`, α chosen on validation MRR), and the objective whose blend has the best
    validation MRR is kept (without: the best neural model); its trees grow to ``lambdamart.bag`` seeds and are
    blended anew. Save the final scorer — the blend when its validation MRR is higher, else the neural model
    alone — into ``out_dir``, evaluate every model with the baselines, and with ``ablation`` the ablation rows
    (module docstring). Returns the report."""
    start = time.perf_counter()
    model_settings = model_settings or RerankerSettings()
    splits = _load_splits(store, encoder, index, settings, cache_dir, progress)
    folds = [split.examples for name, split in splits.items() if name.startswith("train")]
    train = [ex for fold in folds for ex in fold]
    val, test = splits["validation"], splits["test"]
    trainer = RerankerTrainer(index.vectors, model_settings)
    timings: dict[str, float] = {"examples": round(time.perf_counter() - start, 1)}
    report: dict[str, Any] = {
        "command": "citegraph eval recommend --ablation" if ablation else "citegraph train reranker",
        "settings": asdict(settings),
        "model": {k: v for k, v in asdict(model_settings).items() if k != "device"},
        "queries": {
            name: {
                "queries": len(split.examples),
                "no target among candidates": split.dropped,
                "knows until": split.until,
            }
            for name, split in splits.items()
        },
        "systems": [],
    }

    def add(name: str, description: str, val_rank: list[list[str]], test_rank: list[list[str]], **extra: Any) -> None:
        report["systems"].append(
            {
                "name": name,
                "description": description,
                "validation": _metrics(val_rank, val.examples),
                "test": _metrics(test_rank, test.examples),
                **extra,
            }
        )

    log.info("baselines on the same queries")
    add(
        "BM25 (tuned)",
        f"title+abstract, k1={index.settings.bm25_k1}, b={index.settings.bm25_b}",
        _lexical_rankings(index, index.lexical, val, with_global=False),
        _lexical_rankings(index, index.lexical, test, with_global=False),
    )
    strong = field_lexical_index(index, profile_citances(store), settings.known_until)
    add(
        "BM25 + profile + global",
        "title+abstract+citation-context profile; query: context + citing title+abstract",
        _lexical_rankings(index, strong, val, with_global=True),
        _lexical_rankings(index, strong, test, with_global=True),
    )
    add("dense", "all-MiniLM-L6-v2 cosine, context only", _dense_rankings(index, val), _dense_rankings(index, test))
    add(
        "service fusion (no reranker)",
        "prefetch (4 channels) → enricher → transparent RRF fusion",
        _fusion_rankings(val),
        _fusion_rankings(test),
    )

    chosen = list(objectives) if objectives else ([*OBJECTIVES] if ablation else [model_settings.objective])
    trained: dict[str, tuple[RerankerModel, Any]] = {}
    neural: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}  # each model's validation and test scores
    for objective in chosen:
        s_ = replace(model_settings, objective=objective)
        model, training = RerankerTrainer(index.vectors, s_).fit(train, val.examples, progress=progress)
        trained[objective] = (model, training)
        neural[objective] = (
            [trainer.score(model, ex) for ex in val.examples],
            [trainer.score(model, ex) for ex in test.examples],
        )
        add(
            f"reranker ({objective})",
            f"objective {objective}; best epoch {training.best_epoch}/{training.epochs}",
            _ranked(neural[objective][0], val.examples),
            _ranked(neural[objective][1], test.examples),
            training_seconds=round(training.seconds, 1),
        )
    if lambdamart is not None and not any(ex.label.any() for ex in val.examples):
        log.warning("LambdaMART skipped: no validation query has a target among their candidates to stop on")
        lambdamart = None
    # One seed of stacked trees per objective: the objective is chosen by the validation MRR of the scorer
    # that is served (trees blended with the neural model), not of the neural model alone, whose lead can
    # be smaller than the trees' seed-to-seed spread (docs/quality.md).
    one_seed: dict[str, tuple[LambdaMart, float, dict[float, float], list[np.ndarray] | None]] = {}
    if lambdamart is not None:
        if lambdamart.stacked:  # the trees without the neural score, for comparison in the same run
            plain = fit_lambdamart(train, val.examples, replace(lambdamart, stacked=False, bag=1))
            add(
                "LambdaMART (features only)",
                f"{plain.describe_trees()} (early-stopped on validation NDCG@10), {lambdamart.leaves} leaves",
                _mart_rankings(plain, val.examples, neural[chosen[0]][0]),
                _mart_rankings(plain, test.examples, neural[chosen[0]][1]),
                training_seconds=round(plain.seconds, 1),
            )
        for objective in chosen:
            log.info("LambdaMART (one seed) stacked on the %s model, and its blend with it", objective)
            val_neural, test_neural = neural[objective]
            mart, cross = _fit_mart(
                folds,
                val.examples,
                val_neural,
                index.vectors,
                replace(model_settings, objective=objective),
                replace(lambdamart, bag=1),
            )
            alpha, mrr_by_alpha = choose_alpha(mart, val.examples, val_neural)
            one_seed[objective] = (mart, alpha, mrr_by_alpha, cross)
            add(
                f"LambdaMART + reranker ({objective}), α = {alpha:g}, one seed",
                f"{mart.describe_trees()}, seed {lambdamart.seed}; {_blend_description(mrr_by_alpha)}",
                _blend_rankings(mart, alpha, val.examples, val_neural),
                _blend_rankings(mart, alpha, test.examples, test_neural),
                training_seconds=round(mart.seconds, 1),
            )
        best = max(chosen, key=lambda o: one_seed[o][2][one_seed[o][1]])
    else:
        best = max(trained, key=lambda o: trained[o][1].validation_mrr)
    best_model, best_training = trained[best]
    best_settings = replace(model_settings, objective=best)
    hash_ = data_hash(train)
    save_reranker(
        best_model,
        out_dir,
        settings=best_settings,
        info={
            "data_hash": hash_,
            "split": asdict(settings),
            "validation_mrr": best_training.validation_mrr,
            "trained_on_queries": len([ex for ex in train if ex.label.any()]),
        },
    )
    chosen_blend: tuple[float, LambdaMart] | None = None
    if lambdamart is not None:
        first, _, _, cross = one_seed[best]
        val_neural, test_neural = neural[best]
        mart = first
        if lambdamart.bag > 1:
            log.info("LambdaMART: %d more seeds stacked on the %s model", lambdamart.bag - 1, best)
            more = fit_lambdamart(
                train,
                val.examples,
                replace(lambdamart, seed=lambdamart.seed + 1, bag=lambdamart.bag - 1),
                train_neural=cross,
                validation_neural=val_neural,
            )
            mart = first.joined(more)
        stacked_name = f"features + {best} score, stacked" if lambdamart.stacked else "features only"
        add(
            f"LambdaMART ({stacked_name}, {mart.settings.bag} seeds)",
            f"{mart.describe_trees()} (each early-stopped on validation NDCG@10), {lambdamart.leaves} leaves"
            + ("; training queries' neural scores cross-fitted over the folds" if lambdamart.stacked else ""),
            _mart_rankings(mart, val.examples, val_neural),
            _mart_rankings(mart, test.examples, test_neural),
            training_seconds=round(mart.seconds, 1),
        )
        alpha, mrr_by_alpha = choose_alpha(mart, val.examples, val_neural)
        add(
            f"LambdaMART ({mart.settings.bag} seeds) + reranker ({best}), α = {alpha:g}",
            _blend_description(mrr_by_alpha),
            _blend_rankings(mart, alpha, val.examples, val_neural),
            _blend_rankings(mart, alpha, test.examples, test_neural),
        )
        if mrr_by_alpha[alpha] > best_training.validation_mrr:
            chosen_blend = (alpha, mart)
            save_blend(out_dir, mart, alpha, mrr_by_alpha)
        else:
            remove_saved(out_dir)
    report["chosen"] = {
        "objective": best,
        "saved": str(out_dir),
        "data_hash": hash_,
        "lambdamart": None
        if chosen_blend is None
        else {"alpha": chosen_blend[0], "trees": list(chosen_blend[1].trees), "seeds": chosen_blend[1].settings.bag},
        # what chose the objective: each one-seed blend's validation MRR, else each neural model's
        "validation_mrr_by_objective": {
            o: round(one_seed[o][2][one_seed[o][1]] if one_seed else trained[o][1].validation_mrr, 6) for o in chosen
        },
    }

    if ablation:
        rows = [
            ("− hyperbolic (Euclidean distance)", None, FeatureSettings(euclidean=True)),
            ("− taxonomy", None, FeatureSettings(disabled=("taxonomy",))),
            ("− co-citation", "cocited", FeatureSettings(disabled=("cocitation",))),
            ("− enricher", "references", FeatureSettings(disabled=("enricher",))),
            ("− authors", None, FeatureSettings(disabled=("authors",))),
            ("− title and names (per-field overlap)", None, FeatureSettings(disabled=("fields",))),
        ]
        for label, stage, feature_settings in rows:
            mask = feature_settings.mask()
            if feature_settings.euclidean:
                places = TaxonomyPlaces.from_store(store)
                citations = read_citations_with_years(store)
                parts = {name: _euclidean(split, index, places, citations) for name, split in splits.items()}
            else:
                parts = {name: _ablated(split, stage, mask) for name, split in splits.items()}
            folds_a = [exs for name, exs in parts.items() if name.startswith("train")]
            train_a = [ex for fold in folds_a for ex in fold]
            model, training = RerankerTrainer(index.vectors, best_settings).fit(train_a, parts["validation"])
            description = f"best epoch {training.best_epoch}/{training.epochs}"
            if chosen_blend is None:
                name = f"reranker ({best}) {label}"
                val_rank = _model_rankings(model, trainer, parts["validation"])
                test_rank = _model_rankings(model, trainer, parts["test"])
            else:
                # one seed of trees, blended with the α of the chosen objective's one-seed row: the row it
                # is compared with (a whole bag per row would double the run's time)
                reference, alpha = one_seed[best][0], one_seed[best][1]
                val_neural_a = [trainer.score(model, ex) for ex in parts["validation"]]
                test_neural_a = [trainer.score(model, ex) for ex in parts["test"]]
                mart_a, _ = _fit_mart(
                    folds_a, parts["validation"], val_neural_a, index.vectors, best_settings, reference.settings
                )
                name = f"LambdaMART + reranker ({best}), one seed {label}"
                description += f"; LambdaMART {mart_a.describe_trees()}; α = {alpha:g}"
                val_rank = _blend_rankings(mart_a, alpha, parts["validation"], val_neural_a)
                test_rank = _blend_rankings(mart_a, alpha, parts["test"], test_neural_a)
            report["systems"].append(
                {
                    "name": name,
                    "description": description,
                    "validation": _metrics(val_rank, parts["validation"]),
                    "test": _metrics(test_rank, parts["test"]),
                    "training_seconds": round(training.seconds, 1),
                }
            )
    timings["total"] = round(time.perf_counter() - start, 1)
    report["seconds"] = timings
    return report


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
    settings: TrainSettings = TrainSettings(),
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
    with its 95% interval: the question the reranker issue asks (does a multi-positive objective beat
    plain triplet on the multi-citation subset?) with the seed noise and the query sample both in view.

    ``disabled`` switches feature groups off (:data:`gnn.rerank.features.FEATURE_GROUPS`, their features
    0 in every split, the candidates unchanged): e.g. whether the objectives differ once the model no
    longer sees the co-citation counts that the multi-positive objectives draw their partners from.
    """
    start = time.perf_counter()
    model_settings = model_settings or RerankerSettings()
    splits = _load_splits(store, encoder, index, settings, cache_dir, progress)
    if disabled:
        mask = FeatureSettings(disabled=tuple(disabled)).mask()
        splits = {name: replace(split, examples=_ablated(split, None, mask)) for name, split in splits.items()}
    train = [ex for name, split in splits.items() if name.startswith("train") for ex in split.examples]
    evaluated = {"validation": splits["validation"].examples, "test": splits["test"].examples}
    multi = {name: _multi_citation(exs) for name, exs in evaluated.items()}
    runs: list[dict[str, Any]] = []
    per_query: dict[tuple[str, str], list[np.ndarray]] = {}  # (objective, split) -> per seed, multi R@10
    for seed in seeds:
        for objective in objectives:
            s_ = replace(model_settings, objective=objective, seed=seed)
            trainer = RerankerTrainer(index.vectors, s_)
            model, training = trainer.fit(train, evaluated["validation"], progress=progress)
            run: dict[str, Any] = {
                "objective": objective,
                "seed": seed,
                "best_epoch": training.best_epoch,
                "seconds": round(training.seconds, 1),
            }
            for name, examples in evaluated.items():
                rankings = _model_rankings(model, trainer, examples)
                run[name] = _metrics(rankings, examples)
                per_query.setdefault((objective, name), []).append(
                    np.asarray([recall_at_k(rankings[k], examples[k].targets, 10) for k in multi[name]])
                )
            log.info("objective %s seed %d: %s", objective, seed, run["validation"])
            runs.append(run)
    summary: dict[str, Any] = {}
    rng = np.random.default_rng(0)
    for objective in objectives:
        summary[objective] = {}
        for name in evaluated:
            chosen = [r[name] for r in runs if r["objective"] == objective]
            entry: dict[str, Any] = {
                metric: {
                    "mean": float(np.mean([c[metric] for c in chosen])),
                    "sd": float(np.std([c[metric] for c in chosen], ddof=1)) if len(chosen) > 1 else 0.0,
                }
                for metric in ("R@10", "MRR", "multi_R@10")
            }
            for reference in references:
                if objective == reference or reference not in objectives or not multi[name]:
                    continue
                ours, theirs = per_query[(objective, name)], per_query[(reference, name)]
                diff = np.mean(ours, axis=0) - np.mean(theirs, axis=0)
                mean, low, high = paired_bootstrap(diff, resamples, rng)
                entry[f"multi_R@10 vs {reference}"] = {
                    "difference": mean,
                    "ci95": [low, high],
                    "per_seed": [float(a.mean() - b.mean()) for a, b in zip(ours, theirs)],
                    "sentences": len(diff),
                }
            summary[objective][name] = entry
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


def _euclidean(
    split: SplitData, index: RetrievalIndex, places: TaxonomyPlaces, citations: pd.DataFrame
) -> list[QueryExample]:
    """``split`` re-featurised with the Euclidean instead of the Poincaré distance (nothing else changes)."""
    from gnn.rerank.features import FEATURE_NAMES

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


def _split_frames(store: GraphStore, settings: TrainSettings) -> dict[str, tuple[pd.DataFrame, int, bool]]:
    frame = build_queries(store)
    out: dict[str, tuple[pd.DataFrame, int, bool]] = {}

    def part(low: int, high: int) -> pd.DataFrame:
        chosen = frame[(frame["citing_year"] >= low) & (frame["citing_year"] <= high)].reset_index(drop=True)
        if settings.limit is not None and len(chosen) > settings.limit:
            chosen = chosen.sample(n=settings.limit, random_state=settings.seed).reset_index(drop=True)
        return chosen

    for fold in settings.folds:
        out[f"train {fold.years[0]}-{fold.years[1]}"] = (part(*fold.years), fold.until, True)
    out["validation"] = (part(*settings.validation), settings.known_until, False)
    out["test"] = (part(*settings.test), settings.known_until, False)
    return out


def _load_splits(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    settings: TrainSettings,
    cache_dir: Path | None,
    progress: bool,
) -> dict[str, SplitData]:
    """Every split's examples, from ``cache_dir`` when nothing they derive from changed.

    The cache key covers the index (papers, texts, vectors), the graph's citations, categories and
    taxonomy points, the citing sentences, the split settings, the feature names and the encoder size.
    """
    from gnn.rerank.features import FEATURE_NAMES

    builder = ExampleBuilder(store, index, encoder, settings, progress=progress)
    digest = hashlib.sha256()
    for part in (index.digest(), json.dumps([asdict(settings), list(FEATURE_NAMES), encoder.dim], default=str)):
        digest.update(part.encode())
    for frame in (
        builder.citations,
        builder.citances[["sentence_id", "cited_id", "citing_year", "text"]],
        builder.authorships,
    ):
        digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    places = builder.places
    digest.update("\x1f".join(places.codes).encode() + np.ascontiguousarray(places.points).tobytes())
    digest.update(
        json.dumps(sorted(places.row_of.items())).encode() + np.ascontiguousarray(places.paper_points).tobytes()
    )
    key = digest.hexdigest()[:16]
    path = cache_dir / f"examples-{key}.pkl" if cache_dir is not None else None
    if path is not None and path.is_file():
        log.info("reranker examples from %s", path)
        with path.open("rb") as handle:
            cached: dict[str, SplitData] = pickle.load(handle)  # our own cache file, written below
        return cached
    splits = {
        name: builder.split(name, frame, until, extras=extras)
        for name, (frame, until, extras) in _split_frames(store, settings).items()
    }
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as handle:
            pickle.dump(splits, handle, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    return splits


def report_markdown(report: dict[str, Any]) -> str:
    lines = [
        f"`{report['command']}` — {report.get('chosen', {}).get('objective', '')} chosen on validation MRR",
        "",
        "| system | val R@10 | val MRR | val R@50 | multi R@10 (val) | test R@10 | test MRR |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["systems"]:
        v, t = row["validation"], row["test"]
        multi = v.get("multi_R@10")
        lines.append(
            f"| {row['name']} | {v['R@10']:.3f} | {v['MRR']:.3f} | {v.get('R@50', float('nan')):.3f} | "
            f"{'' if multi is None else f'{multi:.3f}'} | {t['R@10']:.3f} | {t['MRR']:.3f} |"
        )
    lines.append("")
    lines.append("queries: " + "; ".join(f"{k}: {v}" for k, v in report["queries"].items()))
    lines.append(f"seconds: {report['seconds']}")
    return "\n".join(lines)


def write_report(report: dict[str, Any], out: Path) -> tuple[Path, Path]:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    md = out.with_suffix(".md")
    md.write_text(report_markdown(report) + "\n", encoding="utf-8")
    return out, md


__all__ = [
    "ExampleBuilder",
    "Fold",
    "TrainSettings",
    "compare_objectives",
    "paired_bootstrap",
    "report_markdown",
    "reranker_dir",
    "run_training",
    "write_report",
]
