"""Sentence linkage as a service: which sentences of a cited paper a citing sentence points at.

The GraphQL layer calls :meth:`LinkageService.linkage` on papers in the graph; ``citegraph link``
fills Task 1A files with :func:`make_predictor`. An expected failure — a paper that is not in the
graph, has no full text, or an empty citing sentence — is a :class:`LinkageUnavailable` value, not
an exception; only a ``k`` outside 1..:data:`MAX_K` raises (:class:`~graph.errors.ConfigError`:
callers such as the GraphQL type check their arguments first).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import expit

from gnn.linkage.cross_encoder import CrossEncodedLinker, CrossEncoder
from gnn.linkage.features import CitedPaper
from gnn.linkage.model import Linker
from gnn.linkage.pipeline import cited_paper
from gnn.linkage.writeback import encode_papers, read_paper_sentences
from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError
from graph.store import GraphStore
from loaders.task1a import Predictor, Reference

MAX_K = 50  # most sentences one call returns


@dataclass(frozen=True)
class LinkedSentence:
    id: str  # Sentence id, "<paper_id>#<sid>"
    sid: int
    section: str | None
    text: str
    score: float  # link probability from the linker, 0..1 (with the cross-encoder: sigma(logit p + g))
    linked: bool  # chosen by the linker's selection rule (top-1, plus more above its threshold)


@dataclass(frozen=True)
class Linkage:
    paper_id: str
    citing_sentence: str
    sentences: list[LinkedSentence]  # the k best-scored sentences of the paper, best first


@dataclass(frozen=True)
class LinkageUnavailable:
    paper_id: str
    reason: Literal["unknown_paper", "no_full_text", "empty_citing_sentence"]
    message: str  # what happened and what to do, for a person


LinkageOutcome = Linkage | LinkageUnavailable


class LinkageService:
    """Link citing sentences to sentences of papers in one store.

    Holds the encoder and the linker (both expensive to create: make one per process) and an LRU
    of encoded papers. With a ``cross_encoder`` (``citegraph linkage train --cross-encoder``), the
    linker's top candidates are re-ordered by it (:class:`~gnn.linkage.cross_encoder.CrossEncodedLinker`)
    and each sentence's score is sigma(logit p + g). Store access is serialised by ``lock`` (pass
    the API's own lock when the store is shared with other services).
    """

    def __init__(
        self,
        store: GraphStore,
        encoder: TextEncoder,
        linker: Linker,
        *,
        lock: threading.Lock | None = None,
        cache_papers: int = 64,
        cross_encoder: CrossEncoder | None = None,
    ) -> None:
        self.store = store
        self.encoder = encoder
        self.linker = linker
        self.reranked = CrossEncodedLinker(linker, cross_encoder) if cross_encoder is not None else None
        self._lock = lock or threading.Lock()  # the store's: held only around store reads
        self._compute_lock = threading.Lock()  # the encoder and the paper cache: one call at a time
        self._papers: OrderedDict[str, CitedPaper | None] = OrderedDict()
        self._cache_papers = cache_papers

    def _paper(self, paper_id: str) -> CitedPaper | Literal[False] | None:
        """The encoded paper; None when it has no full text; False when the graph has no such paper."""
        if paper_id in self._papers:
            self._papers.move_to_end(paper_id)
            return self._papers[paper_id]
        with self._lock:
            if not self.store.query("paper_by_ids", {"ids": [paper_id]}):
                return False
            sentences = read_paper_sentences(self.store, [paper_id])
        paper = encode_papers(sentences, self.encoder).get(paper_id)  # outside the store lock
        self._papers[paper_id] = paper
        while len(self._papers) > self._cache_papers:
            self._papers.popitem(last=False)
        return paper

    def linkage(self, citing_sentence: str, paper_id: str, k: int = 5) -> LinkageOutcome:
        """The ``k`` sentences of ``paper_id`` that ``citing_sentence`` most likely refers to, with scores."""
        if not 1 <= k <= MAX_K:
            raise ConfigError(f"k is {k}; ask for 1 to {MAX_K} sentences")
        text = " ".join(citing_sentence.split())
        if not text:
            return LinkageUnavailable(paper_id, "empty_citing_sentence", "the citing sentence is empty; pass its text")
        with self._compute_lock:
            return self._linkage(text, paper_id, k)

    def _linkage(self, text: str, paper_id: str, k: int) -> LinkageOutcome:
        paper = self._paper(paper_id)
        if paper is False:
            return LinkageUnavailable(paper_id, "unknown_paper", f"no paper {paper_id!r} in the graph; check the id")
        if paper is None or len(paper) == 0:
            return LinkageUnavailable(
                paper_id,
                "no_full_text",
                f"paper {paper_id!r} has no full text (no sentences) in the graph, so there is nothing to link to",
            )
        vector = self.encoder.encode([text])[0]
        scores = self.linker.score(text, vector, paper)
        if self.reranked is None:
            chosen = {int(j) for j in self.linker.selection.select(scores)}
            order = np.argsort(-scores, kind="stable")[:k]
            shown = scores[order]
        else:
            indices, combined, count = self.reranked.rank(text, scores, paper, depth=k)
            chosen = {int(j) for j in indices[:count]}
            order, shown = indices[:k], expit(combined[:k])
        sentences = [
            LinkedSentence(
                id=f"{paper_id}#{int(paper.sids[j])}",
                sid=int(paper.sids[j]),
                section=paper.sections[j],
                text=paper.texts[j],
                score=float(score),
                linked=int(j) in chosen,
            )
            for j, score in zip(order, shown)
        ]
        return Linkage(paper_id, text, sentences)


def linkage(service: LinkageService, citing_sentence: str, paper_id: str, k: int = 5) -> LinkageOutcome:
    """Function form of :meth:`LinkageService.linkage` (what a GraphQL resolver calls)."""
    return service.linkage(citing_sentence, paper_id, k)


# ---------------------------------------------------------------------------------------------
# The linker over the shared-task files (``citegraph link``, benchmarks)


def reference_paper(reference: Reference, encoder: TextEncoder) -> CitedPaper:
    s = reference.sentences
    return cited_paper(reference.paper_id, [x.sid for x in s], [x.text for x in s], [x.section for x in s], encoder)


def make_predictor(linker: Linker | CrossEncodedLinker, encoder: TextEncoder) -> Predictor:
    """A :data:`loaders.task1a.Predictor` for :func:`loaders.task1a.link_folder`."""

    def predict(texts: list[str], reference: Reference) -> list[list[int]]:
        paper = reference_paper(reference, encoder)
        vectors = encoder.encode(texts)
        return [[sid for sid, _ in linker.link(t, v, paper)] for t, v in zip(texts, vectors)]

    return predict


__all__ = [
    "MAX_K",
    "Linkage",
    "LinkageOutcome",
    "LinkageService",
    "LinkageUnavailable",
    "LinkedSentence",
    "linkage",
    "make_predictor",
    "reference_paper",
]
