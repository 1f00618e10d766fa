"""The linker's corpora: gold citances from CL-SciSumm, silver ones from ScisummNet.

* **gold**: :func:`load_gold_corpus` reads a CL-SciSumm training folder (``<RP>/annotation/*.txt``
  and each reference paper's XML) into :class:`GoldRecord` values; :func:`gold_corpus` merges the
  records of one (annotator, citance), drops gold sentence ids the paper lacks, encodes the papers
  and the citances and returns them as training/evaluation :class:`~gnn.linkage.model.Example`
  values;
* **silver**: :func:`load_silver_source` reads ScisummNet with the project's loader
  (:mod:`loaders.scisummnet`) and encodes its citances and chosen reference papers
  (:func:`gnn.linkage.silver.silver_source`); :mod:`gnn.linkage.silver` labels and balances the pairs.

Every text goes through the project's one encoder (:class:`gnn.text.encoder.TextEncoder`), whose
disk cache makes a second run reuse the vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gnn.linkage.features import CitedPaper
from gnn.linkage.model import Example
from gnn.linkage.pipeline import cited_paper
from gnn.linkage.silver import SilverSource, silver_source
from gnn.text.encoder import TextEncoder
from loaders import scisummnet
from loaders.task1a import citance_text, read_annotations, read_reference, rp_folders

log = logging.getLogger(__name__)


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


def load_gold_corpus(training_dir: Path, encoder: TextEncoder) -> GoldCorpus:
    """The gold citances of a CL-SciSumm training folder (``<RP>/annotation/*.txt``) as examples."""
    records, references = [], {}
    for folder in rp_folders(training_dir):
        annotations = read_annotations(folder)
        reference = read_reference(folder)
        if not annotations or reference is None:
            continue
        s = reference.sentences
        references[folder.name] = ([x.sid for x in s], [x.text for x in s], [x.section for x in s])
        records += [
            GoldRecord(r.rp, r.annotator, r.key, citance_text(r.fields.get("Citation Text", "")), r.sids)
            for r in annotations
        ]
    return gold_corpus(records, references, encoder)


def load_silver_source(
    scisummnet_dir: Path,
    encoder: TextEncoder,
    *,
    max_papers: int | None,
    exclude: set[str] | frozenset[str] = frozenset(),
) -> SilverSource:
    """ScisummNet's citances and reference papers (read with the project's loader), encoded."""
    batch = scisummnet.load(Path(scisummnet_dir))
    return silver_source(
        batch.nodes["Sentence"], batch.rels["MENTIONS"], encoder, max_papers=max_papers, exclude=exclude
    )


__all__ = ["GoldCorpus", "GoldRecord", "gold_corpus", "load_gold_corpus", "load_silver_source"]
