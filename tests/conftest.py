"""Shared fixtures: a tiny citation graph and fresh embedded stores built from it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiny_graph import tiny_batch

from graph import GraphStore, StoreConfig, ingest, open_store

REPO = Path(__file__).resolve().parent.parent


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
    from gnn.text.encoder import EncoderSettings, TextEncoder

    base = EncoderSettings.from_env(device="cpu", cache=False)
    text_encoder = TextEncoder(
        EncoderSettings(
            base.model, base.max_length, 16, "cpu", tmp_path_factory.mktemp("embedding-cache"), precision="fp32"
        )
    )
    yield text_encoder
    text_encoder.close()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A random 2-layer, 32-wide BERT with all-MiniLM-L6-v2's tokenizer, saved as a local model folder: what the
    encoder fine-tuning tests train (a few steps in well under a second)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from gnn.text.encoder import default_model_path

    folder = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = AutoTokenizer.from_pretrained(default_model_path(), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
