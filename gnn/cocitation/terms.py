r"""Cluster labels from the terms of documents: candidate phrases, log-likelihood ratio, c-TF-IDF.

CiteSpace labels a co-citation cluster by the terms of the papers that *cite* its members (Chen,
Ibekwe-SanJuan & Hou, 2010, JASIST 61:1386, "The structure and dynamics of cocitation clusters"), ranked
by Dunning's log-likelihood ratio; BERTopic's class-based TF-IDF (Grootendorst, 2022, arXiv:2203.05794)
ranks the same counts another way. Both work on one matrix :math:`K` (classes × terms): :math:`K_{ct}` is
how often term :math:`t` occurs in the documents of class :math:`c` (for a co-citation cluster, the
documents citing at least one member; for a coupling cluster, its own documents), built as
:math:`K = C\,D` from the binary class × document incidence :math:`C` and the document × term counts
:math:`D` (:func:`term_matrix`): the candidate terms of their titles and abstracts, and their keywords
(``HAS_KEYWORD``: author keywords, Keywords Plus, index terms) each as one whole term.

**Candidate terms** (:func:`candidate_terms`) are the 1- to 3-grams inside runs of content words: a text
is lower-cased, split into words (:data:`gnn.cocitation.clusters.STOP_WORDS` and words under three
characters break a run, as punctuation does), and every n-gram within a run is a candidate — a cheap
stand-in for noun phrases ("statistical machine translation" from "... for statistical machine
translation, ..." but never "translation for statistical").

**Log-likelihood ratio** (Dunning, 1993, Computational Linguistics 19:61, "Accurate methods for the
statistics of surprise and coincidence"): the 2×2 table of term :math:`t` against the other terms, in
class :math:`c` against the other classes,

.. math::
    O = \begin{pmatrix} k & n_c - k \\ K_t - k & N - n_c - K_t + k \end{pmatrix}, \qquad
    E_{ij} = \frac{O_{i\cdot}\,O_{\cdot j}}{N}, \qquad
    G^2 = 2 \sum_{ij} O_{ij} \ln \frac{O_{ij}}{E_{ij}}

(:math:`k = K_{ct}`, :math:`n_c = \sum_t K_{ct}`, :math:`K_t = \sum_c K_{ct}`, :math:`N = \sum K`,
:math:`0 \ln 0 = 0`). :math:`G^2` is large for a term much more frequent in the class than elsewhere *and*
for one much rarer; only over-represented terms (:math:`k > E_{11}`) label a class, so the score is
signed: :math:`-G^2` where :math:`k < E_{11}`.

**c-TF-IDF**: :math:`W_{t,c} = K_{ct} \log(1 + A / K_t)` with :math:`A` the mean number of term occurrences
per class (:func:`gnn.cocitation.clusters.ctfidf`, here on the sparse matrix).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from gnn.cocitation.clusters import STOP_WORDS

_TOKEN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*|[^a-z\s]")  # words, and any other mark (it breaks a run)
MAX_NGRAM = 3  # CiteSpace's noun phrases are mostly 1-3 words; longer runs are rare and seldom labels


def candidate_terms(text: str | None, *, max_n: int = MAX_NGRAM) -> list[str]:
    """The 1..``max_n``-grams of a text's runs of content words (see the module docstring), in text order."""
    if not isinstance(text, str) or not text:
        return []
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(text.lower()):
        if len(token) >= 3 and token not in STOP_WORDS and token[0].isalpha():
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    terms: list[str] = []
    for run in runs:
        for n in range(1, max_n + 1):
            terms.extend(" ".join(run[k : k + n]) for k in range(len(run) - n + 1))
    return terms


def keyword_term(keyword: str | None) -> str | None:
    """A keyword as one label term: lower case, single spaces (``"Citation  Analysis"`` -> ``"citation analysis"``);
    None when nothing is left."""
    if not isinstance(keyword, str):
        return None
    return " ".join(keyword.lower().split()) or None


def term_matrix(
    texts: Sequence[str | None],
    *,
    keywords: Sequence[Iterable[str]] | None = None,
    max_n: int = MAX_NGRAM,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Document × term counts (int64 CSR) and the terms (sorted, object array).

    A document's terms are the :func:`candidate_terms` of its text and, with ``keywords`` (one list per
    document), each of its keywords as one whole term (:func:`keyword_term`, once per document): a keyword
    is a phrase an author or indexer chose for the work, so it is counted as it stands, however many words it
    has, beside the n-grams of the title and abstract (CiteSpace labels clusters from titles, keywords and
    abstracts). A keyword that also occurs in the text counts once for each.
    """
    if keywords is not None and len(keywords) != len(texts):
        raise ValueError(f"{len(keywords)} keyword lists for {len(texts)} documents; give one list per document")
    vocabulary: dict[str, int] = {}
    indptr = [0]
    columns: list[int] = []
    for k, text in enumerate(texts):
        for term in candidate_terms(text, max_n=max_n):
            columns.append(vocabulary.setdefault(term, len(vocabulary)))
        if keywords is not None:
            own = {t for t in map(keyword_term, keywords[k]) if t}
            for term in sorted(own):
                columns.append(vocabulary.setdefault(term, len(vocabulary)))
        indptr.append(len(columns))
    terms = np.array(list(vocabulary), dtype=object)
    raw = sp.csr_matrix(
        (np.ones(len(columns), dtype=np.int64), np.asarray(columns, dtype=np.int64), np.asarray(indptr)),
        shape=(len(texts), len(terms)),
    )
    raw.sum_duplicates()  # a term repeated in one document: its count
    order = np.argsort(terms, kind="stable") if len(terms) else np.empty(0, dtype=np.int64)
    return raw[:, order].tocsr(), terms[order]


def class_term_counts(
    classes: np.ndarray, documents: np.ndarray, doc_terms: sp.csr_matrix, n_classes: int
) -> sp.csr_matrix:
    """:math:`K = C D`: term counts per class, where document ``documents[k]`` belongs to class ``classes[k]``.

    A (class, document) pair listed twice counts once (a paper citing two members of a cluster is one of
    its citing documents); rows of ``doc_terms`` are documents.
    """
    membership = sp.csr_matrix(
        (np.ones(len(classes), dtype=np.int64), (np.asarray(classes), np.asarray(documents))),
        shape=(n_classes, doc_terms.shape[0]),
    )
    membership.sum_duplicates()
    membership.data[:] = 1
    return (membership @ doc_terms).tocsr()


def log_likelihood_ratios(counts: sp.csr_matrix) -> sp.csr_matrix:
    """Signed :math:`G^2` of every nonzero :math:`K_{ct}` (module docstring): positive where over-represented."""
    counts = sp.csr_matrix(counts, dtype=np.float64)
    coo = counts.tocoo()
    k = coo.data
    n_c = np.asarray(counts.sum(axis=1)).ravel()[coo.row]
    k_t = np.asarray(counts.sum(axis=0)).ravel()[coo.col]
    total = float(counts.sum())
    observed = [k, n_c - k, k_t - k, total - n_c - k_t + k]
    rows = [n_c, n_c, total - n_c, total - n_c]
    cols = [k_t, total - k_t, k_t, total - k_t]
    g2 = np.zeros_like(k)
    for o, r, c in zip(observed, rows, cols):
        expected = r * c / total if total else np.zeros_like(k)
        positive = (o > 0) & (expected > 0)  # 0 ln 0 = 0 (o > 0 implies e > 0; the second test guards rounding)
        g2[positive] += o[positive] * np.log(o[positive] / expected[positive])
    g2 = np.maximum(2.0 * g2, 0.0)  # rounding can leave -1e-12 for a term exactly at its expectation
    sign = np.where(k >= n_c * k_t / total if total else True, 1.0, -1.0)
    return sp.csr_matrix((sign * g2, (coo.row, coo.col)), shape=counts.shape)


def class_tfidf(counts: sp.csr_matrix) -> sp.csr_matrix:
    r""":math:`W_{t,c} = K_{ct} \log(1 + A / K_t)` of every nonzero :math:`K_{ct}` (module docstring)."""
    counts = sp.csr_matrix(counts, dtype=np.float64)
    coo = counts.tocoo()
    average = float(counts.sum()) / max(counts.shape[0], 1)
    k_t = np.asarray(counts.sum(axis=0)).ravel()[coo.col]
    return sp.csr_matrix((coo.data * np.log1p(average / k_t), (coo.row, coo.col)), shape=counts.shape)


def top_terms(scores: sp.csr_matrix, terms: np.ndarray, k: int, *, positive: bool = True) -> list[tuple[str, ...]]:
    """Each row's ``k`` highest-scoring terms, highest first (ties by term); with ``positive`` only scores > 0."""
    scores = scores.tocsr()
    out = []
    for row in range(scores.shape[0]):
        start, end = scores.indptr[row], scores.indptr[row + 1]
        values, columns = scores.data[start:end], scores.indices[start:end]
        if positive:
            keep = values > 0
            values, columns = values[keep], columns[keep]
        order = np.lexsort((columns, -values))[:k]  # terms are sorted, so column order is term order
        out.append(tuple(str(t) for t in terms[columns[order]]))
    return out


def rank_labels(
    counts: sp.csr_matrix, terms: np.ndarray, k: int
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """Each class's ``k`` best terms by log-likelihood ratio and by c-TF-IDF (the two label lists)."""
    return top_terms(log_likelihood_ratios(counts), terms, k), top_terms(class_tfidf(counts), terms, k)


def texts_of(titles: Iterable[str | None], abstracts: Iterable[str | None] | None = None) -> list[str]:
    """One text per document: its title and, where given, its abstract (the two joined by a run break)."""
    if abstracts is None:
        return [t if isinstance(t, str) else "" for t in titles]
    return [". ".join(part for part in (t, a) if isinstance(part, str) and part) for t, a in zip(titles, abstracts)]


__all__ = [
    "MAX_NGRAM",
    "candidate_terms",
    "class_term_counts",
    "class_tfidf",
    "keyword_term",
    "log_likelihood_ratios",
    "rank_labels",
    "term_matrix",
    "texts_of",
    "top_terms",
]
