"""The signals the linker combines, one row per (citance, candidate sentence of the cited paper).

Task 1A of CL-SciSumm (Jaidka et al. 2018) asks, for a citing sentence ``c`` and the full text of
the reference paper (RP) with sentences ``s_1..s_n``, which ``s_i`` the citance refers to. Every
candidate gets the features below; all "within paper" normalisations compare a sentence with the
other sentences of the *same* RP, so a paper with many similar sentences does not dominate.

**Embedding cosine** (the signal of Singha Roy & Mercer's silver labels). With ``e(·)`` the
project's L2-normalised sentence encoder (:mod:`gnn.text.encoder`),

.. math::
    \\cos_i = e(c)^\\top e(s_i), \\qquad
    z^{\\cos}_i = \\frac{\\cos_i - \\mu_{\\cos}}{\\sigma_{\\cos} + \\epsilon}, \\qquad
    r^{\\cos}_i = 1 / \\operatorname{rank}_i(\\cos)

and ``max(cos_{i-1}, cos_{i+1})`` (gold spans are often two or three consecutive sentences); the
same passage idea as the **window cosine** ``e(c)^T w_i / ||w_i||`` with ``w_i = e(s_{i-1}) +
e(s_i) + e(s_{i+1})`` (the sentences that exist), and its within-paper z-score.

**BM25 within the paper** (Robertson & Zaragoza 2009; ``bm25s``, Lucene variant, ``k1 = 1.5``,
``b = 0.75``), the RP's sentences as the documents:

.. math::
    \\mathrm{BM25}(c, s_i) = \\sum_{t \\in c} \\mathrm{idf}(t)\\,
        \\frac{f(t, s_i)\\,(k_1 + 1)}{f(t, s_i) + k_1 (1 - b + b\\,|s_i| / \\overline{|s|})}

taken as ``BM25 / max_j BM25`` (0 when nothing matches), its within-paper z-score and reciprocal
rank, plus the share of the citance's content words that the sentence contains, and the best
normalised BM25 of the two neighbouring sentences. The same four BM25 signals are computed a second
time for the citance **without its citation years** (``1998``, ``2000a``) and ``et al.``
(:func:`strip_citation_years`): a year in a citance is almost always part of a citation marker,
and in the RP it matches the years of *its* references and tables, not the cited content (BM25
top-1 hits 13.0% of the 751 CL-SciSumm 2018 citances with the years, 16.4% without). Both versions
enter, so the model can also weigh what the years alone match.

**Lexical overlap within the paper** (the features of the NJU and CIST Task 1A systems, Ma et
al. 2018; Li et al. 2018), with the RP's sentences as the corpus,
``idf(t) = ln((n + 1) / (df(t) + 0.5))`` (``df`` the sentences holding ``t``; a citance word the
paper lacks gets ``df = 0``) and sublinear term weights ``w(t, x) = (1 + ln f(t, x)) idf(t)``:

.. math::
    \\mathrm{tfidf}_i = \\frac{\\sum_t w(t, c)\\, w(t, s_i)}{\\lVert w(\\cdot, c) \\rVert\\,
        \\lVert w(\\cdot, s_i) \\rVert}, \\qquad
    \\mathrm{idf\\_overlap}_i = \\frac{\\sum_{t \\in C \\cap S_i} idf(t)}{\\sum_{t \\in C} idf(t)}, \\qquad
    \\mathrm{bigram}_i = \\frac{|B(c) \\cap B(s_i)|}{|B(c)|}

(``C``, ``S_i`` the content-word sets, ``B(·)`` the bigrams of consecutive content words), the
TF-IDF cosine also as a within-paper z-score and reciprocal rank. ``cosine_gap = cos_i - max_j
cos_j`` says how far a sentence is from the citance's best match, which the selection rule's one
threshold cannot see from the probabilities of other citances.

**Section and position priors**: the relative position ``i / (n - 1)``, whether ``s_i`` is the
title (``sid = 0``), and the kind of its section from the ``<SECTION title=..>`` (abstract,
introduction, related work, method, results, conclusion; see :func:`section_kind`), whether it
opens its section, its length and whether it holds a number. Citations point at abstracts and
introductions far more often than at related work.

**Centrality** (citance-independent): how typical a sentence is of its paper, the cosine with
the normalised centroid ``cos(e(s_i), \\bar e / \\lVert \\bar e \\rVert)``, and the cosine with
the title ``e(s_0)``; sentences stating the paper's contribution are the ones cited.

**Discourse cues of the citance** (the facets of Task 1B: method, result, aim, implication): word
lists matched in ``c`` (:data:`CUES`), and their products with the matching section kinds, so a
linear model can learn "a result-citance points into the results section".

Signals measured and left out (5-fold CV, docs/history.md):
"consensus" with the RP's other citances (mean / max / top-3 / vote of their cosine and BM25 to
``s_i``, and the first-stage linker's votes), cosine with the citance stripped of its markers or
split into sentences, Jaccard overlap, and the
products ``e(c) * e(s_i)`` — each left cross-validated F1 unchanged or lower.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import bm25s
import numpy as np
import scipy.sparse as sp

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
# A year of a citation marker ("(Brants, 2000)", "Och et al. 2003a") and the "et al." beside it.
_CITATION_YEAR = re.compile(r"\b(?:1[89]\d\d|20\d\d)[a-z]?\b|\bet\.? al\b\.?")
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
    "cosine_gap",
    "bm25_neighbour",
    "bm25_noyear",
    "bm25_noyear_z",
    "bm25_noyear_rrank",
    "overlap_noyear",
    "tfidf",
    "tfidf_z",
    "tfidf_rrank",
    "idf_overlap",
    "bigram_overlap",
    "window_cosine",
    "window_cosine_z",
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


def strip_citation_years(text: str) -> str:
    """``text`` without the years of citation markers (1800-2099, ``2000a``) and ``et al.``.

    >>> strip_citation_years("as in Och et al. (2003a) and (Brants, 2000)")
    'as in Och  () and (Brants, )'
    """
    return _CITATION_YEAR.sub("", text)


def bigrams(tokens: Sequence[str]) -> frozenset[tuple[str, str]]:
    """Pairs of consecutive tokens."""
    return frozenset(pairwise(tokens))


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
    windows: np.ndarray  # (n, d) float32 unit vectors of e(s_{i-1}) + e(s_i) + e(s_{i+1})
    static: np.ndarray  # (n, S) features that do not depend on the citance (position, section, length)
    retriever: bm25s.BM25 | None  # None when no sentence has a content word
    vocabulary: frozenset[str]  # tokens the retriever knows
    token_sets: tuple[frozenset[str], ...]  # (n,) content words of each sentence
    bigram_sets: tuple[frozenset[tuple[str, str]], ...]  # (n,) consecutive content-word pairs of each sentence
    idf: dict[str, float]  # ln((n + 1) / (df + 0.5)) of every word of the paper
    tfidf: sp.csr_matrix  # (n, |vocabulary|) L2-normalised sublinear TF-IDF rows, columns in `columns` order
    columns: dict[str, int]  # word -> column of `tfidf`

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
        idf, tfidf, columns = _tfidf_index(tokens)
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
            _window_vectors(unit),
            static,
            retriever,
            vocabulary,
            tuple(frozenset(doc) for doc in tokens),
            tuple(bigrams(doc) for doc in tokens),
            idf,
            tfidf,
            columns,
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

    def idf_of(self, token: str) -> float:
        """The within-paper idf of ``token``; a word the paper lacks counts as ``df = 0``."""
        return self.idf.get(token, math.log((len(self) + 1) / 0.5))

    def tfidf_cosine(self, query: Sequence[str]) -> np.ndarray:
        """``(n,)`` cosine of the sublinear TF-IDF vectors of ``query`` tokens and every sentence."""
        weights = _sublinear_weights(query, self.idf_of)
        norm = math.sqrt(sum(w * w for w in weights.values()))
        known = [(self.columns[t], w) for t, w in weights.items() if t in self.columns]
        if norm == 0 or not known:
            return np.zeros(len(self), dtype=np.float64)
        q = np.zeros(self.tfidf.shape[1], dtype=np.float64)
        for j, w in known:
            q[j] = w / norm
        return np.asarray(self.tfidf @ q, dtype=np.float64)


def _window_vectors(unit: np.ndarray) -> np.ndarray:
    """``(n, d)`` unit vectors of each sentence's vector plus its neighbours' (float32)."""
    window = unit.copy()
    window[1:] += unit[:-1]
    window[:-1] += unit[1:]
    norms = np.linalg.norm(window, axis=1, keepdims=True)
    return (window / np.maximum(norms, EPS)).astype(np.float32)  # EPS: all-zero vectors


def _sublinear_weights(tokens: Sequence[str], idf: Callable[[str], float]) -> dict[str, float]:
    """``w(t, x) = (1 + ln f(t, x)) idf(t)`` of every distinct token of ``x`` (module docstring)."""
    return {t: (1.0 + math.log(f)) * idf(t) for t, f in Counter(tokens).items()}


def _tfidf_index(tokens: list[list[str]]) -> tuple[dict[str, float], sp.csr_matrix, dict[str, int]]:
    """Within-paper idf, the L2-normalised sublinear TF-IDF matrix of the sentences, and its columns."""
    n = len(tokens)
    df = Counter(t for doc in tokens for t in set(doc))
    idf = {t: math.log((n + 1) / (d + 0.5)) for t, d in df.items()}
    columns = {t: j for j, t in enumerate(sorted(df))}
    rows, cols, values = [], [], []
    for i, doc in enumerate(tokens):
        weights = _sublinear_weights(doc, idf.__getitem__)
        norm = math.sqrt(sum(w * w for w in weights.values()))
        if norm == 0:  # a sentence without content words: its row stays empty
            continue
        for t, w in weights.items():
            rows.append(i)
            cols.append(columns[t])
            values.append(w / norm)
    matrix = sp.csr_matrix((values, (rows, cols)), shape=(n, len(columns)), dtype=np.float64)
    return idf, matrix, columns


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


def _neighbour_max(x: np.ndarray) -> np.ndarray:
    """``max(x_{i-1}, x_{i+1})``; a one-sentence paper gets its own value."""
    if len(x) < 2:
        return x.copy()
    out = np.full(len(x), -np.inf)
    out[1:] = x[:-1]
    out[:-1] = np.maximum(out[:-1], x[1:])
    return out


def _bm25_signals(citance: str, paper: CitedPaper) -> np.ndarray:
    """``(n, 4)``: BM25 / its maximum, its z-score, its reciprocal rank, the share of query words present."""
    out = np.zeros((len(paper), 4), dtype=np.float64)
    bm = paper.bm25(citance)
    top = bm.max()
    if top > 0:  # nothing matches: all four stay 0
        out[:, 0], out[:, 1], out[:, 2] = bm / top, _zscore(bm), _reciprocal_rank(bm)
    query = set(content_tokens(citance))
    if query:
        out[:, 3] = [len(query & words) / len(query) for words in paper.token_sets]
    return out


def features(citance: str, vector: np.ndarray, paper: CitedPaper) -> np.ndarray:
    """``(n, len(FEATURES))`` feature matrix of every sentence of ``paper`` for one citance (see module docstring)."""
    n = len(paper)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    cos = paper.cosine(vector)
    bm = _bm25_signals(citance, paper)
    cues = cue_vector(citance)
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = cos, _zscore(cos), _reciprocal_rank(cos), _neighbour_max(cos)
    out[:, 4:8] = bm
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
    c = FEATURES.index("cosine_gap")  # the lexical block, in FEATURES order
    out[:, c] = cos - cos.max()  # cosine_gap
    out[:, c + 1] = _neighbour_max(bm[:, 0])  # bm25_neighbour
    out[:, c + 2 : c + 6] = _bm25_signals(strip_citation_years(citance), paper)  # the *_noyear four
    tokens = content_tokens(citance)
    tfidf = paper.tfidf_cosine(tokens)
    out[:, c + 6], out[:, c + 7], out[:, c + 8] = tfidf, _zscore(tfidf), _reciprocal_rank(tfidf)
    query = set(tokens)
    query_idf = sum(paper.idf_of(t) for t in query)
    if query_idf > 0:
        out[:, c + 9] = [sum(paper.idf_of(t) for t in query & words) / query_idf for words in paper.token_sets]
    pairs = bigrams(tokens)
    if pairs:
        out[:, c + 10] = [len(pairs & b) / len(pairs) for b in paper.bigram_sets]
    window = (paper.windows @ np.asarray(vector, np.float32)).astype(np.float64)
    out[:, c + 11], out[:, c + 12] = window, _zscore(window)
    return out


__all__ = [
    "CUES",
    "FEATURES",
    "SECTION_KINDS",
    "CitedPaper",
    "bigrams",
    "content_tokens",
    "cue_vector",
    "features",
    "section_kind",
    "strip_citation_years",
]
