"""Sentence-level citation linkage: which sentences of a cited paper a citance points at.

``linkage`` scores a typed citing sentence against the cited paper's full text with the trained
linker (:class:`gnn.linkage.service.LinkageService`, one per app, loaded on first use); ``citanceLinks``
reads the LINKS_TO edges already stored in the graph (gold annotations, silver links, and the
links ``citegraph compute linkage`` wrote).
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from api.context import Context
from api.errors import UserInputError
from api.services import CitanceLinkRecord
from api.types.common import NotFound, paper_key, paper_not_found, shown_id
from gnn.linkage import service as linking
from gnn.linkage.service import MAX_K
from graph.errors import ConfigError, DataError

log = logging.getLogger(__name__)

MAX_CITING_CHARS = 5_000  # a citing sentence longer than this is not a sentence
DEFAULT_LINKS = 50


@strawberry.enum(description="Why `linkage` could not score sentences.")
class LinkageUnavailableReason(Enum):
    UNKNOWN_PAPER = "unknown_paper"  # no paper has that id
    NO_FULL_TEXT = "no_full_text"  # the paper has no sentences in the graph
    EMPTY_CITING_SENTENCE = "empty_citing_sentence"  # the citing sentence is blank
    LINKER_UNAVAILABLE = "linker_unavailable"  # this server has no trained linker model


@strawberry.enum(description="Where a stored sentence link comes from.")
class LinkMethod(Enum):
    GOLD = "gold"  # annotated by a person (CL-SciSumm)
    SILVER = "silver"  # derived from a corpus's own annotations (ScisummNet)
    MODEL = "model"  # predicted by the linker (`citegraph compute linkage`)


@strawberry.type(description="A sentence of the cited paper, scored against the citing sentence.")
class LinkedSentence:
    id: strawberry.ID = strawberry.field(description="Sentence id, `<paperId>#<sid>`.")
    sid: int = strawberry.field(description="Position of the sentence in the paper's full text.")
    section: str | None
    text: str
    score: float = strawberry.field(
        description="Link probability from the linker, 0..1; where the server has a trained cross-encoder, "
        "sigma(logit p + g) of the linker's top candidates re-ordered by it."
    )
    linked: bool = strawberry.field(
        description="Chosen by the linker's selection rule (its best sentence, plus others above its threshold)."
    )


@strawberry.type(description="The `k` sentences of a cited paper a citing sentence most likely refers to.")
class Linkage:
    paper_id: strawberry.ID
    citing_sentence: str = strawberry.field(description="The citing sentence as scored (whitespace normalised).")
    sentences: list[LinkedSentence] = strawberry.field(description="Best first (descending `score`).")


@strawberry.type(description="`linkage` has nothing to score: the reason, and what to do, for a person.")
class LinkageUnavailable:
    paper_id: strawberry.ID
    reason: LinkageUnavailableReason
    message: str


@strawberry.type(description="A stored LINKS_TO edge: a citance pointing at a sentence of the cited paper.")
class CitanceLink:
    citing_sentence_id: strawberry.ID
    citing_paper_id: strawberry.ID | None = strawberry.field(description="The citance's paper; null when unrecorded.")
    citing_text: str | None
    cited_sentence_id: strawberry.ID
    cited_sid: int | None
    cited_text: str | None
    method: LinkMethod
    score: float | None = strawberry.field(description="Link probability (model, silver); null where not scored.")
    annotator: str | None = strawberry.field(description="Who annotated a gold link; null for silver and model.")


@strawberry.type(description="The stored sentence links into one paper's full text.")
class CitanceLinks:
    paper_id: strawberry.ID
    links: list[CitanceLink] = strawberry.field(
        description="By cited sentence (reading order), then citance, method and annotator."
    )
    total_count: int = strawberry.field(description="Stored links into the paper, returned or not.")
    truncated: bool = strawberry.field(description="`first` left out links.")


LinkageResult = Annotated[Linkage | LinkageUnavailable, strawberry.union("LinkageResult")]
CitanceLinksResult = Annotated[CitanceLinks | NotFound, strawberry.union("CitanceLinksResult")]

_LINKER_MISSING = (
    "sentence linkage is not available on this server: it has no trained linker model "
    "(the operator trains one with `citegraph linkage train`)"
)


def _linkage_type(outcome: linking.LinkageOutcome) -> Linkage | LinkageUnavailable:
    if isinstance(outcome, linking.LinkageUnavailable):
        shown = shown_id(outcome.paper_id)
        return LinkageUnavailable(
            paper_id=strawberry.ID(shown),
            reason=LinkageUnavailableReason(outcome.reason),
            message=outcome.message.replace(outcome.paper_id, shown),
        )
    return Linkage(
        paper_id=strawberry.ID(outcome.paper_id),
        citing_sentence=outcome.citing_sentence,
        sentences=[
            LinkedSentence(
                id=strawberry.ID(s.id), sid=s.sid, section=s.section, text=s.text, score=s.score, linked=s.linked
            )
            for s in outcome.sentences
        ],
    )


def _link_type(r: CitanceLinkRecord) -> CitanceLink:
    return CitanceLink(
        citing_sentence_id=strawberry.ID(r.citing_sentence_id),
        citing_paper_id=strawberry.ID(r.citing_paper_id) if r.citing_paper_id else None,
        citing_text=r.citing_text,
        cited_sentence_id=strawberry.ID(r.cited_sentence_id),
        cited_sid=r.cited_sid,
        cited_text=r.cited_text,
        method=LinkMethod(r.method),
        score=r.score,
        annotator=r.annotator or None,  # an unset identity property may read back as ""
    )


@strawberry.type
class LinkageQuery:
    @strawberry.field(
        description="The `k` sentences of paper `paperId` (the cited paper) that `citingSentence` most likely refers "
        "to, scored by the trained linker, best first. LinkageUnavailable (with a reason) for an unknown paper, a "
        f"paper without full text, a blank sentence, or a server without a linker model. `k`: 1 to {MAX_K}."
    )
    async def linkage(
        self, info: Info[Context, Any], citing_sentence: str, paper_id: strawberry.ID, k: int = 5
    ) -> LinkageResult:
        ctx = info.context
        size = ctx.cap(k, "k", upper=MAX_K)
        if len(citing_sentence) > MAX_CITING_CHARS:
            raise UserInputError(
                f"`citingSentence` has {len(citing_sentence)} characters; pass one sentence "
                f"(at most {MAX_CITING_CHARS} characters)"
            )
        unavailable = LinkageUnavailable(
            paper_id=strawberry.ID(shown_id(str(paper_id))),
            reason=LinkageUnavailableReason.LINKER_UNAVAILABLE,
            message=_LINKER_MISSING,
        )
        if ctx.linkage is None:
            return unavailable
        try:
            # The first call loads the encoder and the linker (once per app); later calls reuse them.
            service = await ctx.load(ctx.linkage.get, "sentence linker")
        except (ConfigError, DataError) as exc:
            log.warning("linkage unavailable: %s", exc)
            return unavailable
        key = await paper_key(ctx, str(paper_id))
        outcome = await ctx.call(service.linkage, citing_sentence, key if key is not None else str(paper_id), size)
        return _linkage_type(outcome)

    @strawberry.field(
        description="The stored sentence links (LINKS_TO) INTO paper `paperId`'s full text: each citance of another "
        "paper that points at one of its sentences, with both sentences, the method (gold, silver, model), score and "
        "annotator — what a dashboard shows on the cited paper's page (the stored counterpart of `linkage`, whose "
        "`paperId` is also the cited paper). Empty for a paper without full text or links; NotFound when no paper "
        "has that id. At most `first` links."
    )
    async def citance_links(
        self, info: Info[Context, Any], paper_id: strawberry.ID, first: int = DEFAULT_LINKS
    ) -> CitanceLinksResult:
        ctx = info.context
        size = ctx.cap(first)
        key = await paper_key(ctx, str(paper_id))
        if key is None:
            return paper_not_found(str(paper_id))
        records = await ctx.citance_links.load(key)
        return CitanceLinks(
            paper_id=paper_id,
            links=[_link_type(r) for r in records[:size]],
            total_count=len(records),
            truncated=len(records) > size,
        )


__all__ = [
    "CitanceLink",
    "CitanceLinks",
    "CitanceLinksResult",
    "LinkMethod",
    "Linkage",
    "LinkageQuery",
    "LinkageResult",
    "LinkageUnavailable",
    "LinkageUnavailableReason",
    "LinkedSentence",
]
