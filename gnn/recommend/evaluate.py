r"""``citegraph eval recommend``: the citation-recommendation harness on the ScisummNet citances.

**Queries.** Every ScisummNet citing sentence (13,008 sentences, 13,690 MENTIONS; ids
``<citing>#c<hash>``) becomes one query: its text with the marker of *every* paper it cites masked as
``[CIT]`` (:func:`gnn.recommend.citances.build_queries`; other markers stay), the citing paper's year, and as
relevant set all the papers it cites. The candidate pool is every Paper of the graph; papers
published after the citing paper and the citing paper itself are never candidates.

**Time split** by the citing paper's year (the citances run 1985–2011; 9,049 sentences ≤ 2009,
2,317 in 2010, 1,642 in 2011): *train* ≤ 2009, *validation* 2010, *test* 2011. Everything a query
may know about citations comes from the training period: citation-context profiles hold only the
citing sentences of papers published ≤ 2009, and the enricher only follows CITES made by papers
published ≤ 2009 (its co-citation counts are recomputed from those, not read from the stored
CO_CITED edges, which count 2010–2011 citations too). Parameters (BM25 k1/b, the global-information
weight, fusion weights) are tuned on a seeded sample of the validation queries; the table reports
validation (the figures the targets are set on) and test (untouched by any tuning).

**Systems, one run, one table:** BM25 (Lucene defaults k1 = 1.2, b = 0.75), BM25 tuned, dense,
hybrid (RRF and score-weighted), + global information, + citation-context profiles, + enricher
(references of the top prefetched papers), + cited papers (co-citation partners of the papers the
citing paper cites elsewhere). The last rows run through :class:`gnn.recommend.service.RecommendationService`
itself. Every number is end to end: a query whose target is not retrieved scores 0.

The module is one harness: each step of :func:`run_evaluation` (BM25 → global weight → fusions →
service) is tuned on what the step before chose, and the manuscript-mode table reuses the tuned
BM25 and weights; every step is a function of its own.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from gnn.metrics import RankingMetrics, evaluate_rankings, recall_at_k
from gnn.recommend.citances import (
    SCISUMM2018_SENTENCE,
    author_lists,
    build_queries,
    manuscript_citances,
    mask_citance,
    profile_citances,
    query_frame,
)
from gnn.recommend.examples import citing_year
from gnn.recommend.service import RecommendationService, RecommendRequest, ServiceSettings
from gnn.recommend.split import SplitRule, describe, time_split
from gnn.rerank.scorer import FusionScorer
from gnn.retrieval.enricher import Candidate, EnricherSettings
from gnn.retrieval.index import DenseIndex, IndexSettings, RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex
from gnn.retrieval.manuscript import body_sampled_vectors, manuscript_context
from gnn.retrieval.prefetch import (
    ChannelList,
    Prefetcher,
    PrefetchQuery,
    PrefetchSettings,
    fuse,
)
from gnn.retrieval.profiles import ProfileIndex, ProfileSettings
from gnn.text.encoder import TextEncoder
from graph.store import GraphStore

log = logging.getLogger(__name__)

DEFAULT_BM25 = (1.2, 0.75)  # Lucene's / Elasticsearch's k1 and b: the "BM25 (default)" row
ALL_CANDIDATES = 100_000  # k that returns every candidate of a query (the pool)
MANUSCRIPT_POOL = 200  # prefetch depth of the manuscript-mode table, reported as its R@200 column


@dataclass(frozen=True)
class RecommendEvalSettings:
    # Where the queries come from: "scisummnet" (split by the years below) or "store" (every citing sentence
    # of the store, split by store_split from its citing years: validation and test as `train reranker`'s).
    queries: str = "scisummnet"
    store_split: SplitRule = field(default_factory=SplitRule)
    train_until: int = 2009  # last citing year of the training period (profiles, enricher knowledge)
    validation: tuple[int, int] = (2010, 2010)  # citing years of the validation queries (tuning, targets)
    test: tuple[int, int] = (2011, 2011)  # citing years of the test queries (never used for tuning)
    # prefetch depth of this table (its recall@n column; 200, the depth the retrieval targets name —
    # the service itself prefetches PrefetchSettings.n, 300)
    n: int = 200
    tune_queries: int = 800  # validation queries (seeded sample) the grids are scored on
    seed: int = 0
    k1_grid: tuple[float, ...] = (0.8, 1.2, 1.6, 2.0)
    b_grid: tuple[float, ...] = (0.5, 0.75, 0.9)
    global_grid: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0)
    limit: int | None = None  # evaluate only this many queries per split (smoke runs)


@dataclass
class QuerySet:
    frame: pd.DataFrame  # sentence_id, citing_id, citing_year, context, targets (tuple), cited_elsewhere, how
    queries: list[PrefetchQuery] = field(default_factory=list)

    @property
    def relevant(self) -> list[set[str]]:
        return [set(t) for t in self.frame["targets"]]


# --- queries -----------------------------------------------------------------------------------


# --- running systems ---------------------------------------------------------------------------


def _ids(lists: Sequence[ChannelList]) -> list[list[str]]:
    return [c.ids for c in lists]


def _mean_recall(rankings: Sequence[Sequence[str]], relevant: Sequence[set[str]], k: int) -> float:
    return float(np.mean([recall_at_k(r, g, k) for r, g in zip(rankings, relevant)])) if relevant else 0.0


@dataclass
class SystemResult:
    name: str
    description: str
    validation: RankingMetrics
    test: RankingMetrics
    prefetch_recall: dict[str, float] = field(default_factory=dict)  # split -> R@n of the prefetch pool
    multi_validation: float | None = None  # R@10 over all targets, sentences citing >= 2 papers
    multi_test: float | None = None


class Harness:
    """Computes each channel once per split and fuses/enriches them into the systems of the table."""

    def __init__(
        self,
        store: GraphStore,
        index: RetrievalIndex,
        encoder: TextEncoder,
        settings: RecommendEvalSettings,
        *,
        progress: bool = False,
    ) -> None:
        self.store, self.index, self.encoder, self.settings = store, index, encoder, settings
        self.progress = progress
        self.split: dict[str, Any] | None = None  # the computed split of a store's own queries
        if settings.queries == "store":
            frame = query_frame(store, "store")
            parts = time_split(frame, settings.store_split)
            self.split = describe(parts, settings.store_split)
            self.train_until = parts[-2].until  # what validation and test know
            evaluated = {"validation": parts[-2].frame, "test": parts[-1].frame}
            self.train_queries = sum(len(part.frame) for part in parts[:-2])
        else:
            frame = build_queries(store)
            self.train_until = settings.train_until
            evaluated = {
                name: frame[(frame["citing_year"] >= low) & (frame["citing_year"] <= high)].reset_index(drop=True)
                for name, (low, high) in (("validation", settings.validation), ("test", settings.test))
            }
            self.train_queries = int((frame["citing_year"] <= settings.train_until).sum())
        self.masking = frame["how"].str.split(",").explode().value_counts().to_dict()
        self.splits: dict[str, QuerySet] = {}
        for name, part in evaluated.items():
            if settings.limit is not None:
                part = part.sample(n=min(settings.limit, len(part)), random_state=settings.seed).reset_index(drop=True)
            self.splits[name] = QuerySet(part, self._queries(part))
        val = self.splits["validation"]
        rng = random.Random(settings.seed)
        picked = sorted(rng.sample(range(len(val.frame)), min(settings.tune_queries, len(val.frame))))
        self.tune = QuerySet(val.frame.iloc[picked].reset_index(drop=True), [val.queries[i] for i in picked])
        log.info(
            "queries: %s; tuning on %d validation queries",
            {k: len(v.frame) for k, v in self.splits.items()},
            len(self.tune.frame),
        )
        citances = profile_citances(store)
        self.profiles = ProfileIndex.build(
            index, citances, encoder, ProfileSettings(until=self.train_until), progress=progress
        )
        self.prefetcher = Prefetcher(index, encoder, self.profiles)
        self._vectors: dict[int, np.ndarray] = {}

    def _queries(self, frame: pd.DataFrame) -> list[PrefetchQuery]:
        titles = {
            str(r["id"]): " ".join(t for t in (r["title"], r["abstract"]) if t)
            for r in self.store.query("paper_by_ids", {"ids": sorted(set(frame["citing_id"]))})
        }
        return [
            PrefetchQuery(context, titles.get(citing, ""), citing_year(year), (citing,), citing)
            for context, citing, year in zip(frame["context"], frame["citing_id"], frame["citing_year"])
        ]

    def vectors(self, qs: QuerySet) -> np.ndarray:
        key = id(qs)
        if key not in self._vectors:
            self._vectors[key] = self.encoder.encode(
                [q.context for q in qs.queries], progress=self.progress, desc="encode queries"
            )
        return self._vectors[key]

    # channels -------------------------------------------------------------------------------------
    def channels(
        self, qs: QuerySet, *, lexical: LexicalIndex, global_weight: float, depth: int
    ) -> dict[str, list[ChannelList]]:
        p = self.prefetcher
        vectors = self.vectors(qs)
        return {
            "dense": p.dense(qs.queries, depth, global_weight=global_weight, context_vectors=vectors),
            "bm25": p.bm25(qs.queries, depth, global_weight=global_weight, lexical=lexical),
            "profile_bm25": p.profile_bm25(qs.queries, depth),
            "profile_dense": p.profile_dense(qs.queries, depth, context_vectors=vectors),
        }


def _fused(channels: dict[str, list[ChannelList]], settings: PrefetchSettings) -> list[list[str]]:
    names = [c for c in settings.channels if c in channels]
    n = len(next(iter(channels.values())))
    return [fuse({c: channels[c][i] for c in names}, settings).ids for i in range(n)]


def _service_requests(frame: pd.DataFrame, *, with_cited: bool) -> list[RecommendRequest]:
    """One request per query of ``frame``, asking for every candidate (the pool a reranker would get)."""
    return [
        RecommendRequest(
            context=ctx,
            citing_paper_id=citing,
            year=citing_year(year),
            k=ALL_CANDIDATES,
            cited_ids=tuple(cited) if with_cited else (),
        )
        for ctx, citing, year, cited in zip(
            frame["context"], frame["citing_id"], frame["citing_year"], frame["cited_elsewhere"]
        )
    ]


def _grid_best(candidates: Sequence[Any], score: Callable[[Any], float]) -> tuple[Any, float]:
    best, best_score = candidates[0], -1.0
    for candidate in candidates:
        value = score(candidate)
        log.info("  %s -> %.4f", candidate, value)
        if value > best_score + 1e-12:
            best, best_score = candidate, value
    return best, best_score


@dataclass
class _Tuned:
    """What the grids chose on the tuning queries, and the record of it in the report."""

    lex_default: LexicalIndex  # BM25 with DEFAULT_BM25
    lex_tuned: LexicalIndex  # BM25 with the tuned k1, b
    k1_b: tuple[float, float]
    lam_dense: float = 0.0  # global-information weight of the dense channel
    lam_bm25: float = 0.0  # ... and of the bm25 channel
    record: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Fusions:
    """The prefetch fusions of the table's hybrid rows, as tuned."""

    hybrid_rrf: PrefetchSettings
    hybrid_weighted: PrefetchSettings
    choice: str  # the fusion of the "+ global information" row: "rrf" or "weighted"
    with_profiles: PrefetchSettings  # four channels, profile weights tuned

    @property
    def hybrid_global(self) -> PrefetchSettings:
        return self.hybrid_rrf if self.choice == "rrf" else self.hybrid_weighted


class _Table:
    """The rows of the report's table, each a system's metrics on validation and test."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.results: list[SystemResult] = []

    def add(
        self,
        name: str,
        description: str,
        per_split: dict[str, list[list[str]]],
        pools: dict[str, list[list[str]]] | None = None,
    ) -> None:
        val, test = self.h.splits["validation"], self.h.splits["test"]
        result = SystemResult(
            name,
            description,
            evaluate_rankings(per_split["validation"], val.relevant),
            evaluate_rankings(per_split["test"], test.relevant),
        )
        for split, qs in (("validation", val), ("test", test)):
            multi = [i for i, t in enumerate(qs.frame["targets"]) if len(t) >= 2]
            value = (
                _mean_recall([per_split[split][i] for i in multi], [qs.relevant[i] for i in multi], 10)
                if multi
                else None
            )
            setattr(result, "multi_validation" if split == "validation" else "multi_test", value)
            if pools is not None:
                result.prefetch_recall[split] = _mean_recall(pools[split], qs.relevant, ALL_CANDIDATES)
        self.results.append(result)


def run_evaluation(
    store: GraphStore,
    encoder: TextEncoder,
    settings: RecommendEvalSettings = RecommendEvalSettings(),
    *,
    index: RetrievalIndex | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Run every system of the table and return the report (see :func:`report_markdown`)."""
    start = time.perf_counter()
    if index is None:
        index, _ = RetrievalIndex.open(store, IndexSettings(), cache=encoder)
    h = Harness(store, index, encoder, settings, progress=progress)
    tuned = _tune_bm25(h)
    _tune_global_weight(h, tuned)
    log.info("running every channel on the tuning, validation and test queries")
    chans = {name: _all_channels(h, qs, tuned) for name, qs in (("tune", h.tune), *h.splits.items())}
    fusions = _tune_fusions(h, chans["tune"], tuned)
    table = _Table(h)
    _retrieval_rows(table, chans, fusions, tuned)
    _service_rows(h, table, fusions, tuned)
    manuscript = None  # a CL-SciSumm 2018 table: run with the shared data's queries only
    if settings.queries == "scisummnet":
        log.info("manuscript mode vs plain context on CL-SciSumm 2018")
        manuscript = run_manuscript_evaluation(
            store,
            encoder,
            index,
            lexical=tuned.lex_tuned,
            global_weight=(tuned.lam_dense, tuned.lam_bm25),
            seed=settings.seed,
        )
    return _report(h, tuned, table, manuscript, time.perf_counter() - start)


def _tune_bm25(h: Harness) -> _Tuned:
    """BM25 k1/b on validation R@10 (Medić & Šnajder 2020: tune, do not trust the defaults)."""
    tune, index = h.tune, h.index
    built: dict[tuple[float, float], LexicalIndex] = {}
    scores: dict[tuple[float, float], float] = {}

    def bm25_r10(params: tuple[float, float]) -> float:
        lex = index.with_bm25(*params)
        value = _mean_recall(_ids(h.prefetcher.bm25(tune.queries, 10, lexical=lex)), tune.relevant, 10)
        if params == DEFAULT_BM25 or value > max(scores.values(), default=-1.0):
            built[params] = lex  # keep the default and the best so far, not all twelve
        scores[params] = value
        return value

    log.info("tuning BM25 (k1, b) on %d validation queries", len(tune.queries))
    grid = [(k1, b) for k1 in h.settings.k1_grid for b in h.settings.b_grid]
    (k1, b), _ = _grid_best(grid, bm25_r10)
    tuned = _Tuned(built.get(DEFAULT_BM25) or index.with_bm25(*DEFAULT_BM25), built[(k1, b)], (k1, b))
    tuned.record["bm25"] = {"k1": k1, "b": b, "grid_R@10": {f"{p[0]}/{p[1]}": round(v, 4) for p, v in scores.items()}}
    return tuned


def _tune_global_weight(h: Harness, tuned: _Tuned) -> None:
    """The global-information weight λ of the dense and the bm25 channel, each on its validation R@10."""
    tune = h.tune

    def dense_r10(lam: float) -> float:
        lists = h.prefetcher.dense(tune.queries, 10, global_weight=lam, context_vectors=h.vectors(tune))
        return _mean_recall(_ids(lists), tune.relevant, 10)

    def bm25_r10(lam: float) -> float:
        lists = h.prefetcher.bm25(tune.queries, 10, global_weight=lam, lexical=tuned.lex_tuned)
        return _mean_recall(_ids(lists), tune.relevant, 10)

    tuned.lam_dense, _ = _grid_best(h.settings.global_grid, dense_r10)
    tuned.lam_bm25, _ = _grid_best(h.settings.global_grid, bm25_r10)
    tuned.record["global_weight"] = {"dense": tuned.lam_dense, "bm25": tuned.lam_bm25}


def _depth(settings: RecommendEvalSettings) -> int:
    """Each channel's list length before fusion: at least the service's 400, at least the table's n."""
    return max(settings.n, 400)


def _all_channels(h: Harness, qs: QuerySet, tuned: _Tuned) -> dict[str, dict[str, list[ChannelList]]]:
    """Every channel of ``qs``: plain, with global information, and BM25 with the default k1/b."""
    depth = _depth(h.settings)
    plain = h.channels(qs, lexical=tuned.lex_tuned, global_weight=0.0, depth=depth)
    with_global = {
        "dense": h.prefetcher.dense(qs.queries, depth, global_weight=tuned.lam_dense, context_vectors=h.vectors(qs)),
        "bm25": h.prefetcher.bm25(qs.queries, depth, global_weight=tuned.lam_bm25, lexical=tuned.lex_tuned),
    }
    return {
        "plain": plain,
        "global": {**plain, **with_global},
        "bm25_default": {"bm25": h.prefetcher.bm25(qs.queries, depth, lexical=tuned.lex_default)},
    }


def _tune_fusions(h: Harness, chans: dict[str, dict[str, list[ChannelList]]], tuned: _Tuned) -> _Fusions:
    """Fusion weights on validation R@10: the score-weighted hybrid's, RRF or weighted with global
    information, then the profile channels' weights."""
    n, depth, tune = h.settings.n, _depth(h.settings), h.tune

    def fused_r10(s: PrefetchSettings, variant: str = "global") -> float:
        return _mean_recall(_fused(chans[variant], s), tune.relevant, 10)

    hybrid_rrf = PrefetchSettings(n=n, channels=("dense", "bm25"), fusion="rrf", depth=depth)
    w_grid = [{"dense": w, "bm25": 1.0 - w} for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)]
    w_best, _ = _grid_best(w_grid, lambda w: fused_r10(replace(hybrid_rrf, fusion="weighted", weights=w), "plain"))
    hybrid_weighted = replace(hybrid_rrf, fusion="weighted", weights=w_best)
    tuned.record["hybrid_weighted"] = w_best
    choice, _ = _grid_best(
        ["rrf", "weighted"], lambda f: fused_r10(hybrid_rrf if f == "rrf" else hybrid_weighted, "global")
    )
    four = ("dense", "bm25", "profile_bm25", "profile_dense")
    profile_grid = [
        {"dense": 1.0, "bm25": 1.0, "profile_bm25": pb, "profile_dense": pd_}
        for pb in (0.5, 1.0, 2.0)
        for pd_ in (0.5, 1.0, 2.0)
    ]
    profile_weights, _ = _grid_best(
        profile_grid, lambda w: fused_r10(PrefetchSettings(n=n, channels=four, fusion="rrf", depth=depth, weights=w))
    )
    with_profiles = PrefetchSettings(
        n=n, channels=four, fusion="rrf", depth=depth, weights=profile_weights, global_weight=0.0
    )
    tuned.record["profile_weights"] = profile_weights
    return _Fusions(hybrid_rrf, hybrid_weighted, choice, with_profiles)


def _retrieval_rows(
    table: _Table, chans: dict[str, dict[str, dict[str, list[ChannelList]]]], fusions: _Fusions, tuned: _Tuned
) -> None:
    """The rows of the channels alone and of their fusions, up to the profiles."""
    n, splits = table.h.settings.n, ("validation", "test")

    def single(variant: str, channel: str) -> tuple[dict[str, list[list[str]]], dict[str, list[list[str]]]]:
        ranked = {s: _ids(chans[s][variant][channel]) for s in splits}
        return ranked, {s: [r[:n] for r in ranked[s]] for s in splits}

    k1, b = tuned.k1_b
    table.add("BM25 (default)", "title+abstract, k1=1.2, b=0.75", *single("bm25_default", "bm25"))
    table.add("BM25 (tuned)", f"k1={k1}, b={b}", *single("plain", "bm25"))
    table.add("dense", "all-MiniLM-L6-v2, exact inner product", *single("plain", "dense"))
    for label, s_, variant in (
        ("hybrid (RRF)", fusions.hybrid_rrf, "plain"),
        ("hybrid (score-weighted)", fusions.hybrid_weighted, "plain"),
        (f"+ global information ({fusions.choice})", fusions.hybrid_global, "global"),
        ("+ profiles", fusions.with_profiles, "global"),
    ):
        fused = {s: _fused(chans[s][variant], s_) for s in splits}
        table.add(label, _describe(s_, variant), fused, fused)


def _service_rows(h: Harness, table: _Table, fusions: _Fusions, tuned: _Tuned) -> None:
    """The service end to end — prefetch (4 channels, global information) → enricher → fusion score — with
    the enricher's weights tuned on the service's own candidates: + enricher, + cited papers."""
    # the prefetch inside the service must use the same λ as the channels above
    prefetch = replace(fusions.with_profiles, global_weight=tuned.lam_dense, global_weight_bm25=tuned.lam_bm25)
    base_weights = {**fusions.with_profiles.weights}
    enrich_grid = [0.0, 0.25, 0.5, 1.0, 2.0]  # 0: the stage may add candidates that do not help
    no_co = EnricherSettings(known_until=h.train_until, max_cocited=0)
    with_co = EnricherSettings(known_until=h.train_until)

    def settings_of(enricher: EnricherSettings, weights: dict[str, float] | None = None) -> ServiceSettings:
        return ServiceSettings(
            index=h.index.settings,
            profiles=ProfileSettings(until=h.train_until),
            prefetch=prefetch,
            enricher=enricher,
            fusion=FusionScorer() if weights is None else FusionScorer(weights),
        )

    log.info("tuning the enricher's weights on the service's candidates")
    pools_ref = _service_candidates(h, settings_of(no_co), cited=False)
    w_ref, _ = _grid_best(enrich_grid, lambda w: _fusion_r10(h, pools_ref, {**base_weights, "references": w}))
    pools_co = _service_candidates(h, settings_of(with_co), cited=True)
    w_co, _ = _grid_best(
        enrich_grid, lambda w: _fusion_r10(h, pools_co, {**base_weights, "references": w_ref, "cocited": w})
    )
    tuned.record["fusion_weights"] = {**base_weights, "references": w_ref, "cocited": w_co}
    tuned.record["enricher"] = asdict(with_co)
    for label, enricher, weights, cited in (
        ("+ enricher (references of top 10)", no_co, {**base_weights, "references": w_ref, "cocited": 0.0}, False),
        (
            "+ cited papers (co-citation partners)",
            with_co,
            {**base_weights, "references": w_ref, "cocited": w_co},
            True,
        ),
    ):
        service = RecommendationService(
            h.store, h.index, h.encoder, profiles=h.profiles, settings=settings_of(enricher, weights)
        )
        # every candidate is ranked (k is unbounded): the list is the pool a reranker would get
        ranked = {split: _service_rankings(service, qs, with_cited=cited) for split, qs in h.splits.items()}
        table.add(
            label,
            f"service: prefetch(4 channels, global λ={tuned.lam_dense}/{tuned.lam_bm25}) → enricher → fusion",
            ranked,
            ranked,
        )


def _service_candidates(
    h: Harness, settings: ServiceSettings, *, cited: bool
) -> list[tuple[PrefetchQuery, list[Candidate]]]:
    """The service's own prefetch + enrich on the tuning queries."""
    service = RecommendationService(h.store, h.index, h.encoder, profiles=h.profiles, settings=settings)
    requests = _service_requests(h.tune.frame, with_cited=cited)
    return [
        pool for begin in range(0, len(requests), 256) for pool in service.candidates(requests[begin : begin + 256])
    ]


def _fusion_r10(h: Harness, pools: list[tuple[PrefetchQuery, list[Candidate]]], weights: dict[str, float]) -> float:
    """The tuning queries' R@10 when ``pools`` are ranked by the fusion score with ``weights``."""
    scorer = FusionScorer(weights)
    ranked = []
    for query, candidates in pools:
        scores = scorer.score(query, candidates)
        ranked.append([c.paper_id for c, _ in sorted(zip(candidates, scores), key=lambda cs: (-cs[1], cs[0].paper_id))])
    return _mean_recall(ranked, h.tune.relevant, 10)


def _service_rankings(service: RecommendationService, qs: QuerySet, *, with_cited: bool) -> list[list[str]]:
    """Every candidate of each query of ``qs`` as the service ranks it."""
    requests = _service_requests(qs.frame, with_cited=with_cited)
    ranked: list[list[str]] = []
    for begin in range(0, len(requests), 256):
        chunk = requests[begin : begin + 256]
        ranked += [[item.paper_id for item in r.items] for r in service.recommend_many(chunk, metadata=False)]
    return ranked


def _recommendable(h: Harness, qs: QuerySet) -> int:
    """Queries of ``qs`` citing at least one paper of the index (a paper with a title, abstract or reference string)."""
    return sum(1 for targets in qs.frame["targets"] if any(t in h.index.row_of for t in targets))


def _report(
    h: Harness, tuned: _Tuned, table: _Table, manuscript: dict[str, Any] | None, seconds: float
) -> dict[str, Any]:
    """The report of :func:`run_evaluation` (rendered by :func:`report_markdown`)."""
    val, test = h.splits["validation"], h.splits["test"]
    return {
        "command": "citegraph eval recommend",
        "query source": h.settings.queries,
        "settings": asdict(h.settings),
        "train_until": h.train_until,
        **({"split": h.split} if h.split is not None else {}),
        "queries": {
            "train (profiles, enricher knowledge)": h.train_queries,
            "validation": len(val.frame),
            "test": len(test.frame),
            "tuning sample": len(h.tune.frame),
            "multi-citation validation": int(sum(len(t) >= 2 for t in val.frame["targets"])),
            "multi-citation test": int(sum(len(t) >= 2 for t in test.frame["targets"])),
            # the others cite only papers without any text (bare-id stubs): no system can find their targets
            "validation with a target in the index": _recommendable(h, val),
            "test with a target in the index": _recommendable(h, test),
        },
        "masking": h.masking,
        "pool": {
            "papers in the index": len(h.index),
            "profiles (papers)": h.profiles.papers,
            "profile sentences": len(h.profiles.citances),
        },
        "tuned": tuned.record,
        "systems": [
            {
                "name": r.name,
                "description": r.description,
                "validation": r.validation.as_dict(),
                "test": r.test.as_dict(),
                "prefetch_recall@n": r.prefetch_recall,
                "multi_R@10": {"validation": r.multi_validation, "test": r.multi_test},
            }
            for r in table.results
        ],
        "manuscript": manuscript,
        "seconds": round(seconds, 1),
    }


def run_manuscript_evaluation(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    *,
    lexical: LexicalIndex,
    global_weight: tuple[float, float],
    supplemental: int = 2,
    candidate_sentences: int = 2,
    seed: int = 0,
) -> dict[str, Any]:
    """Plain context vs manuscript mode (MP-BERT4CR) on the CL-SciSumm 2018 gold citances.

    Plain: the citance's sentences. Manuscript: the sentence before, the first citing sentence, the
    sentence after, and ``supplemental`` seeded samples from earlier in the citing paper's full
    text (:func:`gnn.retrieval.manuscript.manuscript_context`). Every sentence has the RP's marker masked. Both
    run through the same prefetch (dense + tuned BM25, RRF, with and without the citing paper's
    title and abstract); no profiles or enricher, whose training-period knowledge these citing
    papers (1990–2016) would straddle. The candidate side of manuscript mode: the same queries
    against vectors in which every full-text paper is its title and abstract plus
    ``candidate_sentences`` sampled body sentences (:func:`gnn.retrieval.manuscript.body_sampled_vectors`).
    """
    plain_q, manu_q, relevant = _manuscript_queries(store, supplemental=supplemental, seed=seed)
    prefetcher = Prefetcher(index, encoder)
    body_vectors, body_papers = body_sampled_vectors(store, index, encoder, sentences=candidate_sentences, seed=seed)
    body_dense = DenseIndex(body_vectors, index.settings)
    rrf = PrefetchSettings(n=MANUSCRIPT_POOL, channels=("dense", "bm25"), fusion="rrf")
    out: dict[str, Any] = {
        "citances": len(relevant),
        "supplemental": supplemental,
        "candidate_sentences": candidate_sentences,
        "candidates_with_body": body_papers,
        "seed": seed,
        "systems": {},
    }
    variants = (
        ("plain context", plain_q, None),
        ("manuscript mode", manu_q, None),
        ("plain context, candidates with sampled body", plain_q, body_dense),
        ("manuscript mode, candidates with sampled body", manu_q, body_dense),
    )
    for name, queries, dense_index in variants:
        for with_global in (False, True):
            lam_dense, lam_bm25 = global_weight if with_global else (0.0, 0.0)
            lists = {
                "dense": prefetcher.dense(queries, 400, global_weight=lam_dense, dense_index=dense_index),
                "bm25": prefetcher.bm25(queries, 400, global_weight=lam_bm25, lexical=lexical),
            }
            ranked = _fused(lists, rrf)
            label = f"{name}{' + global information' if with_global else ''}"
            metrics = evaluate_rankings(ranked, relevant).as_dict()
            metrics[f"R@{rrf.n}"] = _mean_recall(ranked, relevant, rrf.n)
            out["systems"][label] = metrics
    return out


def _manuscript_queries(
    store: GraphStore, *, supplemental: int, seed: int
) -> tuple[list[PrefetchQuery], list[PrefetchQuery], list[set[str]]]:
    """The CL-SciSumm 2018 citances as plain-context queries and as manuscript-mode queries (every sentence
    with the RP's marker masked), and each one's relevant set (its RP)."""
    citances = manuscript_citances(store)
    rps = sorted(set(citances["rp"]))
    authors = author_lists(store, rps)
    rp_year = {str(r["id"]): r["year"] for r in store.query("paper_by_ids", {"ids": rps})}
    texts: dict[str, dict[int, str]] = {}
    for row in store.query("sentences_of_papers", {"ids": sorted(set(citances["citing_id"]))}):
        match = SCISUMM2018_SENTENCE.search(str(row["id"]))
        if match is not None:
            texts.setdefault(f"{row['paper_id']}|{match.group('rp')}", {})[int(match.group("sid"))] = str(
                row["text"] or ""
            )
    titles = {
        str(r["id"]): " ".join(t for t in (r["title"], r["abstract"]) if t)
        for r in store.query("paper_by_ids", {"ids": sorted(set(citances["citing_id"]))})
    }
    plain_q, manu_q, relevant = [], [], []
    for row in citances.itertuples():
        full = texts.get(f"{row.citing_id}|{row.rp}", {})
        order = sorted(full)
        if not order or row.sids[0] not in full:
            continue

        def masked(sentence: str, rp: str = row.rp) -> str:
            first, *others = authors.get(rp, [[]])
            return mask_citance(sentence, None, first, rp_year.get(rp), spellings=others)[0]

        draft = [masked(full[sid]) for sid in order]
        position = order.index(row.sids[0])
        plain = " ".join(masked(full[sid]) for sid in row.sids if sid in full)
        manuscript = manuscript_context(draft, position, supplemental=supplemental, seed=seed)
        glob = titles.get(row.citing_id, "")
        year = None if pd.isna(row.citing_year) else int(row.citing_year)
        plain_q.append(PrefetchQuery(plain, glob, year, (row.citing_id,), row.citing_id))
        manu_q.append(PrefetchQuery(manuscript, glob, year, (row.citing_id,), row.citing_id))
        relevant.append({row.rp})
    return plain_q, manu_q, relevant


def _describe(s: PrefetchSettings, variant: str) -> str:
    weights = ", ".join(f"{c}={s.weights.get(c, 1.0):g}" for c in s.channels)
    return f"{s.fusion} over {'+'.join(s.channels)} ({weights}){'; global info' if variant == 'global' else ''}"


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: the one table (validation and test), then the settings it came from."""
    cols = ["R@5", "R@10", "R@20", "R@50", "MRR", "NDCG@10", "MAP@10", "F1@20", "hit@1", "hit@10"]
    n = report["settings"]["n"]
    lines = [
        f"| system | split | {' | '.join(cols)} | pool recall | multi R@10 |",
        "|---|---|" + "---:|" * (len(cols) + 2),
    ]
    for system in report["systems"]:
        for split in ("validation", "test"):
            m = system[split]
            pool = system["prefetch_recall@n"].get(split)
            multi = system["multi_R@10"][split]
            lines.append(
                f"| {system['name'] if split == 'validation' else ''} | {split} | "
                + " | ".join(f"{m[c]:.3f}" for c in cols)
                + f" | {'' if pool is None else f'{pool:.3f}'} | {'' if multi is None else f'{multi:.3f}'} |"
            )
    q = report["queries"]
    lines += [
        "",
        f"Pool recall: share of the targets among the {n} papers the prefetch returns (what bounds a reranker); "
        "for the service rows, among all candidates (prefetch + enricher). multi R@10: R@10 over all targets of "
        "the sentences that cite two or more papers.",
        f"Queries ({report.get('query source', 'scisummnet')}): validation {q['validation']} "
        f"({_years(report, 'validation')}), test {q['test']} ({_years(report, 'test')}); "
        f"with a target in the index (a paper with a title, abstract or reference string): "
        f"{q.get('validation with a target in the index')} / {q.get('test with a target in the index')}; "
        f"multi-citation sentences (≥ 2 targets): {q['multi-citation validation']} / {q['multi-citation test']}; "
        f"tuning sample {q['tuning sample']} validation queries. Pool: every Paper "
        f"({report['pool']['papers in the index']} with a text). Profiles: {report['pool']['profile sentences']} "
        f"citing sentences of {report['pool']['profiles (papers)']} papers, citing years ≤ "
        f"{report.get('train_until', report['settings']['train_until'])}.",
        f"Masking of the queries' targets (per target): {report['masking']}.",
        f"Tuned on validation: {json.dumps(report['tuned'])}.",
        f"Run time {report['seconds']} s.",
    ]
    return "\n".join(lines + _manuscript_markdown(report.get("manuscript")))


def _years(report: dict[str, Any], split: str) -> str:
    """The citing years of ``split`` as the report's markdown names them."""
    if "split" not in report:
        low, high = report["settings"][split]
        return f"citing year {low}" if low == high else f"citing years {low}-{high}"
    years = report["split"]["parts"][split]["years"]
    return "no citing year" if years is None else f"citing years {years[0]}-{years[1]}"


def _manuscript_markdown(manuscript: dict[str, Any] | None) -> list[str]:
    """The manuscript-mode table's lines (none without it)."""
    lines: list[str] = []
    if manuscript:
        mcols = ["R@5", "R@10", "R@20", "R@50", "MRR", "NDCG@10", f"R@{MANUSCRIPT_POOL}"]
        lines += [
            "",
            f"Manuscript mode on CL-SciSumm 2018 ({manuscript['citances']} gold citances, "
            f"{manuscript['supplemental']} supplemental sentences, seed {manuscript['seed']}; "
            f"candidate side: {manuscript.get('candidate_sentences', 0)} sampled body sentences for the "
            f"{manuscript.get('candidates_with_body', 0)} papers with full text; "
            "prefetch = dense + tuned BM25, RRF):",
            "",
            f"| query | {' | '.join(mcols)} |",
            "|---|" + "---:|" * len(mcols),
        ]
        for label, m in manuscript["systems"].items():
            lines.append(f"| {label} | " + " | ".join(f"{m[c]:.3f}" for c in mcols) + " |")
    return lines


__all__ = ["Harness", "RecommendEvalSettings", "report_markdown", "run_evaluation", "run_manuscript_evaluation"]
