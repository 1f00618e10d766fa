"""`citegraph build`: each step once, resumed after a failure, skipped when nothing changed, timed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from build_steps import COUNT, NEEDS_FILE, Count, NeedsFile

import api.pipeline.plans as plans
from api.cli.main import main
from api.pipeline.build import duration, expected
from api.pipeline.ingest import INGEST, IngestSettings
from api.pipeline.registry import Step, fingerprints

CORPUS = "\n".join(
    json.dumps(record)
    for record in (
        {"type": "paper", "id": "a", "title": "Parsing with grammars", "year": 2001},
        {"type": "paper", "id": "b", "title": "Tagging words", "year": 2003},
        {"type": "citation", "citing": "b", "cited": "a"},
    )
)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "data" / "jsonl").mkdir(parents=True)
    (tmp_path / "data" / "jsonl" / "corpus.jsonl").write_text(CORPUS + "\n", encoding="utf-8")
    return tmp_path / "data"


def _ingest(data: Path) -> Step:
    return Step("ingest", INGEST, IngestSettings(data=str(data), on_error="skip"), reads=data)


def _plan(third: str, *, beside: str = "") -> Callable[[plans.BuildSettings], list[Step]]:
    def plan(settings: plans.BuildSettings) -> list[Step]:
        return [
            _ingest(settings.data),
            Step("count", COUNT, Count()),
            Step("third", NEEDS_FILE, NeedsFile(third), beside=beside),
        ]

    return plan


def test_a_failed_build_resumes_at_the_failed_step_and_a_clean_one_skips_everything(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "store.db"
    args = ["--db", str(db), "--quiet", "build", "--data", str(data), "--times-json", str(tmp_path / "times.json")]
    query = tmp_path / "query.cypher"
    monkeypatch.setattr(plans, "build_plan", _plan(str(query)))
    assert main(args) == 65  # the step's DataError, as the command alone would exit
    captured = capsys.readouterr()
    assert "step 3 (third) failed" in captured.out and "resumes at this step" in captured.out
    assert "citegraph: error: " in captured.err and "query.cypher is missing" in captured.err
    recorded = json.loads((tmp_path / "store.db.build.json").read_text())["steps"]
    assert set(recorded) == {"ingest", "count"}
    assert recorded["ingest"]["settings"]["on_error"] == "skip"  # each step's settings, for the background build

    query.write_text("MATCH (p:Paper) RETURN p.id", encoding="utf-8")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "[1/3] ingest: done already" in out and "[2/3] count: done already" in out
    assert f"[3/3] third: citegraph cypher --file {query}" in out and "total" in out
    assert "Paper" in out  # `citegraph stats` after the steps
    times = json.loads((tmp_path / "times.json").read_text())
    assert [row[:2] for row in times["steps"]] == [["ingest", "skipped"], ["count", "skipped"], ["third", "ran"]]

    assert main(args) == 0
    assert "[3/3] third: done already" in capsys.readouterr().out

    # New data re-runs ingest and, since fingerprints chain, every step after it.
    corpus = data / "jsonl" / "corpus.jsonl"
    corpus.write_text(CORPUS + "\n" + json.dumps({"type": "paper", "id": "c", "title": "More"}) + "\n")
    os.utime(corpus, ns=(corpus.stat().st_atime_ns, corpus.stat().st_mtime_ns + 10**9))
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "done already" not in out and "took" in out  # each step says how long it took last time


def test_a_store_that_is_gone_starts_the_build_over(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "store.db"
    (tmp_path / "query.cypher").write_text("RETURN 1", encoding="utf-8")
    monkeypatch.setattr(plans, "build_plan", _plan(str(tmp_path / "query.cypher")))
    assert main(["--db", str(db), "--quiet", "build", "--data", str(data)]) == 0
    for file in tmp_path.glob("store.db*"):
        if file.name != "store.db.build.json":
            file.unlink() if file.is_file() else None
    capsys.readouterr()
    assert main(["--db", str(db), "--quiet", "build", "--data", str(data)]) == 0
    assert "done already" not in capsys.readouterr().out


def test_a_step_beside_another_runs_in_a_second_process_and_resumes_alone(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "store.db"
    args = ["--db", str(db), "--quiet", "build", "--data", str(data)]
    query = tmp_path / "missing.cypher"
    monkeypatch.setattr(plans, "build_plan", _plan(str(query), beside="count"))
    assert main(args) != 0
    out = capsys.readouterr().out
    log = tmp_path / "store.db.third.log"
    assert "beside the count, in a second process" in out and str(log) in out
    assert "third failed" in out and "missing.cypher is missing" in out  # the end of its log, shown
    assert "step 3 (third) failed" in out and "missing.cypher" in log.read_text()
    recorded = json.loads((tmp_path / "store.db.build.json").read_text())["steps"]
    assert set(recorded) == {"ingest", "count"}  # the step beside it succeeded and is recorded

    query.write_text("RETURN 1", encoding="utf-8")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "[2/3] count: done already" in out and "[3/3] third: citegraph cypher --file" in out
    assert f"read {query}" in out  # its partner done already, it ran on its own, in this process
    assert main(args) == 0
    assert "[3/3] third: done already" in capsys.readouterr().out
    state = tmp_path / "store.db.build.json"  # both forgotten: they run again, side by side, and both succeed
    steps = json.loads(state.read_text())["steps"]
    state.write_text(json.dumps({"steps": {"ingest": steps["ingest"]}}), encoding="utf-8")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "[3] third: finished in" in out and "(beside the other)" in out
    assert f"read {query}" in log.read_text()  # its output, from the second process
    assert set(json.loads(state.read_text())["steps"]) == {"ingest", "count", "third"}
    # a step beside another chains to what that one chains to: the same fingerprint whatever runs beside it
    settings = plans.BuildSettings(data=data)
    first = fingerprints(_plan("a.cypher", beside="count")(settings), "v", lambda _: "i")
    other = fingerprints(_plan("b.cypher", beside="count")(settings), "v", lambda _: "i")
    assert first["count"] == other["count"] and first["third"] != other["third"]


def test_each_step_line_says_how_long_the_step_takes() -> None:
    assert expected("reranker", False, 75.0) == "; took 1m15s last time"  # this store's own last build
    first = expected("reranker", False, None)  # a first build: the time measured on the reference machine
    assert first == f"; about {duration(plans.FIRST_BUILD_SECONDS['reranker'])} in a first build on a 2-core CPU"
    assert expected("reranker", True, None) == ""  # a full build was not timed on it
    default = plans.build_plan(plans.BuildSettings(data=Path(".")))
    assert set(plans.FIRST_BUILD_SECONDS) == {s.name for s in default}
