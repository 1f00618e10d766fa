"""Citation recommendation: papers to cite for a passage, ranked, with how each was found.

``recommend`` runs :class:`gnn.recommend.service.RecommendationService` (one per app, opened on first use:
the retrieval index beside the store, the citation-context profiles, the encoder) and returns each
recommended paper as a :class:`~api.types.papers.Paper` (loaded through the request's DataLoader,
so clients select any paper field) with its score, the stages that proposed it and the features
behind the score. Expected failures — a blank context, an unknown citing or cited paper, a server
without an index or embeddings — are a ``RecommendUnavailable`` value; arguments out of range
(``k``, text lengths, ``yearMax``) are ``BAD_USER_INPUT`` errors.
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from api.context import Context
from api.errors import UserInputError
from api.types.common import shown_id
from api.types.papers import YEAR_BOUNDS, Paper, paper_from
from graph.errors import ConfigError, DataError

log = logging.getLogger(__name__)

MAX_K = 100  # most recommendations one call returns
DEFAULT_K = 10
MAX_CONTEXT_CHARS = 5_000  # a citation context is a sentence or a few, not a document
MAX_TITLE_CHARS = 1_000
MAX_ABSTRACT_CHARS = 10_000
MAX_CITED_IDS = 200
MAX_DRAFT_SENTENCES = 2_000  # a long paper
MAX_DRAFT_CHARS = 300_000


@strawberry.enum(description="Why `recommend` could not rank papers.")
class RecommendUnavailableReason(Enum):
    EMPTY_CONTEXT = "empty_context"  # the context is blank
    UNKNOWN_PAPER = "unknown_paper"  # citingPaperId or one of citedIds is not in the graph
    INDEX_UNAVAILABLE = "index_unavailable"  # this server has no retrieval index / paper embeddings


@strawberry.enum(description="A stage of the recommender that proposed a candidate.")
class RecommendStage(Enum):
    PREFETCH = "prefetch"  # the hybrid prefetch (dense, BM25, citation-context profiles)
    REFERENCES = "references"  # enricher: cited by the top prefetched papers
    COCITED = "cocited"  # enricher: co-cited with the papers already cited


@strawberry.enum(description="Which part of the pipeline first found a candidate.")
class FoundBy(Enum):
    PREFETCH = "prefetch"  # retrieved by the prefetch (it may also have been proposed by the enricher)
    ENRICHER = "enricher"  # added by the graph enricher only (references or co-citation)


@strawberry.input(description="A citation context to recommend papers for, and what is known about the citing paper.")
class RecommendInput:
    context: str = strawberry.field(
        default="",
        description=f"The passage that needs a citation; write [CIT] where it goes. At most {MAX_CONTEXT_CHARS} "
        "characters. Leave it empty in manuscript mode (`draft` + `position`).",
    )
    draft: list[str] | None = strawberry.field(
        default=None,
        description="Manuscript mode (MP-BERT4CR): the whole draft as sentences, instead of a context; the query "
        "is then the sentence before, the citing sentence and the one after, plus sampled earlier sentences. "
        f"At most {MAX_DRAFT_SENTENCES} sentences and {MAX_DRAFT_CHARS} characters in all. Needs `position`.",
    )
    position: int | None = strawberry.field(
        default=None,
        description="Manuscript mode: the 0-based index in `draft` of the sentence that needs the citation.",
    )
    citing_paper_id: strawberry.ID | None = strawberry.field(
        default=None,
        description="The citing paper, when it is in the graph: fills title, abstract and yearMax when not given, "
        "and is never recommended.",
    )
    title: str | None = strawberry.field(default=None, description="The citing paper's title (global information).")
    abstract: str | None = strawberry.field(default=None, description="The citing paper's abstract.")
    cited_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description="Papers already cited: never recommended; their co-citation partners are proposed. "
        f"At most {MAX_CITED_IDS}.",
    )
    k: int = strawberry.field(default=DEFAULT_K, description=f"Recommendations returned, 1 to {MAX_K}.")
    year_max: int | None = strawberry.field(
        default=None,
        description="Papers published after this year are not recommended (default: the citing paper's year).",
    )


@strawberry.type(description="One name/value pair behind a recommendation's score.")
class Feature:
    name: str = strawberry.field(
        description="E.g. prefetch_rank, prefetch_score, rank_dense, rank_bm25, rank_profile_bm25, "
        "rank_profile_dense, references_rank, references_freq, cocited_rank, cocitation_count."
    )
    value: float | None = strawberry.field(description="Null where the stage did not propose the paper.")


@strawberry.type(description="A recommended paper with its score and how it was found.")
class RecommendedPaper:
    rank: int = strawberry.field(description="1-based place in the ranking.")
    paper: Paper
    score: float = strawberry.field(description="Higher is better; the items are in descending score.")
    found_by: FoundBy
    stages: list[RecommendStage] = strawberry.field(description="Every stage that proposed the paper.")
    why: str = strawberry.field(description='The stages and places behind the score, e.g. "profile_bm25 #1, dense #4".')
    features: list[Feature]


@strawberry.type(description="Papers to cite for a context, best first.")
class Recommendations:
    query: str = strawberry.field(description="The context the prefetch used.")
    items: list[RecommendedPaper] = strawberry.field(description="At most `k`, in descending `score`.")
    candidates: int = strawberry.field(description="Candidates scored (prefetch and enrichment, deduplicated).")
    seconds: float = strawberry.field(description="Time the recommender took.")


@strawberry.type(description="`recommend` has nothing to rank: the reason, and what to do, for a person.")
class RecommendUnavailable:
    reason: RecommendUnavailableReason
    message: str


RecommendResult = Annotated[Recommendations | RecommendUnavailable, strawberry.union("RecommendResult")]

_INDEX_MISSING = (
    "citation recommendation is not available on this server: the store has no retrieval index or paper "
    "embeddings (the operator runs `citegraph compute embeddings --embed papers` and `citegraph compute index`)"
)


def _check(input: RecommendInput, ctx: Context) -> None:
    """``BAD_USER_INPUT`` for an argument out of range."""
    ctx.cap(input.k, "k", upper=MAX_K)
    for name, text, cap in (
        ("context", input.context, MAX_CONTEXT_CHARS),
        ("title", input.title, MAX_TITLE_CHARS),
        ("abstract", input.abstract, MAX_ABSTRACT_CHARS),
    ):
        if text is not None and len(text) > cap:
            raise UserInputError(f"`{name}` has {len(text)} characters; at most {cap} are accepted")
    if input.draft is not None:
        if len(input.draft) > MAX_DRAFT_SENTENCES or sum(len(x) for x in input.draft) > MAX_DRAFT_CHARS:
            raise UserInputError(
                f"`draft` has {len(input.draft)} sentences and {sum(len(x) for x in input.draft)} characters; "
                f"at most {MAX_DRAFT_SENTENCES} sentences and {MAX_DRAFT_CHARS} characters are accepted"
            )
        if input.position is None or not 0 <= input.position < len(input.draft):
            raise UserInputError(
                f"`position` must be the index of the citing sentence in `draft`, 0 to {len(input.draft) - 1}; "
                f"got {input.position}"
            )
    elif input.position is not None:
        raise UserInputError("`position` is given without a `draft`; pass the draft's sentences too")
    if len(input.cited_ids) > MAX_CITED_IDS:
        raise UserInputError(f"`citedIds` has {len(input.cited_ids)} ids; at most {MAX_CITED_IDS} are accepted")
    if input.year_max is not None and not YEAR_BOUNDS[0] <= input.year_max <= YEAR_BOUNDS[1]:
        raise UserInputError(
            f"`yearMax` must be a year between {YEAR_BOUNDS[0]} and {YEAR_BOUNDS[1]}, got {input.year_max}"
        )


def _features(features: dict[str, float | int | None]) -> list[Feature]:
    return [Feature(name=name, value=None if value is None else float(value)) for name, value in features.items()]


@strawberry.type
class RecommendQuery:
    @strawberry.field(
        description="Papers to cite for `input.context`, best first: a hybrid prefetch (dense, BM25 and "
        "citation-context profiles) enriched through the graph (references of the top papers, co-citations of "
        "`citedIds`), each item with its score, the stages that found it and the features behind the score. "
        "RecommendUnavailable (with a reason) for a blank context, an unknown paper id, or a server without a "
        f"retrieval index. `k`: 1 to {MAX_K}."
    )
    async def recommend(self, info: Info[Context, Any], input: RecommendInput) -> RecommendResult:
        from gnn.recommend.service import RecommendRequest  # the service module loads the encoder stack (torch)

        ctx = info.context
        _check(input, ctx)
        if not input.context.strip() and not (input.draft and any(x.strip() for x in input.draft)):
            return RecommendUnavailable(
                reason=RecommendUnavailableReason.EMPTY_CONTEXT,
                message="the context is empty; pass the passage that needs a citation, with [CIT] where it goes "
                "(or a `draft` and the `position` of the citing sentence)",
            )
        cited_given = tuple(dict.fromkeys(str(i) for i in input.cited_ids))
        asked = ((str(input.citing_paper_id),) if input.citing_paper_id is not None else ()) + cited_given
        keys: dict[str, str] = {}
        if asked:
            found = [r.id if r else None for r in await ctx.papers.load_many(list(asked))]
            keys = {given: key for given, key in zip(asked, found) if key is not None}
            unknown = [i for i in asked if i not in keys]
            if unknown:
                return RecommendUnavailable(
                    reason=RecommendUnavailableReason.UNKNOWN_PAPER,
                    message=f"no paper has id {', '.join(repr(shown_id(i)) for i in unknown[:5])}; check citingPaperId and "
                    "citedIds",
                )
        unavailable = RecommendUnavailable(reason=RecommendUnavailableReason.INDEX_UNAVAILABLE, message=_INDEX_MISSING)
        if ctx.recommend is None:
            return unavailable
        try:
            # The first call opens the index and loads the encoder (once per app); later calls reuse them.
            service = await ctx.load(ctx.recommend.get, "recommender")
        except (ConfigError, DataError) as exc:
            log.warning("recommend unavailable: %s", exc)
            return unavailable
        request = RecommendRequest(
            context=input.context,
            draft=tuple(input.draft or ()),
            position=input.position if input.draft else None,
            title=input.title,
            abstract=input.abstract,
            cited_ids=tuple(dict.fromkeys(keys[i] for i in cited_given)),
            citing_paper_id=keys[str(input.citing_paper_id)] if input.citing_paper_id is not None else None,
            year=input.year_max,
            k=input.k,
        )
        response = await ctx.call(service.recommend, request)
        papers = await ctx.papers.load_many([item.paper_id for item in response.items])
        items: list[RecommendedPaper] = []
        for item, record in zip(response.items, papers):
            if record is None:  # not in the store any more (the index is older than the graph)
                continue
            items.append(
                RecommendedPaper(
                    rank=len(items) + 1,
                    paper=paper_from(record),
                    score=item.score,
                    found_by=FoundBy.PREFETCH if "prefetch" in item.stages else FoundBy.ENRICHER,
                    stages=[RecommendStage(stage) for stage in item.stages],
                    why=item.why,
                    features=_features(item.features),
                )
            )
        return Recommendations(
            query=response.query, items=items, candidates=response.candidates, seconds=response.seconds
        )


__all__ = [
    "Feature",
    "FoundBy",
    "RecommendInput",
    "RecommendQuery",
    "RecommendResult",
    "RecommendStage",
    "RecommendUnavailable",
    "RecommendUnavailableReason",
    "Recommendations",
    "RecommendedPaper",
]
