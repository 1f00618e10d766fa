from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from graph import GraphStore
from graph.files import (
    IndexFiles,
    ModelFile,
    StoreFiles,
    default_cache_root,
    format_size,
    publish_folder,
    restore_folder,
    staging_folder,
    write_atomic,
)


def test_every_artefact_has_its_one_name(tmp_path: Path) -> None:
    files = StoreFiles(tmp_path / "g.db", cache=tmp_path / "cache")
    assert files.index == tmp_path / "g.db.index"
    assert files.citances == tmp_path / "g.db.index.citances.parquet"
    assert files.profiles == tmp_path / "g.db.index.profiles"
    assert files.reranker == tmp_path / "g.db.index.reranker"
    assert files.clusters == tmp_path / "g.db.clusters.json"
    assert files.models == tmp_path / "cache" / "models"
    assert ModelFile("linker", "linker.json").under(files) == tmp_path / "cache" / "models" / "linker.json"
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
    assert files.models == tmp_path / "models"
    entries = {e.name: e for e in files.describe()}
    assert entries["store"].path is None and not entries["store"].exists


def test_cache_root_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "c"))
    assert default_cache_root() == tmp_path / "c"
    assert StoreFiles().models == tmp_path / "c" / "models"


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

    entries = {e.name: e for e in files.describe([ModelFile("linker", "linker.json"), ModelFile("taxonomy", "t")])}
    assert list(entries) == [
        "store",
        "index",
        "citances",
        "profiles",
        "reranker",
        "clusters",
        "coupling_clusters",
        "cocitation_basis",
        "served_encoder",
        "linker",
        "taxonomy",
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


# writing artefacts so that a kill never leaves a torn one -------------------------------------------
def _folder(path: Path, **files: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def _contents(path: Path) -> dict[str, str]:
    return {f.name: f.read_text(encoding="utf-8") for f in sorted(path.iterdir())}


def test_publish_folder_replaces_a_folder_whole(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "idx", **{"manifest.json": "old", "stale.bin": "x"})
    staging = staging_folder(folder)
    assert staging == tmp_path / "idx.tmp" and list(staging.iterdir()) == []
    _folder(staging, **{"manifest.json": "new", "vectors.npy": "v"})
    publish_folder(staging, folder)
    assert _contents(folder) == {"manifest.json": "new", "vectors.npy": "v"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_a_kill_between_the_renames_leaves_the_old_folder_to_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _folder(tmp_path / "idx", **{"manifest.json": "old"})
    staging = _folder(staging_folder(folder), **{"manifest.json": "new"})
    real = Path.rename
    calls = []

    def killed_on_the_second(self: Path, target: Path) -> Path:
        calls.append(self.name)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process dies here
        return real(self, target)

    monkeypatch.setattr(Path, "rename", killed_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        publish_folder(staging, folder)
    monkeypatch.setattr(Path, "rename", real)
    assert not folder.exists() and _contents(tmp_path / "idx.old") == {"manifest.json": "old"}
    assert restore_folder(folder) and _contents(folder) == {"manifest.json": "old"}
    assert not restore_folder(folder)  # nothing left to put back


def test_a_kill_while_the_old_folder_is_removed_never_leaves_a_partial_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old folder is renamed away before it is deleted: a kill half-way through the deletion (one
    file gone) hits a folder no reader looks at."""
    folder = _folder(tmp_path / "idx", **{"manifest.json": "old", "vectors.npy": "old"})
    staging = _folder(staging_folder(folder), **{"manifest.json": "new", "vectors.npy": "new"})
    real = shutil.rmtree

    def killed_half_way(path: str | Path, ignore_errors: bool = False) -> None:
        path = Path(path)
        if path.is_dir() and (path / "vectors.npy").exists():
            (path / "vectors.npy").unlink()
            raise KeyboardInterrupt
        real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(shutil, "rmtree", killed_half_way)
    with pytest.raises(KeyboardInterrupt):
        publish_folder(staging, folder)
    assert _contents(folder) == {"manifest.json": "new", "vectors.npy": "new"}


def test_write_atomic_leaves_the_old_file_when_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "latest"
    write_atomic(path, "a.pt\n")
    assert path.read_text(encoding="utf-8") == "a.pt\n"

    def killed(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, b"b.pt\n")
    assert path.read_text(encoding="utf-8") == "a.pt\n"
