"""Ingest throughput: the project's validated ingest path against a bare LadybugDB COPY.

Generates a seeded synthetic citation graph (papers with string ids, titles and years; CITES edges
with a uniform citing paper and a power-law cited paper, no self-loops, no duplicate pairs), writes
it once to Parquet, then loads the *same* frames twice, each load in its own fresh Python process
and into its own fresh database:

* path A: ``open_store(StoreConfig(db_path=...))`` then ``ingest(store, GraphBatch(...))``, i.e.
  validation + typed Arrow conversion + COPY inside one transaction (the project's ingest path);
* path B: a bare ``ladybug.Connection.execute("COPY Paper FROM $frame", ...)`` of the same frames
  (as Arrow tables, or pandas frames with ``--bare-route pandas``) into tables with the same
  column types (only the columns used), no validation;
* with ``--diagnose``, paths C, D, E: bare COPYs that each add one thing path A's write does
  (the project's full tables with null columns; one explicit transaction; COPY with a column
  list), to tell where the gap between A and B comes from (see ``BARE_PATHS``).

Timing: ``time.perf_counter`` around the load only (``ingest(...)`` for A, conversion + COPY
statements for B..E); opening the database, creating tables, reading the Parquet input and closing
are reported separately. Path A's time is split by wrapping the stages ``ingest`` calls
(``validate_batch``, ``store.apply`` and inside it ``has_nodes``, ``arrow_table``, ``_copy``).
Each window also records its CPU time (all threads, ``getrusage``) and how many cores *other*
processes kept busy meanwhile (``/proc/stat``), because a shared machine makes wall time noisy;
``--repeat N`` alternates the paths N times and reports the median run, ``--quiet-wait S`` waits
up to S seconds before each run for the machine to go quiet.

Memory: each path runs in its own child process, and the parent reads that child's kernel RSS
high-water mark (``ru_maxrss`` from ``os.wait4``: the whole child, including the interpreter,
libraries and the input frames). The parent also samples the child's RSS with psutil every 20 ms
(when psutil is installed) for the peak inside the timed window; the child records its RSS just
before the window, so the load's own increment can be told apart from the baseline.

Usage::

    .venv/bin/python benchmarks/ingest_bench.py                       # 1M papers / 10M citations
    .venv/bin/python benchmarks/ingest_bench.py --papers 100000 --edges 1000000 --out-json small.json
    .venv/bin/python benchmarks/ingest_bench.py --repeat 3 --diagnose --out-json ingest.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
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
        "surplus_discarded": int(len(first) - len(keep)),  # distinct edges drawn beyond --edges
        "edges_kept": len(keep),
        "max_in_degree": int(in_degree.max()),
        "papers_never_cited": int((in_degree == 0).sum()),
        "top_1pct_share_of_citations": round(
            float(np.sort(in_degree)[-max(1, papers // 100) :].sum() / max(1, len(keep))), 4
        ),
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


def _machine_busy_seconds() -> float:
    """CPU-seconds the whole machine has spent busy (all cores, /proc/stat; idle and iowait excluded)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class _Window:
    """The timed window: wall time, this process's CPU time (all threads), everyone else's CPU time.

    The machine may be shared; ``others_cores`` (CPU-seconds used by other processes per wall
    second) says how contended the window was, and CPU time is less sensitive to that than wall time.
    """

    def __enter__(self) -> _Window:
        gc.collect()
        self.rss_before = _rss()
        self._usage = resource.getrusage(resource.RUSAGE_SELF)
        self._busy = _machine_busy_seconds()
        self.t_start = time.monotonic()
        self._started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._started
        self.t_end = time.monotonic()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.cpu_seconds = (usage.ru_utime - self._usage.ru_utime) + (usage.ru_stime - self._usage.ru_stime)
        others = _machine_busy_seconds() - self._busy - self.cpu_seconds
        self.others_cores = max(0.0, others) / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "cpu_seconds": round(self.cpu_seconds, 3),
            "others_cores": round(self.others_cores, 2),
            "t_start": self.t_start,
            "t_end": self.t_end,
            "rss_before_bytes": self.rss_before,
        }


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
    for module, name in ((ingest_module, "validate_batch"), (embedded_module, "arrow_table")):
        setattr(module, name, timers.wrap(name, getattr(module, name)))
    store.apply = timers.wrap("apply", store.apply)  # type: ignore[method-assign]
    store.has_nodes = timers.wrap("has_nodes", store.has_nodes)  # type: ignore[method-assign]
    store._copy = timers.wrap("copy", store._copy)  # type: ignore[attr-defined]
    store.count_rels = timers.wrap("count_rels", store.count_rels)  # type: ignore[method-assign]

    batch = GraphBatch("synthetic", nodes={"Paper": papers}, rels={"CITES": cites})
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    with _Window() as window:
        if profiler:
            profiler.enable()
        report = ingest(store, batch)
        if profiler:
            profiler.disable()
    if profiler:
        profiler.dump_stats(str(workdir / "path_a.prof"))
    nodes, edges = store.count_nodes("Paper"), store.count_rels("CITES")
    t = time.perf_counter()
    store.close()
    close_seconds = time.perf_counter() - t
    split = dict(timers.seconds)
    # apply() less what is wrapped inside it: BEGIN/COMMIT and the frame filtering; ingest() less its two stages.
    split["apply_other"] = split.get("apply", 0) - sum(
        split.get(k, 0) for k in ("arrow_table", "copy", "has_nodes", "count_rels")
    )
    split["ingest_other"] = window.seconds - split.get("validate_batch", 0) - split.get("apply", 0)
    return {
        **window.as_dict(),
        "open_seconds": open_seconds,
        "close_seconds": close_seconds,
        "nodes": nodes,
        "edges": edges,
        "rejected": report.rejected,
        "split_seconds": {k: round(v, 3) for k, v in split.items()},
        "split_calls": timers.calls,
    }


PATH_A_WHAT = (
    "open_store(StoreConfig(db_path)) + ingest(store, GraphBatch): validation, typed Arrow, COPY in one transaction"
)

BARE_DDL = (
    "CREATE NODE TABLE Paper(id STRING, title STRING, year INT64, PRIMARY KEY(id))",
    "CREATE REL TABLE CITES(FROM Paper TO Paper, n_contexts INT64)",
)

# Path B is the baseline. C, D and E (--diagnose) are bare COPYs too, no validation, that each add
# one thing path A's write does, to tell where the gap between A and B comes from.
BARE_PATHS: dict[str, dict[str, Any]] = {
    "B": {
        "ddl": "used",
        "transaction": False,
        "column_list": False,
        "what": (
            "bare COPY of the frames (Arrow via pa.Table.from_pandas), tables with the used columns only, autocommit"
        ),
    },
    "C": {
        "ddl": "project",
        "transaction": False,
        "column_list": False,
        "what": (
            "bare COPY into the project's full Paper/CITES tables of graph.arrow.arrow_table "
            "(every column, unused ones null), autocommit"
        ),
    },
    "D": {
        "ddl": "project",
        "transaction": True,
        "column_list": False,
        "what": "as C, inside one BEGIN TRANSACTION ... COMMIT (what EmbeddedStore.apply writes, without validation)",
    },
    "E": {
        "ddl": "project",
        "transaction": True,
        "column_list": True,
        "what": (
            "as D, but COPY Paper(id, title, year) / COPY CITES(n_contexts): "
            "only the frame's columns, the rest left null"
        ),
    },
}


def _project_ddl() -> list[str]:
    from graph import build_schema
    from graph.embedded import ddl_type

    schema = build_schema()
    node, rel = schema.node("Paper"), schema.rel("CITES")
    columns = ", ".join(f"{p.name} {ddl_type(p)}" for p in node.properties)
    rel_columns = "".join(f", {p.name} {ddl_type(p)}" for p in rel.properties)
    return [
        f"CREATE NODE TABLE Paper({columns}, PRIMARY KEY({node.key}))",
        f"CREATE REL TABLE CITES(FROM Paper TO Paper{rel_columns})",
    ]


def _bare_tables(papers: pd.DataFrame, cites: pd.DataFrame, path: str, route: str) -> list[tuple[str, Any]]:
    """(COPY target, frame) per table, converted the way ``path`` converts them."""
    import pyarrow as pa

    if path == "B":
        if route == "pandas":
            return [("Paper", papers), ("CITES", cites)]
        return [
            ("Paper", pa.Table.from_pandas(papers, preserve_index=False)),
            ("CITES", pa.Table.from_pandas(cites, preserve_index=False)),
        ]
    from graph import build_schema
    from graph.arrow import arrow_table
    from graph.schema import Kind, Property

    schema = build_schema()
    node, rel = schema.node("Paper"), schema.rel("CITES")
    ends = [("source", Property("_from", Kind.STRING)), ("target", Property("_to", Kind.STRING))]
    if not BARE_PATHS[path]["column_list"]:
        return [
            ("Paper", arrow_table(papers, [(p.name, p) for p in node.properties])),
            ("CITES", arrow_table(cites, [*ends, *((p.name, p) for p in rel.properties)])),
        ]
    paper_columns = list(papers.columns)
    rel_columns = [c for c in cites.columns if c not in ("source", "target")]
    return [
        (f"Paper({', '.join(paper_columns)})", arrow_table(papers, [(c, node.prop(c)) for c in paper_columns])),
        (f"CITES({', '.join(rel_columns)})", arrow_table(cites, [*ends, *((c, rel.prop(c)) for c in rel_columns)])),
    ]


def _scalar(conn: Any, query: str) -> Any:
    result: Any = conn.execute(query)
    return result.get_next()[0]


def child_bare(workdir: Path, path: str, route: str) -> dict[str, Any]:
    import ladybug

    spec = BARE_PATHS[path]
    papers, cites = _read_frames(workdir)
    t = time.perf_counter()
    db = ladybug.Database(str(workdir / f"{path.lower()}.db"))
    conn = ladybug.Connection(db)
    for statement in BARE_DDL if spec["ddl"] == "used" else _project_ddl():
        conn.execute(statement)
    open_seconds = time.perf_counter() - t
    split: dict[str, float] = {}
    with _Window() as window:
        t = time.perf_counter()
        tables = _bare_tables(papers, cites, path, route)  # conversion counts: path A's does too
        split["convert"] = round(time.perf_counter() - t, 3)
        if spec["transaction"]:
            conn.execute("BEGIN TRANSACTION")
        for target, frame in tables:
            t = time.perf_counter()
            conn.execute(f"COPY {target} FROM $frame", {"frame": frame})
            split[target.split("(")[0]] = round(time.perf_counter() - t, 3)
        if spec["transaction"]:
            t = time.perf_counter()
            conn.execute("COMMIT")
            split["commit"] = round(time.perf_counter() - t, 3)
    nodes = _scalar(conn, "MATCH (n:Paper) RETURN count(n)")
    edges = _scalar(conn, "MATCH ()-[r:CITES]->() RETURN count(r)")
    t = time.perf_counter()
    conn.close()
    db.close()
    close_seconds = time.perf_counter() - t
    return {
        **window.as_dict(),
        "open_seconds": open_seconds,
        "close_seconds": close_seconds,
        "nodes": nodes,
        "edges": edges,
        "split_seconds": split,
    }


# parent ------------------------------------------------------------------------------------------
def _remove_store(workdir: Path, path: str) -> None:
    for name in (f"{path.lower()}.db", f"{path.lower()}.db.wal", f"{path.lower()}.db.shadow"):
        target = workdir / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def _wait_quiet(threshold: float, limit: float) -> tuple[float, float]:
    """Wait (at most ``limit`` s) until other processes use at most ``threshold`` cores; (waited, their load)."""
    waited = 0.0
    while True:
        busy = _machine_busy_seconds()
        time.sleep(1.0)
        others = _machine_busy_seconds() - busy  # this process sleeps meanwhile
        if others <= threshold or waited >= limit:
            return waited, others
        waited += 1.0


def run_child(path: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Run one path in a fresh interpreter on a fresh database; peak RSS from the kernel, RSS sampled meanwhile."""
    _remove_store(workdir, path)
    waited, others_before = _wait_quiet(args.quiet_threshold, args.quiet_wait) if args.quiet_wait > 0 else (0.0, None)
    try:
        import psutil
    except ImportError:  # the kernel high-water mark alone is still reported
        psutil = None
    result_path = workdir / f"path_{path.lower()}.json"
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        path,
        "--workdir",
        str(workdir),
        "--bare-route",
        args.bare_route,
    ]
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
            with contextlib.suppress(psutil.Error):
                samples.append((time.monotonic(), watcher.memory_info().rss))
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
    result["quiet_wait_seconds"] = waited
    result["others_cores_before"] = None if others_before is None else round(others_before, 2)
    return result


def check_stores(workdir: Path) -> dict[str, Any]:
    """Counts and a few aggregates from both stores, opened read-only after both loads."""
    import ladybug

    out = {}
    for name in ("a", "b"):
        db = ladybug.Database(str(workdir / f"{name}.db"), read_only=True)
        conn = ladybug.Connection(db)

        def one(query: str, conn: Any = conn) -> int:
            return int(_scalar(conn, query))  # sums come back as Decimal

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
    parser.add_argument(
        "--alpha", type=float, default=0.8, help="Zipf exponent of cited-paper popularity: P(rank r) ~ r^-alpha"
    )
    parser.add_argument("--out-json", type=Path, default=None)
    parser.add_argument(
        "--workdir", type=Path, default=None, help="default: a new temporary directory, removed afterwards"
    )
    parser.add_argument("--keep", action="store_true", help="keep the workdir (input Parquet, both databases)")
    parser.add_argument("--bare-route", choices=("arrow", "pandas"), default="arrow", help="what path B hands to COPY")
    parser.add_argument(
        "--repeat", type=int, default=1, help="load each path this many times (alternating); report the median"
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=0.0,
        help="before each run, wait up to this many seconds for a quiet machine",
    )
    parser.add_argument(
        "--quiet-threshold", type=float, default=0.25, help="quiet: other processes use at most this many cores"
    )
    parser.add_argument(
        "--profile", action="store_true", help="cProfile path A into <workdir>/path_a.prof (slows it down)"
    )
    parser.add_argument(
        "--diagnose", action="store_true", help="also run bare paths C, D, E (see BARE_PATHS) to explain the A/B gap"
    )
    parser.add_argument("--child", choices=("A", *BARE_PATHS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        result = (
            child_a(args.workdir, args.profile)
            if args.child == "A"
            else child_bare(args.workdir, args.child, args.bare_route)
        )
        (args.workdir / f"path_{args.child.lower()}.json").write_text(json.dumps(result))
        return 0

    command = shlex.join(
        [os.path.relpath(sys.executable) if sys.executable.startswith(os.getcwd()) else sys.executable, *sys.argv]
    )
    created = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="ingest_bench_")) if created else args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        t = time.perf_counter()
        papers, cites, data_stats = generate(args.papers, args.edges, args.seed, args.alpha)
        generate_seconds = time.perf_counter() - t
        papers.to_parquet(workdir / "papers.parquet", index=False)
        cites.to_parquet(workdir / "cites.parquet", index=False)
        frame_bytes = int(papers.memory_usage(deep=True).sum() + cites.memory_usage(deep=True).sum())
        n_papers, n_edges = len(papers), len(cites)
        dtypes = {
            "Paper": {c: str(d) for c, d in papers.dtypes.items()},
            "CITES": {c: str(d) for c, d in cites.dtypes.items()},
        }
        del papers, cites
        gc.collect()
        print(
            f"generated {n_papers:,} papers and {n_edges:,} citations in {generate_seconds:.1f}s ({data_stats})",
            flush=True,
        )

        paths = ["A", "B", *(["C", "D", "E"] if args.diagnose else [])]
        runs: dict[str, list[dict[str, Any]]] = {path: [] for path in paths}
        for repeat in range(args.repeat):  # the paths alternate, so drifts of the machine hit all of them
            for path in paths:
                r = run_child(path, args, workdir)
                runs[path].append(r)
                print(
                    f"run {repeat + 1}/{args.repeat} path {path}: {r['seconds']:.2f}s (CPU {r['cpu_seconds']:.1f}s, "
                    f"others {r['others_cores']:.2f} cores), peak RSS {_mib(r['peak_rss_bytes'])} MiB",
                    flush=True,
                )
        stores = check_stores(workdir)  # the stores of the last run of A and B
        rows = n_papers + n_edges
        results = {}
        for path, done in runs.items():
            # Headline: the run with the median load time; peak RSS: the largest of all runs.
            median = sorted(done, key=lambda r: r["seconds"])[(len(done) - 1) // 2]
            results[path] = {
                "what": PATH_A_WHAT if path == "A" else BARE_PATHS[path]["what"],
                **median,
                "rows": rows,
                "rows_per_second": round(rows / median["seconds"]),
                "best_seconds": round(min(r["seconds"] for r in done), 3),
                "median_cpu_seconds": round(statistics.median(r["cpu_seconds"] for r in done), 3),
                "rows_per_cpu_second": round(rows / statistics.median(r["cpu_seconds"] for r in done)),
                "peak_rss_bytes": max(r["peak_rss_bytes"] for r in done),
                "all_seconds": [round(r["seconds"], 3) for r in done],
                "all_cpu_seconds": [r["cpu_seconds"] for r in done],
                "all_others_cores": [r["others_cores"] for r in done],
                "runs": [
                    {
                        k: r[k]
                        for k in (
                            "seconds",
                            "cpu_seconds",
                            "others_cores",
                            "quiet_wait_seconds",
                            "peak_rss_bytes",
                            "split_seconds",
                        )
                    }
                    for r in done
                ],
            }
        a, b = results["A"], results["B"]
        same = stores["a"] == stores["b"] and all(
            r["nodes"] == n_papers and r["edges"] == n_edges for done in runs.values() for r in done
        )
        ratio = b["seconds"] / a["seconds"]
        ratios = {
            "median_wall": round(ratio, 3),
            "best_wall": round(b["best_seconds"] / a["best_seconds"], 3),
            "median_cpu": round(b["median_cpu_seconds"] / a["median_cpu_seconds"], 3),  # medians over the runs
        }
        report = {
            "benchmark": "ingest throughput",
            "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": command,
            "machine": machine(),
            "versions": versions(),
            "parameters": {
                "papers": args.papers,
                "edges": args.edges,
                "seed": args.seed,
                "alpha": args.alpha,
                "bare_route": args.bare_route,
                "repeat": args.repeat,
                "diagnose": args.diagnose,
                "quiet_wait": args.quiet_wait,
                "quiet_threshold": args.quiet_threshold,
            },
            "timing_method": (
                "time.perf_counter around the load only; with --repeat N, the run with the median time "
                "(all listed in all_seconds)"
            ),
            "memory_method": (
                "each path in its own child process; peak_rss = kernel ru_maxrss of that child (os.wait4), "
                "whole process "
                f"(largest over the repeats); sampled_peak_rss_in_load = max psutil RSS sample every {SAMPLE_SECONDS}s "
                "inside the timed window; rss_before = RSS just before the timed window "
                "(interpreter, libraries, input frames)"
            ),
            "data": {
                "papers": n_papers,
                "edges": n_edges,
                "rows": rows,
                "frame_bytes": frame_bytes,
                "dtypes": dtypes,
                **data_stats,
            },
            "generate_seconds": round(generate_seconds, 2),
            "paths": results,
            "ratio_a_over_b_throughput": round(ratio, 3),
            "ratios": ratios,
            "target_ratio": 0.5,
            "meets_target": ratio >= 0.5,
            "stores": stores,
            "stores_match": same,
        }
        print()
        print(
            f"{'path':<5} {'rows':>12} {'seconds':>8} {'rows/s':>11} {'CPU s':>7} {'others':>6} {'peak RSS MiB':>13} "
            f"{'RSS before':>11} {'load peak':>10}  runs (s)"
        )
        for name, r in results.items():
            print(
                f"{name:<5} {rows:>12,} {r['seconds']:>8.2f} {r['rows_per_second']:>11,} {r['cpu_seconds']:>7.1f} "
                f"{r['others_cores']:>6.2f} {_mib(r['peak_rss_bytes']):>13} {_mib(r['rss_before_bytes']):>11} "
                f"{_mib(r['sampled_peak_rss_in_load_bytes']) or '-':>10}  {r['all_seconds']}"
            )
        print(
            "(seconds: median run; CPU s: its CPU time, all threads; others: cores busy with other processes meanwhile)"
        )
        for name, r in results.items():
            print(f"path {name} split (s): {r['split_seconds']}")
        print(
            f"A/B throughput: {ratio:.3f} (target >= 0.5: {'met' if ratio >= 0.5 else 'NOT met'}); "
            f"best-of: {ratios['best_wall']}, CPU time: {ratios['median_cpu']}"
        )
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
