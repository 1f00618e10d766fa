"""Manuscript mode: a query from a whole draft, and candidates with sampled body sentences.

MP-BERT4CR's dynamic context sampling (Zhang & Ma 2022), on both sides of the match:

* the **query**: given a draft as sentences and the index of the citing sentence,
  :func:`manuscript_context` builds the fundamental context (the sentence before, the citing
  sentence, the one after) and appends ``supplemental`` sentences sampled, with a seed, from the
  draft before that point;
* the **candidates**: a paper with full text is represented by its title and abstract plus a few
  sampled body sentences (:func:`body_sampled_text`). :func:`body_sampled_vectors` re-encodes the
  index's full-text papers so, wrapped in a :class:`~gnn.retrieval.index.DenseIndex`, they serve
  as the ``dense_index`` of :meth:`gnn.retrieval.prefetch.Prefetcher.dense` for manuscript-mode
  queries.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext

import numpy as np
import pandas as pd

from gnn.retrieval.index import RetrievalIndex
from gnn.text.embeddings import ABSTRACT_SECTION, clean_texts, paper_texts
from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError
from graph.store import GraphStore


def manuscript_context(sentences: Sequence[str], position: int, *, supplemental: int = 2, seed: int = 0) -> str:
    """MP-BERT4CR's query from a draft: fundamental context + ``supplemental`` sampled earlier sentences.

    The fundamental context is sentences ``position - 1 .. position + 1`` (those that exist); the
    supplemental sentences are drawn without replacement, with ``random.Random(seed)``, from
    ``sentences[: position - 1]`` and appended in reading order after it.

    >>> manuscript_context(["a.", "b.", "c.", "d.", "e."], 3, supplemental=1, seed=0)
    'c. d. e. b.'
    """
    if not 0 <= position < len(sentences):
        raise ConfigError(f"citation position {position} is outside the draft's {len(sentences)} sentences")
    fundamental = list(sentences[max(0, position - 1) : position + 2])
    earlier = list(range(max(0, position - 1)))
    chosen = sorted(random.Random(seed).sample(earlier, min(supplemental, len(earlier))))
    return " ".join([*fundamental, *(sentences[i] for i in chosen)]).strip()


def body_sampled_text(text: str, body: Sequence[str], *, sentences: int = 2, seed: int = 0, key: str = "") -> str:
    """MP-BERT4CR's candidate side (Zhang & Ma 2022): a full-text paper is its own text (title and
    abstract) followed by ``sentences`` body sentences drawn without replacement and kept in reading
    order. The generator is seeded with ``(seed, key)`` — ``key`` is the paper id — so a paper's
    sample does not depend on which other papers were sampled, or in what order.

    >>> body_sampled_text("T. A.", ["b0.", "b1.", "b2.", "b3."], sentences=2, seed=0, key="p1")
    'T. A. b0. b1.'
    """
    chosen = sorted(random.Random(f"{seed}:{key}").sample(range(len(body)), min(sentences, len(body))))
    return " ".join([text, *(body[i] for i in chosen)]).strip()


def body_sampled_texts(
    store: GraphStore, index: RetrievalIndex, *, sentences: int = 2, seed: int = 0
) -> tuple[list[int], list[str]]:
    """MP-BERT4CR's candidate side for the index's full-text papers: ``(rows, texts)``, each text the
    paper's title and abstract plus ``sentences`` sampled body sentences
    (:func:`body_sampled_text`, seeded per paper). Papers without body sentences or without a vector
    are left out."""
    body = pd.DataFrame(
        store.query("body_sentences", {"section": ABSTRACT_SECTION}), columns=["paper_id", "sid", "text"]
    )
    body = body[body["paper_id"].isin(index.row_of)]
    body = body.assign(text=clean_texts(body["text"]))
    body = body[body["text"] != ""]
    own = paper_texts(store).set_index("id")["text"]
    rows, texts = [], []
    for paper_id, group in body.groupby("paper_id", sort=True):
        row = index.row_of[str(paper_id)]
        if not index.embedding_hashes[row]:
            continue
        rows.append(row)
        texts.append(
            body_sampled_text(
                str(own.get(paper_id, "")), group["text"].tolist(), sentences=sentences, seed=seed, key=str(paper_id)
            )
        )
    return rows, texts


def body_sampled_vectors(
    store: GraphStore,
    index: RetrievalIndex,
    encoder: TextEncoder,
    *,
    sentences: int = 2,
    seed: int = 0,
    store_lock: AbstractContextManager[object] | None = None,
) -> tuple[np.ndarray, int]:
    """The index's vectors with every full-text paper's row re-encoded from :func:`body_sampled_texts`
    (other rows keep theirs): ``(vectors, rows re-encoded)``. ``store_lock`` is held for the store
    read only, not while encoding. The encoder's disk cache makes a second call cheap."""
    with store_lock or nullcontext():
        rows, texts = body_sampled_texts(store, index, sentences=sentences, seed=seed)
    vectors = index.vectors.copy()
    if rows:
        vectors[rows] = encoder.encode(texts)
    return vectors, len(rows)


__all__ = [
    "body_sampled_text",
    "body_sampled_texts",
    "body_sampled_vectors",
    "manuscript_context",
]
