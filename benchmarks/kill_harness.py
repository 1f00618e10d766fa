"""Kill every writing command with SIGKILL at random points and check what it leaves.

The store is small and built from the shared taxonomy and a synthetic corpus (seeded: papers with titles,
abstracts, arXiv categories and citations with contexts), so that every step has work to do in a
second or two. The writing commands, each on the store the one before it left (a *stage*):

==============  =============================================================================
stage           command
==============  =============================================================================
first-load      ``ingest taxonomy`` into a store that does not exist yet (built in ``<db>.building``)
later-load      ``ingest jsonl corpus.jsonl`` into the taxonomy store (one transaction)
cocitation      ``compute cocitation``
embeddings      ``compute embeddings --embed papers``
taxonomy        ``compute taxonomy``
hyperbolic      ``compute hyperbolic --epochs E`` (only when named in ``--stages``: minutes per run here)
copy            ``copy --from embedded --to embedded`` of the taxonomy stage's store into a new one
==============  =============================================================================

For each stage a clean run gives the expected result (``stats --json`` and every table, sorted, floats
compared to 1e-5) and the run time T; a second clean run checks that the stage is deterministic at all.
Then, ``--kills`` times in all (stages in turn): copy the stage's starting store, start the command,
send SIGKILL after a uniform random delay in [0, T), and check that

1. the store opens read-only (a first load killed before it created the store leaves none: counted apart),
2. the store opens read-write,
3. a rerun of the same command exits 0,
4. the result equals the clean run's.

Commands run in children of a fork server that has imported the CLI and torch once, so a kill lands in
the command's work, not in seconds of imports. The record goes to ``docs/results/kill_harness.json``::

    python benchmarks/kill_harness.py --kills 105 --out docs/results/kill_harness.json
    python benchmarks/render_results.py
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DB = "s.db"
WORDS = (
    "citation",
    "graph",
    "parsing",
    "tagger",
    "translation",
    "alignment",
    "neural",
    "embedding",
    "retrieval",
    "ranking",
    "corpus",
    "sentence",
    "summarization",
    "dependency",
    "semantic",
    "lexical",
    "model",
    "attention",
    "hyperbolic",
    "taxonomy",
    "cluster",
    "network",
    "query",
    "document",
    "entity",
    "relation",
    "extraction",
    "learning",
    "transfer",
    "language",
    "speech",
    "dialogue",
    "vision",
)
CATEGORIES = ("cs.CL", "cs.IR", "cs.LG", "cs.AI", "cs.DL")


@dataclass(frozen=True)
class Stage:
    name: str
    argv: tuple[str, ...]  # after `citegraph --db <db> -q`; {corpus}, {src}, {dst}, {progress} filled in
    start: str | None  # the stage whose clean result this one starts from (None: nothing)
    target: str = DB  # the store the command writes (copy writes another)


def stages(epochs: int) -> list[Stage]:
    return [
        Stage("first-load", ("ingest", "taxonomy"), None),
        Stage("later-load", ("ingest", "jsonl", "{corpus}"), "first-load"),
        Stage("cocitation", ("compute", "cocitation"), "later-load"),
        Stage("embeddings", ("compute", "embeddings", "--embed", "papers"), "cocitation"),
        Stage("taxonomy", ("compute", "taxonomy"), "embeddings"),
        Stage("hyperbolic", ("compute", "hyperbolic", "--epochs", str(epochs)), "taxonomy"),
        Stage(
            "copy",
            ("copy", "--from", "embedded", "--to", "embedded", "--from-db", "{src}", "--to-db", "{dst}",
             "--progress-file", "{progress}", "--batch-size", "200"),
            "taxonomy",
            target="copy.db",
        ),
    ]  # fmt: skip


def write_corpus(path: Path, papers: int, seed: int) -> None:
    """A seeded synthetic corpus in the JSON Lines format of docs/data.md."""
    rng = random.Random(seed)
    lines = []
    for i in range(papers):

        def text(n: int) -> str:
            return " ".join(rng.choice(WORDS) for _ in range(n))

        lines.append(
            {
                "type": "paper",
                "id": f"syn-{i}",
                "title": text(6).capitalize(),
                "abstract": text(40).capitalize() + ".",
                "year": 2000 + i * 20 // papers,
                "authors": [f"Author {rng.randrange(papers // 3)}", f"Author {rng.randrange(papers // 3)}"],
                "categories": rng.sample(CATEGORIES, rng.randint(0, 2)),
            }
        )
        for cited in sorted(set(rng.sample(range(i), min(i, 5)))):
            lines.append(
                {"type": "citation", "citing": f"syn-{i}", "cited": f"syn-{cited}", "contexts": [text(12) + "."]}
            )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


# commands in fork-server children -------------------------------------------------------------------
def _child(argv: list[str], cwd: str, log: str) -> None:
    """Run ``citegraph ARGV`` in this child, its output to ``log``; exits with its status."""
    os.chdir(cwd)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    from api.cli.main import main

    sys.exit(main(argv))


def start(ctx: Any, argv: list[str], cwd: Path, log: Path) -> Any:
    process = ctx.Process(target=_child, args=(argv, str(cwd), str(log)))
    process.start()
    return process


def run(ctx: Any, argv: list[str], cwd: Path, log: Path, timeout: float) -> tuple[int, float]:
    started = time.perf_counter()
    process = start(ctx, argv, cwd, log)
    process.join(timeout)
    if process.exitcode is None:
        process.kill()
        process.join()
        return -1, time.perf_counter() - started
    return int(process.exitcode), time.perf_counter() - started


# checks in this process ----------------------------------------------------------------------------
class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def opens(path: Path, *, read_only: bool) -> str | None:
    """None when the store opens (and counts its nodes), else the error."""
    from graph import CitegraphError, StoreConfig, open_store

    try:
        with open_store(StoreConfig(db_path=path, read_only=read_only)) as store:
            store.stats()
        return None
    except CitegraphError as exc:
        return str(exc)


def snapshot(path: Path) -> dict[str, Any]:
    """``stats --json`` and every table as a frame sorted by all its plain columns."""
    import pandas as pd

    from graph import StoreConfig, open_store

    with open_store(StoreConfig(db_path=path, read_only=True)) as store:
        tables: dict[str, Any] = {"stats": store.stats()}
        for label in store.schema.nodes:
            frames = list(store.iter_nodes(label, 100_000))
            tables[label] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        for rel in store.schema.rels:
            tables[rel] = store.read_edges(rel)
    for name, frame in tables.items():
        if name != "stats" and len(frame):
            plain = [c for c in frame.columns if frame[c].map(_scalar).all()]
            tables[name] = frame.sort_values(plain).reset_index(drop=True) if plain else frame
    return tables


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bytes, int, float, bool)) or getattr(value, "ndim", 1) == 0


def difference(expected: dict[str, Any], got: dict[str, Any]) -> str | None:
    """The first difference between two snapshots, or None."""
    import numpy as np

    if expected["stats"] != got["stats"]:
        return f"stats differ: {got['stats']} vs {expected['stats']}"
    for name, frame in expected.items():
        if name == "stats":
            continue
        other = got[name]
        if list(frame.columns) != list(other.columns) or len(frame) != len(other):
            return f"{name}: shape {other.shape} vs {frame.shape}"
        for column in frame.columns:
            for i, (a, b) in enumerate(zip(frame[column].to_numpy(), other[column].to_numpy())):
                if not _same(a, b, np):
                    return f"{name}.{column} row {i}: {b!r:.80} vs {a!r:.80}"
    return None


def _same(a: Any, b: Any, np: Any) -> bool:
    if a is None or b is None or (isinstance(a, float) and np.isnan(a)) or (isinstance(b, float) and np.isnan(b)):
        return (a is None or (isinstance(a, float) and np.isnan(a))) and (
            b is None or (isinstance(b, float) and np.isnan(b))
        )
    if isinstance(a, str) or isinstance(b, str):
        return bool(a == b)
    if hasattr(a, "__len__") or hasattr(b, "__len__"):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            return False
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            return bool(np.allclose(x.astype(float), y.astype(float), atol=1e-5, equal_nan=True))
        return bool((x == y).all())
    if isinstance(a, float) or isinstance(b, float):
        return bool(abs(float(a) - float(b)) <= 1e-5 * max(1.0, abs(float(a))))
    return bool(a == b)


# the harness ---------------------------------------------------------------------------------------
@dataclass
class StageResult:
    clean_s: float = 0.0
    deterministic: bool = True
    kills: int = 0  # SIGKILLs that landed while the command ran
    finished_first: int = 0  # the command ended before its kill was due
    no_store: int = 0  # a kill before the store file existed (first load)
    opened_ro: int = 0
    opened_rw: int = 0
    reruns_ok: int = 0
    identical: int = 0
    left: Counter[str] = field(default_factory=Counter)  # files beside the store after a kill
    repaired: Counter[str] = field(default_factory=Counter)  # the opens' warning lines, by kind
    failures: list[str] = field(default_factory=list)


def fill(argv: tuple[str, ...], work: Path, corpus: Path) -> list[str]:
    names = {"{corpus}": str(corpus), "{src}": str(work / "src.db"), "{dst}": str(work / "copy.db"),
             "{progress}": str(work / "copy.progress.json")}  # fmt: skip
    return [names.get(a, a) for a in argv]


def prepare(stage: Stage, starts: dict[str, Path], work: Path) -> None:
    """``work`` holds what the stage starts from: the store (for copy: the source, as src.db)."""
    if work.exists():
        shutil.rmtree(work)
    if stage.start is None:
        work.mkdir(parents=True)
    else:
        shutil.copytree(starts[stage.start], work)
    if stage.target != DB:
        (work / DB).rename(work / "src.db")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=105, help="SIGKILLs that land while a command runs, in all")
    parser.add_argument("--papers", type=int, default=150, help="papers of the synthetic corpus")
    parser.add_argument("--epochs", type=int, default=3, help="epochs of compute hyperbolic")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--stages",
        default=",".join(s.name for s in stages(0) if s.name != "hyperbolic"),
        help="comma-separated stage names (default: all but hyperbolic, whose clean run takes minutes here)",
    )
    parser.add_argument("--work", help="working folder (default: a temporary one, removed)")
    parser.add_argument("--out", help="JSON record to write (e.g. docs/results/kill_harness.json)")
    args = parser.parse_args()

    logging.basicConfig(level=logging.ERROR)
    catcher = Warnings()
    logging.getLogger("graph").addHandler(catcher)
    logging.getLogger("graph").setLevel(logging.WARNING)
    logging.getLogger("graph").propagate = False
    root = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kill-harness-"))
    root.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        CITEGRAPH_CACHE=str(root / "cache"),
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(ROOT),
        CITEGRAPH_DATA=os.environ.get("CITEGRAPH_DATA", str(ROOT.parent / "shared" / "data")),
    )
    corpus = root / "corpus.jsonl"
    write_corpus(corpus, args.papers, args.seed)
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["api.cli.main", "torch", "gnn.taxonomy.compute", "gnn.hyperbolic.compute"])
    warm = ctx.Process(target=os.getpid)  # starts the fork server: its imports do not count in T
    warm.start()
    warm.join()
    rng = random.Random(args.seed)
    chosen = stages(args.epochs)
    wanted = args.stages.split(",")
    chosen = [s for s in chosen if s.name in wanted]
    starts: dict[str, Path] = {}
    expected: dict[str, dict[str, Any]] = {}
    results = {s.name: StageResult() for s in chosen}
    began = time.perf_counter()

    # clean runs: the expected result and T of each stage, twice (is the stage deterministic?)
    all_stages = {s.name: s for s in stages(args.epochs)}
    needed: list[Stage] = []
    for stage in chosen:  # the stages a chosen one starts from run clean too
        chain = [stage]
        while chain[-1].start is not None and chain[-1].start not in {s.name for s in needed + chain}:
            chain.append(all_stages[chain[-1].start])
        needed += [s for s in reversed(chain) if s not in needed]
    for stage in needed:
        for attempt in (0, 1):
            work = root / "clean" / f"{stage.name}-{attempt}"
            prepare(stage, starts, work)
            argv = ["--db", str(work / DB), "-q", *fill(stage.argv, work, corpus)]
            code, seconds = run(ctx, argv, work, work / "log.txt", 1800)
            if code != 0:
                sys.exit(f"clean run of {stage.name} failed ({code}): {(work / 'log.txt').read_text()[-3000:]}")
            shot = snapshot(work / stage.target)
            if attempt == 0:
                starts[stage.name], expected[stage.name] = work, shot
                if stage.name in results:
                    results[stage.name].clean_s = seconds
            elif stage.name in results and (diff := difference(expected[stage.name], shot)):
                results[stage.name].deterministic = False
                results[stage.name].failures.append(f"two clean runs differ: {diff}")
        print(f"clean {stage.name}: {results.get(stage.name, StageResult()).clean_s:.1f}s", flush=True)

    # kills
    order = [s for s in chosen if results[s.name].deterministic]
    landed = 0
    turn = 0
    while landed < args.kills and order:
        stage = order[turn % len(order)]
        turn += 1
        result = results[stage.name]
        work = root / "kill" / stage.name
        prepare(stage, starts, work)
        argv = ["--db", str(work / DB), "-q", *fill(stage.argv, work, corpus)]
        process = start(ctx, argv, work, work / "killed.txt")
        time.sleep(rng.uniform(0, result.clean_s))
        if process.exitcode is not None:
            result.finished_first += 1
            process.join()
            continue
        os.kill(process.pid, signal.SIGKILL)
        process.join()
        landed += 1
        result.kills += 1
        target = work / stage.target
        for name in os.listdir(work):
            if name.startswith(stage.target) and name != stage.target and not name.endswith(".clusters.json"):
                result.left[name.removeprefix(stage.target)] += 1
        catcher.lines.clear()
        where = f"{stage.name} kill {result.kills}"
        if not target.exists():
            result.no_store += 1
        elif (error := opens(target, read_only=True)) is None:
            result.opened_ro += 1
        else:
            result.failures.append(f"{where}: read-only open: {error}")
        if (error := opens(target, read_only=False)) is None:
            result.opened_rw += 1
        else:
            result.failures.append(f"{where}: read-write open: {error}")
        for line in catcher.lines:
            kind = ("first-load files" if ".building" in line else "torn WAL" if "torn" in line
                    else "interrupted checkpoint" if "checkpoint" in line else "staging table" if "staging" in line
                    else "other")  # fmt: skip
            result.repaired[kind] += 1
        code, _ = run(ctx, argv, work, work / "rerun.txt", 1800)
        if code != 0:
            result.failures.append(f"{where}: rerun exited {code}: {(work / 'rerun.txt').read_text()[-800:]}")
            continue
        result.reruns_ok += 1
        if diff := difference(expected[stage.name], snapshot(target)):
            result.failures.append(f"{where}: the rerun's result differs: {diff}")
            shutil.copytree(work, root / "failed" / f"{stage.name}-{result.kills}", dirs_exist_ok=True)
        else:
            result.identical += 1
        print(f"{where}: ok={not result.failures}", flush=True)
    elapsed = time.perf_counter() - began

    report = record(args, results, landed, elapsed)
    for row in report["tables"][0]["rows"]:
        print(f"{row['system']:<12} {row['metric']:<22} {row['value']}")
    print(json.dumps(report["summary"], indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if not args.work:
        shutil.rmtree(root, ignore_errors=True)
    failed = sum(len(r.failures) for r in results.values())
    return 1 if failed or landed < args.kills else 0


def record(args: argparse.Namespace, results: dict[str, StageResult], landed: int, elapsed: float) -> dict[str, Any]:
    from run_record import run_record

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    rows = []
    for name, r in results.items():
        for metric, value in (
            ("clean run (s)", round(r.clean_s, 2)),
            ("kills", r.kills),
            ("no store yet", r.no_store),
            ("opens read-only", r.opened_ro),
            ("opens read-write", r.opened_rw),
            ("rerun exits 0", r.reruns_ok),
            ("rerun = clean run", r.identical),
            ("repaired on open", ", ".join(f"{k} {v}" for k, v in sorted(r.repaired.items())) or "-"),
            ("left beside the store", ", ".join(f"{k} {v}" for k, v in sorted(r.left.items())) or "-"),
        ):
            rows.append({"system": name, "metric": metric, "value": value})
    record = run_record("benchmarks/kill_harness.py", args)
    return {
        "capability": "build",
        "kind": "quality",
        "title": "Crash safety: writing commands killed with SIGKILL at random points",
        **record,
        "machine": f"2-core development machine shared with other sessions; {record['machine']}",
        "commit": commit.stdout.strip() or None,
        "notes": [
            f"{landed} kills in {elapsed / 60:.1f} min; after each, the store opened read-only (unless a first "
            "load was killed before creating it) and read-write, a rerun exited 0 and its result (stats and every "
            "table, floats to 1e-5) equalled a clean run's, except where the failures list says otherwise.",
            "Kill delays are uniform in [0, T) of the command's clean run; commands start in children of a fork "
            "server that has imported the CLI, so kills land in the work, not in imports.",
        ],
        "summary": {
            "kills": landed,
            "minutes": round(elapsed / 60, 1),
            "failures": [f for r in results.values() for f in r.failures],
        },
        "tables": [{"title": None, "row_header": "stage", "baselines": [], "served": None, "rows": rows}],
    }


if __name__ == "__main__":
    sys.exit(main())
