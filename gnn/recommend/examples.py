r"""The reranker's examples: the time-split queries, each with the candidates the service returns for it.

**Data, strictly as the service sees it.** The queries are the ScisummNet citing sentences of
:func:`gnn.recommend.citances.build_queries` (every cited paper's marker masked) — or, with
``TrainSettings.queries = "store"``, every citing sentence of the store
(:func:`gnn.recommend.citances.store_queries`), split by :func:`gnn.recommend.split.time_split`
(folds, validation and test computed from the citing years, each knowing the graph up to the year
before its first; the rest of this docstring describes the ScisummNet folds). Each query's
candidates are what :class:`gnn.recommend.service.RecommendationService` really returns for it
(prefetch → enricher), and its features what was known before it was written
(:class:`gnn.rerank.knowledge.Knowledge`):

* **training folds** (:class:`Fold`): queries of 2006–2007 see the graph, citation-context profiles and
  co-citation counts up to 2005; queries of 2008–2009 those up to 2007. A query never sees its own
  citation, nor anything from the validation and test years;
* **validation** (2010; early stopping, model selection) and **test** (2011, reported, never used to
  choose) see everything up to 2009, like :mod:`gnn.recommend.evaluate`.

Training queries also carry extras drawn from the co-citation noise distributions known at their
cutoff (MP-BERT4CR eq. 1–2, :class:`gnn.cocitation.noise.NoiseSampler`): co-cited partners of their
targets (extra positives), popular papers (extra negatives) and target–partner–negative triples.
:func:`load_splits` builds every split once and keeps it in a cache keyed by everything it derives from.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
from tqdm import tqdm

from gnn.cocitation.counts import count_pairs
from gnn.cocitation.noise import NoiseSampler, noise_distributions
from gnn.recommend.citances import build_queries, profile_citances, query_frame
from gnn.recommend.service import RecommendationService, RecommendRequest, ServiceSettings
from gnn.recommend.split import SplitRule, time_split
from gnn.rerank.examples import QueryExample
from gnn.rerank.features import FEATURE_NAMES, FeatureBuilder, QueryInput
from gnn.rerank.knowledge import Knowledge, TaxonomyPlaces, known_citations
from gnn.retrieval.enricher import Candidate, CitationLists, EnricherSettings, read_citations_with_years
from gnn.retrieval.index import RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex
from gnn.retrieval.prefetch import PrefetchSettings
from gnn.retrieval.profiles import ProfileIndex, ProfileSettings, field_lexical_index
from gnn.text.embeddings import titles_and_abstracts
from gnn.text.encoder import TextEncoder
from graph.store import GraphStore

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Fold:
    """Training queries of ``years`` (inclusive) that know the graph up to ``until``."""

    until: int
    years: tuple[int, int]


@dataclass(frozen=True)
class TrainSettings:
    """The split and the sampling of extra positives / negatives."""

    # Where the queries come from: "scisummnet" (the ScisummNet citing sentences, split by the fixed years
    # below) or "store" (every citing sentence of the store, split by store_split from its citing years).
    queries: str = "scisummnet"
    store_split: SplitRule = field(default_factory=SplitRule)
    folds: tuple[Fold, ...] = (Fold(2005, (2006, 2007)), Fold(2007, (2008, 2009)))
    known_until: int = 2009  # what validation and test queries know (as in gnn.recommend.evaluate)
    validation: tuple[int, int] = (2010, 2010)
    test: tuple[int, int] = (2011, 2011)
    partners_per_target: int = 4  # co-cited partners drawn per target from p(j|t) (extra positives)
    noise_negatives: int = 8  # papers drawn per query from p(i) (extra negatives)
    power: float = 0.75  # α of both noise distributions
    limit: int | None = None  # queries per split at most (a quick run); None: all
    # Train on the latest this many training folds only (None: every fold). The default build trains on the
    # latest (its cross-fitting then halves it): about half the examples to build and to train on.
    latest_folds: int | None = None
    # False leaves the test queries out (the split is kept, empty): validation alone chooses the model and
    # stops the training, so the default build skips what only the report reads.
    evaluate_test: bool = True
    seed: int = 0
    # The pool the examples are drawn from: the service's own prefetch (part of the example cache's key).
    prefetch: PrefetchSettings = field(default_factory=PrefetchSettings)


@dataclass
class SplitData:
    """One split's queries: their examples, the service's candidate pools and the inputs they were featurised from."""

    name: str
    examples: list[QueryExample]
    pools: list[list[Candidate]]  # the service's candidates, for re-featurising (ablations)
    inputs: list[QueryInput]
    until: int
    dropped: int = 0  # queries without a target among the candidates (left out of training)
    # The title + abstract + profile BM25 its features were computed with (the baselines' strongest lexical
    # system reads the same); not kept in the example cache, where it would double the file.
    field_index: LexicalIndex | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "field_index": None}


def citing_year(value: object) -> int | None:
    """A query frame's ``citing_year`` as the service takes it (None: the citing paper has no year)."""
    return None if value is None or pd.isna(value) else int(value)  # type: ignore[call-overload]


def _requests(frame: pd.DataFrame) -> list[RecommendRequest]:
    return [
        RecommendRequest(
            context=ctx, citing_paper_id=citing, year=citing_year(year), k=1, cited_ids=tuple(cited), id=sentence
        )
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
        self._profiles: dict[int, ProfileIndex] = {}  # citation-context profiles per knowledge cutoff
        self.authorships = pd.DataFrame(store.query("authorships"), columns=["author_id", "paper_id"])
        self.features = (
            FeatureBuilder(index, Knowledge.from_citations(self.citations, None), self.places)
            .with_authorships(self.authorships)
            .with_texts(titles_and_abstracts(store))
        )

    def split(self, name: str, frame: pd.DataFrame, until: int, *, extras: bool) -> SplitData:
        index, encoder, s = self.index, self.encoder, self.settings
        if until not in self._profiles:  # validation and test know the same years: one profile index
            self._profiles[until] = ProfileIndex.build(index, self.citances, encoder, ProfileSettings(until=until))
        profiles = self._profiles[until]
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
        sampler = noise_sampler(self.citations, until, s) if extras else None
        requests = _requests(frame)
        out = SplitData(name, [], [], [], until, field_index=self._fields[until])
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


def noise_sampler(citations: pd.DataFrame, until: int, settings: TrainSettings) -> NoiseSampler:
    """Noise distributions (MP-BERT4CR eq. 1–2) from the co-citations known up to ``until``."""
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


def _limited(chosen: pd.DataFrame, settings: TrainSettings) -> pd.DataFrame:
    if settings.limit is not None and len(chosen) > settings.limit:
        chosen = chosen.sample(n=settings.limit, random_state=settings.seed).reset_index(drop=True)
    return chosen


def _latest(folds: Sequence[T], count: int | None) -> Sequence[T]:
    """The latest ``count`` of ``folds`` (earliest first); all of them for None."""
    return folds[-count:] if count else folds


def split_frames(store: GraphStore, settings: TrainSettings) -> dict[str, tuple[pd.DataFrame, int, bool]]:
    """Each split's queries, the year its knowledge ends and whether it draws extras (training folds): the
    time split every trained model of the recommender uses (the reranker here, the encoder in
    :mod:`gnn.recommend.finetune`)."""
    if settings.queries == "store":
        parts = time_split(query_frame(store, "store"), settings.store_split)
        training = [part.name for part in parts if part.name.startswith("train")]
        kept = set(_latest(training, settings.latest_folds))
        return {
            part.name: (
                _limited(
                    part.frame if part.name != "test" or settings.evaluate_test else part.frame.iloc[:0], settings
                ),
                part.until,
                part.name.startswith("train"),
            )
            for part in parts
            if part.name in kept or not part.name.startswith("train")
        }
    if settings.queries != "scisummnet":
        raise ValueError(f"unknown query source {settings.queries!r}: scisummnet or store")
    frame = build_queries(store)
    out: dict[str, tuple[pd.DataFrame, int, bool]] = {}

    def part(low: int, high: int) -> pd.DataFrame:
        return _limited(
            frame[(frame["citing_year"] >= low) & (frame["citing_year"] <= high)].reset_index(drop=True), settings
        )

    for fold in _latest(settings.folds, settings.latest_folds):
        out[f"train {fold.years[0]}-{fold.years[1]}"] = (part(*fold.years), fold.until, True)
    out["validation"] = (part(*settings.validation), settings.known_until, False)
    out["test"] = (part(*settings.test) if settings.evaluate_test else frame.iloc[:0], settings.known_until, False)
    return out


def load_splits(
    store: GraphStore,
    encoder: TextEncoder,
    index: RetrievalIndex,
    settings: TrainSettings,
    cache_dir: Path | None,
    progress: bool,
    names: Sequence[str] | None = None,
) -> dict[str, SplitData]:
    """Every split's examples (those of ``names`` only, when given), from ``cache_dir`` when nothing they
    derive from changed.

    The cache key covers the index (papers, texts, vectors), the graph's citations, categories and
    taxonomy points, the citing sentences, the split settings, the feature names and the encoder size,
    and where the pickled classes live (a moved class never meets a pickle of its old place).
    """
    builder = ExampleBuilder(store, index, encoder, settings, progress=progress)
    digest = hashlib.sha256()
    classes = [f"{c.__module__}.{c.__qualname__}" for c in (SplitData, QueryExample, QueryInput, Candidate)]
    for part in (
        index.digest(),
        json.dumps([asdict(settings), list(FEATURE_NAMES), encoder.dim, classes, names], default=str),
    ):
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
        for name, (frame, until, extras) in split_frames(store, settings).items()
        if names is None or name in names
    }
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as handle:
            pickle.dump(splits, handle, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    return splits


__all__ = [
    "ExampleBuilder",
    "Fold",
    "SplitData",
    "TrainSettings",
    "citing_year",
    "load_splits",
    "noise_sampler",
    "split_frames",
]
