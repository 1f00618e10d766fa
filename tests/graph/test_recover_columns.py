"""`citegraph recover` gives a store made by an older version the columns this version adds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from api.cli.main import main
from graph import GraphBatch, ingest, open_store
from graph.config import StoreConfig
from graph.embedded import EmbeddedStore
from graph.errors import StoreUnavailableError
from graph.schema import Schema, build_schema


def _older_schema(without: str) -> Schema:
    """Today's data model with one Paper property taken out: the model of an older version."""
    schema = build_schema()
    paper = schema.nodes["Paper"]
    older = replace(paper, properties=tuple(p for p in paper.properties if p.name != without))
    return replace(schema, nodes={**schema.nodes, "Paper": older})


def _paper_columns(path: Path) -> list[str]:
    store = open_store(StoreConfig(db_path=path, read_only=True))
    try:
        return [str(row["name"]) for row in store.query("table_info", identifiers={"TABLE": "Paper"})]
    finally:
        store.close()


def test_recover_adds_the_reference_column_to_an_older_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.db"
    old = EmbeddedStore(path, _older_schema("reference"))
    old.ensure_schema()
    ingest(old, GraphBatch("old", nodes={"Paper": pd.DataFrame({"id": ["p1"], "title": ["Kept"]})}))
    old.close()

    with pytest.raises(StoreUnavailableError, match=r"lacks `reference`.*recover"):
        _paper_columns(path)  # read-only cannot add it: the message names the command that does
    assert main(["--db", str(path), "recover"]) == 0
    assert "every table and column of this version" in capsys.readouterr().out

    assert "reference" in _paper_columns(path)
    store = open_store(StoreConfig(db_path=path, read_only=True))
    try:
        row = store.query("paper_by_ids", {"ids": ["p1"]})[0]
    finally:
        store.close()
    assert row["title"] == "Kept" and row["reference"] is None  # the stored paper is kept, the new column empty
