r"""Prefetch: the recall-oriented first stage (citeomatic; SymTax) — dense, BM25, profiles, and their fusion.

A query is a citation context with the target's marker masked as ``[CIT]``, optionally with the
citing paper's title and abstract ("global information", Medić & Šnajder 2020) and a year (papers
published later are not candidates). Each **channel** ranks the index rows published up to that
year:

=================  ===============================================================================
``dense``          :math:`(e(c) + \lambda\, g)^\top e(d)`: cosine to the context's embedding, plus
                   :math:`\lambda` times the cosine to the citing paper's embedding :math:`g`
``bm25``           :math:`\mathrm{BM25}(c, d) + \lambda\,\mathrm{BM25}(\text{title+abstract}, d)`
``profile_bm25``   BM25 of the context against the candidate's citing sentences (:mod:`gnn.retrieval.profiles`)
``profile_dense``  best cosine between the context and one of the candidate's citing sentences
=================  ===============================================================================

and the channels' top lists (``depth`` each) are fused into one list of ``n`` (default 300):

.. math::
    \mathrm{RRF}(d) = \sum_c \frac{w_c}{k + \mathrm{rank}_c(d)}
    \qquad\qquad
    \mathrm{CombSUM}(d) = \sum_c w_c \, \frac{s_c(d) - \min_c}{\max_c - \min_c}

reciprocal rank fusion (Cormack, Clarke & Büttcher 2009, :math:`k = 60`) and a score-weighted sum
of min–max normalised scores over each channel's list (Fox & Shaw 1994's CombSUM with weights);
a paper missing from a channel's list adds nothing. The weights are tuned on validation recall
(``citegraph eval recommend``).

**Manuscript mode** (:mod:`gnn.retrieval.manuscript`): :meth:`Prefetcher.dense` takes a second
dense index (``dense_index``) whose full-text papers carry sampled body sentences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gnn.retrieval.index import DenseIndex, RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex, tokenize
from gnn.retrieval.profiles import ProfileIndex
from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError

CHANNELS = ("dense", "bm25", "profile_bm25", "profile_dense")
FUSIONS = ("rrf", "weighted")


@dataclass(frozen=True)
class PrefetchQuery:
    """One recommendation query as the prefetcher sees it (already masked)."""

    context: str  # the citation context, the target's marker masked as [CIT]
    global_text: str = ""  # the citing paper's title and abstract ("" when not given)
    year: int | None = None  # candidates published after this year are excluded; None: no filter
    exclude: tuple[str, ...] = ()  # paper ids never returned (the citing paper itself)
    citing_id: str | None = None  # when indexed, its stored embedding stands for global_text


@dataclass(frozen=True)
class PrefetchSettings:
    """How the prefetcher ranks and fuses."""

    # Papers returned: the pool the enricher and the reranker work on. 300 rather than 200: on the 2010
    # validation citances it holds 92.2% of the targets instead of 90.4% (docs/results.md),
    # and the reranker scores 300 candidates well inside the latency target.
    n: int = 300
    channels: tuple[str, ...] = ("dense", "bm25", "profile_bm25", "profile_dense")
    fusion: str = "rrf"  # "rrf" (reciprocal rank fusion) or "weighted" (min-max CombSUM)
    rrf_k: int = 60  # RRF's k: damps the head of each list (Cormack et al. 2009 use 60)
    depth: int = 400  # each channel's list length before fusion (>= n so fusion can reorder)
    # Channel weights w_c (both fusions). Defaults: tuned on the 2010 validation citances (R@10).
    weights: dict[str, float] = field(
        default_factory=lambda: {"dense": 1.0, "bm25": 1.0, "profile_bm25": 1.0, "profile_dense": 0.5}
    )
    # λ: weight of the citing paper's title+abstract in the dense channel (0: off); tuned: 0.5.
    global_weight: float = 0.5
    # λ of the bm25 channel (BM25 scores have another scale than cosines); tuned: 1.0.
    global_weight_bm25: float = 1.0

    def __post_init__(self) -> None:
        unknown = set(self.channels) - set(CHANNELS)
        if unknown:
            raise ConfigError(f"unknown prefetch channels {sorted(unknown)}; known: {', '.join(CHANNELS)}")
        if self.fusion not in FUSIONS:
            raise ConfigError(f"fusion {self.fusion!r} is not one of {', '.join(FUSIONS)}")
        if self.n < 1 or self.depth < 1 or self.rrf_k < 0:
            raise ConfigError("n and depth must be positive and rrf_k non-negative")


@dataclass(frozen=True)
class ChannelList:
    """One channel's ranking for one query: paper ids best first, with the channel's scores."""

    ids: list[str]
    scores: list[float]

    def ranks(self) -> dict[str, int]:
        return {paper: rank for rank, paper in enumerate(self.ids, start=1)}


@dataclass(frozen=True)
class Prefetched:
    """The fused top-n of one query and where each paper stood in each channel (1-based)."""

    ids: list[str]
    scores: list[float]
    channel_ranks: dict[str, dict[str, int]]  # channel -> paper id -> rank in that channel's list
    # channel -> paper id -> the channel's own score (cosine, BM25); a reranker's features
    channel_scores: dict[str, dict[str, float]] = field(default_factory=dict)


def fuse(lists: dict[str, ChannelList], settings: PrefetchSettings) -> Prefetched:
    """Fuse channel lists by RRF or weighted CombSUM (module docstring); ties broken by paper id."""
    fused: dict[str, float] = {}
    for channel, ranked in lists.items():
        weight = settings.weights.get(channel, 1.0)
        if weight == 0 or not ranked.ids:
            continue
        if settings.fusion == "rrf":
            for rank, paper in enumerate(ranked.ids, start=1):
                fused[paper] = fused.get(paper, 0.0) + weight / (settings.rrf_k + rank)
        else:
            scores = np.asarray(ranked.scores, dtype=np.float64)
            low, high = float(scores.min()), float(scores.max())
            # a list of equal scores carries no order: every member gets the full weight
            normalised = (scores - low) / (high - low) if high > low else np.ones_like(scores)
            for paper, value in zip(ranked.ids, normalised.tolist()):
                fused[paper] = fused.get(paper, 0.0) + weight * value
    order = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[: settings.n]
    return Prefetched(
        ids=[paper for paper, _ in order],
        scores=[score for _, score in order],
        channel_ranks={channel: ranked.ranks() for channel, ranked in lists.items()},
        channel_scores={channel: dict(zip(ranked.ids, ranked.scores)) for channel, ranked in lists.items()},
    )


def _top(scores: np.ndarray, limit: int, k: int, exclude: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Rows and scores of the ``k`` best among ``scores[:limit]`` (excluded rows and -inf dropped)."""
    part = scores[:limit].copy()
    for row in exclude:
        if row < limit:
            part[row] = -np.inf
    k = min(k, int(np.isfinite(part).sum()))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    top = np.argpartition(-part, k - 1)[:k]
    top = top[np.lexsort((top, -part[top]))]
    return top, part[top]


class Prefetcher:
    """Runs the channels of :data:`CHANNELS` over a :class:`RetrievalIndex` (and profiles, when built)."""

    RECENT = 4096  # texts whose vectors are kept between calls (a few batches)

    def __init__(
        self, index: RetrievalIndex, encoder: TextEncoder | None, profiles: ProfileIndex | None = None
    ) -> None:
        self.index = index
        self.encoder = encoder
        self.profiles = profiles
        # the vectors of the latest texts encoded: a reranker scoring the same batch reuses them
        # instead of running the encoder a second time per query
        self._recent: dict[str, np.ndarray] = {}

    # encodings --------------------------------------------------------------------------------
    def _encode(self, texts: list[str]) -> np.ndarray:
        assert self.encoder is not None
        missing = [t for t in dict.fromkeys(texts) if t not in self._recent]
        if missing:
            if len(self._recent) + len(missing) > self.RECENT:
                self._recent.clear()
            self._recent.update(zip(missing, self.encoder.encode(missing)))
        return np.stack([self._recent[t] for t in texts]) if texts else np.zeros((0, self.index.dim), np.float32)

    def context_vectors(self, queries: Sequence[PrefetchQuery]) -> np.ndarray:
        """``(q, dim)`` unit vectors of the contexts (recent ones and the encoder's disk cache serve repeats)."""
        if self.encoder is None:
            raise ConfigError("dense channels need a text encoder; pass one or use only bm25 channels")
        return self._encode([q.context for q in queries])

    def global_vectors(self, queries: Sequence[PrefetchQuery]) -> np.ndarray:
        """``(q, dim)`` citing-paper vectors: the stored one when indexed, else the encoded title+abstract; 0 without."""
        out = np.zeros((len(queries), self.index.dim), dtype=np.float32)
        to_encode: list[tuple[int, str]] = []
        for i, query in enumerate(queries):
            row = self.index.row_of.get(query.citing_id) if query.citing_id else None
            if row is not None and self.index.embedding_hashes[row]:
                out[i] = self.index.vectors[row]
            elif query.global_text.strip():
                to_encode.append((i, query.global_text))
        if to_encode:
            if self.encoder is None:
                raise ConfigError("encoding the citing paper's title and abstract needs a text encoder")
            vectors = self._encode([text for _, text in to_encode])
            for (i, _), vector in zip(to_encode, vectors):
                out[i] = vector
        return out

    # channels ---------------------------------------------------------------------------------
    def _exclude_rows(self, query: PrefetchQuery) -> list[int]:
        return [r for r in (self.index.row_of.get(p) for p in query.exclude) if r is not None]

    def _as_list(self, rows: np.ndarray, scores: np.ndarray) -> ChannelList:
        return ChannelList([str(self.index.ids[r]) for r in rows.tolist()], [float(s) for s in scores.tolist()])

    def dense(
        self,
        queries: Sequence[PrefetchQuery],
        depth: int,
        *,
        global_weight: float = 0.0,
        context_vectors: np.ndarray | None = None,
        global_vectors: np.ndarray | None = None,
        dense_index: DenseIndex | None = None,
    ) -> list[ChannelList]:
        """``dense`` channel: exact (or HNSW) inner product, restricted to papers up to each query's year.

        ``dense_index``: other vectors for the same rows (e.g. :func:`gnn.retrieval.manuscript.body_sampled_vectors`
        of full-text papers, manuscript mode); the index's own by default.
        """
        searcher = self.index.dense if dense_index is None else dense_index
        vectors = self.context_vectors(queries) if context_vectors is None else context_vectors
        if global_weight:
            glob = self.global_vectors(queries) if global_vectors is None else global_vectors
            vectors = vectors + global_weight * glob
        out: list[ChannelList | None] = [None] * len(queries)
        by_cut: dict[int, list[int]] = {}
        for i, query in enumerate(queries):
            by_cut.setdefault(self.index.cut(query.year), []).append(i)
        for cut, members in by_cut.items():
            extra = max((len(queries[i].exclude) for i in members), default=0)
            scores, rows = searcher.search(vectors[members], depth + extra, limit=cut)
            for i, row_list, score_list in zip(members, rows, scores):
                excluded = set(self._exclude_rows(queries[i]))
                keep = [(r, s) for r, s in zip(row_list.tolist(), score_list.tolist()) if r >= 0 and r not in excluded]
                keep = keep[:depth]
                out[i] = self._as_list(np.asarray([r for r, _ in keep], np.int64), np.asarray([s for _, s in keep]))
        return [o if o is not None else ChannelList([], []) for o in out]

    def bm25(
        self,
        queries: Sequence[PrefetchQuery],
        depth: int,
        *,
        global_weight: float = 0.0,
        lexical: LexicalIndex | None = None,
    ) -> list[ChannelList]:
        """``bm25`` channel over title + abstract (``lexical``: another BM25 index over the same rows, e.g. the
        title + abstract + profile one of :func:`gnn.retrieval.profiles.field_lexical_index`)."""
        model = lexical if lexical is not None else self.index.lexical
        out = []
        for query in queries:
            scores = model.scores(tokenize(query.context))
            if global_weight and query.global_text.strip():
                scores = scores + global_weight * model.scores(tokenize(query.global_text))
            rows, values = _top(scores, self.index.cut(query.year), depth, self._exclude_rows(query))
            out.append(self._as_list(rows, values))
        return out

    def profile_bm25(self, queries: Sequence[PrefetchQuery], depth: int) -> list[ChannelList]:
        """``profile_bm25`` channel (empty lists without profiles)."""
        if self.profiles is None:
            return [ChannelList([], []) for _ in queries]
        out = []
        for query in queries:
            scores = self.profiles.bm25_scores(tokenize(query.context))
            scores[scores <= 0] = -np.inf  # no shared term: not a profile match
            rows, values = _top(scores, self.index.cut(query.year), depth, self._exclude_rows(query))
            out.append(self._as_list(rows, values))
        return out

    def profile_dense(
        self, queries: Sequence[PrefetchQuery], depth: int, *, context_vectors: np.ndarray | None = None
    ) -> list[ChannelList]:
        """``profile_dense`` channel (empty lists without profiles)."""
        if self.profiles is None:
            return [ChannelList([], []) for _ in queries]
        vectors = self.context_vectors(queries) if context_vectors is None else context_vectors
        out = []
        for query, vector in zip(queries, vectors):
            scores = self.profiles.dense_scores(vector)
            rows, values = _top(scores, self.index.cut(query.year), depth, self._exclude_rows(query))
            out.append(self._as_list(rows, values))
        return out

    def channel_lists(
        self, queries: Sequence[PrefetchQuery], settings: PrefetchSettings, *, dense_index: DenseIndex | None = None
    ) -> list[dict[str, ChannelList]]:
        """Every channel of ``settings`` for every query (contexts encoded once); ``dense_index``: see :meth:`dense`."""
        needs_vectors = {"dense", "profile_dense"} & set(settings.channels)
        vectors = self.context_vectors(queries) if needs_vectors else None
        per_channel: dict[str, list[ChannelList]] = {}
        for channel in settings.channels:
            if channel == "dense":
                per_channel[channel] = self.dense(
                    queries,
                    settings.depth,
                    global_weight=settings.global_weight,
                    context_vectors=vectors,
                    dense_index=dense_index,
                )
            elif channel == "bm25":
                per_channel[channel] = self.bm25(queries, settings.depth, global_weight=settings.global_weight_bm25)
            elif channel == "profile_bm25":
                per_channel[channel] = self.profile_bm25(queries, settings.depth)
            else:
                per_channel[channel] = self.profile_dense(queries, settings.depth, context_vectors=vectors)
        return [{channel: lists[i] for channel, lists in per_channel.items()} for i in range(len(queries))]

    def prefetch(
        self,
        queries: Sequence[PrefetchQuery],
        settings: PrefetchSettings = PrefetchSettings(),
        *,
        dense_index: DenseIndex | None = None,
    ) -> list[Prefetched]:
        """The fused top ``settings.n`` of every query; ``dense_index``: see :meth:`dense`."""
        return [fuse(lists, settings) for lists in self.channel_lists(queries, settings, dense_index=dense_index)]


__all__ = [
    "CHANNELS",
    "FUSIONS",
    "ChannelList",
    "PrefetchQuery",
    "PrefetchSettings",
    "Prefetched",
    "Prefetcher",
    "fuse",
]
