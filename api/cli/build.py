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
import subprocess
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


def steps(full: bool, embed_limit: int | None, data: Path) -> list[Step]:
    """The build's steps; ``full`` runs every one at full scale (``make build FULL=1``)."""
    limit = () if full or embed_limit is None else ("--limit", str(embed_limit))
    rerank = () if full else ("--objective", "triplet")
    chosen = [
        Step("ingest", ("ingest", "all", "--on-error", "skip", "--data", str(data))),
        Step("compute", ("compute", "all", *limit)),
        Step("index", ("compute", "index")),
        Step("reranker", ("train", "reranker", *rerank, "--out", "var/eval/reranker.json")),
        Step("linker", ("linkage", "train")),
    ]
    if full:
        chosen.append(Step("linkage links", ("compute", "linkage")))
    return chosen


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
    state_path = StoreFiles(db).build_state
    assert state_path is not None  # an embedded store always has one
    state: dict[str, dict[str, object]] = {}
    if db.exists() and state_path.is_file():
        state = json.loads(state_path.read_text(encoding="utf-8")).get("steps", {})
    elif state_path.exists():
        state_path.unlink()  # a record of a store that is gone
    data = Path(args.data) if args.data else settings.data_dir
    version, inputs = _version(), _inputs_signature(data)
    plan = steps(args.full, args.embed_limit, data)
    main = args.run_citegraph  # the CLI's own entry point (set by api.cli.main): each step is one of its commands
    global_flags = ["--db", str(db), *(["--quiet"] if args.quiet else [])]
    rows: list[tuple[str, str, float]] = []
    before = ""
    started_build = time.perf_counter()
    for number, step in enumerate(plan, 1):
        fingerprint = _fingerprint(step, before, version, inputs)
        before = fingerprint
        recorded = state.get(step.name, {})
        last = recorded.get("seconds")
        if recorded.get("fingerprint") == fingerprint:
            print(
                f"[{number}/{len(plan)}] {step.name}: done already (same data, code and options), skipped", flush=True
            )
            rows.append((step.name, "skipped", 0.0))
            continue
        expected = f"; took {_duration(float(last))} last time" if isinstance(last, int | float) else ""
        print(f"[{number}/{len(plan)}] {step.name}: citegraph {' '.join(step.argv)}{expected}", flush=True)
        started = time.perf_counter()
        code = main([*global_flags, *step.argv])
        seconds = time.perf_counter() - started
        if code != 0:
            rows.append((step.name, f"failed (exit {code})", seconds))
            _print_table(rows, time.perf_counter() - started_build)
            print(
                f"citegraph build: step {number} ({step.name}) failed after {_duration(seconds)}; the steps before it "
                "are recorded. Fix the cause named above and run `make build` again: it resumes at this step.",
                flush=True,
            )
            return code
        state[step.name] = {"fingerprint": fingerprint, "seconds": round(seconds, 1), "argv": list(step.argv)}
        _write_state(state_path, state)
        rows.append((step.name, "ran", seconds))
    main([*global_flags, "stats"])
    total = time.perf_counter() - started_build
    _print_table(rows, total)
    if args.times_json:
        Path(args.times_json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.times_json).write_text(
            json.dumps({"full": args.full, "total_s": round(total, 1), "steps": [list(r) for r in rows]}, indent=2)
            + "\n",
            encoding="utf-8",
        )
    return 0


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


__all__ = ["Step", "add_commands", "cmd_build", "steps"]
