"""The signals the linker combines, one row per (citance, candidate sentence of the cited paper).

Task 1A of CL-SciSumm (Jaidka et al. 2018) asks, for a citing sentence ``c`` and the full text of
the reference paper (RP) with sentences ``s_1..s_n``, which ``s_i`` the citance refers to. Every
candidate gets the features below; all "within paper" normalisations compare a sentence with the
other sentences of the *same* RP, so a paper with many similar sentences does not dominate.

**Embedding cosine** (the signal of Singha Roy & Mercer's silver labels). With ``e(·)`` the
project's L2-normalised sentence encoder (:mod:`gnn.encoder`),

.. math::
    \\cos_i = e(c)^\\top e(s_i), \\qquad
    z^{\\cos}_i = \\frac{\\cos_i - \\mu_{\\cos}}{\\sigma_{\\cos} + \\epsilon}, \\qquad
    r^{\\cos}_i = 1 / \\operatorname{rank}_i(\\cos)

and ``max(cos_{i-1}, cos_{i+1})`` (gold spans are often two or three consecutive sentences).

**BM25 within the paper** (Robertson & Zaragoza 2009; ``bm25s``, Lucene variant, ``k1 = 1.5``,
``b = 0.75``), the RP's sentences as the documents:

.. math::
    \\mathrm{BM25}(c, s_i) = \\sum_{t \\in c} \\mathrm{idf}(t)\\,
        \\frac{f(t, s_i)\\,(k_1 + 1)}{f(t, s_i) + k_1 (1 - b + b\\,|s_i| / \\overline{|s|})}

taken as ``BM25 / max_j BM25`` (0 when nothing matches), its within-paper z-score and reciprocal
rank, plus the share of the citance's content words that the sentence contains.

**Section and position priors**: the relative position ``i / (n - 1)``, whether ``s_i`` is the
title (``sid = 0``), and the kind of its section from the ``<SECTION title=..>`` (abstract,
introduction, related work, method, results, conclusion; see :func:`section_kind`), whether it
opens its section, its length and whether it holds a number. Citations point at abstracts and
introductions far more often than at related work.

**Centrality** (citance-independent): how typical a sentence is of its paper, the cosine with
the normalised centroid ``cos(e(s_i), \bar e / \\lVert \bar e \rVert)``, and the cosine with
the title ``e(s_0)``; sentences stating the paper's contribution are the ones cited.

**Discourse cues of the citance** (the facets of Task 1B: method, result, aim, implication): word
lists matched in ``c`` (:data:`CUES`), and their products with the matching section kinds, so a
linear model can learn "a result-citance points into the results section".
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG

EPS = 1e-6  # keeps z-scores finite for a paper whose sentences all score the same

# Section kinds, matched as substrings of the lower-cased section title, first match wins.
SECTION_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("abstract", ("abstract",)),
    ("related", ("related work", "previous work", "prior work", "related research", "background")),
    ("intro", ("introduction", "motivation", "overview")),
    ("conclusion", ("conclu", "future work", "summary", "final remarks")),
    ("result", ("experiment", "evaluation", "result", "discussion", "analysis", "performance", "comparison")),
    (
        "method",
        (
            "method",
            "approach",
            "model",
            "algorithm",
            "system",
            "framework",
            "architecture",
            "implementation",
            "feature",
            "training",
            "learning",
            "parsing",
            "decoding",
            "search",
            "task",
            "data",
            "corpus",
        ),
    ),
)

# Discourse cues (Task 1B facets) as regexes over the lower-cased citance.
CUES: dict[str, re.Pattern[str]] = {
    "cue_method": re.compile(
        r"\b(us(e|es|ed|ing)|employ\w*|adopt\w*|follow\w*|appl(y|ied|ies)|algorithm\w*|method\w*|approach\w*|"
        r"technique\w*|model\w*|implement\w*|tool\w*|based on)\b"
    ),
    "cue_result": re.compile(
        r"(\d+(\.\d+)?\s?%|\b(accura\w*|precision|recall|f-?score|f-?measure|bleu|outperform\w*|achiev\w*|"
        r"improv\w*|result\w*|perform\w*|error rate|better|best|state[- ]of[- ]the[- ]art|show(s|ed|n)?|report\w*)\b)"
    ),
    "cue_aim": re.compile(
        r"\b(propos\w*|introduc\w*|present\w*|describ\w*|develop\w*|first|novel|defin\w*|formulat\w*|suggest\w*)\b"
    ),
    "cue_contrast": re.compile(r"\b(unlike|contrast|whereas|however|although|differ\w*|similar\w*|like|instead)\b"),
}

_NUMBER = re.compile(r"\d")
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN)

FEATURES: tuple[str, ...] = (
    "cosine",
    "cosine_z",
    "cosine_rrank",
    "cosine_neighbour",
    "bm25",
    "bm25_z",
    "bm25_rrank",
    "overlap",
    "position",
    "is_title",
    "sec_abstract",
    "sec_intro",
    "sec_related",
    "sec_method",
    "sec_result",
    "sec_conclusion",
    "log_length",
    "has_number",
    "centrality",
    "title_cosine",
    "section_start",
    *CUES,
    "method_x_method",
    "result_x_result",
    "result_x_number",
    "aim_x_front",
)


def section_kind(title: str | None) -> str | None:
    """``abstract``, ``intro``, ``related``, ``method``, ``result``, ``conclusion`` or None (unknown/other).

    >>> section_kind("3 Experimental Results"), section_kind("Abstract"), section_kind(None)
    ('result', 'abstract', None)
    """
    if not isinstance(title, str) or not title:
        return None
    low = title.lower()
    for kind, needles in SECTION_KINDS:
        if any(n in low for n in needles):
            return kind
    return None


def content_tokens(text: str) -> list[str]:
    """Lower-cased word tokens of two or more characters without English stopwords (the BM25 vocabulary)."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


def cue_vector(citance: str) -> np.ndarray:
    """``(len(CUES),)`` 0/1 indicators of the discourse cues found in ``citance``."""
    low = citance.lower()
    return np.array([1.0 if pattern.search(low) else 0.0 for pattern in CUES.values()], dtype=np.float64)


@dataclass(frozen=True)
class CitedPaper:
    """One reference paper ready for scoring: its sentences, their vectors and a BM25 index over them."""

    paper_id: str
    sids: np.ndarray  # (n,) int sentence ids, reading order
    texts: tuple[str, ...]  # (n,) sentence texts
    sections: tuple[str | None, ...]  # (n,) section titles
    vectors: np.ndarray  # (n, d) float32 unit vectors of the texts
    static: np.ndarray  # (n, S) features that do not depend on the citance (position, section, length)
    retriever: bm25s.BM25 | None  # None when no sentence has a content word
    vocabulary: frozenset[str]  # tokens the retriever knows
    token_sets: tuple[frozenset[str], ...]  # (n,) content words of each sentence

    @classmethod
    def build(
        cls,
        paper_id: str,
        sids: Sequence[int],
        texts: Sequence[str],
        sections: Sequence[str | None],
        vectors: np.ndarray,
    ) -> CitedPaper:
        """Index one paper's sentences (``vectors`` row ``i`` encodes ``texts[i]``)."""
        n = len(texts)
        if not (len(sids) == len(sections) == n == vectors.shape[0]):
            raise ValueError(
                f"{paper_id}: {len(sids)} sids, {n} texts, {len(sections)} sections, {vectors.shape[0]} vectors"
            )
        sections = [s if isinstance(s, str) and s else None for s in sections]  # pandas nulls (NaN) -> None
        tokens = [content_tokens(t) for t in texts]
        vocabulary = frozenset(t for doc in tokens for t in doc)
        retriever = None
        if vocabulary:
            retriever = bm25s.BM25(k1=1.5, b=0.75)
            retriever.index(_as_tokenized(tokens), show_progress=False)
        kinds = [section_kind(s) for s in sections]
        sid_array = np.asarray(sids, dtype=np.int64)
        static = np.zeros((n, 13), dtype=np.float64)
        static[:, 0] = np.arange(n) / max(n - 1, 1)  # relative position
        static[:, 1] = sid_array == 0  # the title
        for column, kind in enumerate(("abstract", "intro", "related", "method", "result", "conclusion"), start=2):
            static[:, column] = [k == kind for k in kinds]
        static[:, 8] = [math.log1p(len(t.split())) for t in texts]
        static[:, 9] = [bool(_NUMBER.search(t)) for t in texts]
        unit = np.asarray(vectors, np.float64)
        if n:
            centroid = unit.mean(axis=0)
            static[:, 10] = unit @ (centroid / max(float(np.linalg.norm(centroid)), EPS))  # EPS: all-zero vectors
            titles = np.flatnonzero(sid_array == 0)
            static[:, 11] = unit @ unit[titles[0]] if len(titles) else 0.0
            static[:, 12] = [i == 0 or sections[i] != sections[i - 1] for i in range(n)]
        return cls(
            paper_id,
            sid_array,
            tuple(texts),
            tuple(sections),
            np.asarray(vectors, np.float32),
            static,
            retriever,
            vocabulary,
            tuple(frozenset(doc) for doc in tokens),
        )

    def __len__(self) -> int:
        return len(self.texts)

    def bm25(self, citance: str) -> np.ndarray:
        """``(n,)`` BM25 scores of every sentence for ``citance`` (zeros when no query word is in the paper)."""
        query = [t for t in content_tokens(citance) if t in self.vocabulary]
        if self.retriever is None or not query:
            return np.zeros(len(self), dtype=np.float64)
        return np.asarray(self.retriever.get_scores(query), dtype=np.float64)

    def cosine(self, vector: np.ndarray) -> np.ndarray:
        """``(n,)`` cosine of every sentence with a unit ``vector``."""
        return (self.vectors @ np.asarray(vector, np.float32)).astype(np.float64)


def _as_tokenized(tokens: list[list[str]]) -> bm25s.tokenization.Tokenized:
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in tokens]
    return bm25s.tokenization.Tokenized(ids=ids, vocab=vocab)


def _zscore(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / (x.std() + EPS)


def _reciprocal_rank(x: np.ndarray) -> np.ndarray:
    order = np.argsort(-x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.arange(1, len(x) + 1)
    return 1.0 / ranks


def features(citance: str, vector: np.ndarray, paper: CitedPaper) -> np.ndarray:
    """``(n, len(FEATURES))`` feature matrix of every sentence of ``paper`` for one citance (see module docstring)."""
    n = len(paper)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    cos = paper.cosine(vector)
    neighbour = cos.copy()  # a one-sentence paper: its own cosine
    if n > 1:
        neighbour = np.full(n, -np.inf)
        neighbour[1:] = cos[:-1]
        neighbour[:-1] = np.maximum(neighbour[:-1], cos[1:])
    bm = paper.bm25(citance)
    top = bm.max()
    query = set(content_tokens(citance))
    overlap = np.array(
        [len(query & words) / len(query) if query else 0.0 for words in paper.token_sets], dtype=np.float64
    )
    cues = cue_vector(citance)
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = cos, _zscore(cos), _reciprocal_rank(cos), neighbour
    out[:, 4] = bm / top if top > 0 else 0.0
    out[:, 5] = _zscore(bm) if top > 0 else 0.0
    out[:, 6] = _reciprocal_rank(bm) if top > 0 else 0.0
    out[:, 7] = overlap
    out[:, 8:21] = paper.static
    out[:, 21 : 21 + len(CUES)] = cues
    c = 21 + len(CUES)
    sec = {
        name: paper.static[:, i]
        for i, name in enumerate(
            ("position", "title", "abstract", "intro", "related", "method", "result", "conclusion", "length", "number")
        )
    }
    # (the last three static columns, centrality, title cosine and section start, enter as they are)
    cue = dict(zip(CUES, cues))
    out[:, c] = cue["cue_method"] * sec["method"]
    out[:, c + 1] = cue["cue_result"] * sec["result"]
    out[:, c + 2] = cue["cue_result"] * sec["number"]
    out[:, c + 3] = cue["cue_aim"] * np.maximum.reduce([sec["title"], sec["abstract"], sec["intro"]])
    return out


__all__ = [
    "CUES",
    "FEATURES",
    "SECTION_KINDS",
    "CitedPaper",
    "content_tokens",
    "cue_vector",
    "features",
    "section_kind",
]
