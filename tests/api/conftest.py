"""Fixtures of the API tests: the tiny graph plus taxonomy, full text and computed co-citation."""

from __future__ import annotations

import asyncio
from typing import Any

import pandas as pd
import pytest

from api.schema import Context, schema
from api.services import GraphService
from graph import GraphBatch, GraphStore, ingest


def rich_batch() -> GraphBatch:
    """What the tiny graph lacks for the API: categories, an ACM tree, p1's full text with a citance.

    ACM 1998: I (root) > I.2 > I.2.7; cs.CL maps to I.2.7. p1 is in cs.CL (given), p4 in cs.CL
    (inferred, 0.8) and cs.LG. p1 has three sentences; sentence 1 cites p2 and p3.
    """
    categories = pd.DataFrame(
        {"code": ["cs.CL", "cs.LG", "cs"], "name": ["Computation and Language", "Machine Learning", "Computer Science"]}
    )
    acm = pd.DataFrame(
        {
            "id": ["1998:I", "1998:I.2", "1998:I.2.7"],
            "code": ["I", "I.2", "I.2.7"],
            "name": ["Computing Methodologies", "Artificial Intelligence", "Natural Language Processing"],
            "scheme": ["1998"] * 3,
            "level": [1, 2, 3],
        }
    )
    sentences = pd.DataFrame(
        {
            "id": ["p1#0", "p1#1", "p1#2"],
            "paper_id": ["p1"] * 3,
            "sid": [0, 1, 2],
            "section": ["abstract", "introduction", "introduction"],
            "text": ["We translate.", "Alignment (Brown, 1993) and phrases (Koehn, 1999) help.", "So do we."],
        }
    )
    rels = {
        "IN_CATEGORY": pd.DataFrame(
            {
                "source": ["p1", "p4", "p4"],
                "target": ["cs.CL", "cs.CL", "cs.LG"],
                "score": [1.0, 0.8, 0.5],
                "inferred": [False, True, True],
            }
        ),
        "MAPS_TO": pd.DataFrame({"source": ["cs.CL"], "target": ["1998:I.2.7"], "score": [1.0], "inferred": [False]}),
        "BROADER": pd.DataFrame({"source": ["1998:I.2", "1998:I.2.7"], "target": ["1998:I", "1998:I.2"]}),
        "HAS_SENTENCE": pd.DataFrame({"source": ["p1"] * 3, "target": ["p1#0", "p1#1", "p1#2"]}),
        "MENTIONS": pd.DataFrame(
            {"source": ["p1#1", "p1#1"], "target": ["p2", "p3"], "marker": ["(Brown, 1993)", None]}
        ),
    }
    return GraphBatch("rich", nodes={"ArxivCategory": categories, "AcmClass": acm, "Sentence": sentences}, rels=rels)


@pytest.fixture
def rich_store(store: GraphStore) -> GraphStore:
    """The tiny graph plus :func:`rich_batch`, with co-citation computed (CO_CITED, clusters, labels)."""
    from gnn.cocitation.compute import compute_cocitation

    ingest(store, rich_batch())
    compute_cocitation(store)
    return store


@pytest.fixture
def service(rich_store: GraphStore) -> GraphService:
    return GraphService(rich_store)


def run(
    service: GraphService,
    query: str,
    variables: dict[str, Any] | None = None,
    max_results: int = 50,
    timeout_s: float = 10.0,
) -> Any:
    """``schema.execute`` with a fresh per-request context, as the HTTP app does."""
    return asyncio.run(
        schema.execute(query, variable_values=variables, context_value=Context.create(service, max_results, timeout_s))
    )


P2_SENTENCES = [
    "We present statistical word alignment models.",
    "Model 1 aligns words with lexical translation probabilities only.",
    "Alignment quality is measured by the alignment error rate.",
    "Training uses the expectation maximisation algorithm.",
    "The results hold for French and English.",
    "We thank the reviewers.",
]


def linked_batch() -> GraphBatch:
    """p2's full text and three stored links from p1's citance p1#1 into it."""
    ids = [f"p2#{i}" for i in range(len(P2_SENTENCES))]
    sentences = pd.DataFrame(
        {
            "id": ids,
            "paper_id": ["p2"] * len(ids),
            "sid": range(len(ids)),
            "section": ["body"] * len(ids),
            "text": P2_SENTENCES,
        }
    )
    links = pd.DataFrame(
        {
            "source": ["p1#1", "p1#1", "p1#1"],
            "target": ["p2#1", "p2#1", "p2#3"],
            "score": [None, 0.7, 0.4],
            "method": ["gold", "silver", "model"],
            "annotator": ["Ann", None, None],
        }
    )
    rels = {"HAS_SENTENCE": pd.DataFrame({"source": ["p2"] * len(ids), "target": ids}), "LINKS_TO": links}
    return GraphBatch("linked", nodes={"Sentence": sentences}, rels=rels)
