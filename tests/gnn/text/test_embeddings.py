"""compute embeddings: which text each node gets, write-back, incremental re-runs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gnn.text.embeddings import EmbeddingSettings, compute_embeddings, paper_texts
from gnn.text.encoder import TextEncoder
from graph import GraphBatch, GraphStore, ingest


def _add_full_text(store: GraphStore) -> None:
    """p2 (no abstract) gets two abstract sentences and a body sentence; p6 has no text at all."""
    sentences = pd.DataFrame(
        {
            "id": ["p2#1", "p2#2", "p2#3"],
            "paper_id": ["p2", "p2", "p2"],
            "sid": [1, 2, 3],
            "section": ["Abstract", "Abstract", "Introduction"],
            "text": ["We align words.", "The models are IBM 1-5.", "Translation needs alignment."],
        }
    )
    has = pd.DataFrame({"source": ["p2"] * 3, "target": sentences["id"]})
    papers = pd.DataFrame({"id": ["p6"], "year": [2010]})
    ingest(store, GraphBatch("text", nodes={"Paper": papers, "Sentence": sentences}, rels={"HAS_SENTENCE": has}))


def _vectors(store: GraphStore, label: str) -> dict[str, np.ndarray | None]:
    """Every node's vector, None where it has none."""
    vectors: dict[str, np.ndarray | None] = {
        row["key"]: None for row in store.query("every_key", identifiers={"LABEL": label, "KEY": "id"})
    }
    for row in store.query("node_embeddings", identifiers={"LABEL": label}):
        vectors[row["id"]] = np.asarray(row["embedding"])
    return vectors


def test_paper_texts_use_title_abstract_and_rebuilt_abstracts(store: GraphStore) -> None:
    _add_full_text(store)
    texts = paper_texts(store).set_index("id")["text"]
    assert texts["p1"] == "Statistical machine translation. We translate."
    assert texts["p4"] == "Neural machine translation."  # title alone
    assert texts["p2"] == "Word alignment models. We align words. The models are IBM 1-5."
    assert texts["p6"] == ""


def test_write_back_and_incremental_rerun(store: GraphStore, encoder: TextEncoder) -> None:
    _add_full_text(store)
    first = {r.label: r for r in compute_embeddings(store, encoder)}
    assert (first["Paper"].nodes, first["Paper"].with_text, first["Paper"].written) == (6, 5, 5)
    assert (first["Sentence"].written, first["Sentence"].unchanged) == (3, 0)
    papers = _vectors(store, "Paper")
    assert papers["p6"] is None
    expected = encoder.encode(["Statistical machine translation. We translate."])[0]
    np.testing.assert_allclose(papers["p1"], expected, atol=1e-6)

    again = {r.label: r for r in compute_embeddings(store, encoder)}
    assert (again["Paper"].written, again["Paper"].unchanged) == (0, 5)
    assert again["Sentence"].written == 0
    assert _vectors(store, "Paper").keys() == papers.keys()

    # A changed title re-encodes that paper only; its vector follows the new text.
    batch = GraphBatch("edit", nodes={"Paper": pd.DataFrame({"id": ["p4"], "title": ["Neural parsing"]})})
    ingest(store, batch)
    third = compute_embeddings(store, encoder, EmbeddingSettings(targets=("papers",)))[0]
    assert (third.written, third.unchanged) == (1, 4)
    np.testing.assert_allclose(_vectors(store, "Paper")["p4"], encoder.encode(["Neural parsing."])[0], atol=1e-6)
    forced = compute_embeddings(store, encoder, EmbeddingSettings(targets=("papers",), force=True))[0]
    assert forced.written == 5 and forced.from_cache == 5


def test_limit_embeds_most_cited_first_and_a_rerun_continues(store: GraphStore, encoder: TextEncoder) -> None:
    # In the tiny graph p2, p3 and p1 are cited twice, twice and once; p4 once; p5 never.
    settings = EmbeddingSettings(targets=("papers",), limit=2)
    first = compute_embeddings(store, encoder, settings)[0]
    assert (first.written, first.deferred) == (2, 3)
    embedded = {key for key, vec in _vectors(store, "Paper").items() if vec is not None}
    assert embedded == {"p2", "p3"}
    second = compute_embeddings(store, encoder, settings)[0]
    assert (second.written, second.unchanged, second.deferred) == (2, 2, 1)
    assert {k for k, v in _vectors(store, "Paper").items() if v is not None} == {"p1", "p2", "p3", "p4"}


def test_limit_puts_papers_with_given_categories_first(store: GraphStore, encoder: TextEncoder) -> None:
    """The taxonomy step calibrates on papers with given categories: a limited run embeds them first."""
    category = pd.DataFrame({"code": ["cs.CL"], "name": ["Computation and Language"]})
    edge = pd.DataFrame({"source": ["p5"], "target": ["cs.CL"], "inferred": [False]})
    ingest(store, GraphBatch("cat", nodes={"ArxivCategory": category}, rels={"IN_CATEGORY": edge}))
    compute_embeddings(store, encoder, EmbeddingSettings(targets=("papers",), limit=1))
    assert {k for k, v in _vectors(store, "Paper").items() if v is not None} == {"p5"}
