"""The tiny citation graph most tests build on (a plain module, so every test folder can import it;
``conftest`` modules share one name across folders and cannot be imported reliably)."""

from __future__ import annotations

import pandas as pd

from graph import GraphBatch


def tiny_batch() -> GraphBatch:
    """Five papers, two authors, a few citations: a graph small enough to reason about by hand.

    p1 (2001) cites p2, p3; p4 (2004) cites p2, p3, p1; p5 (2005) cites p4. p2 and p3 are co-cited twice.
    """
    papers = pd.DataFrame(
        {
            "id": ["p1", "p2", "p3", "p4", "p5"],
            "title": [
                "Statistical machine translation",
                "Word alignment models",
                "Phrase tables",
                "Neural machine translation",
                "Attention for translation",
            ],
            "abstract": ["We translate.", None, "Tables of phrases.", None, "Attend."],
            "year": [2001, 1993, 1999, 2004, 2005],
            "_origin": [f"papers.jsonl:{i}" for i in range(1, 6)],
        }
    )
    authors = pd.DataFrame({"id": ["a1", "a2"], "name": ["Ada Lovelace", "Alan Turing"]})
    wrote = pd.DataFrame({"source": ["a1", "a2", "a1"], "target": ["p1", "p1", "p4"], "position": [1, 2, 1]})
    cites = pd.DataFrame(
        {
            "source": ["p1", "p1", "p4", "p4", "p4", "p5"],
            "target": ["p2", "p3", "p2", "p3", "p1", "p4"],
            "n_contexts": [1, 2, 1, 1, 3, 1],
        }
    )
    return GraphBatch("tiny", nodes={"Paper": papers, "Author": authors}, rels={"WROTE": wrote, "CITES": cites})
