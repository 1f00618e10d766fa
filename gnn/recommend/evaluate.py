r"""``citegraph eval recommend``: the citation-recommendation harness on the ScisummNet citances.

**Queries.** Every ScisummNet citing sentence (13,008 sentences, 13,690 MENTIONS; ids
``<citing>#c<hash>``) becomes one query: its text with the marker of *every* paper it cites masked as
``[CIT]`` (:func:`gnn.recommend.service.mask_citance`; other markers stay), the citing paper's year, and as
relevant set all the papers it cites. The candidate pool is every Paper of the graph; papers
published after the citing paper and the citing paper itself are never candidates.

**Time split** by the citing paper's year (the citances run 1985–2011; 9,049 sentences ≤ 2009,
2,317 in 2010, 1,642 in 2011): *train* ≤ 2009, *validation* 2010, *test* 2011. Everything a query
may know about citations comes from the training period: citation-context profiles hold only the
citing sentences of papers published ≤ 2009, and the enricher only follows CITES made by papers
published ≤ 2009 (its co-citation counts are recomputed from those, not read from the stored
CO_CITED edges, which count 2010–2011 citations too). Parameters (BM25 k1/b, the global-information
weight, fusion weights) are tuned on a seeded sample of the validation queries; the table reports
validation (the issue's targets) and test (untouched by any tuning).

**Systems, one run, one table:** BM25 (Lucene defaults k1 = 1.2, b = 0.75), BM25 tuned, dense,
hybrid (RRF and score-weighted), + global information, + citation-context profiles, + enricher
(references of the top prefetched papers), + cited papers (co-citation partners of the papers the
citing paper cites elsewhere). The last rows run through :class:`gnn.recommend.service.RecommendationService`
itself. Every number is end to end: a query whose target is not retrieved scores 0.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gnn.metrics import RankingMetrics, evaluate_rankings, recall_at_k
from gnn.recommend.service import (
    FusionScorer,
    RecommendationService,
    RecommendRequest,
    ServiceSettings,
    author_lists,
    mask_citance,
)
from gnn.retrieval.enricher import EnricherSettings
from gnn.retrieval.index import DenseIndex, IndexSettings, RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex
from gnn.retrieval.manuscript import body_sampled_vectors, manuscript_context
from gnn.retrieval.prefetch import ChannelList, Prefetcher, PrefetchQuery, PrefetchSettings, fuse
from gnn.retrieval.profiles import ProfileIndex, ProfileSettings
from gnn.text.encoder import TextEncoder
from graph.store import GraphStore

log = logging.getLogger(__name__)

DEFAULT_BM25 = (1.2, 0.75)  # Lucene's / Elasticsearch's k1 and b: the "BM25 (default)" row
ALL_CANDIDATES = 100_000  # k that returns every candidate of a query (the pool)
MANUSCRIPT_POOL = 200  # prefetch depth of the manuscript-mode table, reported as its R@200 column
SCISUMMNET_SENTENCE = re.compile(r"#c[0-9a-f]{12}$")


@dataclass(frozen=True)
class EvalSettings:
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


def build_queries(store: GraphStore) -> pd.DataFrame:
    """One row per ScisummNet citing sentence, every cited paper's marker masked (module docstring)."""
    rows = pd.DataFrame(
        store.query("retrieval_citances"),
        columns=["sentence_id", "text", "citing_id", "citing_year", "cited_id", "cited_year", "marker"],
    )
    rows = rows[rows["sentence_id"].str.contains(SCISUMMNET_SENTENCE)]
    authors = author_lists(store, rows["cited_id"])
    out = []
    for sentence_id, group in rows.groupby("sentence_id", sort=True):
        text = str(group["text"].iat[0])
        hows = []
        for cited_id, year, marker in zip(group["cited_id"], group["cited_year"], group["marker"]):
            first, *others = authors.get(cited_id, [[]])
            text, how = mask_citance(
                text,
                marker if isinstance(marker, str) else None,
                first,
                None if pd.isna(year) else int(year),
                spellings=others,
            )
            hows.append(how)
        out.append(
            {
                "sentence_id": sentence_id,
                "citing_id": group["citing_id"].iat[0],
                "citing_year": int(group["citing_year"].iat[0]),
                "context": text,
                "raw": str(group["text"].iat[0]),
                "targets": tuple(sorted(set(group["cited_id"]))),
                "how": ",".join(hows),
            }
        )
    frame = pd.DataFrame(out)
    # what the citing paper cites elsewhere (its other CITES): "papers already cited"
    cites = pd.DataFrame(store.query("cited_papers", {"ids": sorted(set(frame["citing_id"]))}))
    by_paper = cites.groupby("paper_id")["cited_id"].apply(list).to_dict() if len(cites) else {}
    frame["cited_elsewhere"] = [
        tuple(sorted(set(by_paper.get(c, [])) - set(t))) for c, t in zip(frame["citing_id"], frame["targets"])
    ]
    return frame


def profile_citances(store: GraphStore) -> pd.DataFrame:
    """Every MENTIONS sentence, masked per cited paper, as :class:`ProfileIndex` wants it."""
    from gnn.recommend.service import citing_sentences

    return citing_sentences(store).rename(columns={"text": "raw"}).rename(columns={"masked": "text"})


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
        settings: EvalSettings,
        *,
        progress: bool = False,
    ) -> None:
        self.store, self.index, self.encoder, self.settings = store, index, encoder, settings
        self.progress = progress
        frame = build_queries(store)
        self.masking = frame["how"].str.split(",").explode().value_counts().to_dict()
        self.splits: dict[str, QuerySet] = {}
        for name, (low, high) in (("validation", settings.validation), ("test", settings.test)):
            part = frame[(frame["citing_year"] >= low) & (frame["citing_year"] <= high)].reset_index(drop=True)
            if settings.limit is not None:
                part = part.sample(n=min(settings.limit, len(part)), random_state=settings.seed).reset_index(drop=True)
            self.splits[name] = QuerySet(part, self._queries(part))
        self.train_queries = int((frame["citing_year"] <= settings.train_until).sum())
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
            index, citances, encoder, ProfileSettings(until=settings.train_until), progress=progress
        )
        self.prefetcher = Prefetcher(index, encoder, self.profiles)
        self._vectors: dict[int, np.ndarray] = {}

    def _queries(self, frame: pd.DataFrame) -> list[PrefetchQuery]:
        titles = {
            str(r["id"]): " ".join(t for t in (r["title"], r["abstract"]) if t)
            for r in self.store.query("paper_by_ids", {"ids": sorted(set(frame["citing_id"]))})
        }
        return [
            PrefetchQuery(context, titles.get(citing, ""), int(year), (citing,), citing)
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
            year=int(year),
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


def run_evaluation(
    store: GraphStore,
    encoder: TextEncoder,
    settings: EvalSettings = EvalSettings(),
    *,
    index: RetrievalIndex | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Run every system of the table and return the report (see :func:`report_markdown`)."""
    start = time.perf_counter()
    if index is None:
        index, _ = RetrievalIndex.open(store, IndexSettings(), cache=encoder)
    h = Harness(store, index, encoder, settings, progress=progress)
    n = settings.n
    tune, val, test = h.tune, h.splits["validation"], h.splits["test"]
    tuned: dict[str, Any] = {}

    # 1. BM25 k1/b on validation R@10 (Medić & Šnajder 2020: tune, do not trust the defaults)
    built: dict[tuple[float, float], LexicalIndex] = {}

    def bm25_r10(params: tuple[float, float]) -> float:
        lex = index.with_bm25(*params)
        value = _mean_recall(_ids(h.prefetcher.bm25(tune.queries, 10, lexical=lex)), tune.relevant, 10)
        if params == DEFAULT_BM25 or value > max(bm25_scores.values(), default=-1.0):
            built[params] = lex  # keep the default and the best so far, not all twelve
        bm25_scores[params] = value
        return value

    bm25_scores: dict[tuple[float, float], float] = {}
    log.info("tuning BM25 (k1, b) on %d validation queries", len(tune.queries))
    grid = [(k1, b) for k1 in settings.k1_grid for b in settings.b_grid]
    (k1, b), _ = _grid_best(grid, bm25_r10)
    tuned["bm25"] = {"k1": k1, "b": b, "grid_R@10": {f"{p[0]}/{p[1]}": round(v, 4) for p, v in bm25_scores.items()}}
    lex_default = built.get(DEFAULT_BM25) or index.with_bm25(*DEFAULT_BM25)
    lex_tuned = built[(k1, b)]
    built.clear()

    # 2. global-information weight λ (dense and bm25 each), on validation R@10 of the channel
    def dense_r10(lam: float) -> float:
        lists = h.prefetcher.dense(tune.queries, 10, global_weight=lam, context_vectors=h.vectors(tune))
        return _mean_recall(_ids(lists), tune.relevant, 10)

    def bm25_global_r10(lam: float) -> float:
        return _mean_recall(
            _ids(h.prefetcher.bm25(tune.queries, 10, global_weight=lam, lexical=lex_tuned)), tune.relevant, 10
        )

    lam_dense, _ = _grid_best(settings.global_grid, dense_r10)
    lam_bm25, _ = _grid_best(settings.global_grid, bm25_global_r10)
    tuned["global_weight"] = {"dense": lam_dense, "bm25": lam_bm25}

    depth = max(n, 400)

    def all_channels(qs: QuerySet) -> dict[str, dict[str, list[ChannelList]]]:
        plain = h.channels(qs, lexical=lex_tuned, global_weight=0.0, depth=depth)
        with_global = {
            "dense": h.prefetcher.dense(qs.queries, depth, global_weight=lam_dense, context_vectors=h.vectors(qs)),
            "bm25": h.prefetcher.bm25(qs.queries, depth, global_weight=lam_bm25, lexical=lex_tuned),
        }
        return {
            "plain": plain,
            "global": {**plain, **with_global},
            "bm25_default": {"bm25": h.prefetcher.bm25(qs.queries, depth, lexical=lex_default)},
        }

    log.info("running every channel on the tuning, validation and test queries")
    chans = {"tune": all_channels(tune), "validation": all_channels(val), "test": all_channels(test)}

    # 3. fusion weights on validation R@10 (score-weighted hybrid; then the profile channels)
    def fused_r10(s: PrefetchSettings, variant: str = "global") -> float:
        return _mean_recall(_fused(chans["tune"][variant], s), tune.relevant, 10)

    hybrid_rrf = PrefetchSettings(n=n, channels=("dense", "bm25"), fusion="rrf", depth=depth)
    w_grid = [{"dense": w, "bm25": 1.0 - w} for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)]
    w_best, _ = _grid_best(w_grid, lambda w: fused_r10(replace(hybrid_rrf, fusion="weighted", weights=w), "plain"))
    hybrid_weighted = replace(hybrid_rrf, fusion="weighted", weights=w_best)
    tuned["hybrid_weighted"] = w_best
    fusion_choice, _ = _grid_best(
        ["rrf", "weighted"], lambda f: fused_r10(hybrid_rrf if f == "rrf" else hybrid_weighted, "global")
    )
    hybrid_global = hybrid_rrf if fusion_choice == "rrf" else hybrid_weighted
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
    tuned["profile_weights"] = profile_weights

    results: list[SystemResult] = []

    def add(
        name: str,
        description: str,
        per_split: dict[str, list[list[str]]],
        pools: dict[str, list[list[str]]] | None = None,
    ) -> None:
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
        results.append(result)

    splits = ("validation", "test")

    def single(variant: str, channel: str) -> tuple[dict[str, list[list[str]]], dict[str, list[list[str]]]]:
        ranked = {s: _ids(chans[s][variant][channel]) for s in splits}
        return ranked, {s: [r[:n] for r in ranked[s]] for s in splits}

    add("BM25 (default)", "title+abstract, k1=1.2, b=0.75", *single("bm25_default", "bm25"))
    add("BM25 (tuned)", f"k1={k1}, b={b}", *single("plain", "bm25"))
    add("dense", "all-MiniLM-L6-v2, exact inner product", *single("plain", "dense"))
    for label, s_, variant in (
        ("hybrid (RRF)", hybrid_rrf, "plain"),
        ("hybrid (score-weighted)", hybrid_weighted, "plain"),
        (f"+ global information ({fusion_choice})", hybrid_global, "global"),
    ):
        fused = {s: _fused(chans[s][variant], s_) for s in splits}
        add(label, _describe(s_, variant), fused, fused)
    profile_variant = "global"
    fused_profiles = {s: _fused(chans[s][profile_variant], with_profiles) for s in splits}
    add("+ profiles", _describe(with_profiles, profile_variant), fused_profiles, fused_profiles)

    # 4. the service end to end: prefetch (4 channels, global info) -> enricher -> fusion score
    def service_settings(enricher: EnricherSettings, scorer: FusionScorer) -> ServiceSettings:
        return ServiceSettings(
            index=index.settings,
            profiles=ProfileSettings(until=settings.train_until),
            prefetch=with_profiles,
            enricher=enricher,
            fusion=scorer,
        )

    def run_service(
        qs: QuerySet, service_s: ServiceSettings, *, with_cited: bool
    ) -> tuple[list[list[str]], list[list[str]]]:
        service = RecommendationService(store, index, h.encoder, profiles=h.profiles, settings=service_s)
        requests = _service_requests(qs.frame, with_cited=with_cited)
        ranked: list[list[str]] = []
        for begin in range(0, len(requests), 256):
            chunk = requests[begin : begin + 256]
            ranked += [[item.paper_id for item in r.items] for r in service.recommend_many(chunk, metadata=False)]
        # every candidate is ranked (k is unbounded): the list is the pool a reranker would get
        return ranked, ranked

    # the prefetch inside the service must use the same λ as the channels above
    with_profiles_global = replace(with_profiles, global_weight=lam_dense, global_weight_bm25=lam_bm25)
    base_weights = {**profile_weights}
    enrich_grid = [0.0, 0.25, 0.5, 1.0, 2.0]  # 0: the stage may add candidates that do not help
    no_co = EnricherSettings(known_until=settings.train_until, max_cocited=0)

    def service_candidates(enricher: EnricherSettings, *, cited: bool) -> list[tuple[PrefetchQuery, list[Any]]]:
        """The service's own prefetch + enrich on the tuning queries, once per enricher setting."""
        s_ = replace(service_settings(enricher, FusionScorer()), prefetch=with_profiles_global)
        service = RecommendationService(store, index, h.encoder, profiles=h.profiles, settings=s_)
        requests = _service_requests(tune.frame, with_cited=cited)
        return [
            pool for begin in range(0, len(requests), 256) for pool in service.candidates(requests[begin : begin + 256])
        ]

    def scored_r10(pools: list[tuple[PrefetchQuery, list[Any]]], weights: dict[str, float]) -> float:
        scorer = FusionScorer(weights)
        ranked = []
        for query, candidates in pools:
            scores = scorer.score(query, candidates)
            ranked.append(
                [c.paper_id for c, _ in sorted(zip(candidates, scores), key=lambda cs: (-cs[1], cs[0].paper_id))]
            )
        return _mean_recall(ranked, tune.relevant, 10)

    log.info("tuning the enricher's weights on the service's candidates")
    pools_ref = service_candidates(no_co, cited=False)
    w_ref, _ = _grid_best(enrich_grid, lambda w: scored_r10(pools_ref, {**base_weights, "references": w}))
    with_co = EnricherSettings(known_until=settings.train_until)
    pools_co = service_candidates(with_co, cited=True)
    w_co, _ = _grid_best(
        enrich_grid, lambda w: scored_r10(pools_co, {**base_weights, "references": w_ref, "cocited": w})
    )
    tuned["fusion_weights"] = {**base_weights, "references": w_ref, "cocited": w_co}
    tuned["enricher"] = asdict(with_co)

    for label, enricher, weights, cited in (
        ("+ enricher (references of top 10)", no_co, {**base_weights, "references": w_ref, "cocited": 0.0}, False),
        (
            "+ cited papers (co-citation partners)",
            with_co,
            {**base_weights, "references": w_ref, "cocited": w_co},
            True,
        ),
    ):
        final = replace(service_settings(enricher, FusionScorer(weights)), prefetch=with_profiles_global)
        per_split, pools = {}, {}
        for split, qs in (("validation", val), ("test", test)):
            per_split[split], pools[split] = run_service(qs, final, with_cited=cited)
        add(
            label,
            f"service: prefetch(4 channels, global λ={lam_dense}/{lam_bm25}) → enricher → fusion",
            per_split,
            pools,
        )

    log.info("manuscript mode vs plain context on CL-SciSumm 2018")
    manuscript = run_manuscript_evaluation(
        store, encoder, index, lexical=lex_tuned, global_weight=(lam_dense, lam_bm25), seed=settings.seed
    )

    report = {
        "command": "citegraph eval recommend",
        "settings": asdict(settings),
        "queries": {
            "train (profiles, enricher knowledge)": h.train_queries,
            "validation": len(val.frame),
            "test": len(test.frame),
            "tuning sample": len(tune.frame),
            "multi-citation validation": int(sum(len(t) >= 2 for t in val.frame["targets"])),
            "multi-citation test": int(sum(len(t) >= 2 for t in test.frame["targets"])),
        },
        "masking": h.masking,
        "pool": {
            "papers in the index": len(index),
            "profiles (papers)": h.profiles.papers,
            "profile sentences": len(h.profiles.citances),
        },
        "tuned": tuned,
        "systems": [
            {
                "name": r.name,
                "description": r.description,
                "validation": r.validation.as_dict(),
                "test": r.test.as_dict(),
                "prefetch_recall@n": r.prefetch_recall,
                "multi_R@10": {"validation": r.multi_validation, "test": r.multi_test},
            }
            for r in results
        ],
        "manuscript": manuscript,
        "seconds": round(time.perf_counter() - start, 1),
    }
    return report


SCISUMM2018_SENTENCE = re.compile(r"#(?P<rp>[^#]+):(?P<sid>\d+)$")


def manuscript_citances(store: GraphStore) -> pd.DataFrame:
    """CL-SciSumm 2018's gold citances from the graph: runs of consecutive MENTIONS sentences.

    The loader turns each annotation record into MENTIONS edges from its citing sentences
    (``<citing>#<RP>:<sid>``) to the reference paper; a run of consecutive sentences of one citing
    paper citing one RP is one citance (750 annotation records give 740 runs: a few records
    annotate the same sentences). Columns: citing_id, citing_year, rp, sids (tuple).
    """
    rows = pd.DataFrame(
        store.query("retrieval_citances"),
        columns=["sentence_id", "text", "citing_id", "citing_year", "cited_id", "cited_year", "marker"],
    )
    parts = rows["sentence_id"].str.extract(SCISUMM2018_SENTENCE)
    rows = rows[parts["sid"].notna()].assign(sid=parts["sid"].dropna().astype(int))
    out = []
    for (citing, rp), group in rows.groupby(["citing_id", "cited_id"], sort=True):
        sids = sorted(set(group["sid"]))
        run = [sids[0]]
        for sid in [*sids[1:], None]:
            if sid is not None and sid == run[-1] + 1:
                run.append(sid)
                continue
            year = group["citing_year"].iat[0]
            out.append(
                {"citing_id": citing, "citing_year": None if pd.isna(year) else int(year), "rp": rp, "sids": tuple(run)}
            )
            if sid is not None:
                run = [sid]
    return pd.DataFrame(out, columns=["citing_id", "citing_year", "rp", "sids"])


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


def _describe(s: PrefetchSettings, variant: str) -> str:
    weights = ", ".join(f"{c}={s.weights.get(c, 1.0):g}" for c in s.channels)
    return f"{s.fusion} over {'+'.join(s.channels)} ({weights}){'; global info' if variant == 'global' else ''}"


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: the one table (validation and test), then the settings it came from."""
    cols = ["R@5", "R@10", "R@20", "R@50", "MRR", "NDCG@10", "MAP@10", "F1@20"]
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
        f"Queries: validation {q['validation']} (citing year 2010), test {q['test']} (2011); "
        f"multi-citation sentences (≥ 2 targets): {q['multi-citation validation']} / {q['multi-citation test']}; "
        f"tuning sample {q['tuning sample']} validation queries. Pool: every Paper "
        f"({report['pool']['papers in the index']} with a text). Profiles: {report['pool']['profile sentences']} "
        f"citing sentences of {report['pool']['profiles (papers)']} papers, citing years ≤ {report['settings']['train_until']}.",
        f"Masking of the queries' targets (per target): {report['masking']}.",
        f"Tuned on validation: {json.dumps(report['tuned'])}.",
        f"Run time {report['seconds']} s.",
    ]
    manuscript = report.get("manuscript")
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
    return "\n".join(lines)


def write_report(report: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """``out`` as JSON and ``out`` with ``.md`` as Markdown."""
    out.parent.mkdir(parents=True, exist_ok=True)
    json_path = out if out.suffix == ".json" else out.with_suffix(".json")
    json_path.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    md_path = json_path.with_suffix(".md")
    md_path.write_text(report_markdown(report) + "\n", encoding="utf-8")
    return json_path, md_path


__all__ = ["EvalSettings", "Harness", "build_queries", "report_markdown", "run_evaluation", "write_report"]
