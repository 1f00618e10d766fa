"""A large OpenAlex partition parsed in a pool of processes: the same batches' tables as in one process.

The pool reads a JSON Lines file in blocks (loaders.toolkit.line_blocks); each worker parses its block into the
loader's columns (the copies a later one supersedes left out, as the first pass found them) and the loading
process appends the blocks in file order. The fast tests run the block functions in this process (the pool's map
replaced by ``map``); the slow one spawns the real pool.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from graph.schema import ORIGIN_COLUMN
from loaders import openalex
from loaders._common import merge_batches


@pytest.fixture(scope="module")
def works(data_dir: Path) -> list[dict[str, Any]]:
    page = data_dir / "formats" / "openalex" / "json_chunk_1_results_page_1.json"
    if not page.exists():
        pytest.skip(f"no OpenAlex samples at {page}")
    found: list[dict[str, Any]] = json.loads(page.read_text(encoding="utf-8"))["results"]
    return found


def _partition(works: list[dict[str, Any]], folder: Path) -> Path:
    """The works as a gzipped partition with what a block must get right: a copy that a later line supersedes
    (newer), one that an older later copy does not, a line that is not JSON, a blank line, a work without id."""
    lines = [json.dumps(work) for work in works[:30]]
    newer = {**works[3], "title": "A newer title", "updated_date": "2099-01-01T00:00:00"}
    older = {**works[5], "title": "An older title", "updated_date": "1900-01-01T00:00:00"}
    lines += [json.dumps(newer), '{"id": "https://openalex.org/W1", "title": "Cut', "", json.dumps({"title": "x"})]
    lines += [json.dumps(older)] + [json.dumps(work) for work in works[30:]]
    path = folder / "updated_date=2025-05-01" / "part_000.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))
    return path


def _tables(batches: Iterable[Any]) -> dict[str, pd.DataFrame]:
    """Every table of the batches as the store would hold it: a row that an earlier batch gave already (an
    author, institution or class shared by works of two batches; the pool cuts batches at other works) once,
    with the origin of its first occurrence in the file."""
    merged = merge_batches("openalex", list(batches))
    tables = {**merged.nodes, **merged.rels}
    out = {}
    for name, frame in tables.items():
        values = [c for c in frame.columns if c != ORIGIN_COLUMN]
        frame = frame.astype(str).drop_duplicates(subset=values)
        out[name] = frame.sort_values(list(frame.columns)).reset_index(drop=True)
    return out


def _pooled(monkeypatch: pytest.MonkeyPatch, mapper: Callable[..., Iterator[Any]]) -> None:
    monkeypatch.setattr(openalex, "pooled_json_lines", lambda path, workers: True)
    monkeypatch.setattr(openalex, "map_in_order", mapper)
    monkeypatch.setattr("loaders.toolkit.BLOCK_LINES", 4)
    monkeypatch.setattr(openalex.line_blocks, "__defaults__", (4,))


def test_blocks_give_the_tables_of_one_process(
    works: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _partition(works, tmp_path)
    serial = list(openalex.load_chunks(path, 7))
    _pooled(monkeypatch, lambda function, items, workers: map(function, items))
    blocks = list(openalex.load_chunks(path, 7))
    assert _tables(blocks).keys() == _tables(serial).keys()
    # the per-work tables other steps added (keywords, affiliations) travel through the blocks too
    assert {"Keyword", "HAS_KEYWORD", "Institution", "AFFILIATION"} <= _tables(serial).keys()
    for name, frame in _tables(serial).items():
        pd.testing.assert_frame_equal(_tables(blocks)[name], frame, obj=name)
    rejects = [(r.table, r.origin) for batch in blocks for r in batch.rejects]
    assert rejects == [(r.table, r.origin) for batch in serial for r in batch.rejects]
    assert ("Paper", "part_000.gz:32") in rejects  # the cut line, located
    papers = _tables(blocks)["Paper"].set_index("id")
    assert "A newer title" in set(papers["title"]) and "An older title" not in set(papers["title"])
    full = papers[papers["stub"] == "False"]
    assert len(full) == len(works) and full[ORIGIN_COLUMN].is_unique


@pytest.mark.slow
def test_a_real_pool_of_two_processes_gives_the_same_tables(
    works: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _partition(works, tmp_path)
    serial = _tables(openalex.load_chunks(path, 7))
    monkeypatch.setenv("CITEGRAPH_INGEST_WORKERS", "2")
    monkeypatch.setattr(openalex, "pooled_json_lines", lambda path, workers: workers == 2)
    pooled = _tables(openalex.load_chunks(path, 7))
    for name, frame in serial.items():
        pd.testing.assert_frame_equal(pooled[name], frame, obj=name)
