"""A store opened read-only gets no file written beside it: the index, the citances and the profiles
are read as they are, reported when stale or missing, and rebuilt only by `citegraph compute index`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gnn.recommend.service import RecommendationService, RecommendRequest, ServiceSettings, open_retrieval
from gnn.retrieval.index import IndexUnavailableError, index_status
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from tests.gnn.recommend.test_recommend import _citances

REQUEST = RecommendRequest("Attention builds on neural translation [CIT].", k=3)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder``: size and modification time."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def _new_paper() -> GraphBatch:
    paper = pd.DataFrame({"id": ["p6"], "title": ["Transformers for translation"], "year": [2017]})
    return GraphBatch("later", nodes={"Paper": paper}, rels={})


@pytest.fixture
def indexed(store: GraphStore, store_path: Path, encoder: TextEncoder) -> Path:
    """The tiny graph with citances and embeddings, its index and profiles built beside it, then a paper
    added so that the index is older than the store; closed."""
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    open_retrieval(store, ServiceSettings(), encoder, build=True)
    ingest(store, _new_paper())
    store.close()
    return store_path


def test_a_read_only_open_of_a_stale_index_serves_it_and_writes_nothing(indexed: Path, encoder: TextEncoder) -> None:
    folder = indexed.parent
    assert any(name.endswith(".index.profiles") for name in _snapshot(folder))
    before = _snapshot(folder)
    with open_store(StoreConfig(db_path=indexed, read_only=True)) as reader:
        assert index_status(reader).state == "stale"
        service = RecommendationService.open(reader, ServiceSettings(), encoder=encoder)  # the session's encoder
        items = service.recommend(REQUEST).items
        assert items and "p6" not in {item.paper_id for item in items}  # served as it was built
        assert index_status(reader).state == "stale"
    assert _snapshot(folder) == before


def test_a_read_only_open_without_an_index_is_unavailable_and_names_the_command(
    indexed: Path, encoder: TextEncoder, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere.index"
    with open_store(StoreConfig(db_path=indexed, read_only=True)) as reader:
        before = _snapshot(tmp_path)
        status = index_status(reader, path=elsewhere)
        assert status.as_dict() == {"state": "missing", "path": str(elsewhere), "command": "citegraph compute index"}
        with pytest.raises(IndexUnavailableError, match="citegraph compute index --index-dir"):
            RecommendationService.open(reader, ServiceSettings(), encoder=encoder, index_dir=elsewhere)
        assert _snapshot(tmp_path) == before


def test_compute_index_brings_it_up_to_date(indexed: Path, encoder: TextEncoder) -> None:
    with open_store(StoreConfig(db_path=indexed, read_only=True)) as reader:
        index, _, _ = open_retrieval(reader, ServiceSettings(), encoder, build=True)
        assert "p6" in index.row_of
        assert index_status(reader).state == "current"
