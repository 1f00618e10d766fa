"""``citegraph update``: an ingest of new citing papers, then co-citation by delta."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.cli.main import main
from graph import StoreConfig, open_store


def test_update_ingests_and_updates_cocitation_by_delta(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "u.db")
    first = tmp_path / "first.jsonl"
    first.write_text(
        "\n".join(
            json.dumps(row)
            for row in [
                {"type": "paper", "id": "a", "title": "A"},
                {"type": "paper", "id": "b", "title": "B"},
                {"type": "paper", "id": "c", "title": "C"},
                {"type": "paper", "id": "x", "title": "X"},
                {"type": "citation", "citing": "x", "cited": "a"},
                {"type": "citation", "citing": "x", "cited": "b"},
            ]
        )
        + "\n"
    )
    assert main(["--db", db, "-q", "ingest", "jsonl", str(first)]) == 0
    assert main(["--db", db, "-q", "update", "--steps", "cocitation", "--device", "cpu"]) == 0
    assert "recomputed in full" in capsys.readouterr().out  # no basis yet: the full step makes one
    second = tmp_path / "second.jsonl"
    rows = [{"type": "paper", "id": "y", "title": "Y"}] + [
        {"type": "citation", "citing": "y", "cited": cited} for cited in ("a", "b", "c")
    ]
    second.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    assert main(["--db", db, "-q", "update", "jsonl", str(second), "--steps", "cocitation", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "updated by delta: 1 citing papers" in out
    with open_store(StoreConfig(db_path=Path(db), read_only=True)) as store:
        counts = {(r["source"], r["target"]): r["count"] for _, r in store.read_edges("CO_CITED").iterrows()}
    assert counts == {("a", "b"): 2, ("a", "c"): 1, ("b", "c"): 1}
