"""Damage copies of a small store at random offsets and record what notices: the open, ``citegraph check``, or nothing.

Each trial copies the store file, overwrites ``--bytes`` random bytes at each of ``--hits`` random offsets
(seeded; the first 4 KiB, the file header, are left alone), and then, each in a child process (a damaged
page may crash the engine rather than raise):

1. opens the copy read-only and reads every table as ``citegraph`` reads it (named statements, with the
   check of every result for NaN and infinity): the open or a read fails, or the snapshot is taken;
2. runs ``citegraph check`` on it (exit 0 sound, 65 impossible values found; anything else: the engine
   failed or crashed);
3. compares the snapshot with the undamaged store's (stats and every table, as ``kill_harness.py`` does).

A trial's outcome is the first of: an *engine error* (1 fails: the engine refused to open or read a
page), *refused where read* (1 fails: the read guard met a NaN, an infinity or text that is not UTF-8), an
*engine crash* (1 or 2 died), *found by check only* (2 exits 65), *harmless* (nothing noticed, and the data
read back equals the original: the bytes hit free or unused space) or *undetected* (nothing noticed, but the
data differs). LadybugDB checksums its write-ahead log only (``Database(enable_checksums=True)`` is about the
WAL), not the pages of the store file::

    python benchmarks/corruption_probe.py --db <a small store> --trials 30 --out docs/results/corruption_probe.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

HEADER_BYTES = 4096  # the file header: damage there is a different experiment (the open always fails)

SNAPSHOT = """
import json, pickle, sys
sys.path.insert(0, sys.argv[3])
from kill_harness import snapshot
from graph import CitegraphError
try:
    shot = snapshot(__import__("pathlib").Path(sys.argv[1]))
except CitegraphError as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:400], "corrupt": type(exc).__name__ == "StoreCorruptError"}))
    sys.exit(0)
with open(sys.argv[2], "wb") as handle:
    pickle.dump(shot, handle)
print(json.dumps({"error": None, "corrupt": False}))
"""


def child(args: list[str], timeout: float) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return -9, "", "timed out"
    return done.returncode, done.stdout, done.stderr


def read_back(path: Path, out: Path) -> tuple[str, str | None]:
    """("ok", None), ("corrupt" | "error", message) or ("crash", what) of a child that snapshots ``path`` into
    ``out``: "corrupt" when the read guard refused a value (a NaN, an infinity, text that is not UTF-8), "error"
    when the engine failed."""
    code, stdout, stderr = child([sys.executable, "-c", SNAPSHOT, str(path), str(out), str(ROOT / "benchmarks")], 600)
    if code != 0:
        return "crash", f"exit {code}: {stderr.strip().splitlines()[-1] if stderr.strip() else ''}"[:300]
    result = json.loads(stdout.strip().splitlines()[-1])
    if result["error"] is None:
        return "ok", None
    return ("corrupt" if result["corrupt"] else "error"), result["error"]


def check(path: Path) -> tuple[str, str]:
    """("sound" | "found" | "error" | "crash", the last line of its output)."""
    code, stdout, stderr = child([sys.executable, "-m", "api.cli", "--db", str(path), "-q", "check"], 600)
    last = (stdout.strip() or stderr.strip()).splitlines()[-1:] or [""]
    if code == 0:
        return "sound", last[0][:300]
    if code == 65:
        return "found", (stdout.strip().splitlines() or [""])[1 if len(stdout.strip().splitlines()) > 1 else 0][:300]
    if code in (1, 2):
        return "error", last[0][:300]
    return "crash", f"exit {code}: {last[0]}"[:300]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a small embedded store (copied, never written)")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--hits", type=int, default=8, help="damaged places per trial")
    parser.add_argument("--bytes", type=int, default=16, help="random bytes written at each place")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", help="working folder (default: a temporary one, removed)")
    parser.add_argument("--out", help="JSON record to write")
    args = parser.parse_args()

    import pickle

    from kill_harness import difference

    source = Path(args.db)
    if source.with_name(source.name + ".wal").exists():
        sys.exit(f"{source} has a write-ahead log beside it; run `citegraph recover` on a copy first")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="corruption-"))
    work.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    original = work / "original.pkl"
    state, error = read_back(source, original)
    if state != "ok":
        sys.exit(f"the undamaged store does not read back: {error}")
    with original.open("rb") as handle:
        expected = pickle.load(handle)
    size = source.stat().st_size
    trials = []
    for trial in range(args.trials):
        rng = random.Random(args.seed * 100_003 + trial)
        damaged = work / "damaged.db"
        for leftover in work.glob("damaged.db*"):
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        shutil.copyfile(source, damaged)
        offsets = sorted(rng.randrange(HEADER_BYTES, size - args.bytes) for _ in range(args.hits))
        with damaged.open("r+b") as handle:
            for offset in offsets:
                handle.seek(offset)
                handle.write(rng.randbytes(args.bytes))
        snap = work / "damaged.pkl"
        snap.unlink(missing_ok=True)
        read_state, read_error = read_back(damaged, snap)
        check_state, check_line = check(damaged)
        changed = None
        if read_state == "ok":
            with snap.open("rb") as handle:
                changed = difference(expected, pickle.load(handle))
        if read_state == "error":
            verdict = "engine error on open or read"
        elif read_state == "corrupt":
            verdict = "refused where read (not finite, not UTF-8)"
        elif read_state == "crash" or check_state == "crash":
            verdict = "engine crash"
        elif check_state in ("found", "error"):
            verdict = "found by check only"
        else:
            verdict = "undetected" if changed else "harmless"
        trials.append(
            {"trial": trial, "offsets": offsets, "read": read_state, "read_error": read_error,
             "check": check_state, "check_line": check_line, "changed": changed, "verdict": verdict}
        )  # fmt: skip
        print(json.dumps(trials[-1])[:400], flush=True)
    elapsed = time.perf_counter() - began
    report = record(args, trials, size, elapsed)
    print(json.dumps(report["summary"], indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def record(args: argparse.Namespace, trials: list[dict[str, Any]], size: int, elapsed: float) -> dict[str, Any]:
    from run_record import commit, run_record

    verdicts = (
        "engine error on open or read",
        "refused where read (not finite, not UTF-8)",
        "found by check only",
        "engine crash",
        "harmless",
        "undetected",
    )
    counts = {v: sum(t["verdict"] == v for t in trials) for v in verdicts}
    found_by_check = sum(t["check"] in ("found", "error") for t in trials)
    run = run_record("benchmarks/corruption_probe.py", args)
    return {
        "capability": "build",
        "kind": "quality",
        "title": "Damaged store files: what notices random byte damage",
        **run,
        "machine": f"2-core development machine shared with other sessions; {run['machine']}",
        "commit": commit(short=True),
        "notes": [
            f"{len(trials)} trials on a {size / 2**20:.1f} MiB store, {args.hits} places of {args.bytes} random bytes "
            f"each, in {elapsed / 60:.1f} min. 'harmless': nothing noticed and every table read back equal to the "
            "undamaged store's (the bytes hit free or unused space); 'undetected': nothing noticed but the data "
            "differs. LadybugDB checksums its write-ahead log, not the pages of the store file.",
        ],
        "summary": {"trials": len(trials), **counts, "citegraph check exits non-zero": found_by_check},
        "tables": [
            {
                "title": None,
                "row_header": "outcome",
                "baselines": [],
                "served": None,
                "rows": [
                    *({"system": v, "metric": "trials", "value": n} for v, n in counts.items()),
                    {"system": "(any) `citegraph check` exits non-zero", "metric": "trials", "value": found_by_check},
                ],
            }
        ],
        "trials": trials,
    }


if __name__ == "__main__":
    sys.exit(main())
