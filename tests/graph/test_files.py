from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph import GraphStore
from graph.files import IndexFiles, StoreFiles, default_cache_root, format_size


def test_every_artefact_has_its_one_name(tmp_path: Path) -> None:
    files = StoreFiles(tmp_path / "g.db", cache=tmp_path / "cache")
    assert files.index == tmp_path / "g.db.index"
    assert files.citances == tmp_path / "g.db.index.citances.parquet"
    assert files.profiles == tmp_path / "g.db.index.profiles"
    assert files.reranker == tmp_path / "g.db.index.reranker"
    assert files.clusters == tmp_path / "g.db.clusters.json"
    assert files.models == tmp_path / "cache" / "models"
    assert files.linker == tmp_path / "cache" / "models" / "linker.json"
    assert files.cross_encoder == tmp_path / "cache" / "models" / "linker-cross-encoder"
    assert files.hyperbolic_map == tmp_path / "cache" / "models" / "hyperbolic_map"
    assert files.embeddings == tmp_path / "cache" / "embeddings"
    assert files.reranker_examples == tmp_path / "cache" / "reranker_examples"


def test_index_dir_moves_what_sits_beside_the_index(tmp_path: Path) -> None:
    files = StoreFiles(tmp_path / "g.db", index_dir=tmp_path / "elsewhere" / "idx")
    assert files.index == tmp_path / "elsewhere" / "idx"
    assert files.reranker == IndexFiles(files.index).reranker == tmp_path / "elsewhere" / "idx.reranker"
    assert IndexFiles(files.index).citances_stamp == tmp_path / "elsewhere" / "idx.citances.stamp"
    assert files.profiles == tmp_path / "elsewhere" / "idx.profiles"
    assert files.clusters == tmp_path / "g.db.clusters.json"  # the labels stay beside the store


def test_a_server_store_has_nothing_beside_it(tmp_path: Path) -> None:
    files = StoreFiles(None, cache=tmp_path)
    assert (files.index, files.reranker, files.clusters, files.stamp()) == (None, None, None, None)
    assert files.linker == tmp_path / "models" / "linker.json"
    entries = {e.name: e for e in files.describe()}
    assert entries["store"].path is None and not entries["store"].exists


def test_cache_root_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "c"))
    assert default_cache_root() == tmp_path / "c"
    assert StoreFiles().linker == tmp_path / "c" / "models" / "linker.json"


def test_of_an_open_store_and_the_helpers_that_ask_it(store: GraphStore, store_path: Path) -> None:
    files = StoreFiles.of(store)
    assert files.db == store_path
    assert files.index == store_path.with_name(store_path.name + ".index")
    assert files.clusters == store_path.with_name(store_path.name + ".clusters.json")
    assert IndexFiles(store_path.with_name("x.index")).reranker == store_path.with_name("x.index.reranker")
    assert files.stamp() is not None


def test_describe_sizes_and_stamps(store: GraphStore, store_path: Path, tmp_path: Path) -> None:
    store.close()
    files = StoreFiles(store_path, cache=tmp_path / "cache")
    assert files.index is not None and files.reranker is not None and files.clusters is not None
    assert files.citances is not None
    files.index.mkdir()
    (files.index / "manifest.json").write_text(json.dumps({"store_stamp": files.stamp()}), encoding="utf-8")
    (files.index / "vectors.npy").write_bytes(b"\0" * 1000)
    files.citances.write_bytes(b"\0" * 10)
    IndexFiles(files.index).citances_stamp.write_text("stale", encoding="utf-8")
    files.reranker.mkdir()
    (files.reranker / "config.json").write_text(json.dumps({"data_hash": "abc123"}), encoding="utf-8")
    files.clusters.write_text("{}", encoding="utf-8")

    entries = {e.name: e for e in files.describe()}
    assert list(entries) == [
        "store",
        "index",
        "citances",
        "profiles",
        "reranker",
        "clusters",
        "linker",
        "cross_encoder",
        "hyperbolic_map",
        "embeddings",
        "reranker_examples",
    ]
    assert entries["store"].exists and entries["store"].size >= store_path.stat().st_size > 0
    index = entries["index"]
    assert index.exists and index.size > 1000 and index.built_from == files.stamp() and index.current is True
    assert entries["citances"].built_from == "stale" and entries["citances"].current is False
    assert entries["reranker"].built_from == "abc123" and entries["reranker"].current is None
    assert entries["clusters"].size == 2
    assert not entries["linker"].exists and entries["linker"].size == 0
    assert entries["index"].as_dict()["path"] == str(files.index)

    (files.index / "manifest.json").write_text(json.dumps({"store_stamp": "g.db:1:2|g.db.wal:-"}), encoding="utf-8")
    assert {e.name: e for e in files.describe()}["index"].current is False


def test_format_size() -> None:
    assert [format_size(n) for n in (0, 1023, 1024, 5 * 2**20, 3 * 2**30)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "5.0 MiB",
        "3.0 GiB",
    ]
