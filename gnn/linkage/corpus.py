"""The linker's corpora: gold citances from CL-SciSumm, silver ones from ScisummNet — or both from a store.

* **gold**: :func:`load_gold_corpus` reads a CL-SciSumm training folder (``<RP>/annotation/*.txt``
  and each reference paper's XML) into :class:`GoldRecord` values; :func:`gold_corpus` merges the
  records of one (annotator, citance), drops gold sentence ids the paper lacks, encodes the papers
  and the citances and returns them as training/evaluation :class:`~gnn.linkage.model.Example`
  values;
* **silver**: :func:`load_silver_source` reads ScisummNet with the project's loader
  (:mod:`loaders.scisummnet`) and encodes its citances and chosen reference papers
  (:func:`gnn.linkage.silver.silver_source`); :mod:`gnn.linkage.silver` labels and balances the pairs;
* **a store's own** (``citegraph linkage train --from-store``, any corpus): :func:`store_gold_corpus` reads
  the store's gold links (``LINKS_TO {method: "gold"}``, whichever loader wrote them) with their citing
  sentences and the cited papers' full texts; :func:`store_silver_source` pairs every citing sentence
  (``MENTIONS``) with the sentences of the paper it cites when the store holds that paper's full text
  (``<paper>#<sid>`` sentences), as ScisummNet's citances are paired.

Every text goes through the project's one encoder (:class:`gnn.text.encoder.TextEncoder`), whose
disk cache makes a second run reuse the vectors.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from gnn.linkage.features import CitedPaper
from gnn.linkage.model import Example
from gnn.linkage.pipeline import cited_paper
from gnn.linkage.silver import SilverSource, silver_source
from gnn.linkage.writeback import read_paper_sentences
from gnn.text.encoder import TextEncoder
from graph.store import GraphStore
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


GOLD_METHOD = "gold"  # LINKS_TO.method of human links (CL-SciSumm's annotations)
MIN_SENTENCES = 80  # a cited full text shorter than this is taken for truncated (silver.select_papers)


@dataclass(frozen=True)
class StoreLinkData:
    """What a store offers the linker: citing sentences, and how many cite a paper whose full text it holds."""

    mentions: int  # MENTIONS edges (citing sentence -> cited paper)
    to_full_texts: int  # of those, to a paper with at least MIN_SENTENCES own sentences
    full_texts: int  # cited papers with such a full text
    gold_links: int  # LINKS_TO {method: "gold"} edges

    def describe(self) -> str:
        return (
            f"{self.mentions} MENTIONS (citing sentence -> cited paper), {self.to_full_texts} of them to one of "
            f"{self.full_texts} papers whose full text the store holds (>= {MIN_SENTENCES} sentences "
            f"<paper>#<sid>), {self.gold_links} gold LINKS_TO"
        )


def _mentions(store: GraphStore) -> pd.DataFrame:
    rows = pd.DataFrame(store.query("mention_texts"), columns=["sentence_id", "text", "paper_id"])
    rows["text"] = rows["text"].fillna("").astype(str).str.strip()
    return rows[rows["text"] != ""]


def _full_texts(store: GraphStore, paper_ids: Iterable[str]) -> pd.DataFrame:
    """The own sentences of those ``paper_ids`` that have at least :data:`MIN_SENTENCES` of them."""
    sentences = read_paper_sentences(store, sorted(set(paper_ids)))
    sizes = sentences.groupby("paper_id")["id"].transform("size")
    return sentences[sizes >= MIN_SENTENCES]


def store_link_data(store: GraphStore) -> StoreLinkData:
    """Counts of what the linker could learn from in ``store`` (for the message when it is nothing)."""
    mentions = _mentions(store)
    full = set(_full_texts(store, mentions["paper_id"])["paper_id"])
    links = store.read_edges("LINKS_TO")
    gold = int((links["method"] == GOLD_METHOD).sum()) if len(links) else 0
    return StoreLinkData(len(mentions), int(mentions["paper_id"].isin(full).sum()), len(full), gold)


def store_gold_corpus(store: GraphStore, encoder: TextEncoder) -> GoldCorpus:
    """The store's gold links as examples: one per (citing sentence, cited paper, annotator), its gold
    sentence ids those of its ``LINKS_TO {method: "gold"}`` targets (``<paper>#<sid>``)."""
    links = store.read_edges("LINKS_TO")
    gold = links[links["method"] == GOLD_METHOD] if len(links) else links
    if gold.empty:
        return GoldCorpus([], [], [], {})
    texts = _mentions(store).drop_duplicates("sentence_id").set_index("sentence_id")["text"]
    target = gold["target"].astype(str).str.rsplit("#", n=1)
    sids: dict[tuple[str, str, str], set[int]] = {}
    for source, (paper, sid), annotator in zip(gold["source"].astype(str), target, gold["annotator"]):
        if sid.isdigit():
            sids.setdefault((paper, str(annotator or ""), source), set()).add(int(sid))
    records = [
        GoldRecord(paper, annotator, source, str(texts.get(source, "")), frozenset(found))
        for (paper, annotator, source), found in sorted(sids.items())
    ]
    sentences = read_paper_sentences(store, sorted({r.paper_id for r in records}))
    references = {
        str(paper): (rows["sid"].astype(int).tolist(), rows["text"].tolist(), rows["section"].tolist())
        for paper, rows in sentences.sort_values(["paper_id", "sid"]).groupby("paper_id", sort=True)
    }
    log.info("store gold: %d records, annotators %s", len(records), dict(Counter(r.annotator for r in records)))
    return gold_corpus(records, references, encoder)


def store_silver_source(
    store: GraphStore,
    encoder: TextEncoder,
    *,
    max_papers: int | None,
    exclude: set[str] | frozenset[str] = frozenset(),
) -> SilverSource:
    """The store's citing sentences paired with the full texts of the papers they cite, encoded (at most
    ``max_papers`` papers, most citing sentences per sentence first; ``exclude``: the gold papers)."""
    mentions = _mentions(store)
    full = _full_texts(store, mentions["paper_id"])
    citances = pd.DataFrame(
        {"id": mentions["sentence_id"], "paper_id": None, "sid": None, "section": None, "text": mentions["text"]}
    )
    return silver_source(
        pd.concat([full[["id", "paper_id", "sid", "section", "text"]], citances], ignore_index=True),
        pd.DataFrame({"source": mentions["sentence_id"], "target": mentions["paper_id"]}),
        encoder,
        max_papers=max_papers,
        exclude=exclude,
        min_sentences=MIN_SENTENCES,
    )


__all__ = [
    "GOLD_METHOD",
    "MIN_SENTENCES",
    "GoldCorpus",
    "GoldRecord",
    "StoreLinkData",
    "gold_corpus",
    "load_gold_corpus",
    "load_silver_source",
    "store_gold_corpus",
    "store_link_data",
    "store_silver_source",
]
