"""``GraphStore.completeness``: how many nodes with text carry each computed property, counted in the store.

The store counts with Cypher; the tests count the same things independently, with the embedding
step's own text rule (:func:`gnn.text.embeddings.paper_texts`) over the rows and a plain Cypher read
of which nodes hold a vector, on a store where only some papers are embedded (a limited run).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gnn.text.embeddings import EmbeddingSettings, compute_embeddings, paper_texts, sentence_texts
from gnn.text.encoder import TextEncoder
from graph import Completeness, GraphBatch, GraphStore, ingest

# Which papers have a text to embed, and why; every other one has none.
WITH_TEXT = {
    "t1": "a title",
    "t2": "an abstract (the title is blank)",
    "t3": "a reference string only",
    "t4": "an abstract rebuilt from three Abstract sentences, one of them empty (counted once)",
    "t9": "a title, and sentences outside the abstract",
}


def edge_case_batch() -> GraphBatch:
    """Papers t1..t9 with every kind of text and of missing text; sentences of t4, t5, t7, t8 and t9.

    No text: t5 (a blank abstract: not rebuilt, as the embedding step rebuilds only a missing one),
    t6 (a bare id), t7 (a blank title, a blank Abstract sentence), t8 (an Abstract sentence without text).
    """
    papers = pd.DataFrame(
        {
            "id": [f"t{i}" for i in range(1, 10)],
            "title": ["Statistical machine translation", "  ", None, None, None, None, "\t\n", None, "Phrase tables"],
            "abstract": [None, "Word alignment models.", None, None, "   ", None, None, None, None],
            "reference": [None, None, "Brown et al. 1993. The mathematics of translation.", *[None] * 6],
            "year": [2001, 1993, 1993, 2004, 2005, 2006, 2007, 2008, 1999],
        }
    )
    sentences = pd.DataFrame(
        {
            "id": ["t4#0", "t4#1", "t4#2", "t5#0", "t7#0", "t8#0", "t9#0", "t9#1"],
            "paper_id": ["t4", "t4", "t4", "t5", "t7", "t8", "t9", "t9"],
            "sid": [0, 1, 2, 0, 0, 0, 0, 1],
            "section": [*["Abstract"] * 6, "Introduction", "Introduction"],
            "text": [
                "We rebuild abstracts.",
                "",
                "From sentences.",
                "Not used for t5.",
                "  ",
                None,
                "Tables.",
                "We build.",
            ],
        }
    )
    has = pd.DataFrame({"source": sentences["paper_id"], "target": sentences["id"]})
    return GraphBatch("edge cases", nodes={"Paper": papers, "Sentence": sentences}, rels={"HAS_SENTENCE": has})


@pytest.fixture
def partial(empty_store: GraphStore, encoder: TextEncoder) -> GraphStore:
    """The edge-case graph after a limited build: 2 papers and 3 sentences embedded, taxonomy and Poincaré
    vectors on a few papers, and vectors written onto t6 (no text), which must count nowhere."""
    store = empty_store
    ingest(store, edge_case_batch())
    compute_embeddings(store, encoder, EmbeddingSettings(limit=2))
    compute_embeddings(store, encoder, EmbeddingSettings(targets=("sentences",), limit=1))  # one more sentence
    sizes = store.schema.sizes
    rng = np.random.default_rng(0)
    store.write_node_properties(
        "Paper",
        "id",
        pd.DataFrame(
            {
                "id": ["t1", "t3", "t6"],
                "taxonomy": list(rng.normal(size=(3, sizes.taxonomy)).astype(np.float32)),
                "poincare": list(rng.uniform(-0.1, 0.1, size=(3, sizes.poincare))),
            }
        ),
    )
    store.write_node_properties(
        "Paper", "id", pd.DataFrame({"id": ["t6"], "embedding": [np.ones(sizes.embedding, np.float32) / 20]})
    )
    return store


def _ids_with(store: GraphStore, label: str, prop: str) -> set[str]:
    """Ids of the nodes of ``label`` that hold ``prop``, from every node read back whole (no count statement)."""
    nodes = pd.concat(store.iter_nodes(label, batch_size=100))
    return set(nodes.loc[nodes[prop].notna(), "id"])


def test_counts_match_the_embedding_rule_and_a_direct_read(partial: GraphStore) -> None:
    papers = paper_texts(partial)
    with_text = set(papers.loc[papers["text"] != "", "id"])
    assert with_text == set(WITH_TEXT)  # the rule itself, as the embedding step applies it
    sentences = sentence_texts(partial)
    sentences_with_text = set(sentences.loc[sentences["text"] != "", "id"])
    assert sentences_with_text == {"t4#0", "t4#2", "t5#0", "t9#0", "t9#1"}

    expected = [
        Completeness(f"Paper.{prop}", len(with_text & _ids_with(partial, "Paper", prop)), len(with_text))
        for prop in ("embedding", "taxonomy", "poincare")
    ]
    embedded_sentences = sentences_with_text & _ids_with(partial, "Sentence", "embedding")
    expected.append(Completeness("Sentence.embedding", len(embedded_sentences), len(sentences_with_text)))
    assert partial.completeness() == expected
    # and the numbers themselves, so that a rule broken the same way on both sides still fails
    assert [(c.property, c.have, c.of) for c in expected] == [
        ("Paper.embedding", 2, 5),  # limit=2; t6's vector is not counted: t6 has no text
        ("Paper.taxonomy", 2, 5),  # t1, t3 (t6 again not counted)
        ("Paper.poincare", 2, 5),
        ("Sentence.embedding", 3, 5),  # limit=2, then one more
    ]


def test_fraction_and_an_empty_store(empty_store: GraphStore) -> None:
    rows = empty_store.completeness()
    assert [(c.property, c.have, c.of, c.fraction) for c in rows] == [
        ("Paper.embedding", 0, 0, 1.0),  # nothing to compute is complete
        ("Paper.taxonomy", 0, 0, 1.0),
        ("Paper.poincare", 0, 0, 1.0),
        ("Sentence.embedding", 0, 0, 1.0),
    ]
    row = Completeness("Paper.embedding", 10_000, 103_616)
    assert row.fraction == pytest.approx(0.0965102)
    assert row.as_dict() == {"have": 10_000, "of": 103_616, "fraction": row.fraction}


def test_a_paper_without_text_is_not_counted(store: GraphStore) -> None:
    """The tiny graph's five papers all have titles; a bare id and a paper with only blank text add nothing."""
    before = {c.property: c.of for c in store.completeness()}
    papers = pd.DataFrame({"id": ["bare", "blank"], "title": [None, " "], "abstract": [None, "\n"]})
    ingest(store, GraphBatch("no text", nodes={"Paper": papers}, rels={}))
    assert store.count_nodes("Paper") == 7
    assert (
        {c.property: c.of for c in store.completeness()}
        == before
        == {
            "Paper.embedding": 5,
            "Paper.taxonomy": 5,
            "Paper.poincare": 5,
            "Sentence.embedding": 0,
        }
    )
