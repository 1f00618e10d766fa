"""The step registry (api/pipeline): the plans list the steps they always listed, each step's command line gives
its settings through the CLI, fingerprints chain and a record of an older citegraph re-runs steps, the background
build sizes itself from the build's record, and a plan such as `update` is registered and run by its functions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import api.pipeline.plans as plans
from api.cli.compute import step_settings
from api.cli.encoder import encoder_training
from api.cli.ingest import ingest_settings
from api.cli.linkage import linker_training_settings
from api.cli.main import build_parser
from api.cli.recommend import reranker_settings
from api.pipeline.registry import (
    Action,
    PlanRun,
    Step,
    StepContext,
    StepOutcome,
    fingerprints,
    plan_fingerprint,
    read_state,
    record_step,
    step_record,
    write_state,
)
from graph import GraphStore

RERANKER_FLAGS = (
    "--objective",
    "triplet",
    "--mart-seeds",
    "1",
    "--latest-folds",
    "1",
    "--mart-learning-rate",
    "0.1",
    "--mart-patience",
    "50",
    "--epoch-patience",
    "2",
    "--no-plain-trees",
    "--no-test",
    "--no-example-cache",
)
DEFAULT_RERANKER = ("train", "reranker", *RERANKER_FLAGS, "--out", "var/eval/reranker.json")
FULL_RERANKER = ("train", "reranker", "--out", "var/eval/reranker.json")
ENCODER = ("train", "encoder", "--serve", "--no-eval", "--max-minutes", "45", "--out", "var/eval/encoder.json")
# Each plan as the build listed it before the registry (the commands `citegraph build` ran, in order).
DEFAULT_BUILD = [
    ("ingest", ("ingest", "all", "--on-error", "skip", "--data", "D")),
    ("compute", ("compute", "all", "--limit", "10000", "--no-map", "--embed", "papers")),
    ("index", ("compute", "index")),
    ("reranker", DEFAULT_RERANKER),
    ("linker", ("linkage", "train")),
]
ENCODER_STEPS = [
    ("encoder", ENCODER),
    ("encoder embeddings", ("compute", "embeddings", "--embed", "papers")),
    ("encoder index", ("compute", "index")),
]
FULL_BUILD = [
    ("ingest", ("ingest", "all", "--on-error", "skip", "--data", "D")),
    ("compute", ("compute", "all")),
    ("index", ("compute", "index")),
    ("reranker", FULL_RERANKER),
    ("linker", ("linkage", "train")),
    ("linkage links", ("compute", "linkage")),
    *ENCODER_STEPS,
    ("encoder reranker", FULL_RERANKER),
]
BACKGROUND = [
    ("embeddings", ("compute", "embeddings", "--embed", "papers")),
    ("taxonomy", ("compute", "taxonomy")),
    ("hyperbolic", ("compute", "hyperbolic")),
    ("index", ("compute", "index")),
    ("reranker", DEFAULT_RERANKER),
    ("sentences", ("compute", "embeddings", "--embed", "sentences", "--limit", "10000")),
    *ENCODER_STEPS,
    ("encoder reranker", DEFAULT_RERANKER),
]


def _flags(argv: tuple[str, ...]) -> set[tuple[str, ...]]:
    """A command's flags, each with its value: the same command whatever the order of its flags."""
    out: set[tuple[str, ...]] = set()
    items = list(argv)
    while items:
        flag = items.pop(0)
        out.add((flag, items.pop(0)) if items and not items[0].startswith("--") else (flag,))
    return out


def _same(plan: list[Step] | tuple[Step, ...], listed: list[tuple[str, tuple[str, ...]]]) -> None:
    assert [s.name for s in plan] == [name for name, _ in listed]
    for step, (name, argv) in zip(plan, listed):
        words = 3 if argv[0] == "ingest" else 2  # the command's words, then its flags
        assert step.command[:words] == argv[:words], name
        assert _flags(step.command[words:]) == _flags(argv[words:]), name


def test_the_plans_list_the_steps_they_listed_before(tmp_path: Path) -> None:
    _same(plans.build_plan(plans.BuildSettings(data=Path("D"))), DEFAULT_BUILD)
    _same(plans.build_plan(plans.BuildSettings(full=True, data=Path("D"))), FULL_BUILD)
    _same(plans.background_plan(None), BACKGROUND)
    _same(plans.background_plan(tmp_path / "no.db"), BACKGROUND)  # no record: the default build's
    assert [s.name for s in plans.compute_all_plan()] == ["embeddings", "cocitation", "taxonomy", "hyperbolic"]
    default = plans.build_plan(plans.BuildSettings(data=Path("D")))
    assert {s.name: s.beside for s in default} == {n: "reranker" if n == "linker" else "" for n, _ in DEFAULT_BUILD}
    assert [s.name for s in default if s.reads is not None] == ["ingest"]  # only ingest's files enter fingerprints
    assert set(plans.PLANS) >= {"build", "compute all", "background"}


# The CLI function that turns each command's flags into the settings its step runs with.
SETTINGS_OF = {
    ("ingest",): ingest_settings,
    ("compute",): lambda args: step_settings(args.step, args),
    ("train", "reranker"): reranker_settings,
    ("train", "encoder"): encoder_training,
    ("linkage", "train"): linker_training_settings,
}


def test_every_steps_command_line_gives_its_settings_through_the_cli(tmp_path: Path) -> None:
    """The line a build prints for a step is the command that does the same work alone: parsed by the CLI, its
    flags give the step's own settings (so the rendering cannot drift from the flags)."""
    parser = build_parser()
    steps = [
        *plans.build_plan(plans.BuildSettings(data=tmp_path)),
        *plans.build_plan(plans.BuildSettings(full=True, embed_limit=500, data=tmp_path)),
        *plans.background_plan(None),
        *plans.compute_all_plan(),
    ]
    for step in steps:
        args = parser.parse_args(["--db", str(tmp_path / "x.db"), *step.command])
        settings_of = SETTINGS_OF.get(tuple(step.command[:2])) or SETTINGS_OF[step.command[:1]]
        assert settings_of(args) == step.settings, step.name


def test_a_fingerprint_chains_the_step_before_and_only_ingest_reads_the_files(tmp_path: Path) -> None:
    default = plans.build_plan(plans.BuildSettings(data=tmp_path))
    base = fingerprints(default, "v", lambda _: "files")
    assert fingerprints(default, "v", lambda _: "files") == base  # the same data, code and settings: done
    new_files = fingerprints(default, "v", lambda _: "other files")
    assert all(new_files[name] != base[name] for name in base)  # new data re-runs ingest and every later step
    assert all(fingerprints(default, "w", lambda _: "files")[n] != base[n] for n in base)  # new code: all again
    fewer = plans.build_plan(plans.BuildSettings(embed_limit=500, data=tmp_path))
    changed = fingerprints(fewer, "v", lambda _: "files")
    assert changed["ingest"] == base["ingest"] and changed["compute"] != base["compute"]
    assert changed["index"] != base["index"]  # chained to the changed step
    # the linker runs beside the reranker: chained to what the reranker chains to (the index), not to the reranker
    other_reranker = [plans.with_settings(s, objective="nce") if s.name == "reranker" else s for s in default]
    beside = fingerprints(other_reranker, "v", lambda _: "files")
    assert beside["reranker"] != base["reranker"] and beside["linker"] == base["linker"]


def test_an_older_record_re_runs_the_steps_and_the_background_build_takes_its_defaults(tmp_path: Path) -> None:
    """A record written before the registry (fingerprints of command lines, no settings) matches no step, and the
    background build, finding no settings in it, runs the default build's reranker and sentence limit."""
    db = tmp_path / "store.db"
    db.write_text("")
    old = {
        "ingest": {"fingerprint": "a1b2c3d4e5f60718", "seconds": 48.0, "argv": ["ingest", "all"]},
        "compute": {"fingerprint": "0f1e2d3c4b5a6978", "seconds": 203.0, "argv": ["compute", "all", "--limit", "5"]},
        "reranker": {"fingerprint": "1234", "seconds": 1.0, "argv": ["train", "reranker", "--objective", "nce"]},
    }
    write_state(db, old)
    plan = plans.build_plan(plans.BuildSettings(data=tmp_path))
    prints = fingerprints(plan, "v", lambda _: "files")
    assert not any(read_state(db).get(s.name, {}).get("fingerprint") == prints[s.name] for s in plan)
    _same(plans.background_plan(db), BACKGROUND)
    assert plan_fingerprint(db, "background", plans.background_plan(db)) is not None
    (tmp_path / "store.db.build.json").write_text("[1, 2]")  # not a record at all: everything runs again
    assert read_state(db) == {}


def test_the_background_build_sizes_itself_from_the_builds_record(tmp_path: Path) -> None:
    """Its sentence step stores as many sentences as the build's compute step embedded papers, and its reranker
    (and the one retrained on the fine-tuned encoder) trains with the build's reranker settings."""
    db = tmp_path / "store.db"
    db.write_text("")  # a store file, so its record counts
    record_step(db, "ingest", "f0", 1.0)
    build = {s.name: s for s in plans.build_plan(plans.BuildSettings(embed_limit=500, data=tmp_path))}
    own = plans.with_settings(build["reranker"], objective="nce", mart_seeds=2, out="var/eval/mine.json")
    state = read_state(db)
    state["compute"] = step_record(build["compute"], "f1", 1.0)
    state["reranker"] = step_record(own, "f2", 1.0)
    write_state(db, state)
    background = {s.name: s for s in plans.background_plan(db)}
    assert background["sentences"].command == ("compute", "embeddings", "--embed", "sentences", "--limit", "500")
    assert background["reranker"].settings == own.settings == background["encoder reranker"].settings
    assert [s.name for s in plans.background_plan(db)] == [name for name, _ in BACKGROUND]
    # the background build is recorded under a fingerprint chained to the build's last step: a new build re-runs it
    before = plan_fingerprint(db, "background", plans.background_plan(db))
    record_step(db, "reranker", "f3", 1.0)
    assert before is not None and plan_fingerprint(db, "background", plans.background_plan(db)) != before
    names = [s.name for s in plans.background_plan(db)]
    assert names.index("index") < names.index("reranker")  # trained on the index the server swaps in


# an `update` plan, as another module registers it -------------------------------------------------------
@dataclass(frozen=True)
class Touch:
    label: str
    skip_when_present: bool = False

    def command(self) -> tuple[str, ...]:
        return ("update", self.label)


def touch(context: StepContext, settings: Touch) -> None:
    with context.open() as store:
        TOUCHED.append((settings.label, store))


def present(store: GraphStore, settings: Touch) -> str | None:
    return "done already" if settings.skip_when_present and any(t[0] == settings.label for t in TOUCHED) else None


TOUCHED: list[tuple[str, Any]] = []
TOUCH = Action("update touch", touch, skip=present)


def test_an_update_plan_is_registered_and_runs_its_steps_by_function(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a plan of this test's own under the name `update` (api/pipeline/update.py's is left out of the copy)
    monkeypatch.setattr(plans, "PLANS", {name: plan for name, plan in plans.PLANS.items() if name != "update"})
    TOUCHED.clear()

    def update_plan() -> list[Step]:
        return [
            Step("merge", TOUCH, Touch("a")),
            Step("again", TOUCH, Touch("a", skip_when_present=True)),
            Step("after", TOUCH, Touch("b"), guard=lambda s: None),
        ]

    plans.register_plan("update", update_plan)
    with pytest.raises(ValueError, match="registered already"):
        plans.register_plan("update", lambda: [])
    seen: list[StepOutcome] = []
    run = PlanRun(plans.PLANS["update"](), StepContext(store=store), after_step=lambda step, o: seen.append(o))
    assert run.run() == seen
    assert [(o.name, o.skipped) for o in seen] == [("merge", None), ("again", "done already"), ("after", None)]
    assert [label for label, _ in TOUCHED] == ["a", "b"] and all(s is store for _, s in TOUCHED)  # the store given


def test_a_record_keeps_each_steps_settings_and_command(tmp_path: Path) -> None:
    step = plans.build_plan(plans.BuildSettings(data=tmp_path))[3]
    record = step_record(step, "f", 12.34)
    assert record["seconds"] == 12.3 and record["argv"] == list(step.command)
    assert record["settings"]["objective"] == "triplet" and json.dumps(record)  # plain JSON


def test_the_update_plan_runs_the_delta_then_the_steps_that_skip_unchanged_rows() -> None:
    from api.pipeline.ingest import IngestSettings
    from api.pipeline.update import UpdateSettings, update_plan

    assert plans.PLANS["update"] is update_plan
    assert [s.name for s in update_plan()] == ["cocitation", "embeddings", "index"]
    assert [s.action.name for s in update_plan()] == ["update cocitation", "compute embeddings", "compute index"]
    full = update_plan(UpdateSettings(ingest=IngestSettings(source="jsonl", path="new.jsonl"), steps=("index",)))
    assert [s.name for s in full] == ["ingest", "index"] and full[0].command[:3] == ("ingest", "jsonl", "new.jsonl")
    assert update_plan()[1].settings.embed == "papers"  # sentences are not re-embedded by an update
