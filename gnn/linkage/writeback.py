"""``citegraph compute linkage``: predicted citance -> cited-sentence links written into the graph.

For every ``(s:Sentence)-[:MENTIONS]->(p:Paper)`` whose paper has sentences (a full text), the
linker (:mod:`gnn.linkage.model`) scores every sentence of ``p`` for the text of ``s`` and the
selected ones become ``(s)-[:LINKS_TO {score, method: "model"}]->(sentence of p)``, ``score`` the
link probability (with ``--cross-encoder``, :class:`~gnn.linkage.cross_encoder.CrossEncodedLinker`:
the linker's top candidates re-ordered, ``score`` = sigma(logit p + g)).

Idempotent and non-destructive: the step reads every ``LINKS_TO`` edge, keeps those whose
``method`` is not ``model`` (``gold`` and ``silver`` links stay as they are), adds the new model
links and replaces the relationship table with that in one transaction
(:meth:`graph.store.GraphStore.replace_edges`). Running it twice leaves the same graph; a new
linker replaces the old model links instead of adding to them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import pandas as pd
from tqdm.auto import tqdm

from gnn.linkage.cross_encoder import CrossEncodedLinker
from gnn.linkage.features import CitedPaper
from gnn.linkage.model import Linker
from gnn.linkage.pipeline import cited_paper
from gnn.text.encoder import TextEncoder
from graph.store import GraphStore

log = logging.getLogger(__name__)

MODEL_METHOD = "model"  # LINKS_TO.method of predicted links


@dataclass(frozen=True)
class LinkageWriteReport:
    mentions: int  # MENTIONS edges in the store
    linkable: int  # of those, to a paper with sentences and from a sentence with text
    links: int  # model links written
    replaced: int  # model links there before (removed)
    kept: int  # gold/silver links, untouched
    seconds: float

    def summary(self) -> str:
        return (
            f"linkage: {self.links} model LINKS_TO for {self.linkable} of {self.mentions} MENTIONS "
            f"(replaced {self.replaced} earlier model links, kept {self.kept} gold/silver) in {self.seconds:.1f}s"
        )


def own_sentence_id(paper_id: str, sid: int) -> str:
    """``<paper_id>#<sid>``: the id the loaders give a sentence of a paper's own full text."""
    return f"{paper_id}#{sid}"


def load_papers(
    store: GraphStore, paper_ids: list[str], encoder: TextEncoder, *, chunk: int = 200
) -> dict[str, CitedPaper]:
    """The papers among ``paper_ids`` that have a full text, encoded and indexed.

    A paper's full text is its sentences ``<paper_id>#<sid>`` (:func:`own_sentence_id`);
    the other sentences a paper may have (its citances in ScisummNet, ``<id>#c<hash>``, or its text as
    a citing paper in a CL-SciSumm folder, ``<id>#<RP>:<sid>``) are not candidates.
    """
    return encode_papers(read_paper_sentences(store, paper_ids, chunk=chunk), encoder)


def read_paper_sentences(store: GraphStore, paper_ids: list[str], *, chunk: int = 200) -> pd.DataFrame:
    """The full-text sentences of ``paper_ids`` (``paper_id, id, sid, section, text``): the store read alone."""
    frames = []
    for start in range(0, len(paper_ids), chunk):
        rows = store.query("sentences_of_papers", {"ids": paper_ids[start : start + chunk]})
        frames.append(pd.DataFrame(rows, columns=["paper_id", "id", "sid", "section", "text"]))
    frame = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["paper_id", "id", "sid", "section", "text"])
    )
    frame = frame[frame["sid"].notna() & (frame["text"].fillna("").str.strip() != "")]
    own = frame["id"] == frame["paper_id"] + "#" + frame["sid"].astype("Int64").astype(str)
    return frame[own]


def encode_papers(sentences: pd.DataFrame, encoder: TextEncoder) -> dict[str, CitedPaper]:
    """:func:`read_paper_sentences`' rows as encoded, indexed papers (no store access)."""
    papers: dict[str, CitedPaper] = {}
    for paper_id, group in sentences.groupby("paper_id", sort=True):
        group = group.sort_values("sid", kind="stable")
        papers[str(paper_id)] = cited_paper(
            str(paper_id),
            group["sid"].astype(int).tolist(),
            group["text"].tolist(),
            group["section"].tolist(),
            encoder,
        )
    return papers


def compute_linkage(
    store: GraphStore, encoder: TextEncoder, linker: Linker | CrossEncodedLinker, *, progress: bool = False
) -> LinkageWriteReport:
    """Predict and write model links for every linkable MENTIONS edge (see the module docstring)."""
    started = time.perf_counter()
    mentions = pd.DataFrame(store.query("mention_texts"), columns=["sentence_id", "text", "paper_id"])
    mentions["text"] = mentions["text"].fillna("").astype(str).str.strip()
    papers = load_papers(store, sorted(set(mentions["paper_id"])), encoder)
    todo = mentions[mentions["paper_id"].isin(papers) & (mentions["text"] != "")].reset_index(drop=True)
    vectors = encoder.encode(todo["text"].tolist(), progress=progress, desc="encode citances")
    sources, targets, scores = [], [], []
    for row, vector in tqdm(
        zip(todo.itertuples(index=False), vectors), total=len(todo), desc="link", disable=not progress
    ):
        paper = papers[row.paper_id]
        for sid, score in linker.link(row.text, vector, paper):
            sources.append(row.sentence_id)
            targets.append(own_sentence_id(row.paper_id, sid))
            scores.append(score)
    new = pd.DataFrame(
        {"source": sources, "target": targets, "score": scores, "method": MODEL_METHOD, "annotator": None}
    )
    existing = store.read_edges("LINKS_TO")
    is_model = existing["method"] == MODEL_METHOD
    kept = existing[~is_model]
    store.replace_edges("LINKS_TO", pd.concat([kept, new], ignore_index=True) if len(kept) else new)
    return LinkageWriteReport(
        mentions=len(mentions),
        linkable=len(todo),
        links=len(new),
        replaced=int(is_model.sum()),
        kept=len(kept),
        seconds=time.perf_counter() - started,
    )


__all__ = [
    "MODEL_METHOD",
    "LinkageWriteReport",
    "compute_linkage",
    "encode_papers",
    "load_papers",
    "read_paper_sentences",
]
