r"""Citation recommendation as a service: prefetch → enrich → score, with typed input and output.

:class:`RecommendationService` composes the stages of :mod:`gnn`: the hybrid prefetch over the
paper index and the citation-context profiles (:mod:`gnn.retrieval.prefetch`), the graph enricher
(:mod:`gnn.retrieval.enricher`), and a final scorer. Until a trained reranker lands, the final score is a
transparent reciprocal-rank fusion over every stage that proposed the candidate:

.. math::
    s(d) = \sum_{c \in \text{channels}} \frac{w_c}{k + \mathrm{rank}_c(d)}
         + \frac{w_\mathrm{ref}}{k + \mathrm{rank}_\mathrm{ref}(d)}
         + \frac{w_\mathrm{co}}{k + \mathrm{rank}_\mathrm{co}(d)}

where :math:`\mathrm{rank}_c` is the candidate's place in prefetch channel :math:`c` (dense, bm25,
profile_bm25, profile_dense), :math:`\mathrm{rank}_\mathrm{ref}` its place among the references of
the top prefetched papers (by how many of them cite it) and :math:`\mathrm{rank}_\mathrm{co}` its
place among the co-citation partners of the papers already cited; a stage that did not propose it
adds nothing. Each recommendation's ``why`` lists those places, largest contribution first.

**The reranker hook.** Anything with ``score(query, candidates) -> list[float]``
(:class:`Reranker`) replaces the fusion: the service hands it every candidate of a query with its
features (:class:`gnn.retrieval.enricher.Candidate`) and sorts by the returned scores. The reranker issue plugs
in there; :class:`FusionScorer` is the default.

Used by ``citegraph recommend`` now and by the GraphQL ``recommend`` field later: both build a
:class:`RecommendRequest` and read :class:`Recommendation` objects; nothing here imports a driver
or holds Cypher.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from gnn.retrieval.enricher import (
    Candidate,
    CitationLists,
    Enricher,
    EnricherSettings,
    EnrichQuery,
    read_citations_with_years,
)
from gnn.retrieval.index import DenseIndex, IndexSettings, RetrievalIndex, index_path, store_stamp
from gnn.retrieval.prefetch import Prefetched, Prefetcher, PrefetchQuery, PrefetchSettings, manuscript_context
from gnn.retrieval.profiles import ProfileIndex, ProfileSettings
from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError, DataError
from graph.store import GraphStore
from loaders.markers import MASK, mask_target, surname

log = logging.getLogger(__name__)

DEFAULT_K = 10


# --- typed input and output ---------------------------------------------------------------------


@dataclass(frozen=True)
class RecommendRequest:
    """One recommendation query. Give ``context``, or ``draft`` + ``position`` (manuscript mode)."""

    context: str = ""  # the citation context; write [CIT] where the citation goes
    title: str | None = None  # the citing paper's title ("global information")
    abstract: str | None = None  # the citing paper's abstract
    cited_ids: tuple[str, ...] = ()  # papers the author already cites (their co-citation partners are added)
    citing_paper_id: str | None = None  # a paper of the graph: its title/abstract/year fill what is missing
    year: int | None = None  # the citing paper's year: later papers are not recommended
    k: int = DEFAULT_K  # recommendations returned
    draft: tuple[str, ...] = ()  # manuscript mode: the draft as sentences ...
    position: int | None = None  # ... and the index of the sentence that needs the citation
    id: str | None = None  # the caller's query id, echoed in the response

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigError(f"k is {self.k}; ask for at least one recommendation")
        if self.draft and (self.position is None or not 0 <= self.position < len(self.draft)):
            raise ConfigError(
                f"`position` must be the index of the citing sentence in `draft`, 0 to {len(self.draft) - 1}; "
                f"got {self.position!r}"
            )
        if not self.context.strip() and not (self.draft and self.position is not None):
            raise ConfigError("a recommendation needs a context, or a draft and the position of the citation")


@dataclass(frozen=True)
class Recommendation:
    """One recommended paper."""

    paper_id: str
    title: str | None
    year: int | None
    score: float
    why: str  # the stages and places that produced the score, e.g. "profile #1, dense #4, cited by 2 of top 10"
    stages: tuple[str, ...]  # prefetch, references, cocited
    features: dict[str, float | int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class RecommendResponse:
    id: str | None
    query: str  # the context the prefetch used (manuscript mode: the built one)
    items: list[Recommendation]
    candidates: int  # candidates scored (prefetch + enrichment, deduplicated)
    seconds: float


class Reranker(Protocol):
    """The final scorer: one score per candidate (higher is better)."""

    def score(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> list[float]: ...


@dataclass(frozen=True)
class FusionScorer:
    """The transparent fusion score of the module docstring (the default :class:`Reranker`)."""

    # w per stage; defaults tuned on the 2010 validation citances (R@10, docs/quality.md)
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

    @staticmethod
    def ranks(candidate: Candidate) -> dict[str, int]:
        """The candidate's place in every stage that proposed it."""
        ranks: dict[str, int | None] = {
            **candidate.channel_ranks,
            "references": candidate.references_rank,
            "cocited": candidate.cocited_rank,
        }
        return {stage: rank for stage, rank in ranks.items() if rank is not None}

    def parts(self, candidate: Candidate) -> dict[str, float]:
        return {
            stage: self.weights.get(stage, 0.0) / (self.rrf_k + rank)
            for stage, rank in self.ranks(candidate).items()
            if self.weights.get(stage, 0.0) > 0
        }

    def score(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> list[float]:
        return [sum(self.parts(c).values()) for c in candidates]

    def why(self, candidate: Candidate, top_m: int) -> str:
        """Every stage that proposed the candidate with its place, largest contribution first (a stage
        weighted 0 still shows: it is evidence a reranker may use)."""
        contributions = {
            stage: (self.weights.get(stage, 0.0) / (self.rrf_k + rank), -rank)
            for stage, rank in self.ranks(candidate).items()
        }
        labels = []
        for stage, _ in sorted(contributions.items(), key=lambda item: (-item[1][0], -item[1][1], item[0])):
            if stage == "references":
                labels.append(f"cited by {len(candidate.cited_by)} of top {top_m}")
            elif stage == "cocited":
                labels.append(f"co-cited {candidate.cocitation_count}x with your citations")
            else:
                labels.append(f"{stage} #{candidate.channel_ranks[stage]}")
        return ", ".join(labels) or "prefetch"


# --- settings ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceSettings:
    """Every knob of the recommendation pipeline; defaults are the validated configuration."""

    index: IndexSettings = field(default_factory=IndexSettings)  # BM25 k1/b, exact vs HNSW
    profiles: ProfileSettings = field(default_factory=ProfileSettings)  # which citing sentences count
    use_profiles: bool = True  # build citation-context profiles (needs MENTIONS and the encoder)
    prefetch: PrefetchSettings = field(default_factory=PrefetchSettings)  # channels, fusion, N
    enricher: EnricherSettings = field(default_factory=EnricherSettings)  # top-m, caps, knowledge cutoff
    fusion: FusionScorer = field(default_factory=FusionScorer)  # the final score until a reranker lands
    # Use the reranker trained by `citegraph train reranker` (saved beside the index) when there is one.
    use_reranker: bool = True
    supplemental: int = 2  # manuscript mode: earlier sentences sampled into the query
    # manuscript mode, candidate side: full-text papers are matched as title + abstract + this many
    # sampled body sentences (0: off; docs/quality.md, "manuscript mode", has the measured effect)
    candidate_sentences: int = 0
    seed: int = 0  # manuscript mode: sampling seed

    def __post_init__(self) -> None:
        for name in ("supplemental", "candidate_sentences"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} is {getattr(self, name)}; use 0 (off) or a positive number of sentences")


# --- citing sentences, masked ------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(?:cite|formula):[^}]*\}\}")


def mask_citance(
    text: str,
    marker: str | None,
    author_names: Sequence[str],
    year: int | None,
    *,
    spellings: Sequence[Sequence[str]] = (),
) -> tuple[str, str]:
    """``text`` with the cited paper's marker masked as ``[CIT]``, and how (see :mod:`loaders.markers`).

    In order: the author–year marker of the paper (:func:`loaders.markers.mask_target`, when its
    authors and year are known; ``author_names`` first, then each other spelling of the same
    authors in ``spellings``, see :func:`author_lists`); the MENTIONS ``marker`` where it occurs
    verbatim (CL-SciSumm's annotated markers, unarXive's ``{{cite:…}}`` placeholders); failing both,
    every occurrence of the first author's surname (in every spelling) and of the year is replaced
    ("scrubbed"), so a query never names its target. Remaining unarXive placeholders become
    ``[CIT]`` (citations) or nothing (formulas). Returns ``(masked text, how)`` with ``how`` in
    marker, first_author, near_name, loose, marker_text, scrubbed, none (nothing known to mask by).
    """
    how = "none"
    surname_lists = [[surname(n) for n in names if n.strip()] for names in (author_names, *spellings)]
    surname_lists = [surnames for surnames in surname_lists if surnames]
    result = None
    if year is not None:
        for surnames in surname_lists:
            result = mask_target(text, surnames, year)
            if result.ok:
                break
    if result is not None and result.ok:
        text, how = result.text, result.how
    elif marker and len(marker) > 3 and marker in text:
        text, how = text.replace(marker, MASK), "marker_text"
    elif surname_lists and year is not None:
        scrubbed = text
        for first in dict.fromkeys(surnames[0] for surnames in surname_lists):
            scrubbed = re.sub(rf"\b{re.escape(first)}\b", MASK, scrubbed, flags=re.IGNORECASE)
        scrubbed = re.sub(rf"\b{year}[a-z]?\b", MASK, scrubbed)
        text, how = scrubbed, "scrubbed"
    text = re.sub(r"\{\{cite:[^}]*\}\}", MASK, text)
    return _PLACEHOLDER.sub("", text).strip(), how


MAX_AUTHOR_SPELLINGS = 4  # author lists per paper at most (combinations of spellings of its first two authors)


def author_lists(store: GraphStore, paper_ids: Iterable[str]) -> dict[str, list[list[str]]]:
    """Each paper's author names in order, as one list per spelling of its first two authors.

    Two sources can hold one author under two spellings at the same position (W00-1308 has
    "Kristina Toutanova" and "Kristina Toutanvoa" both first): every combination of the spellings
    at positions 1 and 2 — the names an author–year marker shows — is one list (at most
    :data:`MAX_AUTHOR_SPELLINGS`), later positions take their first spelling, and spellings come by
    author id, so every run masks a sentence the same way. ``mask_citance(text, marker, lists[0],
    year, spellings=lists[1:])`` tries them all.
    """
    by_position: dict[str, dict[int, list[str]]] = {}
    ids = sorted(set(paper_ids))
    for begin in range(0, len(ids), 5_000):
        for row in store.query("authors_of_papers", {"ids": ids[begin : begin + 5_000]}):
            slots = by_position.setdefault(row["paper_id"], {})
            position = row["position"] if row["position"] is not None else 1_000_000 + len(slots)
            slots.setdefault(int(position), []).append(row["name"] or "")
    lists: dict[str, list[list[str]]] = {}
    for paper, slots in by_position.items():
        spelled = [slots[p] for p in sorted(slots)]
        rest = [names[0] for names in spelled[2:]]
        heads = itertools.islice(itertools.product(*spelled[:2]), MAX_AUTHOR_SPELLINGS)
        lists[paper] = [[*head, *rest] for head in heads]
    return lists


def citing_sentences(store: GraphStore) -> pd.DataFrame:
    """Every MENTIONS citing sentence with the cited paper's marker masked.

    Columns: sentence_id, citing_id, citing_year, cited_id, cited_year, text (raw), masked, how.
    A sentence citing several papers appears once per cited paper, each time with that paper masked.
    """
    rows = pd.DataFrame(
        store.query("retrieval_citances"),
        columns=["sentence_id", "text", "citing_id", "citing_year", "cited_id", "cited_year", "marker"],
    )
    authors = author_lists(store, rows["cited_id"])
    masked, hows = [], []
    for text, marker, cited_id, year in zip(rows["text"], rows["marker"], rows["cited_id"], rows["cited_year"]):
        first, *others = authors.get(cited_id, [[]])
        out, how = mask_citance(
            str(text or ""),
            marker if isinstance(marker, str) else None,
            first,
            None if pd.isna(year) else int(year),
            spellings=others,
        )
        masked.append(out)
        hows.append(how)
    rows["masked"] = masked
    rows["how"] = hows
    return rows.drop(columns=["marker"])


# --- the service -------------------------------------------------------------------------------


class RecommendationService:
    """Recommend citations for contexts over one store (see the module docstring).

    >>> service = RecommendationService.open(store)                       # doctest: +SKIP
    >>> service.recommend(RecommendRequest("We tag with TnT ([CIT]).", k=5)).items[0].paper_id  # doctest: +SKIP
    'A00-1031'
    """

    def __init__(
        self,
        store: GraphStore,
        index: RetrievalIndex,
        encoder: TextEncoder,
        *,
        profiles: ProfileIndex | None = None,
        settings: ServiceSettings = ServiceSettings(),
        reranker: Reranker | None = None,
        lock: threading.Lock | None = None,
        citations: CitationLists | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.encoder = encoder
        self.profiles = profiles
        self.settings = settings
        self.prefetcher = Prefetcher(index, encoder, profiles)
        self.enricher = Enricher(store, settings.enricher, citations)
        self.reranker: Reranker = reranker or settings.fusion
        # The store connection is not shared across threads: pass the API's store lock when the store is
        # shared with other services. It is held only around the store reads (resolving citing papers,
        # titles of the results), so other queries use the store while a recommendation computes; the
        # compute lock keeps the encoder, faiss and the prefetcher's recent vectors to one batch at a time.
        self._lock = lock or threading.Lock()
        self._compute_lock = threading.Lock()
        self._body_lock = threading.Lock()
        self._body_dense: DenseIndex | None = None  # manuscript mode's candidate side, built on first use

    @classmethod
    def open(
        cls,
        store: GraphStore,
        settings: ServiceSettings = ServiceSettings(),
        *,
        encoder: TextEncoder | None = None,
        index_dir: Path | None = None,
        reranker: Reranker | None = None,
        progress: bool = False,
        lock: threading.Lock | None = None,
    ) -> RecommendationService:
        """Open (building or updating as needed) the index beside ``store`` and the profiles."""
        from gnn.text.encoder import EncoderSettings

        folder = index_dir or index_path(store)
        if folder is None:
            raise ConfigError(f"{store.describe()}: pass index_dir, a folder to keep the retrieval index in")
        encoder = encoder or TextEncoder(EncoderSettings.from_env())
        # papers whose vector `compute embeddings` has not written yet are served from the encoder's cache
        index, report = RetrievalIndex.open(store, settings.index, path=folder, cache=encoder)
        if report.with_vector == 0:
            raise DataError(
                f"no paper of {store.describe()} has an embedding; run `citegraph compute embeddings --embed papers` first"
            )
        _check_encoder(index, encoder, store)
        profiles = None
        if settings.use_profiles:
            citances = _masked_citances(store, folder.with_name(folder.name + ".citances.parquet"))
            profiles = ProfileIndex.build(
                index,
                citances,
                encoder,
                settings.profiles,
                folder=folder.with_name(folder.name + ".profiles"),
                progress=progress,
            )
        # the citations in memory: the enricher then reads nothing from the store per query
        citation_rows = read_citations_with_years(store)  # read once: the enricher's lists and the reranker's
        citations = CitationLists.from_rows(citation_rows, store)
        service = cls(
            store,
            index,
            encoder,
            profiles=profiles,
            settings=settings,
            reranker=reranker,
            lock=lock,
            citations=citations,
        )
        if reranker is None and settings.use_reranker and (reranker_dir(folder) / "config.json").is_file():
            service.reranker = load_trained_reranker(
                store, index, service.prefetcher, reranker_dir(folder), profiles=profiles, citations=citation_rows
            )
        return service

    # resolving requests ---------------------------------------------------------------------------
    def _resolve(self, requests: Sequence[RecommendRequest]) -> list[tuple[PrefetchQuery, EnrichQuery]]:
        known = sorted({r.citing_paper_id for r in requests if r.citing_paper_id})
        papers = {str(row["id"]): row for row in self.store.query("paper_by_ids", {"ids": known})} if known else {}
        resolved = []
        for request in requests:
            paper = papers.get(request.citing_paper_id or "", {})
            title = request.title if request.title is not None else paper.get("title")
            abstract = request.abstract if request.abstract is not None else paper.get("abstract")
            year = request.year if request.year is not None else paper.get("year")
            context = request.context
            if request.draft and request.position is not None:
                context = manuscript_context(
                    request.draft, request.position, supplemental=self.settings.supplemental, seed=self.settings.seed
                )
            global_text = " ".join(t for t in (title, abstract) if t).strip()
            exclude = (request.citing_paper_id,) if request.citing_paper_id else ()
            resolved.append(
                (
                    PrefetchQuery(
                        context, global_text, year, exclude + tuple(request.cited_ids), request.citing_paper_id
                    ),
                    EnrichQuery(tuple(request.cited_ids), year, exclude),
                )
            )
        return resolved

    # recommending --------------------------------------------------------------------------------
    def candidates(self, requests: Sequence[RecommendRequest]) -> list[tuple[PrefetchQuery, list[Candidate]]]:
        """Prefetch and enrich a batch: every query's candidates with their features, unscored."""
        with self._lock:
            resolved = self._resolve(requests)
        queries = [p for p, _ in resolved]
        prefetched = self._prefetch(requests, queries)
        if self.enricher.citations is None:  # the enricher reads the store
            with self._lock:
                enriched = self.enricher.enrich(prefetched, [e for _, e in resolved])
        else:
            enriched = self.enricher.enrich(prefetched, [e for _, e in resolved])
        return list(zip(queries, enriched))

    def _prefetch(self, requests: Sequence[RecommendRequest], queries: list[PrefetchQuery]) -> list[Prefetched]:
        """The prefetch of a batch; manuscript-mode requests search the body-sampled candidate vectors
        when ``settings.candidate_sentences`` asks for them."""
        manuscript = [i for i, r in enumerate(requests) if r.draft and r.position is not None]
        if not self.settings.candidate_sentences or not manuscript:
            return self.prefetcher.prefetch(queries, self.settings.prefetch)
        out: list[Prefetched | None] = [None] * len(queries)
        plain = sorted(set(range(len(queries))) - set(manuscript))
        for members, dense_index in ((plain, None), (manuscript, self.body_dense_index())):
            if members:
                found = self.prefetcher.prefetch(
                    [queries[i] for i in members], self.settings.prefetch, dense_index=dense_index
                )
                for i, result in zip(members, found):
                    out[i] = result
        return [p for p in out if p is not None]

    def body_dense_index(self) -> DenseIndex:
        """The candidate side of manuscript mode: the index's vectors with every full-text paper
        re-encoded as title + abstract + ``candidate_sentences`` sampled body sentences
        (:func:`gnn.text.embeddings.body_sampled_vectors`), built on first use (the encoder's disk cache
        serves later servers) and kept."""
        if self._body_dense is None:
            with self._body_lock:
                if self._body_dense is None:
                    from gnn.text.embeddings import body_sampled_vectors

                    if self.prefetcher.encoder is None:
                        raise ConfigError("the candidate side of manuscript mode needs a text encoder")
                    vectors, papers = body_sampled_vectors(
                        self.store,
                        self.index,
                        self.prefetcher.encoder,
                        sentences=self.settings.candidate_sentences,
                        seed=self.settings.seed,
                        store_lock=self._lock,
                    )
                    log.info("manuscript mode: %d full-text candidates re-encoded with sampled body sentences", papers)
                    self._body_dense = DenseIndex(vectors, self.index.settings)
        return self._body_dense

    def recommend_many(self, requests: Sequence[RecommendRequest], *, metadata: bool = True) -> list[RecommendResponse]:
        """Recommendations for a batch (one store read per stage for the whole batch).

        ``metadata=False`` leaves titles and years out (one store read less; evaluations need ids only).
        """
        if not requests:
            return []
        start = time.perf_counter()
        with self._compute_lock:
            pools = self.candidates(requests)
            scored: list[list[tuple[Candidate, float]]] = []
            for query, candidates in pools:
                scores = self.reranker.score(query, candidates)
                scored.append(sorted(zip(candidates, scores), key=lambda cs: (-cs[1], cs[0].paper_id)))
        shown = (
            sorted({c.paper_id for ranked, r in zip(scored, requests) for c, _ in ranked[: r.k]}) if metadata else []
        )
        with self._lock:
            meta = {str(row["id"]): row for row in self.store.query("paper_by_ids", {"ids": shown})} if shown else {}
        seconds = (time.perf_counter() - start) / len(requests)
        top_m = self.settings.enricher.top_m
        responses = []
        for request, (query, candidates), ranked in zip(requests, pools, scored):
            items = []
            for candidate, score in ranked[: request.k]:
                paper = meta.get(candidate.paper_id, {})
                # the evidence each stage gave, strongest first (the reranker scores from the same evidence)
                why = (self.reranker if isinstance(self.reranker, FusionScorer) else self.settings.fusion).why(
                    candidate, top_m
                )
                items.append(
                    Recommendation(
                        paper_id=candidate.paper_id,
                        title=paper.get("title"),
                        year=paper.get("year"),
                        score=float(score),
                        why=why,
                        stages=tuple(candidate.stages),
                        features=_features(candidate),
                    )
                )
            responses.append(RecommendResponse(request.id, query.context, items, len(candidates), seconds))
        return responses

    def recommend(self, request: RecommendRequest) -> RecommendResponse:
        return self.recommend_many([request])[0]

    def close(self) -> None:
        self.encoder.close()


class LazyRecommendationService:
    """One :class:`RecommendationService` per app, built by ``factory`` on first use (opening the
    index and loading the encoder take seconds and memory a server that never recommends should
    not pay).

    Thread-safe: concurrent first calls build it once. A factory that fails (no index or
    embeddings yet) is retried on the next call, so computing them later needs no restart.
    """

    def __init__(self, factory: Callable[[], RecommendationService]) -> None:
        self._factory = factory
        self._service: RecommendationService | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._service is not None

    def get(self) -> RecommendationService:
        if self._service is None:
            with self._lock:
                if self._service is None:
                    self._service = self._factory()
        return self._service

    def close(self) -> None:
        """Close the service if it was built (the app's shutdown)."""
        if self._service is not None:
            self._service.close()


def reranker_dir(index_dir: Path) -> Path:
    """Where ``citegraph train reranker`` saves the model and the service looks for it: ``<index>.reranker/``."""
    return index_dir.with_name(index_dir.name + ".reranker")


def load_trained_reranker(
    store: GraphStore,
    index: RetrievalIndex,
    prefetcher: Prefetcher,
    folder: Path,
    *,
    profiles: ProfileIndex | None,
    citations: pd.DataFrame | None = None,
) -> Reranker:
    """The trained reranker of ``folder`` with features over the whole graph of ``store``
    (``citations``: :func:`gnn.retrieval.enricher.read_citations_with_years` rows when already read)."""
    from gnn.rerank.features import FeatureBuilder, Knowledge, TaxonomyPlaces
    from gnn.rerank.lambdamart import load_blend
    from gnn.rerank.model import TrainedReranker, load_reranker
    from gnn.retrieval.profiles import field_lexical_index
    from gnn.text.embeddings import titles_and_abstracts

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
    blend = load_blend(folder, config)
    reranker = TrainedReranker(model, builder, prefetcher, config=config, blend=blend)
    log.info("recommendations reranked by %r from %s", reranker, folder)
    return reranker


def _masked_citances(store: GraphStore, path: Path) -> pd.DataFrame:
    """:func:`citing_sentences` as profiles want them, kept in ``path`` while the store's files are unchanged."""
    stamp = store_stamp(store)
    stamp_path = path.with_suffix(".stamp")
    if (
        stamp is not None
        and path.is_file()
        and stamp_path.is_file()
        and stamp_path.read_text(encoding="utf-8") == stamp
    ):
        return pd.read_parquet(path)
    frame = citing_sentences(store).rename(columns={"text": "raw"}).rename(columns={"masked": "text"})
    if stamp is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(path, index=False)
        stamp_path.write_text(stamp, encoding="utf-8")
    return frame


def _features(candidate: Candidate) -> dict[str, float | int | None]:
    return {
        "prefetch_rank": candidate.prefetch_rank,
        "prefetch_score": candidate.prefetch_score,
        **{f"rank_{c}": r for c, r in candidate.channel_ranks.items()},
        "references_rank": candidate.references_rank,
        "references_freq": len(candidate.cited_by),
        "cocited_rank": candidate.cocited_rank,
        "cocitation_count": candidate.cocitation_count,
    }


def _check_encoder(index: RetrievalIndex, encoder: TextEncoder, store: GraphStore) -> None:
    """Queries must be encoded by the model the papers were: compare one stored text hash."""
    from gnn.text.embeddings import paper_texts

    if encoder.dim != index.dim:
        raise ConfigError(
            f"the encoder gives {encoder.dim}-d vectors but the index holds {index.dim}-d ones; "
            "set CITEGRAPH_ENCODER to the model the papers were embedded with"
        )
    rows = [r for r in range(len(index)) if index.embedding_hashes[r]][:1]
    if not rows:
        return
    texts = paper_texts(store).set_index("id")["text"]
    paper_id = str(index.ids[rows[0]])
    if paper_id in texts.index and encoder.text_hash(str(texts[paper_id])) != index.embedding_hashes[rows[0]]:
        raise ConfigError(
            f"the papers of {store.describe()} were embedded with another encoder (or max length) than "
            "CITEGRAPH_ENCODER gives; re-run `citegraph compute embeddings` or set the encoder they were made with"
        )


# --- batch files -------------------------------------------------------------------------------


def read_batch(path: Path, *, k: int) -> list[RecommendRequest]:
    """Requests from a JSON Lines file of ``{"id", "context", "citing_paper_id"?, "title"?, "abstract"?, "cited_ids"?}``;
    a manuscript-mode line gives ``"draft"`` (the draft's sentences, a list of strings) and ``"position"`` (the
    index of the sentence that needs the citation) instead of, or besides, ``"context"``."""
    requests = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not JSON ({exc.msg}); each line must be one query object") from exc
            if not isinstance(record, dict) or not (
                isinstance(record.get("context"), str) or record.get("draft") is not None
            ):
                raise DataError(
                    f'{where}: expected an object with a "context" string, e.g. {{"id": "q1", "context": "..."}}, '
                    'or a "draft" (list of sentences) with the "position" of the citing sentence'
                )
            draft, position = _draft(record, where)
            cited = record.get("cited_ids") or []
            if not isinstance(cited, list) or not all(isinstance(c, str) for c in cited):
                raise DataError(f"{where}: `cited_ids` must be a list of paper ids")
            year = record.get("year")
            title = _text_or_none(record.get("title"), where, "title")
            abstract = _text_or_none(record.get("abstract"), where, "abstract")
            citing_paper_id = _text_or_none(record.get("citing_paper_id"), where, "citing_paper_id")
            try:
                request = RecommendRequest(
                    context=record.get("context") or "",
                    draft=draft,
                    position=position,
                    title=title,
                    abstract=abstract,
                    cited_ids=tuple(cited),
                    citing_paper_id=citing_paper_id,
                    year=int(year) if isinstance(year, int) else None,
                    k=k,
                    id=str(record.get("id", number)),
                )
            except ConfigError as exc:  # the request's own checks (blank context, position), with the line
                raise DataError(f"{where}: {exc}") from exc
            requests.append(request)
    return requests


def _draft(record: dict[str, Any], where: str) -> tuple[tuple[str, ...], int | None]:
    """A batch line's manuscript-mode fields, their JSON types checked: ``((), None)`` when it has none."""
    draft, position = record.get("draft"), record.get("position")
    if draft is None and position is None:
        return (), None
    if not isinstance(draft, list) or not draft or not all(isinstance(x, str) for x in draft):
        raise DataError(f"{where}: `draft` must be a non-empty list of sentences (strings)")
    if position is not None and (not isinstance(position, int) or isinstance(position, bool)):
        raise DataError(f"{where}: `position` must be the index of the citing sentence in `draft`; got {position!r}")
    return tuple(draft), position  # its range is RecommendRequest's check


def _text_or_none(value: Any, where: str, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise DataError(f"{where}: `{name}` is {type(value).__name__}, expected a string")


def write_ranked(path: Path, responses: Iterable[RecommendResponse]) -> int:
    """One line per query: ``{"id", "ranked": [{"paper_id", "score"}, ...]}``; returns the lines written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for response in responses:
            ranked = [{"paper_id": item.paper_id, "score": round(item.score, 6)} for item in response.items]
            out.write(json.dumps({"id": response.id, "ranked": ranked}) + "\n")
            n += 1
    return n


__all__ = [
    "FusionScorer",
    "LazyRecommendationService",
    "RecommendRequest",
    "RecommendResponse",
    "Recommendation",
    "RecommendationService",
    "Reranker",
    "ServiceSettings",
    "author_lists",
    "citing_sentences",
    "load_trained_reranker",
    "mask_citance",
    "read_batch",
    "reranker_dir",
    "write_ranked",
]
