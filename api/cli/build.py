"""``citegraph build``: every step from the data to a served graph, timed, resumable, one line per step.

The steps are the commands a person would type (``ingest all``, ``compute all``, ``compute index``,
``train reranker``, ``linkage train``, ``compute linkage`` with ``--full``, ``stats``), run in
order in this process. Each prints one line as it starts, with how long it took the last time,
and the build ends with a table of every step's time.

Resuming: after each step that succeeds, its *fingerprint* is written to ``<db>.build.json``:
a hash of its command line, the fingerprint of the step before it, the project's version (the
git commit when there is one) and, for ``ingest``, the size and modification time of every input
file. A later build skips a step whose fingerprint is recorded, so

* a build that failed (or was interrupted) goes on from the step that failed;
* a second build over the same data and code skips everything (seconds);
* changed data re-runs ``ingest`` and, since each fingerprint chains the one before, every later
  step (each of which only computes what is missing or stale).

A store file that is gone (``make clean``) invalidates the record.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import loaders
from api.settings import AppSettings
from graph import StoreConfig
from graph.errors import ConfigError
from graph.files import StoreFiles


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]  # the citegraph command line of the step, without the global flags
    # The earlier step this one runs beside, in a second process started with it: a step that needs nothing
    # the other makes and keeps a core busy while the other leaves one idle. "" runs it after the step before.
    beside: str = ""


# The default build's reranker: one objective, one seed of trees at twice the default rate, trained on the latest
# training fold, the neural model stopped after 2 epochs without a gain (in the first builds' runs no gain came
# after two epochs without one: the same models, 6 fewer epochs), without the comparison row, the test queries or
# the example cache (docs/results.md: what it gives up against FULL=1, test figures included, from
# benchmarks/default_vs_full.py).
DEFAULT_RERANKER = (
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


def steps(full: bool, embed_limit: int | None, data: Path) -> list[Step]:
    """The build's steps; ``full`` runs every one at full scale (``make build FULL=1``).

    The default build serves sooner and leaves to the server's background build
    (:data:`BACKGROUND_STEPS`) what the API can do without at first: the papers beyond the
    ``embed_limit`` most cited, the stored sentence vectors and h_θ (``--no-map``). Nothing served
    reads the last two: the linker and the citation profiles encode sentences through the encoder's
    cache. Its reranker (:data:`DEFAULT_RERANKER`) is one objective (triplet) trained on the latest
    training fold, with one LambdaMART seed at twice the learning rate and without the comparison row of
    trees over the features alone; ``full`` trains every objective on every fold and the bag of seeds.
    """
    limit = () if full or embed_limit is None else ("--limit", str(embed_limit))
    later = () if full else ("--no-map", "--embed", "papers")
    rerank = () if full else DEFAULT_RERANKER
    chosen = [
        Step("ingest", ("ingest", "all", "--on-error", "skip", "--data", str(data))),
        Step("compute", ("compute", "all", *limit, *later)),
        Step("index", ("compute", "index")),
        Step("reranker", ("train", "reranker", *rerank, "--out", "var/eval/reranker.json")),
        # The linker reads the CL-SciSumm files, not the store; the reranker's examples are one core's Python.
        Step("linker", ("linkage", "train"), beside="reranker"),
    ]
    if full:
        chosen.append(Step("linkage links", ("compute", "linkage")))
        # the full build's reranker flags (every objective, every fold) for the one retrained on the new encoder
        chosen.extend(
            Step(s.name, ("train", "reranker", "--out", "var/eval/reranker.json"))
            if s.name == "encoder reranker"
            else s
            for s in ENCODER_STEPS
        )
    return chosen


# Each step's time in the first default build from a fresh clone on the project's 2-core CPU, nothing else
# running (docs/results/first_run_serving.json): what a step's line says before this store has a time of its own.
FIRST_BUILD_SECONDS = {"ingest": 48.0, "compute": 203.0, "index": 80.0, "reranker": 329.0, "linker": 86.0}

# The encoder fine-tuned on the store's citation contexts and what reads it, after everything else (the first run's
# serving time is unchanged): `train encoder --serve` (bounded by --max-minutes: what it learnt by then is served, and
# running the command again resumes its checkpoint),
# every paper embedded again by the fine-tuned model, the index the server swaps in, and the reranker retrained on
# that index (swapped in too). Skipped where the build trained no reranker (no citation contexts to learn from).
ENCODER_STEPS = (
    Step(
        "encoder",
        ("train", "encoder", "--serve", "--no-eval", "--max-minutes", "45", "--out", "var/eval/encoder.json"),
    ),
    Step("encoder embeddings", ("compute", "embeddings", "--embed", "papers")),
    Step("encoder index", ("compute", "index")),
    Step("encoder reranker", ("train", "reranker", *DEFAULT_RERANKER, "--out", "var/eval/reranker.json")),
)

# What `citegraph serve --complete` computes after a default build, in a thread of the server
# (api/background.py): every paper's embedding, then what reads it, then the index the server swaps in, then the
# reranker trained again on that index's candidates (the server swaps it in too: a scorer trained while dense search
# knew the 10,000 most-cited papers ranks worse once it knows them all, docs/results.md), then the stored vectors
# of the default build's sentences (those of the 10,000 most-cited papers first).
BACKGROUND_STEPS = (
    Step("embeddings", ("compute", "embeddings", "--embed", "papers")),
    Step("taxonomy", ("compute", "taxonomy")),
    Step("hyperbolic", ("compute", "hyperbolic")),
    Step("index", ("compute", "index")),
    Step("reranker", ("train", "reranker", *DEFAULT_RERANKER, "--out", "var/eval/reranker.json")),
    Step("sentences", ("compute", "embeddings", "--embed", "sentences", "--limit", "10000")),
    *ENCODER_STEPS,
)


def background_steps(db: Path | None) -> tuple[Step, ...]:
    """:data:`BACKGROUND_STEPS` for the build of ``db`` (recorded in ``<db>.build.json``): its reranker step
    trains with the flags of that build's reranker step, and its sentence step stores the vectors of as many
    sentences as that build's ``compute`` step embedded papers (``--embed-limit``); the default build's where
    the record has none."""
    state = read_state(db) if db is not None else {}

    def recorded(name: str) -> list[str]:
        argv = state.get(name, {}).get("argv", [])
        return [str(a) for a in argv] if isinstance(argv, list) else []

    plan = list(BACKGROUND_STEPS)
    reranker = recorded("reranker")
    if reranker[:2] == ["train", "reranker"]:
        plan = [Step(s.name, tuple(reranker)) if s.name in ("reranker", "encoder reranker") else s for s in plan]
    compute = recorded("compute")
    if "--limit" in compute[:-1]:
        limit = compute[compute.index("--limit") + 1]
        plan = [
            Step(s.name, (*s.argv[: s.argv.index("--limit") + 1], limit)) if s.name == "sentences" else s for s in plan
        ]
    return tuple(plan)


def _version() -> str:
    """The git commit of the checkout (code changes re-run the steps), else the package version."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    from importlib.metadata import version

    return version("citegraph")


def _inputs_signature(data_dir: Path) -> str:
    """Size and modification time of every file of every bundled source under ``data_dir``."""
    digest = hashlib.sha256()
    for source in loaders.available(data_dir):
        if not source.bundled:
            continue
        root = data_dir / source.path
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            stat = path.stat()
            digest.update(f"{path}\x1f{stat.st_size}\x1f{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _fingerprint(step: Step, before: str, version: str, inputs: str) -> str:
    parts = [before, version, json.dumps(step.argv), inputs if step.name == "ingest" else ""]
    return hashlib.sha256("\x1e".join(parts).encode()).hexdigest()[:16]


def _fingerprints(plan: Sequence[Step], version: str, inputs: str) -> dict[str, str]:
    """Each step's fingerprint, chained to the step before it; a step run beside another chains to what
    that one chains to (it needs nothing the other makes), and the step after both to the later of the two."""
    out: dict[str, str] = {}
    chained_to: dict[str, str] = {}
    before = ""
    for step in plan:
        base = chained_to[step.beside] if step.beside else before
        chained_to[step.name] = base
        out[step.name] = before = _fingerprint(step, base, version, inputs)
    return out


@dataclass
class _Beside:
    """A step running in a second process beside another; its output goes to a log file beside the store."""

    number: int
    step: Step
    process: subprocess.Popen[bytes]
    log: Path
    started: float
    ended: float = 0.0  # when the process ended, taken by a watcher thread (it may end long before `wait`)
    watcher: threading.Thread | None = None

    def watch(self) -> _Beside:
        def until_done() -> None:
            self.process.wait()
            self.ended = time.perf_counter()

        self.watcher = threading.Thread(target=until_done, name=f"build-{self.step.name}", daemon=True)
        self.watcher.start()
        return self

    def wait(self) -> tuple[int, Step, int, float]:
        assert self.watcher is not None  # started by watch()
        self.watcher.join()
        code = self.process.returncode
        seconds = self.ended - self.started
        if code == 0:
            print(f"[{self.number}] {self.step.name}: finished in {_duration(seconds)} (beside the other)", flush=True)
        else:
            tail = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
            print(f"[{self.number}] {self.step.name} failed (exit {code}); the end of {self.log}:", flush=True)
            print("\n".join(f"    {line}" for line in tail), flush=True)
        return self.number, self.step, code, seconds


def _start_beside(
    number: int,
    total: int,
    step: Step,
    partner: Step,
    db: Path,
    global_flags: Sequence[str],
    args: argparse.Namespace,
    state: dict[str, dict[str, object]],
) -> _Beside:
    log_path = db.with_name(f"{db.name}.{step.name}.log")
    print(
        f"[{number}/{total}] {step.name}: citegraph {' '.join(step.argv)}{_expected_of(step, args, state)}; beside the "
        f"{partner.name}, in a second process (its output: {log_path})",
        flush=True,
    )
    command = [sys.executable, "-m", "api.cli.main", *global_flags, *step.argv]
    # one core each: the step it runs beside keeps the other (the reranker's examples are one thread of Python)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    with log_path.open("wb") as log_file:  # the child keeps its own descriptor
        process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, cwd=Path.cwd(), env=env)
    return _Beside(number, step, process, log_path, time.perf_counter()).watch()


def _expected_of(step: Step, args: argparse.Namespace, state: dict[str, dict[str, object]]) -> str:
    return _expected(step.name, args.full, state.get(step.name, {}).get("seconds"))


def _expected(name: str, full: bool, last: object) -> str:
    """What a step's line says of its duration: its time in this store's last build, else (a first
    default build) its time in the first build measured on the project's 2-core CPU."""
    if isinstance(last, int | float):
        return f"; took {_duration(float(last))} last time"
    if not full and name in FIRST_BUILD_SECONDS:
        return f"; about {_duration(FIRST_BUILD_SECONDS[name])} in a first build on a 2-core CPU"
    return ""


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def cmd_build(args: argparse.Namespace) -> int:
    settings = AppSettings.from_env()
    config = StoreConfig.from_env(db_path=args.db, backend=args.backend)
    if config.backend != "embedded":
        raise ConfigError(
            "`citegraph build` builds the embedded store; for Neo4j, build embedded and `citegraph copy` it, "
            "or run the steps one by one (docs/cli.md)"
        )
    db = config.db_path
    state_path = _state_path(db)
    state = read_state(db)
    if not state and state_path.exists():
        state_path.unlink()  # a record of a store that is gone
    data = Path(args.data) if args.data else settings.data_dir
    version, inputs = _version(), _inputs_signature(data)
    plan = steps(args.full, args.embed_limit, data)
    main = args.run_citegraph  # the CLI's own entry point (set by api.cli.main): each step is one of its commands
    global_flags = ["--db", str(db), *(["--quiet"] if args.quiet else [])]
    rows: list[tuple[str, str, float]] = []
    fingerprints = _fingerprints(plan, version, inputs)
    started_build = time.perf_counter()
    handled: set[str] = set()  # steps that ran beside another
    for number, step in enumerate(plan, 1):
        if step.name in handled:
            continue
        fingerprint = fingerprints[step.name]
        if state.get(step.name, {}).get("fingerprint") == fingerprint:
            print(
                f"[{number}/{len(plan)}] {step.name}: done already (same data, code and options), skipped", flush=True
            )
            rows.append((step.name, "skipped", 0.0))
            continue
        print(
            f"[{number}/{len(plan)}] {step.name}: citegraph {' '.join(step.argv)}{_expected_of(step, args, state)}",
            flush=True,
        )
        companions = [
            _start_beside(plan.index(other) + 1, len(plan), other, step, db, global_flags, args, state)
            for other in plan
            if other.beside == step.name and state.get(other.name, {}).get("fingerprint") != fingerprints[other.name]
        ]
        started = time.perf_counter()
        code = main([*global_flags, *step.argv])
        seconds = time.perf_counter() - started
        outcomes = [(number, step, code, seconds)]
        for companion in companions:
            outcomes.append(companion.wait())
            handled.add(companion.step.name)
        failed = None
        for position, done, exit_code, took in outcomes:
            if exit_code != 0:
                rows.append((done.name, f"failed (exit {exit_code})", took))
                failed = failed or (position, done, exit_code, took)
                continue
            state[done.name] = {
                "fingerprint": fingerprints[done.name],
                "seconds": round(took, 1),
                "argv": list(done.argv),
            }
            _write_state(state_path, state)
            rows.append((done.name, "ran", took))
        if failed is not None:
            position, done, exit_code, took = failed
            _print_table(rows, time.perf_counter() - started_build)
            print(
                f"citegraph build: step {position} ({done.name}) failed after {_duration(took)}; the steps before it "
                "are recorded. Fix the cause named above and run `make build` again: it resumes at this step.",
                flush=True,
            )
            return exit_code
    if args.full:  # every paper is embedded and h_θ fitted: nothing is left for the server's background build
        background = background_fingerprint(db)
        if background is not None:
            record_step(db, "background", background, 0.0)
    main([*global_flags, "stats"])
    total = time.perf_counter() - started_build
    _print_table(rows, total)
    if not args.full:
        print(
            "The rest of the corpus (embeddings, taxonomy vectors and Poincaré points of the papers beyond the "
            f"{args.embed_limit} most cited, h_θ) is computed by `citegraph serve --complete` while it serves "
            "(what `make demo` runs); /readyz and `citegraph stats` say how complete each property is.",
            flush=True,
        )
    if args.times_json:
        Path(args.times_json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.times_json).write_text(
            json.dumps({"full": args.full, "total_s": round(total, 1), "steps": [list(r) for r in rows]}, indent=2)
            + "\n",
            encoding="utf-8",
        )
    return 0


def _state_path(db: Path) -> Path:
    path = StoreFiles(db).build_state
    assert path is not None  # an embedded store always has one
    return path


def read_state(db: Path) -> dict[str, dict[str, object]]:
    """The recorded steps of the build of ``db`` (name -> fingerprint, seconds, argv); empty without one."""
    path = _state_path(db)
    if not db.exists() or not path.is_file():
        return {}
    try:
        steps: dict[str, dict[str, object]] = json.loads(path.read_text(encoding="utf-8")).get("steps", {})
    except (OSError, ValueError):
        return {}  # an unreadable record: every step runs again (each only computes what is missing)
    return steps


def record_step(db: Path, name: str, fingerprint: str, seconds: float) -> None:
    """Add (or replace) one step's record, keeping the others."""
    state = read_state(db)
    state[name] = {"fingerprint": fingerprint, "seconds": round(seconds, 1)}
    _write_state(_state_path(db), state)


def background_fingerprint(db: Path, plan: Sequence[Step] = BACKGROUND_STEPS) -> str | None:
    """The fingerprint the background build records: chained to the build's last recorded step, so a
    new build (new data, code or options) runs it again. None where the store has no build record."""
    state = read_state(db)
    last = next((entry for name, entry in reversed(state.items()) if name != "background"), None)
    if last is None:
        return None
    step = Step("background", tuple(arg for s in plan for arg in s.argv))
    return _fingerprint(step, str(last.get("fingerprint", "")), _version(), "")


def _write_state(path: Path, state: dict[str, dict[str, object]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"steps": state}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)  # a kill mid-write leaves the previous record, never half of one


def _print_table(rows: Sequence[tuple[str, str, float]], total: float) -> None:
    width = max(len(name) for name, _, _ in rows) if rows else 4
    print(f"\n{'step':<{width}}  {'status':<16}  time", flush=True)
    for name, status, seconds in rows:
        print(f"{name:<{width}}  {status:<16}  {_duration(seconds) if status != 'skipped' else '-'}")
    print(f"{'total':<{width}}  {'':<16}  {_duration(total)}", flush=True)


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``build``."""
    p = sub.add_parser(
        "build",
        help="every step from the data to a served graph (what `make build` runs), timed and resumable",
    )
    p.add_argument("--full", action="store_true", help="every step at full scale (make build FULL=1)")
    p.add_argument(
        "--embed-limit",
        type=int,
        default=10_000,
        help="papers (most cited first) and sentences embedded by the default build (default 10000)",
    )
    p.add_argument("--data", help="data folder (default: $CITEGRAPH_DATA or ../shared/data)")
    p.add_argument("--times-json", metavar="FILE", help="also write the per-step times as JSON")
    p.set_defaults(func=cmd_build)


__all__ = [
    "BACKGROUND_STEPS",
    "ENCODER_STEPS",
    "FIRST_BUILD_SECONDS",
    "Step",
    "add_commands",
    "background_fingerprint",
    "cmd_build",
    "read_state",
    "record_step",
    "steps",
]
