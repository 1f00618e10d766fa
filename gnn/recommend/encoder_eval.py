r"""Frozen against fine-tuned encoders on the time split: the dense channel alone, with paired intervals.

Every encoder ranks the same **citable papers** — those with text that some paper of the store cites
(a CITES or MENTIONS edge), published up to the query's year — by the cosine of their title+abstract
vectors (the text the index embeds) with the masked citing sentence, on the validation and test folds
of :func:`gnn.recommend.examples.split_frames` (never seen by ``train encoder``). The universe is the
citable papers rather than the whole corpus so that a fine-tuned model is compared without
re-encoding every paper (47 minutes per model on 2 cores for 130k papers); the dense channel's
recall over the whole index is what the background build's re-indexing then serves.

Reported per encoder and split: R@10, MRR, R@300 (the depth the prefetch hands the reranker), and
the same on MP-BERT4CR's subsets: contexts citing one paper vs several, and contexts whose targets
are **rarely vs often co-cited** (the "low-frequency" analysis: a target's co-citation frequency is
the number of (citing paper, other cited paper) pairs it appears in up to the split's cutoff; a
context is rare when its least co-cited target is at or below the median over the split's contexts).
Against the first encoder (the frozen one) each other gets the paired bootstrap of the per-context
differences of R@10 and MRR (:func:`gnn.recommend.studies.paired_bootstrap`, contexts resampled).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gnn.metrics import recall_at_k, reciprocal_rank
from gnn.recommend.examples import TrainSettings, split_frames
from gnn.recommend.studies import paired_bootstrap
from gnn.rerank.knowledge import known_citations
from gnn.retrieval.enricher import read_citations_with_years
from gnn.text.embeddings import paper_texts
from gnn.text.encoder import TextEncoder
from graph.errors import DataError
from graph.store import GraphStore

log = logging.getLogger(__name__)

UNKNOWN_YEAR = 9999  # a paper without a year is citable by every query (the index's convention)


def citable_papers(store: GraphStore) -> pd.DataFrame:
    """``id``, ``text``, ``year`` of every paper with text that some paper cites (CITES or MENTIONS)."""
    texts = paper_texts(store)
    cited = set(read_citations_with_years(store)["cited_id"].astype(str))
    cited |= {str(r["cited_id"]) for r in store.query("retrieval_citances")}
    years = {str(r["id"]): r["year"] for r in store.query("paper_years")}
    out = texts[texts["id"].astype(str).isin(cited) & (texts["text"].str.strip() != "")][["id", "text"]].copy()
    out["year"] = [UNKNOWN_YEAR if years.get(str(p)) is None else int(years[str(p)]) for p in out["id"]]
    return out.reset_index(drop=True)


def cocitation_frequency(citations: pd.DataFrame, until: int) -> Counter[str]:
    """Per cited paper: the (citing paper, other cited paper) pairs it appears in, citations up to ``until``."""
    known = known_citations(citations, until)
    sizes = known.groupby("citing_id")["cited_id"].transform("size")
    counts: Counter[str] = Counter()
    for paper, others in zip(known["cited_id"].astype(str), sizes - 1):
        counts[paper] += int(others)
    return counts


def _ranks(
    query_vectors: np.ndarray,
    doc_vectors: np.ndarray,
    ids: np.ndarray,
    years: np.ndarray,
    query_years: Sequence[int | None],
    depth: int,
) -> list[list[str]]:
    out: list[list[str]] = []
    for begin in range(0, len(query_vectors), 256):
        scores = query_vectors[begin : begin + 256] @ doc_vectors.T  # [b, n]
        for row, year in zip(scores, query_years[begin : begin + 256]):
            if year is not None:
                row[(years > year) & (years != UNKNOWN_YEAR)] = -np.inf
            top = np.argpartition(-row, min(depth, len(row) - 1))[:depth]
            top = top[np.argsort(-row[top], kind="stable")]
            out.append([str(ids[i]) for i in top if np.isfinite(row[i])])
    return out


def _summary(values: Mapping[str, np.ndarray], mask: np.ndarray) -> dict[str, Any]:
    if not mask.any():
        return {"queries": 0}
    return {"queries": int(mask.sum()), **{k: round(float(v[mask].mean()), 4) for k, v in values.items()}}


def compare_dense(
    store: GraphStore,
    encoders: Mapping[str, TextEncoder],
    split: TrainSettings,
    *,
    splits: Sequence[str] = ("validation", "test"),
    distractors: int | None = None,
    resamples: int = 2000,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, Any]:
    """The dense channel of each of ``encoders`` (the first is the reference) on ``splits`` (module docstring).

    ``distractors``: rank every target of the evaluated contexts among this many other cited papers (a seeded
    sample) rather than among all of them — a bounded run on a CPU; the report says which."""
    frames = {name: (frame, until) for name, (frame, until, _) in split_frames(store, split).items() if name in splits}
    papers = citable_papers(store)
    if distractors is not None:
        targets = {t for frame, _ in frames.values() for ts in frame["targets"] for t in ts}
        own = papers["id"].isin(targets)
        others = papers[~own].sample(n=min(distractors, int((~own).sum())), random_state=seed)
        papers = papers[own | papers.index.isin(others.index)].reset_index(drop=True)
    if papers.empty:
        raise DataError("no cited paper has a title or an abstract: nothing for the dense channel to rank")
    ids, years = papers["id"].to_numpy(), papers["year"].to_numpy()
    citations = read_citations_with_years(store)
    what = "cited papers with text" if distractors is None else f"the targets and {distractors} other cited papers"
    report: dict[str, Any] = {"universe": {"papers": len(papers), "what": what}, "splits": {}}
    reference = next(iter(encoders))
    per_query: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for name, (frame, until) in frames.items():
        frame = frame[[any(t in set(ids) for t in targets) for targets in frame["targets"]]].reset_index(drop=True)
        freq = cocitation_frequency(citations, until)
        least = np.array([min(freq.get(t, 0) for t in targets) for targets in frame["targets"]])
        median = float(np.median(least)) if len(least) else 0.0
        subsets = {
            "all": np.ones(len(frame), dtype=bool),
            "one citation": np.array([len(t) == 1 for t in frame["targets"]]),
            "several citations": np.array([len(t) >= 2 for t in frame["targets"]]),
            f"rarely co-cited (least ≤ {median:g})": least <= median,
            f"often co-cited (least > {median:g})": least > median,
        }
        query_years = [None if pd.isna(y) else int(y) for y in frame["citing_year"]]
        split_report: dict[str, Any] = {"queries": len(frame), "knows until": until, "encoders": {}}
        per_query[name] = {}
        for label, encoder in encoders.items():
            docs = encoder.encode(papers["text"].tolist(), progress=progress, desc=f"papers ({label})")
            queries = encoder.encode(frame["context"].tolist(), progress=progress, desc=f"{name} ({label})")
            ranked = _ranks(queries, docs, ids, years, query_years, 300)
            relevant = [set(t) for t in frame["targets"]]
            values = {
                "R@10": np.array([recall_at_k(r, g, 10) for r, g in zip(ranked, relevant)]),
                "MRR": np.array([reciprocal_rank(r, g) for r, g in zip(ranked, relevant)]),
                "R@300": np.array([recall_at_k(r, g, 300) for r, g in zip(ranked, relevant)]),
            }
            per_query[name][label] = values
            split_report["encoders"][label] = {k: _summary(values, m) for k, m in subsets.items()}
        rng = np.random.default_rng(seed)
        base = per_query[name][reference]
        split_report["paired"] = {
            label: {
                subset: {
                    metric: dict(
                        zip(
                            ("mean", "low", "high"),
                            (
                                round(x, 4)
                                for x in paired_bootstrap(values[metric][m] - base[metric][m], resamples, rng)
                            ),
                        )
                    )
                    for metric in ("R@10", "MRR")
                }
                for subset, m in subsets.items()
                if m.any()
            }
            for label, values in per_query[name].items()
            if label != reference
        }
        report["splits"][name] = split_report
    return report


__all__ = ["citable_papers", "cocitation_frequency", "compare_dense"]
