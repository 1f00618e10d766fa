r"""The recommendation service's final scorers: one protocol, two scorers, each explaining its own ranking.

A :class:`Reranker` gives every candidate of a query a score (higher is better; the service sorts by
it, ties by paper id) and explains the candidates it shows with ``why``: the evidence of the scorer
that ranked them, never of another.

**Fusion** (:class:`FusionScorer`, the scorer when no trained reranker is saved beside the index):
reciprocal-rank fusion over every stage that proposed the candidate,

.. math::
    s(d) = \sum_{c \in \text{channels}} \frac{w_c}{k + \mathrm{rank}_c(d)}
         + \frac{w_\mathrm{ref}}{k + \mathrm{rank}_\mathrm{ref}(d)}
         + \frac{w_\mathrm{co}}{k + \mathrm{rank}_\mathrm{co}(d)}

where :math:`\mathrm{rank}_c` is the candidate's place in prefetch channel :math:`c` (dense, bm25,
profile_bm25, profile_dense), :math:`\mathrm{rank}_\mathrm{ref}` its place among the references of
the top prefetched papers (by how many of them cite it) and :math:`\mathrm{rank}_\mathrm{co}` its
place among the co-citation partners of the papers already cited; a stage that did not propose it
adds nothing. Its ``why`` lists those places, largest contribution first:
"profile_bm25 #1, dense #4, cited by 2 of top 10".

**Trained** (:class:`TrainedReranker`, saved by ``citegraph train reranker``): the neural reranker
of :mod:`gnn.rerank.model`, :math:`s_\mathrm{nn} = t(q, d) + f(q, d)` (its text term and its feature
term), blended with LambdaMART when the trees were saved beside it (:mod:`gnn.rerank.lambdamart`),
:math:`s = z_q(s_\mathrm{mart}) + \alpha\, z_q(s_\mathrm{nn})`. Its ``why`` splits that score exactly
into parts and a constant of the query's pool :math:`c_q`:

.. math::
    s(q, d) = c_q + \sum_j \frac{\varphi_j(d)}{\sigma_\mathrm{mart}}
            + \alpha\,\frac{t(d) - \bar t}{\sigma_\mathrm{nn}} + \alpha\,\frac{f(d) - \bar f}{\sigma_\mathrm{nn}}

with :math:`\varphi_j` feature :math:`j`'s contribution to the trees' score
(:meth:`gnn.rerank.lambdamart.LambdaMart.contributions`; a stacked model's input of the neural score
is the part named ``neural``), :math:`\sigma` the pool's standard deviations of the two scores and
:math:`\bar t, \bar f` the pool's means. Without trees the parts are :math:`t(d) - \bar t` and
:math:`f(d) - \bar f`. ``why`` names the :data:`WHY_PARTS` largest parts by size (a feature with one
value over the whole pool is left out: it does not set the candidate apart; so is a part under
0.005, which would read as ±0.00), then the stages that
found the candidate with their places, best first:
"text +0.41, cocite_count +0.22, score_bm25 +0.10, bm25 #3, dense #7, cited by 2 of top 10".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import torch

from gnn.rerank.features import FEATURE_NAMES, FeatureBuilder, QueryInput
from gnn.rerank.knowledge import Knowledge, TaxonomyPlaces
from gnn.rerank.lambdamart import LambdaMart, blend, load_blend, stack_inputs
from gnn.rerank.model import RerankerModel, load_reranker
from gnn.retrieval.enricher import Candidate, read_citations_with_years
from gnn.retrieval.index import RetrievalIndex
from gnn.retrieval.prefetch import Prefetcher, PrefetchQuery
from gnn.retrieval.profiles import ProfileIndex, field_lexical_index
from gnn.text.embeddings import titles_and_abstracts
from graph.errors import DataError
from graph.store import GraphStore

log = logging.getLogger(__name__)

WHY_PARTS = 3  # parts of the trained score named in a recommendation's why


class Reranker(Protocol):
    """The final scorer of the recommendation service."""

    def score(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> list[float]:
        """One score per candidate, higher is better."""
        ...

    def why(
        self, query: PrefetchQuery, candidates: Sequence[Candidate], shown: Sequence[int], *, top_m: int
    ) -> list[str]:
        """Why ``candidates[i]`` scored as it did, for each ``i`` of ``shown`` (``top_m``: the enricher's
        top-m, named in "cited by 2 of top 10")."""
        ...


def stage_label(candidate: Candidate, stage: str, top_m: int) -> str:
    """The evidence one stage gave: "bm25 #3", "cited by 2 of top 10", "co-cited 4x with your citations"."""
    if stage == "references":
        return f"cited by {len(candidate.cited_by)} of top {top_m}"
    if stage == "cocited":
        return f"co-cited {candidate.cocitation_count}x with your citations"
    return f"{stage} #{candidate.channel_ranks[stage]}"


def stage_ranks(candidate: Candidate) -> dict[str, int]:
    """The candidate's place in every stage that proposed it."""
    ranks: dict[str, int | None] = {
        **candidate.channel_ranks,
        "references": candidate.references_rank,
        "cocited": candidate.cocited_rank,
    }
    return {stage: rank for stage, rank in ranks.items() if rank is not None}


@dataclass(frozen=True)
class FusionScorer:
    """The transparent fusion score of the module docstring."""

    # w per stage; defaults tuned on the 2010 validation citances (R@10, docs/results.md)
    weights: dict[str, float] = field(
        default_factory=lambda: {
            "dense": 1.0,
            "bm25": 1.0,
            "profile_bm25": 1.0,
            "profile_dense": 0.5,
            "references": 0.0,  # tuning picks 0 on the grid {0, 0.25, 0.5, 1, 2}: the stage adds candidates only
            "cocited": 0.5,
        }
    )
    rrf_k: int = 60

    def parts(self, candidate: Candidate) -> dict[str, float]:
        return {
            stage: self.weights.get(stage, 0.0) / (self.rrf_k + rank)
            for stage, rank in stage_ranks(candidate).items()
            if self.weights.get(stage, 0.0) > 0
        }

    def score(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> list[float]:
        return [sum(self.parts(c).values()) for c in candidates]

    def why(
        self, query: PrefetchQuery, candidates: Sequence[Candidate], shown: Sequence[int], *, top_m: int
    ) -> list[str]:
        return [self.explain(candidates[i], top_m) for i in shown]

    def explain(self, candidate: Candidate, top_m: int) -> str:
        """Every stage that proposed the candidate with its place, largest contribution first (a stage
        weighted 0 still shows: it is evidence the trained reranker reads)."""
        contributions = {
            stage: (self.weights.get(stage, 0.0) / (self.rrf_k + rank), -rank)
            for stage, rank in stage_ranks(candidate).items()
        }
        order = sorted(contributions.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
        return ", ".join(stage_label(candidate, stage, top_m) for stage, _ in order) or "prefetch"


@dataclass(frozen=True)
class ScoredPool:
    """One query's pool as :class:`TrainedReranker` scored it, every term kept for ``why``."""

    features: np.ndarray  # (N, F) float32
    text: np.ndarray  # (N,) the neural model's text term t(q, d)
    feature_term: np.ndarray  # (N,) its feature term f(q, d)
    neural: np.ndarray  # (N,) s_nn = t + f, float32 as the model computes it
    mart: np.ndarray | None  # (N,) LambdaMART's score; None without trees
    scores: np.ndarray  # (N,) the served score


class TrainedReranker:
    r"""A saved :class:`~gnn.rerank.model.RerankerModel`, and the LambdaMART blend saved beside it, as the
    service's final scorer (module docstring).

    ``score(query, candidates)`` computes the candidates' features with ``builder`` (the whole graph as
    knowledge: a served query is written now) and the model's scores — blended with the trees when
    ``blend`` (the trees and :math:`\alpha`) is given. The papers the query already cites are its
    exclusions other than the citing paper itself; ``prefetcher`` gives the context and citing-paper
    vectors (those of the batch just prefetched, without encoding again). ``why`` of the pool just
    scored reuses its terms.
    """

    def __init__(
        self,
        model: RerankerModel,
        builder: FeatureBuilder,
        prefetcher: Prefetcher,
        *,
        config: dict[str, Any] | None = None,
        blend: tuple[LambdaMart, float] | None = None,
    ) -> None:
        self.model = model.eval()
        self.builder = builder
        self.prefetcher = prefetcher
        self.config = config or {}
        self.blend = blend
        index = builder.index
        self._vectors = torch.as_tensor(np.vstack([index.vectors, np.zeros((1, index.dim), np.float32)]))
        # the pool scored last: the service asks why of the pool it has just ranked
        self._last: tuple[tuple[PrefetchQuery, tuple[str, ...]], ScoredPool] | None = None
        self._lock = threading.Lock()

    def score(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> list[float]:
        if not candidates:
            return []
        return [float(v) for v in self.scored(query, candidates).scores]

    def why(
        self, query: PrefetchQuery, candidates: Sequence[Candidate], shown: Sequence[int], *, top_m: int
    ) -> list[str]:
        if not shown:
            return []
        return self.explain(self.scored(query, candidates), candidates, shown, top_m=top_m)

    def explain(
        self, pool: ScoredPool, candidates: Sequence[Candidate], shown: Sequence[int], *, top_m: int
    ) -> list[str]:
        """``why`` of ``pool`` (``candidates`` as scored): the :data:`WHY_PARTS` largest parts, then the stages."""
        parts = self.parts(pool, shown)
        inputs = stack_inputs(pool.features, pool.neural, self.blend[0].settings) if self.blend else pool.features
        constant = {name for name, j in self._input_columns().items() if np.ptp(inputs[:, j]) == 0}
        out = []
        for k, i in enumerate(shown):
            named = sorted(
                (
                    (label, float(values[k]))
                    for label, values in parts.items()
                    if label not in constant and abs(values[k]) >= 0.005  # what shows as ±0.00 says nothing
                ),
                key=lambda lv: (-abs(lv[1]), lv[0]),
            )[:WHY_PARTS]
            candidate = candidates[i]
            stages = sorted(stage_ranks(candidate).items(), key=lambda sr: (sr[1], sr[0]))
            out.append(
                ", ".join(
                    [f"{label} {value:+.2f}" for label, value in named]
                    + [stage_label(candidate, stage, top_m) for stage, _ in stages]
                )
            )
        return out

    def scored(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> ScoredPool:
        """The pool's features and every term of its scores (the last pool's kept for ``why``)."""
        key = (query, tuple(c.paper_id for c in candidates))
        with self._lock:
            if self._last is not None and self._last[0] == key:
                return self._last[1]
        cited = tuple(p for p in query.exclude if p != query.citing_id)
        context = self.prefetcher.context_vectors([query])[0]
        global_ = self.prefetcher.global_vectors([query])[0]
        q = QueryInput(query, cited, context, global_ if np.any(global_) else None)
        features = self.builder.features(q, candidates)
        rows = np.asarray([self.builder.index.row_of.get(c.paper_id, -1) for c in candidates], dtype=np.int64)
        pool = self.score_features(context, global_, rows, features)
        with self._lock:
            self._last = (key, pool)
        return pool

    def score_features(
        self, context: np.ndarray, global_: np.ndarray, rows: np.ndarray, features: np.ndarray
    ) -> ScoredPool:
        """Score one pool from its inputs: ``context`` and ``global_`` ``(dim,)``, the candidates' index
        ``rows`` ``(N,)`` (-1: not indexed) and ``features`` ``(N, F)``."""
        with torch.no_grad():
            text, feature_term = self.model.terms(
                torch.as_tensor(context[None], dtype=torch.float32),
                torch.as_tensor(global_[None], dtype=torch.float32),
                self._vectors[torch.as_tensor(rows)][None],
                torch.as_tensor(features[None]),
            )
            neural = (text + feature_term)[0].numpy()
        mart = None
        scores: np.ndarray = neural
        if self.blend is not None:
            trees, alpha = self.blend
            mart = trees.score(features, neural)
            scores = blend(mart, neural, alpha)
        return ScoredPool(features, text[0].numpy(), feature_term[0].numpy(), neural, mart, scores)

    def parts(self, pool: ScoredPool, shown: Sequence[int]) -> dict[str, np.ndarray]:
        """Each part of the module docstring's split, ``(len(shown),)`` per label: ``text``, ``feature term``
        and, with trees, every feature (and ``neural``) as the trees read them."""
        rows = np.asarray(shown, dtype=np.int64)
        text = np.asarray(pool.text, np.float64)
        term = np.asarray(pool.feature_term, np.float64)
        scale = 1.0
        if self.blend is not None:
            spread = float(np.asarray(pool.neural, np.float64).std())
            scale = self.blend[1] / spread if spread > 0 else 0.0
        parts = {"text": scale * (text[rows] - text.mean()), "feature term": scale * (term[rows] - term.mean())}
        if self.blend is None or pool.mart is None:
            return parts
        trees = self.blend[0]
        contributions, _ = trees.contributions(pool.features, pool.neural, rows)
        spread = float(np.asarray(pool.mart, np.float64).std())
        tree_scale = 1.0 / spread if spread > 0 else 0.0
        for name, j in self._input_columns().items():
            parts[name] = tree_scale * contributions[:, j]
        return parts

    def _input_columns(self) -> dict[str, int]:
        """The trees' input columns by name (the features, then ``neural`` when stacked); none without trees."""
        if self.blend is None:
            return {}
        names = [*FEATURE_NAMES, "neural"] if self.blend[0].settings.stacked else list(FEATURE_NAMES)
        return {name: j for j, name in enumerate(names)}

    def __repr__(self) -> str:
        objective = self.config.get("settings", {}).get("objective")
        if self.blend is not None:
            return f"{type(self).__name__}(objective={objective}, lambdamart={self.blend[0].describe_trees()}, alpha={self.blend[1]:g})"
        return f"{type(self).__name__}(objective={objective})"


def load_trained_reranker(
    store: GraphStore,
    index: RetrievalIndex,
    prefetcher: Prefetcher,
    folder: Path,
    *,
    profiles: ProfileIndex | None,
    citations: pd.DataFrame | None = None,
) -> TrainedReranker:
    """The trained reranker of ``folder`` with features over the whole graph of ``store``
    (``citations``: :func:`gnn.retrieval.enricher.read_citations_with_years` rows when already read)."""
    model, config = load_reranker(folder)
    if model.dim != index.dim:
        raise DataError(
            f"{folder}: the reranker was trained on {model.dim}-d vectors, the index holds {index.dim}-d ones; "
            "rerun `citegraph train reranker`"
        )
    citations = read_citations_with_years(store) if citations is None else citations
    authorships = pd.DataFrame(store.query("authorships"), columns=["author_id", "paper_id"])
    builder = (
        FeatureBuilder(index, Knowledge.from_citations(citations, None), TaxonomyPlaces.from_store(store))
        .with_authorships(authorships)
        .with_texts(titles_and_abstracts(store))
    )
    if profiles is not None:
        builder = builder.with_field_index(field_lexical_index(index, profiles.citances, None))
    reranker = TrainedReranker(model, builder, prefetcher, config=config, blend=load_blend(folder, config))
    log.info("recommendations reranked by %r from %s", reranker, folder)
    return reranker


__all__ = [
    "WHY_PARTS",
    "FusionScorer",
    "Reranker",
    "ScoredPool",
    "TrainedReranker",
    "load_trained_reranker",
    "stage_label",
    "stage_ranks",
]
