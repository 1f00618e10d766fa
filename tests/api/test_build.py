"""`citegraph build`: each step once, resumed after a failure, skipped when nothing changed, timed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import api.cli.build as build
from api.cli.build import Step
from api.cli.main import build_parser, main

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


def _plan(third: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """Cheap real commands in place of the heavy steps: the runner's bookkeeping is what is tested here."""

    def plan(full: bool, embed_limit: int | None, data: Path) -> list[Step]:
        return [
            Step("ingest", ("ingest", "all", "--on-error", "skip", "--data", str(data))),
            Step("count", ("cypher", "MATCH (p:Paper) RETURN count(p) AS n")),
            Step("third", third),
        ]

    return plan


def test_a_failed_build_resumes_at_the_failed_step_and_a_clean_one_skips_everything(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "store.db"
    args = ["--db", str(db), "--quiet", "build", "--data", str(data), "--times-json", str(tmp_path / "times.json")]
    monkeypatch.setattr(build, "steps", _plan(("cypher", "--file", str(tmp_path / "missing.cypher"))))
    assert main(args) != 0
    out = capsys.readouterr().out
    assert "step 3 (third) failed" in out and "resumes at this step" in out
    assert set(json.loads((tmp_path / "store.db.build.json").read_text())["steps"]) == {"ingest", "count"}

    monkeypatch.setattr(build, "steps", _plan(("stats",)))
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "[1/3] ingest: done already" in out and "[2/3] count: done already" in out
    assert "[3/3] third: citegraph stats" in out and "total" in out
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
    monkeypatch.setattr(build, "steps", _plan(("stats",)))
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

    def plan_with(beside: tuple[str, ...]):  # type: ignore[no-untyped-def]
        def plan(full: bool, embed_limit: int | None, data: Path) -> list[Step]:
            return [
                Step("ingest", ("ingest", "all", "--on-error", "skip", "--data", str(data))),
                Step("count", ("cypher", "MATCH (p:Paper) RETURN count(p) AS n")),
                Step("beside", beside, beside="count"),
            ]

        return plan

    args = ["--db", str(db), "--quiet", "build", "--data", str(data)]
    monkeypatch.setattr(build, "steps", plan_with(("cypher", "--file", str(tmp_path / "missing.cypher"))))
    assert main(args) != 0
    out = capsys.readouterr().out
    log = tmp_path / "store.db.beside.log"
    assert "beside the count, in a second process" in out and str(log) in out
    assert "beside failed" in out and "missing.cypher" in out  # the end of its log, shown
    assert "step 3 (beside) failed" in out and "missing.cypher" in log.read_text()
    recorded = json.loads((tmp_path / "store.db.build.json").read_text())["steps"]
    assert set(recorded) == {"ingest", "count"}  # the step beside it succeeded and is recorded

    monkeypatch.setattr(build, "steps", plan_with(("stats",)))
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "[2/3] count: done already" in out and "[3/3] beside: citegraph stats" in out
    assert main(args) == 0
    assert "[3/3] beside: done already" in capsys.readouterr().out
    # a step beside another chains to what that one chains to: the same fingerprint whatever runs beside it
    first = build._fingerprints(plan_with(("stats",))(False, None, data), "v", "i")
    other = build._fingerprints(plan_with(("cypher", "RETURN 1"))(False, None, data), "v", "i")
    assert first["count"] == other["count"] and first["beside"] != other["beside"]


def test_the_real_plan_is_the_documented_one(tmp_path: Path) -> None:
    default = [s.argv for s in build.steps(False, 10_000, tmp_path)]
    assert (
        default[0][:2] == ("ingest", "all")
        and ("compute", "all", "--limit", "10000", "--no-map", "--embed", "papers") in default
    )
    assert ("compute", "index") in default and ("linkage", "train") in default
    assert ("compute", "linkage") not in default
    assert {s.name: s.beside for s in build.steps(False, 10_000, tmp_path)}["linker"] == "reranker"
    reranker = next(argv for argv in default if argv[:2] == ("train", "reranker"))
    assert "--mart-seeds" in reranker and "--no-plain-trees" in reranker
    full = [s.argv for s in build.steps(True, 10_000, tmp_path)]
    assert ("compute", "linkage") in full and ("compute", "all") in full
    # the encoder is fine-tuned last, in the full build and the background build, never in the default build
    assert not any(argv[:2] == ("train", "encoder") for argv in default)
    assert full[-4][:3] == ("train", "encoder", "--serve") and full[-2:] == [("compute", "index"), full[-1]]
    assert full[-1] == ("train", "reranker", "--out", "var/eval/reranker.json")  # the full build's own flags
    background = [s.name for s in build.BACKGROUND_STEPS]
    assert background[-4:] == ["encoder", "encoder embeddings", "encoder index", "encoder reranker"]
    # every step of both plans and of the background build is a command line the CLI accepts
    parser = build_parser()
    for argv in [*default, *full, *(s.argv for s in build.BACKGROUND_STEPS)]:
        parser.parse_args(["--db", str(tmp_path / "x.db"), *argv])


def test_each_step_line_says_how_long_the_step_takes() -> None:
    assert build._expected("reranker", False, 75.0) == "; took 1m15s last time"  # this store's own last build
    first = build._expected("reranker", False, None)  # a first build: the time measured on the reference machine
    assert first == f"; about {build._duration(build.FIRST_BUILD_SECONDS['reranker'])} in a first build on a 2-core CPU"
    assert build._expected("reranker", True, None) == ""  # a full build was not timed on it
    assert set(build.FIRST_BUILD_SECONDS) == {s.name for s in build.steps(False, 10_000, Path("."))}


def test_the_background_build_embeds_as_many_sentences_as_the_build_embedded_papers(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    assert build.background_steps(db) == build.BACKGROUND_STEPS  # no build record: the default build's limit
    db.write_text("")  # a store file, so its record counts
    build.record_step(db, "ingest", "f0", 1.0)
    state = build.read_state(db)
    state["compute"] = {"fingerprint": "f1", "seconds": 1.0, "argv": ["compute", "all", "--limit", "500", "--no-map"]}
    build._write_state(build._state_path(db), state)
    sentences = {s.name: s.argv for s in build.background_steps(db)}["sentences"]
    assert sentences == ("compute", "embeddings", "--embed", "sentences", "--limit", "500")
    assert [s.name for s in build.background_steps(db)] == [s.name for s in build.BACKGROUND_STEPS]


def test_the_background_build_trains_the_reranker_again_with_the_builds_own_flags(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    default = {s.name: s.argv for s in build.BACKGROUND_STEPS}["reranker"]
    assert default == ("train", "reranker", *build.DEFAULT_RERANKER, "--out", "var/eval/reranker.json")
    names = [s.name for s in build.BACKGROUND_STEPS]
    assert names.index("index") < names.index("reranker")  # trained on the index the server swaps in
    db.write_text("")
    own = ["train", "reranker", "--objective", "triplet", "--mart-seeds", "2", "--out", "var/eval/mine.json"]
    build._write_state(build._state_path(db), {"reranker": {"fingerprint": "f", "seconds": 1.0, "argv": own}})
    assert {s.name: s.argv for s in build.background_steps(db)}["reranker"] == tuple(own)
