"""A co-citation graph small enough to check every number by hand (a helper module, not a conftest:
a second rootless ``conftest`` would shadow ``tests/conftest.py`` for ``from conftest import ...``).

Citing papers x (2001), y (2003), z (2005); cited papers a, b, c, d and y (z cites y)::

    x -> a, b, c        sentences  x#1 -> a, b    x#2 -> c
    y -> a, b                      y#1 -> a, b
    z -> b, d, y                   z#1 -> b, d    z#2 -> y

Citing papers per cited paper: s_a = 2, s_b = 3, s_c = s_d = s_y = 1; N = 3 citing papers.
Co-citation counts: (a,b) = 2 [x, y]; (a,c) = (b,c) = 1 [x]; (b,d) = (b,y) = (d,y) = 1 [z].
Sentence-level: (a,b) = 2 [x#1, y#1]; (b,d) = 1 [z#1].
Bibliographic coupling: (x,y) = 2 [a, b]; (x,z) = (y,z) = 1 [b].
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from gnn.cocitation.counts import PairCounts
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store

CITES = [("x", "a"), ("x", "b"), ("x", "c"), ("y", "a"), ("y", "b"), ("z", "b"), ("z", "d"), ("z", "y")]
MENTIONS = [
    ("x#1", "a"),
    ("x#1", "b"),
    ("x#2", "c"),
    ("y#1", "a"),
    ("y#1", "b"),
    ("z#1", "b"),
    ("z#1", "d"),
    ("z#2", "y"),
]
# The counts of the docstring, pair (source < target) -> count.
COCITED = {("a", "b"): 2, ("a", "c"): 1, ("b", "c"): 1, ("b", "d"): 1, ("b", "y"): 1, ("d", "y"): 1}
SENTENCE = {("a", "b"): 2, ("b", "d"): 1}
CITED_BY = {"a": 2, "b": 3, "c": 1, "d": 1, "y": 1}


def pairs_of(counts: PairCounts) -> dict[tuple[str, str], int]:
    """A :class:`~gnn.cocitation.counts.PairCounts` as ``{(id, id): count}``."""
    return {(counts.ids[i], counts.ids[j]): int(c) for i, j, c in zip(counts.i, counts.j, counts.count)}


def citations() -> pd.DataFrame:
    """:data:`CITES` as ``citing``, ``cited``."""
    return pd.DataFrame(CITES, columns=["citing", "cited"])


def cocite_batch() -> GraphBatch:
    papers = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d", "x", "y", "z"],
            "title": [
                "Statistical machine translation",
                "Word alignment for machine translation",
                "Phrase tables for translation",
                "Dependency parsing with graphs",
                "Translation models compared",
                "Parsing and translation",
                "Graph parsing revisited",
            ],
            "year": [1990, 1992, 1995, 1998, 2001, 2003, 2005],
        }
    )
    sentences = pd.DataFrame(
        {
            "id": ["x#1", "x#2", "y#1", "z#1", "z#2"],
            "paper_id": ["x", "x", "y", "z", "z"],
            "sid": [1, 2, 1, 1, 2],
            "text": ["We follow (A) and (B).", "Tables (C).", "As in (A; B).", "Unlike (B, D).", "See (Y)."],
        }
    )
    has_sentence = pd.DataFrame({"source": sentences["paper_id"], "target": sentences["id"]})
    cites = pd.DataFrame(CITES, columns=["source", "target"])
    mentions = pd.DataFrame(MENTIONS, columns=["source", "target"])
    return GraphBatch(
        "cocite",
        nodes={"Paper": papers, "Sentence": sentences},
        rels={"CITES": cites, "HAS_SENTENCE": has_sentence, "MENTIONS": mentions},
    )


@contextmanager
def open_cocite_store(folder: Path) -> Iterator[GraphStore]:
    """A fresh writable store in ``folder`` holding :func:`cocite_batch`."""
    store = open_store(StoreConfig(db_path=folder / "cocite.db"))
    try:
        ingest(store, cocite_batch())
        yield store
    finally:
        store.close()
