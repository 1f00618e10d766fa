"""`citegraph ingest` on the odd inputs every importer meets: an empty file, an overlong field."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from api.cli.main import main


def test_an_empty_semantic_scholar_file_exits_0_with_a_warning_as_openalex_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """It exited 65 ("file is not complete JSON") where an empty OpenAlex file exits 0."""
    db = tmp_path / "s.db"
    for source in ("semanticscholar", "openalex"):
        empty = tmp_path / f"{source}.json"
        empty.write_bytes(b"")
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            assert main(["--db", str(db), "-q", "ingest", source, str(empty)]) == 0, source
        assert any(str(empty) in r.getMessage() and "holds no record" in r.getMessage() for r in caplog.records)


def test_an_overlong_title_stops_the_load_naming_file_line_field_length_and_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "mine.jsonl"
    records = [
        {"type": "paper", "id": "p1", "title": "Fine"},
        {"type": "paper", "id": "p2", "title": "x" * 50_000},  # a field that ran on
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "ingest", "jsonl", str(corpus)]) == 65
    err = capsys.readouterr().err
    assert "mine.jsonl:2: `title` is 50,000 characters long" in err and "limit of 4,000 for Paper.title" in err
    assert "--on-error skip" in err
    assert main(["--db", str(db), "-q", "ingest", "jsonl", str(corpus), "--on-error", "skip"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "cypher", "MATCH (p:Paper) RETURN p.id AS id", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"id": "p1"}]
