"""The source registry the CLI reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import loaders
from loaders import SOURCES, Source, anthology, available, taxonomy


def test_sources_in_ingest_order() -> None:
    # The Anthology comes after the SciSumm corpora so its clean titles are the ones kept.
    bundled = ["taxonomy", "scisumm2018", "scisummnet", "anthology", "unarxive", "cora", "jsonl"]
    assert [name for name, source in SOURCES.items() if source.bundled] == bundled
    assert list(SOURCES)[: len(bundled)] == bundled  # importers of users' exports come after the bundled corpora
    importers = {"openalex", "crossref", "opencitations", "semanticscholar", "wos", "scopus"}
    assert {name for name, s in SOURCES.items() if not s.bundled} == importers
    assert SOURCES["anthology"].path == "anthology/papers.jsonl.gz"
    assert SOURCES["anthology"].load is anthology.load
    assert SOURCES["taxonomy"].path == "taxonomy" and SOURCES["taxonomy"].load is taxonomy.load
    for name, source in SOURCES.items():
        assert source.name == name and source.description and "\n" not in source.description


def test_source_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        SOURCES["anthology"].path = "elsewhere"  # type: ignore[misc]


def test_available_lists_what_is_on_disk(tmp_path: Path) -> None:
    assert available(tmp_path) == []
    (tmp_path / "anthology").mkdir()
    (tmp_path / "anthology" / "papers.jsonl.gz").write_bytes(b"")
    assert [s.name for s in available(tmp_path)] == ["anthology"]
    (tmp_path / "taxonomy").mkdir()
    assert [s.name for s in available(tmp_path)] == ["taxonomy", "anthology"]


def test_public_surface() -> None:
    assert set(loaders.__all__) >= {"SOURCES", "Source", "available", "canonical_paper_id"}
    assert all(hasattr(loaders, name) for name in loaders.__all__)
    assert isinstance(SOURCES["taxonomy"], Source)


@pytest.mark.shared_data
def test_every_source_available_in_the_shared_data(data_dir: Path) -> None:
    expected = ["taxonomy", "scisumm2018", "scisummnet", "anthology", "unarxive", "cora"]
    assert [s.name for s in available(data_dir) if s.bundled] == expected
