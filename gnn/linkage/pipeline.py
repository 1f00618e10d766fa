"""Glue between texts, the encoder and the linker: cited papers and the gold corpus.

Every text goes through the project's one encoder (:class:`gnn.text.encoder.TextEncoder`), whose disk
cache makes a second run (or the graph's own ``compute embeddings``) reuse the vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gnn.linkage.features import CitedPaper
from gnn.linkage.model import Example
from gnn.text.encoder import TextEncoder
from graph.files import StoreFiles

log = logging.getLogger(__name__)


def default_model_path() -> Path:
    """``$CITEGRAPH_CACHE/models/linker.json``: where ``citegraph linkage train`` writes the linker."""
    return StoreFiles().linker


def default_cross_encoder_path() -> Path:
    """``$CITEGRAPH_CACHE/models/linker-cross-encoder``: where ``citegraph linkage train --cross-encoder`` writes it."""
    return StoreFiles().cross_encoder


def cited_paper(
    paper_id: str, sids: Sequence[int], texts: Sequence[str], sections: Sequence[str | None], encoder: TextEncoder
) -> CitedPaper:
    """Encode and index one paper's sentences."""
    vectors = encoder.encode(list(texts)) if texts else np.zeros((0, encoder.dim), np.float32)
    return CitedPaper.build(paper_id, sids, texts, sections, vectors)


@dataclass(frozen=True)
class GoldRecord:
    """One annotator's gold link set for one citance."""

    paper_id: str  # the reference paper
    annotator: str
    key: Hashable  # identifies the citance across runs and gold files
    text: str  # the citance
    sids: frozenset[int]  # gold sentence ids of the reference paper


@dataclass(frozen=True)
class GoldCorpus:
    """Gold citances as training/evaluation examples, with their keys for scoring."""

    examples: list[Example]
    keys: list[Hashable]  # keys[i] is the citance of examples[i]
    annotators: list[str]  # annotators[i] made examples[i]
    papers: dict[str, CitedPaper]


def gold_corpus(
    records: Iterable[GoldRecord],
    references: Mapping[str, tuple[Sequence[int], Sequence[str], Sequence[str | None]]],
    encoder: TextEncoder,
) -> GoldCorpus:
    """One :class:`Example` per gold record whose paper is in ``references`` (sids, texts, sections).

    Records of one (annotator, citance) are merged (union of the sids); gold ids the paper lacks
    (an empty ``<S>`` in its XML) are dropped, and a record left with none, or without text, is skipped.
    """
    merged: dict[tuple[str, str, Hashable], tuple[str, frozenset[int]]] = {}
    for r in records:
        text, sids = merged.get((r.paper_id, r.annotator, r.key), (r.text, frozenset()))
        merged[(r.paper_id, r.annotator, r.key)] = (text, sids | r.sids)
    papers: dict[str, CitedPaper] = {}
    for paper_id in sorted({p for p, _, _ in merged}):
        if paper_id in references:
            papers[paper_id] = cited_paper(paper_id, *references[paper_id], encoder)
    items = []
    for (paper_id, annotator, key), (text, sids) in merged.items():
        if paper_id not in papers:
            continue
        known = sids & {int(s) for s in papers[paper_id].sids}
        if text and known:
            items.append((paper_id, annotator, key, text, known))
    vectors = encoder.encode([t for _, _, _, t, _ in items])
    corpus = GoldCorpus([], [], [], papers)
    for (paper_id, annotator, key, text, sids), vector in zip(items, vectors):
        corpus.examples.append(Example(paper_id, text, vector, papers[paper_id], sids))
        corpus.keys.append(key)
        corpus.annotators.append(annotator)
    log.info("gold: %d citance annotations on %d reference papers", len(corpus.examples), len(papers))
    return corpus


__all__ = ["GoldCorpus", "GoldRecord", "cited_paper", "default_cross_encoder_path", "default_model_path", "gold_corpus"]
