"""Citation counts: ``Paper.n_cited`` = number of distinct papers citing it (in-degree over CITES).

The popularity feature citeomatic found useful and the base of the negative-sampling weights of
MP-BERT4CR (``count(i)^{3/4}``); written for every paper, zero where nobody cites it.
"""

from __future__ import annotations

import logging

import pandas as pd

from graph.store import GraphStore

log = logging.getLogger(__name__)


def compute_citation_counts(store: GraphStore) -> int:
    """Write ``n_cited`` on every Paper; returns the number of papers written."""
    ids = pd.DataFrame(store.query("paper_ids"), columns=["id"])
    counts = pd.DataFrame(store.query("in_degree"), columns=["id", "n_cited"])
    frame = ids.merge(counts, on="id", how="left")
    frame["n_cited"] = frame["n_cited"].fillna(0).astype("int64")
    written = store.write_node_properties("Paper", "id", frame)
    log.info("n_cited written for %d papers (%d cited at least once)", written, len(counts))
    return written
