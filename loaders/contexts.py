"""Citation contexts as citing sentences, numbered the same way by every loader that has them.

A citation context is a sentence of the citing paper that cites, as a source without the full
text gives it (a JSONL ``citation`` record's ``contexts``, Semantic Scholar's ``contexts``). Each
distinct text of one citing paper becomes

* ``Sentence {id="<citing>#ctx<h>", paper_id=<citing>, text}`` + ``(Paper)-[:HAS_SENTENCE]->(Sentence)``,
* ``(Sentence)-[:MENTIONS {marker}]->(cited)`` for each paper it is a context of.

``h`` is a hash of the text (:func:`context_id`): the same context gets the same id in any file, in
any order and in any run — loading a corpus's files one run at a time adds to the sentences of the
first run instead of overwriting them — and a text that is a context of two citations of one paper
is one sentence with two ``MENTIONS``. The recommender's citation-context profiles and the linker
read citing sentences through ``MENTIONS``, whichever loader made them.

>>> contexts = ContextSentences()
>>> contexts.mention_context("a", "b", "As in (B, 2001).", "f:1"), contexts.mention_context("a", "c", "As in (B, 2001).", "f:2")
('a#ctx83bde48fb738', 'a#ctx83bde48fb738')
>>> len(contexts.tables()[0]), len(contexts.tables()[2])
(1, 2)
"""

from __future__ import annotations

import hashlib

import pandas as pd

from graph.errors import Reject
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import table

CONTEXT_TAG = "ctx"  # context sentence ids: "<citing>#ctx<h>"


def context_id(citing: str, text: str) -> str:
    """``<citing>#ctx<h>``: ``h`` the first 12 hex digits of the BLAKE2b hash of the (stripped) text.

    48 bits: two distinct contexts of one citing paper share an id with probability about n²/2⁴⁹
    (1e-9 for a paper with 750 contexts).
    """
    return f"{citing}#{CONTEXT_TAG}{hashlib.blake2b(text.encode('utf-8'), digest_size=6).hexdigest()}"


def context_texts(value: object, where: str, rejects: list[Reject], *, field: str = "contexts") -> list[str] | None:
    """The distinct texts of a ``contexts`` list (stripped, in order), or None when it is absent or null.

    An entry that is not a non-empty string is a ``Sentence`` reject; a value that is not a list a
    ``MENTIONS`` reject (the citation itself is still loaded, without contexts): both with ``where``.
    """
    if value is None:
        return None
    if not isinstance(value, list):
        rejects.append(
            Reject(
                "MENTIONS",
                where,
                f"`{field}` is {preview(value)}, expected a list of sentence texts; the citation is loaded without them",
            )
        )
        return None
    texts: list[str] = []
    for n, text in enumerate(value, start=1):
        if not isinstance(text, str) or not text.strip():
            rejects.append(Reject("Sentence", where, f"context {n} is {preview(text)}, expected a sentence text"))
        elif text.strip() not in texts:
            texts.append(text.strip())
    return texts


class ContextSentences:
    """The Sentence, HAS_SENTENCE and MENTIONS rows of citation contexts (see the module docstring).

    Loaders that also have full-text sentences add their ``MENTIONS`` here too
    (:meth:`mention`), so that one (sentence, cited paper) pair is one edge whichever record named it.
    """

    def __init__(self) -> None:
        self._ids: dict[str, dict[str, str]] = {}  # citing paper -> context text -> sentence id
        self._sentences: dict[str, list[object]] = {k: [] for k in ("id", "paper_id", "text", ORIGIN_COLUMN)}
        self._has_sentence: dict[str, list[object]] = {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, ORIGIN_COLUMN)}
        self._mentions: dict[tuple[str, str], tuple[str | None, str]] = {}  # (sentence, cited) -> (marker, origin)

    def mention_context(self, citing: str, cited: str, text: str, where: str) -> str:
        """The context sentence of ``citing`` with ``text`` (made on first use) ``MENTIONS`` ``cited``; its id."""
        known = self._ids.setdefault(citing, {})
        sentence_id = known.get(text)
        if sentence_id is None:
            sentence_id = known[text] = context_id(citing, text)
            for column, value in zip(self._sentences.values(), (sentence_id, citing, text, where)):
                column.append(value)
            for column, value in zip(self._has_sentence.values(), (citing, sentence_id, where)):
                column.append(value)
        self.mention(sentence_id, cited, None, where)
        return sentence_id

    def mention(self, sentence_id: str, cited: str, marker: str | None, where: str) -> None:
        """``(sentence)-[:MENTIONS {marker}]->(cited)``; a pair named again keeps its first marker (and origin).

        A pair first named without a marker (by a context) takes the first marker given later.
        """
        known = self._mentions.get((sentence_id, cited))
        if known is None or (known[0] is None and marker is not None):
            self._mentions[(sentence_id, cited)] = (marker, where)

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """The ``Sentence`` (context sentences only), ``HAS_SENTENCE`` and ``MENTIONS`` tables."""
        mentions = table(
            {
                SOURCE_COLUMN: [s for s, _ in self._mentions],
                TARGET_COLUMN: [t for _, t in self._mentions],
                "marker": [marker for marker, _ in self._mentions.values()],
                ORIGIN_COLUMN: [where for _, where in self._mentions.values()],
            }
        )
        return table(self._sentences), table(self._has_sentence), mentions


__all__ = ["CONTEXT_TAG", "ContextSentences", "context_id", "context_texts"]
