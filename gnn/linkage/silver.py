"""A silver corpus of citation links from sentence-embedding similarity (Singha Roy & Mercer).

Every citance of ScisummNet is paired with every sentence of the paper it cites; a pair is
labelled linked when the cosine of their embeddings reaches a cutoff ``t`` chosen on the gold
links of CL-SciSumm:

.. math::
    \\hat y(c, s) = [\\cos(e(c), e(s)) \\ge t]

The cutoff maximises one of three criteria over the gold pairs (all three are reported):
balanced accuracy ``(TPR + TNR) / 2``, Matthews' correlation

.. math::
    \\mathrm{MCC} = \\frac{TP\\cdot TN - FP\\cdot FN}{\\sqrt{(TP+FP)(TP+FN)(TN+FP)(TN+FN)}}

or F1. Agreement with the gold labels is Cohen's kappa ``(p_o - p_e) / (1 - p_e)``, ``p_o`` the
observed and ``p_e`` the chance agreement from the two label marginals.

The labelled pairs are then **balanced**: every positive is kept, and per citing sentence as many
negatives as it has positives are drawn at random (seeded) from its other pairs; a citance with no
positive contributes nothing. The CSV has the columns of :data:`SILVER_COLUMNS`.

Which reference papers: encoding all 195k ScisummNet sentences takes hours on a CPU, so
:func:`select_papers` takes the papers that give the most citances per sentence to encode (at
least ``min_sentences`` sentences, so truncated full texts are left out), in a fixed order.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gnn.linkage.features import CitedPaper
from gnn.linkage.model import Example
from gnn.linkage.pipeline import cited_paper
from gnn.text.encoder import TextEncoder

log = logging.getLogger(__name__)

SILVER_COLUMNS = (
    "citing_sentence_id",
    "reference_paper",
    "reference_sid",
    "citing_text",
    "cited_text",
    "label",
    "score",
)
CRITERIA = ("balanced_accuracy", "mcc", "f1")


@dataclass(frozen=True)
class BinaryMetrics:
    balanced_accuracy: float
    mcc: float
    f1: float
    kappa: float
    positives: int  # pairs labelled 1 by the cutoff

    def as_dict(self) -> dict[str, float | int]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def binary_metrics(predicted: np.ndarray, gold: np.ndarray) -> BinaryMetrics:
    """Balanced accuracy, MCC, F1 and Cohen's kappa of boolean ``predicted`` against boolean ``gold``."""
    p, g = np.asarray(predicted, bool), np.asarray(gold, bool)
    tp = float(np.sum(p & g))
    tn = float(np.sum(~p & ~g))
    fp = float(np.sum(p & ~g))
    fn = float(np.sum(~p & g))
    return BinaryMetrics(
        balanced_accuracy=_balanced_accuracy(tp, tn, fp, fn),
        mcc=_mcc(tp, tn, fp, fn),
        f1=2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        kappa=cohen_kappa(p, g),
        positives=int(tp + fp),
    )


def _balanced_accuracy(tp: float, tn: float, fp: float, fn: float) -> float:
    tpr = tp / (tp + fn) if tp + fn else 0.0
    tnr = tn / (tn + fp) if tn + fp else 0.0
    return (tpr + tnr) / 2


def _mcc(tp: float, tn: float, fp: float, fn: float) -> float:
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denominator) if denominator > 0 else 0.0


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two boolean labelings; 0 when chance agreement is total (both constant)."""
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    if len(a) == 0:
        return 0.0
    observed = float(np.mean(a == b))
    pa, pb = float(a.mean()), float(b.mean())
    expected = pa * pb + (1 - pa) * (1 - pb)
    return (observed - expected) / (1 - expected) if expected < 1 else 0.0


def choose_cutoff(
    scores: np.ndarray, gold: np.ndarray, criterion: str, *, grid: int = 400
) -> tuple[float, BinaryMetrics]:
    """The cosine cutoff maximising ``criterion`` on the gold pairs, and every metric at it.

    Candidates are ``grid`` quantiles of ``scores`` (plus the exact scores of the positives when
    there are few); ties go to the higher cutoff (fewer silver positives).
    """
    if criterion not in CRITERIA:
        raise ValueError(f"unknown cutoff criterion {criterion!r}; use one of {CRITERIA}")
    scores, gold = np.asarray(scores, np.float64), np.asarray(gold, bool)
    candidates = np.unique(np.concatenate([np.quantile(scores, np.linspace(0.0, 1.0, grid)), scores[gold][:2000]]))
    # Counts for every cutoff at once: sort descending, cumulative positives.
    order = np.argsort(-scores, kind="stable")
    sorted_scores, sorted_gold = scores[order], gold[order]
    cum_tp = np.cumsum(sorted_gold)
    n_pos, n = int(gold.sum()), len(gold)
    best_value, best_cutoff = -np.inf, float(candidates[-1])
    for cutoff in candidates[::-1]:  # high to low, so ties keep the higher cutoff
        taken = int(np.searchsorted(-sorted_scores, -cutoff, side="right"))  # scores >= cutoff
        tp = float(cum_tp[taken - 1]) if taken else 0.0
        fp = taken - tp
        fn = n_pos - tp
        tn = n - taken - fn
        value = {
            "balanced_accuracy": _balanced_accuracy(tp, tn, fp, fn),
            "mcc": _mcc(tp, tn, fp, fn),
            "f1": 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        }[criterion]
        if value > best_value + 1e-12:
            best_value, best_cutoff = value, float(cutoff)
    return best_cutoff, binary_metrics(scores >= best_cutoff, gold)


def gold_pairs(examples: Collection[Example]) -> tuple[np.ndarray, np.ndarray]:
    """Cosine and gold label of every (citance, sentence of its RP) pair of gold examples."""
    scores, labels = [], []
    for ex in examples:
        scores.append(ex.paper.cosine(ex.vector))
        labels.append(np.array([int(s) in ex.positives for s in ex.paper.sids]))
    return np.concatenate(scores), np.concatenate(labels)


# ---------------------------------------------------------------------------------------------
# ScisummNet pairs


@dataclass(frozen=True)
class SilverSource:
    """ScisummNet citances with the papers they cite, encoded."""

    citances: pd.DataFrame  # citing_sentence_id, reference_paper, text
    vectors: np.ndarray  # (len(citances), d)
    papers: dict[str, CitedPaper]


def select_papers(
    sentences: pd.DataFrame, mentions: pd.DataFrame, max_papers: int | None, min_sentences: int = 80
) -> list[str]:
    """Reference papers for the silver corpus: most citances per sentence first (see module docstring).

    ``sentences`` has ``paper_id``; ``mentions`` has ``source`` (citing sentence) and ``target`` (RP).
    Ties are broken by paper id, so the choice is reproducible.
    """
    cites = mentions.groupby("target").size()
    length = sentences.groupby("paper_id").size().reindex(cites.index).fillna(0)
    table = pd.DataFrame({"paper": cites.index, "citances": cites.to_numpy(), "sentences": length.to_numpy()})
    table = table[table["sentences"] >= min_sentences]
    table = table.assign(ratio=table["sentences"] / table["citances"]).sort_values(["ratio", "paper"], kind="stable")
    chosen = table["paper"].tolist()
    return chosen if max_papers is None else chosen[:max_papers]


def silver_source(
    sentences: pd.DataFrame,
    mentions: pd.DataFrame,
    encoder: TextEncoder,
    *,
    max_papers: int | None,
    exclude: Collection[str] = (),
    min_sentences: int = 80,
) -> SilverSource:
    """Pick reference papers, encode their sentences and their citances.

    ``sentences``: the Sentence table of ScisummNet (``id, paper_id, sid, section, text``; citances
    have no ``sid``); ``mentions``: its MENTIONS table (``source`` citance id, ``target`` paper).
    Papers in ``exclude`` (the gold evaluation papers) are never used.
    """
    mentions = mentions[~mentions["target"].isin(set(exclude))]
    full_text = sentences[sentences["sid"].notna()]
    chosen = select_papers(full_text, mentions, max_papers, min_sentences)
    papers: dict[str, CitedPaper] = {}
    own = full_text[full_text["paper_id"].isin(chosen)].sort_values(["paper_id", "sid"])
    for paper_id, rows in own.groupby("paper_id", sort=True):
        papers[str(paper_id)] = cited_paper(
            str(paper_id), rows["sid"].astype(int).tolist(), rows["text"].tolist(), rows["section"].tolist(), encoder
        )
    texts = sentences.drop_duplicates("id").set_index("id")["text"]
    wanted = mentions[mentions["target"].isin(papers)].sort_values(["target", "source"])
    citances = pd.DataFrame(
        {
            "citing_sentence_id": wanted["source"].to_numpy(),
            "reference_paper": wanted["target"].to_numpy(),
            "text": texts.reindex(wanted["source"]).to_numpy(),
        }
    ).dropna()
    vectors = encoder.encode(citances["text"].tolist())
    log.info("silver source: %d citances of %d reference papers", len(citances), len(papers))
    return SilverSource(citances.reset_index(drop=True), vectors, papers)


def silver_pairs(source: SilverSource) -> pd.DataFrame:
    """Every (citance, sentence of its RP) pair with its cosine: the unlabelled silver pool."""
    frames = []
    for i, row in source.citances.iterrows():
        paper = source.papers[row["reference_paper"]]
        frames.append(
            pd.DataFrame(
                {
                    "citing_sentence_id": row["citing_sentence_id"],
                    "reference_paper": row["reference_paper"],
                    "reference_sid": paper.sids,
                    "citing_text": row["text"],
                    "cited_text": list(paper.texts),
                    "score": paper.cosine(source.vectors[int(i)]),
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=[c for c in SILVER_COLUMNS if c != "label"])
    return pd.concat(frames, ignore_index=True)


def balance(pairs: pd.DataFrame, cutoff: float, *, seed: int = 0) -> pd.DataFrame:
    """Label by ``score >= cutoff``; keep all positives and, per citing sentence, as many random negatives.

    Deterministic for a given ``seed`` and input order. Returns the :data:`SILVER_COLUMNS`.
    """
    labelled = pairs.assign(label=(pairs["score"] >= cutoff).astype(int))
    rng = np.random.default_rng(seed)
    keep: list[np.ndarray] = []
    for _, group in labelled.groupby("citing_sentence_id", sort=True):
        positive = group.index[group["label"].to_numpy() == 1].to_numpy()
        if len(positive) == 0:
            continue
        negative = group.index[group["label"].to_numpy() == 0].to_numpy()
        drawn = (
            rng.choice(negative, size=min(len(positive), len(negative)), replace=False) if len(negative) else negative
        )
        keep += [positive, np.sort(drawn)]
    rows = labelled.loc[np.concatenate(keep)] if keep else labelled.iloc[0:0]
    return rows[list(SILVER_COLUMNS)].reset_index(drop=True)


def silver_examples(corpus: pd.DataFrame, source: SilverSource, weight: float = 1.0) -> list[Example]:
    """Training examples from a balanced silver corpus: only its labelled pairs count as rows."""
    vectors = dict(
        zip(source.citances["citing_sentence_id"] + "|" + source.citances["reference_paper"], source.vectors)
    )
    out = []
    for (citing, paper_id), group in corpus.groupby(["citing_sentence_id", "reference_paper"], sort=True):
        key = f"{citing}|{paper_id}"
        if key not in vectors or paper_id not in source.papers:
            continue
        sids = group["reference_sid"].astype(int)
        out.append(
            Example(
                group=str(paper_id),
                citance=str(group["citing_text"].iloc[0]),
                vector=vectors[key],
                paper=source.papers[str(paper_id)],
                positives=frozenset(sids[group["label"].to_numpy() == 1].tolist()),
                weight=weight,
                labelled=frozenset(sids.tolist()),
            )
        )
    return out


__all__ = [
    "CRITERIA",
    "SILVER_COLUMNS",
    "BinaryMetrics",
    "SilverSource",
    "balance",
    "binary_metrics",
    "choose_cutoff",
    "cohen_kappa",
    "gold_pairs",
    "select_papers",
    "silver_examples",
    "silver_pairs",
    "silver_source",
]
