r"""The lexical side of retrieval: BM25 tokens and an Okapi BM25 index (bm25s).

Okapi BM25 (Robertson & Zaragoza 2009), Lucene's variant as bm25s computes it:

.. math::
    \mathrm{BM25}(q, d) = \sum_{t \in q} \mathrm{idf}(t) \,
        \frac{f_{t,d}\,(k_1 + 1)}{f_{t,d} + k_1 \left(1 - b + b \, |d| / \overline{|d|}\right)},
    \qquad \mathrm{idf}(t) = \ln\!\left(1 + \frac{N - n_t + 0.5}{n_t + 0.5}\right)

with :math:`k_1` and :math:`b` tuned on validation recall (Medić & Šnajder 2020 show that the
defaults cost recall). Tokens: lower-cased words of two or more letters or digits, English stop
words removed, plurals folded by the S-stemmer (Harman 1991, "How effective is suffixing?").

The paper index (:mod:`gnn.retrieval.index`), the citation-context profiles
(:mod:`gnn.retrieval.profiles`) and the reranker's field features each build a
:class:`LexicalIndex` over their own documents with these tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from graph.errors import DataError

_WORD = re.compile(r"(?u)\b\w\w+\b")
STOPWORDS = frozenset(STOPWORDS_EN) | {"cit"}  # "cit" is what is left of the [CIT] mask


def s_stem(word: str) -> str:
    """Harman's (1991) S-stemmer: ``-ies`` → ``-y``, ``-es`` → ``-e``, ``-s`` → ``""`` (with her exceptions).

    >>> [s_stem(w) for w in ["taggers", "parses", "studies", "corpus", "analysis", "ties"]]
    ['tagger', 'parse', 'study', 'corpus', 'analysis', 'tie']
    """
    if len(word) > 4 and word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("us", "ss", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """BM25 tokens of ``text`` (see the module docstring); ``[CIT]`` leaves nothing behind."""
    return [s_stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


class LexicalIndex:
    """bm25s over token lists; :meth:`scores` gives every row's BM25 score for one query."""

    def __init__(self, model: bm25s.BM25) -> None:
        self.model = model
        self.vocab: dict[str, int] = model.vocab_dict

    @classmethod
    def build(cls, tokens: Sequence[list[str]], *, k1: float, b: float) -> LexicalIndex:
        """BM25 over ``tokens`` (one list per row). DataError when no row has a single token to index."""
        if not any(tokens):  # bm25s raises a bare ValueError on an empty vocabulary
            raise DataError(
                "no paper has a word of title, abstract or reference string to index, so there is nothing to "
                "search; ingest papers with titles or abstracts, then run `citegraph compute embeddings --embed papers` and "
                "`citegraph compute index`"
            )
        model = bm25s.BM25(k1=k1, b=b)
        model.index([list(t) for t in tokens], show_progress=False)
        return cls(model)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """``(rows,)`` float32 BM25 scores; tokens outside the vocabulary contribute nothing.

        bm25s keeps each token's precomputed term scores as one sparse row (``data`` over ``indices``
        between ``indptr`` bounds); a query's score is the sum of its tokens' rows, a token counted as often
        as the query holds it. Summed here with one ``bincount`` over the tokens' postings, which is
        bm25s's ``get_scores_from_ids`` (a ``np.add.at`` per token, several times slower) accumulated in
        float64; the Lucene variant has no non-occurrence term to add."""
        num_docs = self.model.scores["num_docs"]
        ids = [self.vocab[t] for t in tokens if t in self.vocab]
        if not ids:
            return np.zeros(num_docs, dtype=np.float32)
        if self.model.nonoccurrence_array is not None:  # BM25L / BM25+: bm25s adds a per-token constant
            return np.asarray(self.model.get_scores_from_ids(ids), dtype=np.float32)
        indptr = self.model.scores["indptr"]
        spans = [np.arange(indptr[i], indptr[i + 1]) for i in ids]
        postings = np.concatenate(spans)
        summed = np.bincount(
            self.model.scores["indices"][postings], weights=self.model.scores["data"][postings], minlength=num_docs
        )
        return summed.astype(np.float32)

    def save(self, folder: Path) -> None:
        self.model.save(str(folder))

    @classmethod
    def load(cls, folder: Path) -> LexicalIndex:
        return cls(bm25s.BM25.load(str(folder)))


__all__ = [
    "STOPWORDS",
    "LexicalIndex",
    "s_stem",
    "tokenize",
]
