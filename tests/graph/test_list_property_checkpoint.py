"""The embedded store keeps ``DOUBLE[]`` node values across rounds of writes and checkpoints.

LadybugDB 0.22 with its column compression on zeroes some of them (``benchmarks/ladybug_list_property_loss.py``
reproduces it with ``ladybug`` alone); the store opens the engine with compression off
(``graph.embedded.COMPRESSION``). Here the benchmark's values go through
:meth:`GraphStore.write_node_properties` as ``cocite_probs``, with the checkpoints the product makes: the one
after the autocommit COPY of a relationship swap (``replace_edges``) and the one of a close (every CLI
command closes the store). With compression on, the rounds below lose values of papers written in an earlier
round and not since, even when every paper is rewritten before each checkpoint.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store

_SPEC = importlib.util.spec_from_file_location(
    "ladybug_list_property_loss", Path(__file__).resolve().parents[2] / "benchmarks" / "ladybug_list_property_loss.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_CASE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_CASE)
ROUNDS: list[list[tuple[str, list[float]]]] = _CASE.ROUNDS
IDS: list[str] = _CASE.IDS


def stored_probs(store: GraphStore) -> dict[str, list[float] | None]:
    result = store._conn.execute("MATCH (p:Paper) RETURN p.id, p.cocite_probs")  # type: ignore[attr-defined]  # test-only peek
    rows: dict[str, list[float] | None] = {}
    while result.has_next():
        key, value = result.get_next()
        rows[key] = value
    return rows


def write_rounds(
    path: Path, *, rewrite_all: bool, after_round: Callable[[GraphStore], GraphStore]
) -> dict[str, object]:
    """Write the case's rounds as ``cocite_probs``; the papers whose stored list is not the last one written."""
    store = open_store(StoreConfig(db_path=path))
    ingest(store, GraphBatch("case", nodes={"Paper": pd.DataFrame({"id": IDS})}, rels={}))
    want: dict[str, list[float]] = {}
    for rows in ROUNDS:
        written = list({**want, **dict(rows)}.items()) if rewrite_all else rows
        frame = pd.DataFrame({"id": [k for k, _ in written], "cocite_probs": [v for _, v in written]})
        store.write_node_properties("Paper", "id", frame)
        want.update(written)
        store = after_round(store)
    store.close()
    store = open_store(StoreConfig(db_path=path))
    try:
        got = stored_probs(store)
    finally:
        store.close()
    return {key: got.get(key) for key, value in want.items() if got.get(key) != value}


def swap_edges(store: GraphStore) -> GraphStore:
    """A relationship table rewritten as the steps do (staging COPY, then DROP + RENAME)."""
    store.replace_edges("CITES", pd.DataFrame({"source": ["p00", "p01"], "target": ["p01", "p02"]}))
    return store


def nothing(store: GraphStore) -> GraphStore:
    return store


def reopen(store: GraphStore) -> GraphStore:
    """What separate CLI commands do: each closes the store (a checkpoint)."""
    path = store.path  # type: ignore[attr-defined]
    store.close()
    return open_store(StoreConfig(db_path=path))


def test_one_checkpoint_after_the_writes_keeps_every_value(tmp_path: Path) -> None:
    assert write_rounds(tmp_path / "s.db", rewrite_all=False, after_round=nothing) == {}


@pytest.mark.parametrize("after_round", [swap_edges, reopen], ids=["edge-swap", "close"])
def test_a_checkpoint_after_each_write_keeps_every_value(
    tmp_path: Path, after_round: Callable[[GraphStore], GraphStore]
) -> None:
    assert write_rounds(tmp_path / "s.db", rewrite_all=False, after_round=after_round) == {}


def test_rewriting_every_paper_before_each_checkpoint_keeps_every_value(tmp_path: Path) -> None:
    assert write_rounds(tmp_path / "s.db", rewrite_all=True, after_round=swap_edges) == {}


@pytest.mark.parametrize("compressed", [True, False], ids=["written-compressed", "written-by-this-version"])
def test_recover_names_the_float_lists_a_compressed_store_can_lose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, compressed: bool
) -> None:
    """A store written before the guard (compression on) keeps its compressed chunks: ``recover`` names them and
    says to rebuild; a store written by this version gets no such line."""
    import graph.embedded
    from api.cli.main import main

    path = tmp_path / "s.db"
    monkeypatch.setattr(graph.embedded, "COMPRESSION", compressed)
    store = open_store(StoreConfig(db_path=path))
    ingest(store, GraphBatch("case", nodes={"Paper": pd.DataFrame({"id": IDS})}, rels={}))
    rows = ROUNDS[0]
    store.write_node_properties(
        "Paper", "id", pd.DataFrame({"id": [k for k, _ in rows], "cocite_probs": [v for _, v in rows]})
    )
    store.close()
    monkeypatch.setattr(graph.embedded, "COMPRESSION", False)
    with caplog.at_level("WARNING", logger="citegraph"):
        assert main(["--db", str(path), "recover"]) == 0
    warned = [r.getMessage() for r in caplog.records if "compression" in r.getMessage()]
    if compressed:
        assert len(warned) == 1 and "Paper.cocite_probs (1 chunk)" in warned[0] and "Rebuild the store" in warned[0]
    else:
        assert warned == []
