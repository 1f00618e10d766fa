"""Shared fixtures: a tiny citation graph and fresh embedded stores built from it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store

REPO = Path(__file__).resolve().parent.parent


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


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "graph.db"


@pytest.fixture
def empty_store(store_path: Path) -> Iterator[GraphStore]:
    store = open_store(StoreConfig(db_path=store_path))
    yield store
    store.close()


@pytest.fixture
def store(empty_store: GraphStore) -> GraphStore:
    """A fresh writable store holding :func:`tiny_batch`."""
    ingest(empty_store, tiny_batch())
    return empty_store


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared corpora ($CITEGRAPH_DATA, default ../shared/data); tests needing them skip without."""
    path = Path(os.environ.get("CITEGRAPH_DATA", REPO.parent / "shared" / "data"))
    if not path.is_dir():
        pytest.skip(f"shared data not found at {path}; set CITEGRAPH_DATA")
    return path


@pytest.fixture(scope="session")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The project's text encoder (all-MiniLM-L6-v2, offline) with a cache private to this test session."""
    from gnn.encoder import EncoderSettings, TextEncoder

    base = EncoderSettings.from_env(device="cpu", cache=False)
    text_encoder = TextEncoder(
        EncoderSettings(base.model, base.max_length, 16, "cpu", tmp_path_factory.mktemp("embedding-cache"))
    )
    yield text_encoder
    text_encoder.close()
