"""The build's runner: every step of :func:`~api.pipeline.plans.build_plan` from the data to a served graph, timed,
resumable, one line per step (what ``citegraph build`` and ``make build`` run).

Each step's line says what it runs (the ``citegraph`` command that does the same alone) and how long it took the
last time, and the build ends with a table of every step's time. Steps run in this process, each on the store it
opens, except a step declared ``beside`` another, which runs in a second process started with it (its output in
``<db>.<step>.log``).

Resuming: after each step that succeeds, its fingerprint (:func:`~api.pipeline.registry.fingerprints`) is written
to ``<db>.build.json``, and a later build skips a step whose fingerprint is recorded, so

* a build that failed (or was interrupted) goes on from the step that failed;
* a second build over the same data and code skips everything (seconds);
* changed data re-runs ``ingest`` and, since each fingerprint chains the one before, every later
  step (each of which only computes what is missing or stale).

A store file that is gone (``make clean``) invalidates the record.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from api.pipeline import plans
from api.pipeline.registry import (
    EXIT_DATA,
    Step,
    StepContext,
    fingerprints,
    plan_fingerprint,
    read_state,
    record_step,
    run_guarded,
    run_in_child,
    state_path,
    step_record,
    version,
    write_state,
)
from graph import StoreConfig
from graph.errors import ConfigError


@contextmanager
def _one_thread_environment() -> Iterator[None]:
    """OMP and MKL at one thread in the environment a child process starts with (its libraries read it when they
    load), restored afterwards."""
    saved = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    os.environ.update({name: "1" for name in saved})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass
class _Beside:
    """A step running in a second process beside another; its output goes to a log file beside the store."""

    number: int
    step: Step
    process: BaseProcess
    log: Path
    started: float
    ended: float = 0.0  # when the process ended, taken by a watcher thread (it may end long before `wait`)
    watcher: threading.Thread | None = None

    def watch(self) -> _Beside:
        def until_done() -> None:
            self.process.join()
            self.ended = time.perf_counter()

        self.watcher = threading.Thread(target=until_done, name=f"build-{self.step.name}", daemon=True)
        self.watcher.start()
        return self

    def wait(self) -> tuple[int, Step, int, float]:
        assert self.watcher is not None  # started by watch()
        self.watcher.join()
        code = self.process.exitcode if self.process.exitcode is not None else 1
        seconds = self.ended - self.started
        if code == 0:
            print(f"[{self.number}] {self.step.name}: finished in {duration(seconds)} (beside the other)", flush=True)
        else:
            tail = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
            print(f"[{self.number}] {self.step.name} failed (exit {code}); the end of {self.log}:", flush=True)
            print("\n".join(f"    {line}" for line in tail), flush=True)
        return self.number, self.step, code, seconds


def expected(name: str, full: bool, last: object) -> str:
    """What a step's line says of its duration: its time in this store's last build, else (a first
    default build) its time in the first build measured on the project's 2-core CPU."""
    if isinstance(last, int | float):
        return f"; took {duration(float(last))} last time"
    if not full and name in plans.FIRST_BUILD_SECONDS:
        return f"; about {duration(plans.FIRST_BUILD_SECONDS[name])} in a first build on a 2-core CPU"
    return ""


def duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def print_table(rows: Sequence[tuple[str, str, float]], total: float) -> None:
    width = max(len(name) for name, _, _ in rows) if rows else 4
    print(f"\n{'step':<{width}}  {'status':<16}  time", flush=True)
    for name, status, seconds in rows:
        print(f"{name:<{width}}  {status:<16}  {duration(seconds) if status != 'skipped' else '-'}")
    print(f"{'total':<{width}}  {'':<16}  {duration(total)}", flush=True)


@dataclass
class BuildRun:
    """One ``citegraph build`` of the embedded store ``config.db_path`` (see the module docstring).

    ``after_steps``: called once every step succeeded, before the table (the CLI prints ``citegraph stats``).
    """

    settings: plans.BuildSettings
    config: StoreConfig
    quiet: bool = False
    debug: bool = False
    times_json: Path | None = None
    after_steps: Callable[[], object] = lambda: None

    def run(self) -> int:
        if self.config.backend != "embedded":
            raise ConfigError(
                "`citegraph build` builds the embedded store; for Neo4j, build embedded and `citegraph copy` it, "
                "or run the steps one by one (docs/cli.md)"
            )
        db = self.config.db_path
        state = read_state(db)
        if not state and state_path(db).exists():
            state_path(db).unlink()  # a record of a store that is gone
        plan = plans.build_plan(self.settings)
        prints = fingerprints(plan, version())
        context = StepContext(config=self.config, quiet=self.quiet)
        rows: list[tuple[str, str, float]] = []
        started_build = time.perf_counter()
        handled: set[str] = set()  # steps that ran beside another
        total = len(plan)
        for number, step in enumerate(plan, 1):
            if step.name in handled:
                continue
            if state.get(step.name, {}).get("fingerprint") == prints[step.name]:
                print(
                    f"[{number}/{total}] {step.name}: done already (same data, code and options), skipped", flush=True
                )
                rows.append((step.name, "skipped", 0.0))
                continue
            print(f"[{number}/{total}] {step.name}: citegraph {' '.join(step.command)}{self._expected(step, state)}")
            sys.stdout.flush()
            companions = [
                self._start_beside(plan.index(other) + 1, total, other, step, state)
                for other in plan
                if other.beside == step.name and state.get(other.name, {}).get("fingerprint") != prints[other.name]
            ]
            started = time.perf_counter()
            code = run_guarded(step, context, debug=self.debug)
            outcomes = [(number, step, code, time.perf_counter() - started)]
            for companion in companions:
                outcomes.append(companion.wait())
                handled.add(companion.step.name)
            failed = None
            for position, done, exit_code, took in outcomes:
                if exit_code != 0:
                    rows.append((done.name, f"failed (exit {exit_code})", took))
                    failed = failed or (position, done, exit_code, took)
                    continue
                state[done.name] = step_record(done, prints[done.name], took)
                write_state(db, state)
                rows.append((done.name, "ran", took))
            if failed is not None:
                position, done, exit_code, took = failed
                print_table(rows, time.perf_counter() - started_build)
                print(
                    f"citegraph build: step {position} ({done.name}) failed after {duration(took)}; the steps before "
                    "it are recorded. Fix the cause named above and run `make build` again: it resumes at this step.",
                    flush=True,
                )
                return exit_code
        if self.settings.full:  # every paper is embedded and h_θ fitted: nothing is left for the background build
            background = plan_fingerprint(db, "background", plans.background_plan(db))
            if background is not None:
                record_step(db, "background", background, 0.0)
        self.after_steps()
        total_seconds = time.perf_counter() - started_build
        print_table(rows, total_seconds)
        if not self.settings.full:
            print(
                "The rest of the corpus (embeddings, taxonomy vectors and Poincaré points of the papers beyond the "
                f"{self.settings.embed_limit} most cited, h_θ) is computed by `citegraph serve --complete` while it "
                "serves (what `make demo` runs); /readyz and `citegraph stats` say how complete each property is.",
                flush=True,
            )
        if self.times_json is not None:
            self.times_json.parent.mkdir(parents=True, exist_ok=True)
            self.times_json.write_text(
                json.dumps(
                    {"full": self.settings.full, "total_s": round(total_seconds, 1), "steps": [list(r) for r in rows]},
                    indent=2,
                )
                + "\n",
                encoding="utf-8",
            )
        return 0

    def _expected(self, step: Step, state: dict[str, dict[str, Any]]) -> str:
        return expected(step.name, self.settings.full, state.get(step.name, {}).get("seconds"))

    def _start_beside(
        self, number: int, total: int, step: Step, partner: Step, state: dict[str, dict[str, Any]]
    ) -> _Beside:
        db = self.config.db_path
        log_path = db.with_name(f"{db.name}.{step.name}.log")
        print(
            f"[{number}/{total}] {step.name}: citegraph {' '.join(step.command)}{self._expected(step, state)}; beside "
            f"the {partner.name}, in a second process (its output: {log_path})",
            flush=True,
        )
        log_path.write_bytes(b"")
        # a fresh interpreter (spawn, not fork: this process holds torch's threads and the store's engine)
        spawn = multiprocessing.get_context("spawn")
        process = spawn.Process(
            target=run_in_child, args=(step, self.config, self.quiet, str(log_path)), name=f"build-{step.name}"
        )
        with _one_thread_environment():  # one core each: the step it runs beside keeps the other
            process.start()
        return _Beside(number, step, process, log_path, time.perf_counter()).watch()


__all__ = ["EXIT_DATA", "BuildRun", "duration", "expected", "print_table", "run_guarded"]
