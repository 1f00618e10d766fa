"""Ingest throughput: the project's validated ingest path against a bare LadybugDB COPY.

Generates a seeded synthetic citation graph (papers with string ids, titles and years; CITES edges
with a uniform citing paper and a power-law cited paper, no self-loops, no duplicate pairs), writes
it once to Parquet, then loads the *same* frames twice, each load in its own fresh Python process
and into its own fresh database:

* path A: ``open_store(StoreConfig(db_path=...))`` then ``ingest(store, GraphBatch(...))``, i.e.
  validation + typed Arrow conversion + COPY inside one transaction (the project's ingest path);
* path B: a bare ``ladybug.Connection.execute("COPY Paper FROM $frame", ...)`` of the same frames
  (as Arrow tables, or pandas frames with ``--bare-route pandas``) into tables with the same
  column types (only the columns used), no validation.

Timing: ``time.perf_counter`` around the load only (``ingest(...)`` for A, the two COPY statements
for B); opening the database, creating tables, reading the Parquet input and closing are reported
separately. Memory: each path runs in its own child process, and the parent reads that child's
kernel RSS high-water mark (``ru_maxrss`` from ``os.wait4``: the whole child, including the
interpreter, libraries and the input frames). The parent also samples the child's RSS with psutil
every 20 ms (when psutil is installed) to give the peak inside the timed window and the RSS just
before it, so the load's own increment can be told apart from the baseline.

Usage::

    .venv/bin/python benchmarks/ingest_bench.py                       # 1M papers / 10M citations
    .venv/bin/python benchmarks/ingest_bench.py --papers 100000 --edges 1000000 --out-json small.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project package must import
    sys.path.insert(0, str(ROOT))

SAMPLE_SECONDS = 0.02


# synthetic data ----------------------------------------------------------------------------------
def _vocabulary(rng: np.random.Generator, size: int = 2_000) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 11, size)
    return np.array(["".join(rng.choice(letters, n)) for n in lengths], dtype=object)


def generate(papers: int, edges: int, seed: int, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Canonical Paper {id, title, year} and CITES {source, target, n_contexts} frames.

    The cited paper of each edge is drawn with probability proportional to ``rank ** -alpha``
    over a random popularity ranking of the papers (Zipf-like, so in-degrees follow a power law
    with tail exponent about ``1 + 1/alpha``); the citing paper is uniform. Self-loops and
    repeated (source, target) pairs are dropped, oversampling until ``edges`` distinct edges
    remain (kept in draw order, not sorted).
    """
    rng = np.random.default_rng(seed)
    width = max(7, len(str(papers - 1)))
    ids = pd.Series([f"P{i:0{width}d}" for i in range(papers)], dtype="str")
    vocab = _vocabulary(rng)
    n_words = rng.integers(3, 9, papers)
    words = vocab[rng.integers(0, len(vocab), int(n_words.sum()))]
    ends = np.cumsum(n_words)
    titles = [" ".join(words[e - k : e]).capitalize() for e, k in zip(ends.tolist(), n_words.tolist())]
    paper_frame = pd.DataFrame(
        {"id": ids, "title": pd.Series(titles, dtype="str"), "year": rng.integers(1950, 2026, papers).astype(np.int64)}
    )

    rank = rng.permutation(papers)  # rank[r] = the paper with popularity rank r
    weights = np.arange(1, papers + 1, dtype=np.float64) ** -alpha
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    citing = np.empty(0, dtype=np.int64)
    cited = np.empty(0, dtype=np.int64)
    drawn = 0
    want = edges
    while True:
        m = int(want * 1.03) + 1_000
        new_citing = rng.integers(0, papers, m, dtype=np.int64)
        new_cited = rank[np.minimum(np.searchsorted(cdf, rng.random(m), side="right"), papers - 1)]
        drawn += m
        citing = np.concatenate([citing, new_citing])
        cited = np.concatenate([cited, new_cited])
        codes = citing * papers + cited
        codes[citing == cited] = -1  # self-loops
        _, first = np.unique(codes, return_index=True)
        first = first[codes[first] >= 0]
        if len(first) >= edges:
            break
        want = edges - len(first)
    self_loops = int((citing == cited).sum())
    keep = np.sort(first)[:edges]  # first occurrences, in draw order
    cites_frame = pd.DataFrame(
        {
            "source": ids.take(citing[keep]).reset_index(drop=True),
            "target": ids.take(cited[keep]).reset_index(drop=True),
            "n_contexts": rng.geometric(0.6, len(keep)).astype(np.int64),
        }
    )
    in_degree = np.bincount(cited[keep], minlength=papers)
    stats = {
        "edges_drawn": drawn,
        "self_loops_dropped": self_loops,
        "duplicates_dropped": int(len(codes) - self_loops - len(first)),
        "edges_kept": int(len(keep)),
        "max_in_degree": int(in_degree.max()),
        "papers_never_cited": int((in_degree == 0).sum()),
        "top_1pct_share_of_citations": round(float(np.sort(in_degree)[-max(1, papers // 100) :].sum() / max(1, len(keep))), 4),
    }
    return paper_frame, cites_frame, stats


# children: one load each -------------------------------------------------------------------------
def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _read_frames(workdir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    papers = pd.read_parquet(workdir / "papers.parquet")
    cites = pd.read_parquet(workdir / "cites.parquet")
    return papers, cites


class _Timers:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
                self.calls[name] = self.calls.get(name, 0) + 1

        return timed


def child_a(workdir: Path, profile: bool) -> dict[str, Any]:
    import importlib

    from graph import GraphBatch, StoreConfig, ingest, open_store

    # graph/__init__ re-exports the function `ingest`, which shadows the module attribute.
    ingest_module = importlib.import_module("graph.ingest")
    embedded_module = importlib.import_module("graph.embedded")

    papers, cites = _read_frames(workdir)
    t = time.perf_counter()
    store = open_store(StoreConfig(db_path=workdir / "a.db"))
    open_seconds = time.perf_counter() - t

    # Cheap split of the ingest time: wrap the stages ingest() calls (module globals / instance attributes).
    timers = _Timers()
    ingest_module.validate_batch = timers.wrap("validate_batch", ingest_module.validate_batch)
    embedded_module.arrow_table = timers.wrap("arrow_table", embedded_module.arrow_table)
    store.apply = timers.wrap("apply", store.apply)  # type: ignore[method-assign]
    store.has_nodes = timers.wrap("has_nodes", store.has_nodes)  # type: ignore[method-assign]
    store._copy = timers.wrap("copy", store._copy)  # type: ignore[attr-defined]
    store.count_rels = timers.wrap("count_rels", store.count_rels)  # type: ignore[method-assign]

    batch = GraphBatch("synthetic", nodes={"Paper": papers}, rels={"CITES": cites})
    gc.collect()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    rss_before = _rss()
    t_start = time.monotonic()
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    report = ingest(store, batch)
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - started
    t_end = time.monotonic()
    if profiler:
        profiler.dump_stats(str(workdir / "path_a.prof"))
    nodes, edges = store.count_nodes("Paper"), store.count_rels("CITES")
    t = time.perf_counter()
    store.close()
    close_seconds = time.perf_counter() - t
    return {
        "seconds": seconds,
        "t_start": t_start,
        "t_end": t_end,
        "rss_before_bytes": rss_before,
        "open_seconds": open_seconds,
        "close_seconds": close_seconds,
        "nodes": nodes,
        "edges": edges,
        "rejected": report.rejected,
        "split_seconds": {k: round(v, 3) for k, v in timers.seconds.items()},
        "split_calls": timers.calls,
    }


BARE_DDL = (
    "CREATE NODE TABLE Paper(id STRING, title STRING, year INT64, PRIMARY KEY(id))",
    "CREATE REL TABLE CITES(FROM Paper TO Paper, n_contexts INT64)",
)


def child_b(workdir: Path, route: str) -> dict[str, Any]:
    import ladybug
    import pyarrow as pa

    papers, cites = _read_frames(workdir)
    t = time.perf_counter()
    db = ladybug.Database(str(workdir / "b.db"))
    conn = ladybug.Connection(db)
    for statement in BARE_DDL:
        conn.execute(statement)
    open_seconds = time.perf_counter() - t
    gc.collect()
    rss_before = _rss()
    t_start = time.monotonic()
    started = time.perf_counter()
    split: dict[str, float] = {}
    for table, frame in (("Paper", papers), ("CITES", cites)):
        t = time.perf_counter()
        param: Any = pa.Table.from_pandas(frame, preserve_index=False) if route == "arrow" else frame
        conn.execute(f"COPY {table} FROM $frame", {"frame": param})
        split[table] = round(time.perf_counter() - t, 3)
    seconds = time.perf_counter() - started
    t_end = time.monotonic()
    nodes = conn.execute("MATCH (n:Paper) RETURN count(n)").get_next()[0]
    edges = conn.execute("MATCH ()-[r:CITES]->() RETURN count(r)").get_next()[0]
    t = time.perf_counter()
    conn.close()
    db.close()
    close_seconds = time.perf_counter() - t
    return {
        "seconds": seconds,
        "t_start": t_start,
        "t_end": t_end,
        "rss_before_bytes": rss_before,
        "open_seconds": open_seconds,
        "close_seconds": close_seconds,
        "nodes": nodes,
        "edges": edges,
        "split_seconds": split,
    }


# parent ------------------------------------------------------------------------------------------
def run_child(path: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Run one path in a fresh interpreter; its peak RSS from the kernel, its RSS sampled meanwhile."""
    try:
        import psutil
    except ImportError:  # the kernel high-water mark alone is still reported
        psutil = None
    result_path = workdir / f"path_{path.lower()}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--child", path, "--workdir", str(workdir), "--bare-route", args.bare_route]
    if args.profile:
        command.append("--profile")
    started = time.perf_counter()
    proc = subprocess.Popen(command)
    watcher = psutil.Process(proc.pid) if psutil else None
    samples: list[tuple[float, int]] = []
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if watcher is not None:
            try:
                samples.append((time.monotonic(), watcher.memory_info().rss))
            except psutil.Error:
                pass
        time.sleep(SAMPLE_SECONDS)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped above; keep Popen consistent
    if proc.returncode != 0:
        raise SystemExit(f"path {path} failed with exit code {proc.returncode}")
    result = json.loads(result_path.read_text())
    result["process_seconds"] = round(time.perf_counter() - started, 3)
    result["peak_rss_bytes"] = usage.ru_maxrss * 1024  # Linux reports KiB
    window = [rss for t, rss in samples if result["t_start"] <= t <= result["t_end"]]
    result["sampled_peak_rss_in_load_bytes"] = max(window) if window else None
    result["rss_samples_in_load"] = len(window)
    return result


def check_stores(workdir: Path) -> dict[str, Any]:
    """Counts and a few aggregates from both stores, opened read-only after both loads."""
    import ladybug

    out = {}
    for name in ("a", "b"):
        db = ladybug.Database(str(workdir / f"{name}.db"), read_only=True)
        conn = ladybug.Connection(db)
        one = lambda q: int(conn.execute(q).get_next()[0])  # noqa: E731  (sums come back as Decimal)
        out[name] = {
            "nodes": one("MATCH (n:Paper) RETURN count(n)"),
            "edges": one("MATCH ()-[r:CITES]->() RETURN count(r)"),
            "sum_year": one("MATCH (n:Paper) RETURN sum(n.year)"),
            "sum_n_contexts": one("MATCH ()-[r:CITES]->() RETURN sum(r.n_contexts)"),
            "max_in_degree": one("MATCH ()-[r:CITES]->(p:Paper) WITH p, count(r) AS d RETURN max(d)"),
        }
        conn.close()
        db.close()
    return out


def machine() -> dict[str, Any]:
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        total_kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    return {
        "cpu_model": model,
        "cores": os.cpu_count(),
        "affinity_cores": len(os.sched_getaffinity(0)),
        "ram_gib": round(total_kib / 1024**2, 1),
        "os": platform.platform(),
    }


def versions() -> dict[str, str]:
    import ladybug
    import pyarrow

    return {
        "python": platform.python_version(),
        "ladybug": ladybug.__version__,
        "pandas": pd.__version__,
        "pyarrow": pyarrow.__version__,
        "numpy": np.__version__,
    }


def _mib(n: int | None) -> float | None:
    return None if n is None else round(n / 1024**2, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.8, help="Zipf exponent of cited-paper popularity: P(rank r) ~ r^-alpha")
    parser.add_argument("--out-json", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None, help="default: a new temporary directory, removed afterwards")
    parser.add_argument("--keep", action="store_true", help="keep the workdir (input Parquet, both databases)")
    parser.add_argument("--bare-route", choices=("arrow", "pandas"), default="arrow", help="what path B hands to COPY")
    parser.add_argument("--profile", action="store_true", help="cProfile path A into <workdir>/path_a.prof (slows it down)")
    parser.add_argument("--child", choices=("A", "B"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        result = child_a(args.workdir, args.profile) if args.child == "A" else child_b(args.workdir, args.bare_route)
        (args.workdir / f"path_{args.child.lower()}.json").write_text(json.dumps(result))
        return 0

    command = shlex.join([os.path.relpath(sys.executable) if sys.executable.startswith(os.getcwd()) else sys.executable, *sys.argv])
    created = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="ingest_bench_")) if created else args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    for stale in ("a.db", "a.db.wal", "b.db", "b.db.wal"):
        target = workdir / stale
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    try:
        t = time.perf_counter()
        papers, cites, data_stats = generate(args.papers, args.edges, args.seed, args.alpha)
        generate_seconds = time.perf_counter() - t
        papers.to_parquet(workdir / "papers.parquet", index=False)
        cites.to_parquet(workdir / "cites.parquet", index=False)
        frame_bytes = int(papers.memory_usage(deep=True).sum() + cites.memory_usage(deep=True).sum())
        n_papers, n_edges = len(papers), len(cites)
        dtypes = {"Paper": {c: str(d) for c, d in papers.dtypes.items()}, "CITES": {c: str(d) for c, d in cites.dtypes.items()}}
        del papers, cites
        gc.collect()
        print(f"generated {n_papers:,} papers and {n_edges:,} citations in {generate_seconds:.1f}s ({data_stats})", flush=True)

        results = {}
        for path in ("A", "B"):
            results[path] = run_child(path, args, workdir)
            r = results[path]
            print(f"path {path}: {r['seconds']:.2f}s, peak RSS {_mib(r['peak_rss_bytes'])} MiB", flush=True)
        stores = check_stores(workdir)
        rows = n_papers + n_edges
        a, b = results["A"], results["B"]
        for r in (a, b):
            r["rows"] = rows
            r["rows_per_second"] = round(rows / r["seconds"])
        same = stores["a"] == stores["b"] and a["nodes"] == b["nodes"] == n_papers and a["edges"] == b["edges"] == n_edges
        report = {
            "benchmark": "ingest throughput",
            "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": command,
            "machine": machine(),
            "versions": versions(),
            "parameters": {"papers": args.papers, "edges": args.edges, "seed": args.seed, "alpha": args.alpha, "bare_route": args.bare_route},
            "data": {"papers": n_papers, "edges": n_edges, "rows": rows, "frame_bytes": frame_bytes, "dtypes": dtypes, **data_stats},
            "generate_seconds": round(generate_seconds, 2),
            "memory_method": (
                "each path in its own child process; peak_rss = kernel ru_maxrss of that child (os.wait4), whole process; "
                f"sampled_peak_rss_in_load = max psutil RSS sample every {SAMPLE_SECONDS}s inside the timed window; "
                "rss_before = RSS just before the timed window (interpreter, libraries, input frames)"
            ),
            "path_a": {"what": "open_store + ingest(GraphBatch) with validation, one transaction", **a},
            "path_b": {"what": f"bare ladybug COPY Paper/CITES FROM $frame ({args.bare_route}), no validation", **b},
            "ratio_a_over_b_throughput": round(b["seconds"] / a["seconds"], 3),
            "target_ratio": 0.5,
            "meets_target": b["seconds"] / a["seconds"] >= 0.5,
            "stores": stores,
            "stores_match": same,
        }
        print()
        print(f"{'path':<6} {'rows':>12} {'seconds':>9} {'rows/s':>12} {'peak RSS MiB':>13} {'RSS before':>11} {'load peak':>10}")
        for name, r in (("A", a), ("B", b)):
            print(
                f"{name:<6} {rows:>12,} {r['seconds']:>9.2f} {r['rows_per_second']:>12,} {_mib(r['peak_rss_bytes']):>13} "
                f"{_mib(r['rss_before_bytes']):>11} {_mib(r['sampled_peak_rss_in_load_bytes']) or '-':>10}"
            )
        print(f"path A split (s): {a['split_seconds']}")
        print(f"path B split (s): {b['split_seconds']}")
        print(f"A/B throughput: {report['ratio_a_over_b_throughput']:.3f} (target >= 0.5: {'met' if report['meets_target'] else 'NOT met'})")
        print(f"stores match: {same} {stores['a']}")
        if args.out_json:
            args.out_json.parent.mkdir(parents=True, exist_ok=True)
            args.out_json.write_text(json.dumps(report, indent=2) + "\n")
            print(f"wrote {args.out_json}")
        return 0 if same else 1
    finally:
        if created and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
