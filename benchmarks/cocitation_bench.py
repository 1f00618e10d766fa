"""Co-citation counts and write-back: the project's compute step against LadybugDB's Cypher aggregate and networkx.

One graph per run: the seeded synthetic power-law graph of ``benchmarks/ingest_bench.py``
(``generate(papers, edges, seed, alpha)``, default 1M papers / 10M citations) or, with
``--real``, the shared data (``citegraph ingest all --on-error skip`` into a fresh store). The graph
is loaded once through the project's ingest, then every path below runs on that *same* store, each
in its own fresh Python process:

* ``load``: ``ingest(store, GraphBatch(...))`` (synthetic) or ``api.cli.main.main(["ingest", "all", ...])``
  (real); timed for reference only.
* ``count``: the project's counting path alone, as ``compute_cocitation`` runs it:
  ``read_cocitation_input(store)`` (the store read: ``GraphStore.query_arrow`` of int node codes)
  and ``count_cocitation(data)`` (paper- and sentence-level counts by the ESC engine; the pure
  counting step, timed separately), on a read-only store.
  Outside the window it measures the pair incidences ``sum_p k_p (k_p - 1) / 2`` over citing
  papers: the number of (p, a, b) rows the Cypher pattern produces before aggregation.
* ``cypher`` (baseline a): ``MATCH (p)-[:CITES]->(a), (p)-[:CITES]->(b) WHERE a.id < b.id
  RETURN a.id, b.id, count(*)`` run by LadybugDB on a read-only connection; the window covers
  ``execute`` and fetching the whole result as Arrow (split reported).
* ``networkx`` (baseline b): the same ``read_citations(store)``, a ``networkx.DiGraph`` of the
  citations (citing -> cited: the bipartite citing/cited incidence), and for each citing paper
  ``itertools.combinations`` of its sorted references into a ``collections.Counter``.
* ``project``: ``compute_cocitation(store, CocitationSettings(...))``: read, count, strengths,
  noise distributions, Leiden clusters and the write-back (CO_CITED + Paper properties), with its
  own stage split. It runs after the baselines because it writes to the store.
* ``readback``: the CO_CITED edges the project wrote, read back for the identity check.

Identity: every path turns its result into int64 pair codes ``rank(a) * n + rank(b)`` over the
sorted Paper ids of the store (plus the counts), outside its timed window; the parent compares the
sorted (code, count) arrays for exact equality wherever both paths finished.

Limits: each baseline runs under ``--timeout`` seconds (or ``--cypher-timeout`` /
``--networkx-timeout``) and every child under ``--mem-cap-gib`` of RSS; the parent samples the
child's RSS every 20 ms and kills it (SIGKILL) on either limit, or when the machine's
MemAvailable drops under ``--min-available-gib`` (the machine is shared: the kernel's OOM killer
must not pick someone else's process). Such a path is reported as "did not finish", with why.

Timing and memory follow ``benchmarks/ingest_bench.py`` (its ``_Window``: ``time.perf_counter``,
CPU time of all threads, cores busy with other processes; peak RSS = the child's ``ru_maxrss`` from
``os.wait4``, whole process).

Usage::

    .venv/bin/python benchmarks/cocitation_bench.py --out-json cocitation_1m.json        # 1M / 10M
    .venv/bin/python benchmarks/cocitation_bench.py --papers 100000 --edges 1000000 --out-json small.json
    .venv/bin/python benchmarks/cocitation_bench.py --real --out-json cocitation_real.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import os
import resource
import shlex
import shutil
import signal
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
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))

from ingest_bench import SAMPLE_SECONDS, _mib, _rss, _Window, generate, machine, versions  # noqa: E402

CYPHER = "MATCH (p)-[:CITES]->(a), (p)-[:CITES]->(b) WHERE a.id < b.id RETURN a.id, b.id, count(*)"
GIB = 1024**3
CHILDREN = ("load", "count", "cypher", "networkx", "project", "readback")


# helpers used by the children --------------------------------------------------------------------
class _Win(_Window):
    """ingest_bench's window, plus the process's RSS high-water mark when the window closes.

    The children convert their results to pair codes after the window (for the identity check);
    the kernel's peak for the whole child includes that, this one does not.
    """

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.peak_rss_at_end = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "peak_rss_at_window_end_bytes": self.peak_rss_at_end}


def _store(workdir: Path, *, read_only: bool, buffer_pool_mib: int = 0) -> Any:
    from graph import StoreConfig, open_store

    config = StoreConfig(db_path=workdir / "store.db", read_only=read_only, buffer_pool_mib=buffer_pool_mib)
    return open_store(config, ensure_schema=not read_only)


def _paper_index(workdir: Path) -> pd.Index:
    """The store's Paper ids, sorted: the common coordinates of every path's pair codes."""
    return pd.Index(pd.read_parquet(workdir / "ids.parquet")["id"])


def _save_pairs(workdir: Path, name: str, source: Any, target: Any, count: Any) -> dict[str, Any]:
    """Pairs as sorted int64 codes over the sorted Paper ids, with their counts (``<name>.npz``)."""
    index = _paper_index(workdir)
    n = len(index)
    a, b = index.get_indexer(pd.Series(source)), index.get_indexer(pd.Series(target))
    unknown = int((a < 0).sum() + (b < 0).sum())
    codes = a.astype(np.int64) * n + b.astype(np.int64)
    count = np.asarray(count, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    codes, count = codes[order], count[order]
    np.savez(workdir / f"{name}.npz", codes=codes, count=count)
    return {
        "pairs": len(codes),
        "sum_count": int(count.sum()),
        "max_count": int(count.max()) if len(count) else 0,
        "unknown_ids": unknown,
        "misordered": int((a >= b).sum()),  # a pair should have source id < target id
    }


def child_load(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    from graph import GraphBatch, ingest

    if args.real:
        from api.cli.main import main as cli_main

        store_path = workdir / "store.db"
        with _Win() as window:
            rc = cli_main(
                [
                    "--db",
                    str(store_path),
                    "-q",
                    "ingest",
                    "all",
                    "--on-error",
                    "skip",
                    "--data",
                    str(args.data),
                    "--rejects-dir",
                    str(workdir / "rejects"),
                ]
            )
        if rc != 0:
            raise SystemExit(f"citegraph ingest all failed with exit code {rc}")
        rejected = None
    else:
        papers = pd.read_parquet(workdir / "papers.parquet")
        cites = pd.read_parquet(workdir / "cites.parquet")
        store = _store(workdir, read_only=False)
        with _Win() as window:
            report = ingest(store, GraphBatch("synthetic", nodes={"Paper": papers}, rels={"CITES": cites}))
        store.close()
        rejected = report.rejected
        del papers, cites
    store = _store(workdir, read_only=True)
    ids = pd.DataFrame.from_records(store.query("paper_ids"), columns=["id"]).sort_values("id", ignore_index=True)
    ids.to_parquet(workdir / "ids.parquet", index=False)
    stats = store.stats()
    store.close()
    return {**window.as_dict(), "rejected": rejected, "papers": len(ids), "store_stats": stats}


def child_count(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    from gnn.cocitation.compute import count_cocitation, read_cocitation_input
    from gnn.device import select_device

    device = select_device(args.device)
    store = _store(workdir, read_only=True)
    split: dict[str, float] = {}
    with _Win() as window:
        t = time.perf_counter()
        data = read_cocitation_input(store)  # the compute step's read: Arrow, int node codes
        split["read_citations"] = time.perf_counter() - t
        with _Win() as counting:  # the pure counting step (paper- and sentence-level, ESC engine)
            pairs, _sentence = count_cocitation(data, device=device)
        split["cooccurrence"] = counting.seconds
    store.close()
    citations = pd.DataFrame({"citing_id": data.papers[data.citing], "cited_id": data.papers[data.cited]})
    distinct = citations.drop_duplicates()
    refs = distinct["citing_id"].value_counts().to_numpy(dtype=np.int64)
    in_degree = distinct["cited_id"].value_counts().to_numpy(dtype=np.int64)
    frame = pairs.frame()
    saved = _save_pairs(workdir, "count", frame["source"], frame["target"], frame["count"])
    del frame
    diagnostics = _count_diagnostics(workdir, citations, pairs) if args.diagnose else None
    return {
        **window.as_dict(),
        "split_seconds": split,
        "diagnostics": diagnostics,
        "cooccurrence_cpu_seconds": counting.cpu_seconds,
        "device": str(device),
        "citations": len(citations),
        "distinct_citations": len(distinct),
        "citing_papers": len(refs),
        "cited_papers": len(in_degree),
        "max_references": int(refs.max()) if len(refs) else 0,
        "mean_references": float(refs.mean()) if len(refs) else 0.0,
        "max_in_degree": int(in_degree.max()) if len(in_degree) else 0,
        "pair_incidences": int((refs * (refs - 1) // 2).sum()),  # rows the Cypher pattern yields before count(*)
        **saved,
    }


def _count_diagnostics(workdir: Path, citations: pd.DataFrame, pairs: Any) -> dict[str, Any]:
    """Where the count path's time could go instead (after the timed window; not the project's code path).

    * the same ``citation_pairs`` query fetched as Arrow, not as a list of dicts (``read_citations``);
    * ``cooccurrence(..., engine="scipy")``: SciPy's CSR product instead of torch's sparse COO product
      on the CPU, checked equal to the torch result.
    """
    import ladybug

    import cypher
    from gnn.cocitation.counts import cooccurrence

    out: dict[str, Any] = {}
    db = ladybug.Database(str(workdir / "store.db"), read_only=True)
    conn = ladybug.Connection(db)
    t = time.perf_counter()
    frame = conn.execute(cypher.render(cypher.load("citation_pairs", "embedded"))).get_as_arrow().to_pandas()
    out["read_citations_as_arrow_seconds"] = time.perf_counter() - t
    out["read_as_arrow_same_rows"] = bool(
        len(frame) == len(citations)
        and frame.sort_values(["citing_id", "cited_id"], ignore_index=True).equals(
            citations.sort_values(["citing_id", "cited_id"], ignore_index=True).astype(frame.dtypes.to_dict())
        )
    )
    del frame
    conn.close()
    db.close()
    t = time.perf_counter()
    scipy_pairs = cooccurrence(citations["citing_id"], citations["cited_id"], engine="scipy")
    out["cooccurrence_scipy_seconds"] = time.perf_counter() - t
    out["scipy_equals_torch"] = bool(
        scipy_pairs.ids.equals(pairs.ids)
        and np.array_equal(scipy_pairs.i, pairs.i)
        and np.array_equal(scipy_pairs.j, pairs.j)
        and np.array_equal(scipy_pairs.count, pairs.count)
    )
    return out


def child_cypher(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    import ladybug

    db = ladybug.Database(str(workdir / "store.db"), read_only=True)
    conn = ladybug.Connection(db)
    split: dict[str, float] = {}
    with _Win() as window:
        t = time.perf_counter()
        result = conn.execute(CYPHER)
        split["execute"] = time.perf_counter() - t
        t = time.perf_counter()
        table = result.get_as_arrow()
        split["fetch_arrow"] = time.perf_counter() - t
    engine_ms = result.get_execution_time()
    columns = table.column_names
    saved = _save_pairs(
        workdir,
        "cypher",
        table.column(0).to_pandas(),
        table.column(1).to_pandas(),
        table.column(2).to_numpy(),
    )
    del table
    conn.close()
    db.close()
    return {
        **window.as_dict(),
        "split_seconds": split,
        "engine_execution_ms": engine_ms,
        "columns": columns,
        **saved,
    }


def child_networkx(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    import itertools
    from collections import Counter

    import networkx as nx

    from gnn.cocitation.compute import read_citations

    store = _store(workdir, read_only=True)
    split: dict[str, float] = {}
    with _Win() as window:
        t = time.perf_counter()
        citations = read_citations(store)
        split["read_citations"] = time.perf_counter() - t
        t = time.perf_counter()
        graph = nx.DiGraph()  # citing -> cited: the bipartite citing/cited incidence
        graph.add_edges_from(zip(citations["citing_id"].tolist(), citations["cited_id"].tolist()))
        del citations
        split["build_graph"] = time.perf_counter() - t
        t = time.perf_counter()
        counter: Counter[tuple[str, str]] = Counter()
        for _paper, references in graph.adjacency():
            if len(references) > 1:
                counter.update(itertools.combinations(sorted(references), 2))
        split["count"] = time.perf_counter() - t
    store.close()
    nodes, edges = graph.number_of_nodes(), graph.number_of_edges()
    del graph
    gc.collect()
    position = {paper: k for k, paper in enumerate(_paper_index(workdir))}
    n = len(position)
    codes = np.fromiter((position[a] * n + position[b] for a, b in counter), dtype=np.int64, count=len(counter))
    count = np.fromiter(counter.values(), dtype=np.int64, count=len(counter))
    del counter, position
    order = np.argsort(codes, kind="stable")
    codes, count = codes[order], count[order]
    np.savez(workdir / "networkx.npz", codes=codes, count=count)
    return {
        **window.as_dict(),
        "split_seconds": split,
        "graph_nodes": nodes,
        "graph_edges": edges,
        "pairs": len(codes),
        "sum_count": int(count.sum()),
        "max_count": int(count.max()) if len(count) else 0,
    }


PROGRESS_CALLS = (
    "read_cocitation_input",
    "count_cocitation",
    "cocitation_edges",
    "noise_distributions",
    "top_partners",
    "_clusters",
    "label_clusters",
    "_paper_frame",
)


def _trace_progress(workdir: Path, store: Any) -> None:
    """Log entry and exit of compute_cocitation's calls to ``project.progress`` (seconds since start, RSS).

    If the child is killed (time or memory limit) the parent reads how far it got from this file.
    """
    import gnn.cocitation.compute as module

    log = (workdir / "project.progress").open("w", buffering=1)
    started = time.perf_counter()

    def wrap(name: str, fn: Any) -> Any:
        def traced(*a: Any, **k: Any) -> Any:
            log.write(f"{time.perf_counter() - started:.3f} start {name} rss={_rss()}\n")
            out = fn(*a, **k)
            log.write(f"{time.perf_counter() - started:.3f} end {name} rss={_rss()}\n")
            return out

        return traced

    for name in PROGRESS_CALLS:
        setattr(module, name, wrap(name, getattr(module, name)))
    for name in ("replace_edges", "write_node_properties"):
        setattr(store, name, wrap(name, getattr(store, name)))


def _read_progress(workdir: Path) -> list[str]:
    path = workdir / "project.progress"
    return path.read_text().splitlines() if path.exists() else []


def child_project(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    from gnn.cocitation.compute import CocitationSettings, compute_cocitation

    settings = CocitationSettings(min_count=args.min_count, device=args.device)
    store = _store(workdir, read_only=False, buffer_pool_mib=args.buffer_pool_mib)
    _trace_progress(workdir, store)  # a few microseconds per call; compute_cocitation makes about a dozen
    with _Win() as window:
        report = compute_cocitation(store, settings, clusters_path=workdir / "clusters.json")
    t = time.perf_counter()
    store.close()
    close_seconds = time.perf_counter() - t
    return {
        **window.as_dict(),
        "close_seconds": close_seconds,
        "split_seconds": report.seconds,
        "device": report.device,
        "min_count": settings.min_count,
        "buffer_pool_mib": args.buffer_pool_mib,
        "citations": report.citations,
        "citing_papers": report.citing_papers,
        "cited_papers": report.cited_papers,
        "pairs": report.pairs,
        "edges_written": report.edges,
        "sentence_pairs": report.sentence_pairs,
        "papers_written": report.papers_written,
        "clusters": len(report.clusters),
        "progress": _read_progress(workdir),
    }


def child_readback(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    store = _store(workdir, read_only=True)
    with _Win() as window:
        edges = store.read_edges("CO_CITED")
    store.close()
    return {**window.as_dict(), **_save_pairs(workdir, "readback", edges["source"], edges["target"], edges["count"])}


CHILD_FUNCTIONS = {
    "load": child_load,
    "count": child_count,
    "cypher": child_cypher,
    "networkx": child_networkx,
    "project": child_project,
    "readback": child_readback,
}


# parent ------------------------------------------------------------------------------------------
def _mem_available() -> int:
    with open("/proc/meminfo") as f:
        return int(next(line for line in f if line.startswith("MemAvailable")).split()[1]) * 1024


def run_child(name: str, args: argparse.Namespace, workdir: Path, timeout: float | None) -> dict[str, Any]:
    """Run one path in a fresh interpreter; kill it past ``timeout`` s or the memory limits.

    Peak RSS is the kernel's high-water mark of the child (``os.wait4``), as in ingest_bench; the
    child's RSS is also sampled every 20 ms for the in-window peak and the memory cap.
    """
    import psutil

    result_path = workdir / f"{name}.json"
    result_path.unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--workdir", str(workdir)]
    command += ["--min-count", str(args.min_count)]
    command += ["--buffer-pool-mib", str(args.buffer_pool_mib)]
    if args.diagnose:
        command.append("--diagnose")
    if args.device:
        command += ["--device", args.device]
    if args.real:
        command += ["--real", "--data", str(args.data)]
    cap = int(args.mem_cap_gib * GIB)
    floor = int(args.min_available_gib * GIB)
    started = time.perf_counter()
    proc = subprocess.Popen(command)
    watcher = psutil.Process(proc.pid)
    samples: list[tuple[float, int]] = []
    killed: str | None = None
    max_rss = 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        rss = 0
        with contextlib.suppress(psutil.Error):
            rss = watcher.memory_info().rss
            samples.append((time.monotonic(), rss))
            max_rss = max(max_rss, rss)
        elapsed = time.perf_counter() - started
        if killed is None:
            if timeout is not None and elapsed > timeout:
                killed = f"did not finish within {timeout:.0f} s (killed)"
            elif rss > cap:
                killed = f"exceeded the memory cap of {args.mem_cap_gib:g} GiB RSS (killed at {rss / GIB:.1f} GiB)"
            elif _mem_available() < floor:
                killed = (
                    f"machine's MemAvailable fell under {args.min_available_gib:g} GiB "
                    f"(killed at {rss / GIB:.1f} GiB RSS)"
                )
            if killed:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
        time.sleep(SAMPLE_SECONDS)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped above; keep Popen consistent
    process_seconds = time.perf_counter() - started
    peak = usage.ru_maxrss * 1024  # Linux reports KiB
    if killed or proc.returncode != 0 or not result_path.exists():
        why = killed or (
            "killed by SIGKILL (the kernel's OOM killer?)"
            if proc.returncode == -signal.SIGKILL
            else f"failed with exit code {proc.returncode}"
        )
        progress = _read_progress(workdir) if name == "project" else []
        print(f"{name}: {why}; ran {process_seconds:.1f}s, peak RSS {_mib(peak)} MiB", flush=True)
        for line in progress:
            print(f"  {line}", flush=True)
        return {
            "finished": False,
            "why": why,
            "progress": progress,
            "process_seconds": round(process_seconds, 3),
            "peak_rss_bytes": peak,
            "max_sampled_rss_bytes": max_rss,
        }
    result = json.loads(result_path.read_text())
    result["finished"] = True
    result["process_seconds"] = round(process_seconds, 3)
    result["peak_rss_bytes"] = peak
    window = [rss for t, rss in samples if result["t_start"] <= t <= result["t_end"]]
    result["sampled_peak_rss_in_window_bytes"] = max(window) if window else None
    print(
        f"{name}: {result['seconds']:.2f}s (CPU {result['cpu_seconds']:.1f}s, others {result['others_cores']:.2f} "
        f"cores), peak RSS {_mib(peak)} MiB"
        + (f", split {_rounded(result['split_seconds'])}" if "split_seconds" in result else ""),
        flush=True,
    )
    return result


def _ratio(baseline: float, project: float | None) -> float | None:
    """``baseline / project`` to 3 significant digits: above 1, the project is that many times faster."""
    return float(f"{baseline / project:.3g}") if project else None


def _rounded(split: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in split.items()}


def compare(workdir: Path, left: str, right: str, *, min_count: int = 1) -> dict[str, Any]:
    """Exact equality of two paths' (pair, count) sets; ``min_count`` filters ``left`` first."""
    a, b = np.load(workdir / f"{left}.npz"), np.load(workdir / f"{right}.npz")
    codes_a, count_a = a["codes"], a["count"]
    if min_count > 1:
        keep = count_a >= min_count
        codes_a, count_a = codes_a[keep], count_a[keep]
    codes_b, count_b = b["codes"], b["count"]
    same_pairs = len(codes_a) == len(codes_b) and bool(np.array_equal(codes_a, codes_b))
    out: dict[str, Any] = {
        "identical": same_pairs and bool(np.array_equal(count_a, count_b)),
        "pairs": [len(codes_a), len(codes_b)],
        "duplicated_pairs": [int((np.diff(codes_a) == 0).sum()), int((np.diff(codes_b) == 0).sum())],
    }
    if not out["identical"]:
        only_a = np.setdiff1d(codes_a, codes_b, assume_unique=True)
        only_b = np.setdiff1d(codes_b, codes_a, assume_unique=True)
        common, ia, ib = np.intersect1d(codes_a, codes_b, assume_unique=True, return_indices=True)
        out.update(
            only_left=len(only_a),
            only_right=len(only_b),
            common=len(common),
            count_differs=int((count_a[ia] != count_b[ib]).sum()),
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--alpha", type=float, default=0.8, help="Zipf exponent of cited-paper popularity: P(rank r) ~ r^-alpha"
    )
    parser.add_argument(
        "--real", action="store_true", help="use the shared data (citegraph ingest all --on-error skip) instead"
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="with --real: data folder (default: $CITEGRAPH_DATA or /work/shared/data)",
    )
    parser.add_argument("--out-json", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None, help="default: a new temporary directory, removed after")
    parser.add_argument("--keep", action="store_true", help="keep the workdir (store, Parquet input, pair codes)")
    parser.add_argument("--skip-cypher", action="store_true", help="do not run baseline (a), the Cypher aggregate")
    parser.add_argument("--skip-networkx", action="store_true", help="do not run baseline (b), networkx")
    parser.add_argument("--skip-project", action="store_true", help="do not run compute_cocitation (nor the readback)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds each baseline may run (then killed)")
    parser.add_argument("--cypher-timeout", type=float, default=None, help="override --timeout for the Cypher run")
    parser.add_argument("--networkx-timeout", type=float, default=None, help="override --timeout for networkx")
    parser.add_argument("--project-timeout", type=float, default=3600.0, help="seconds compute_cocitation may run")
    parser.add_argument("--mem-cap-gib", type=float, default=20.0, help="kill a child whose RSS exceeds this")
    parser.add_argument(
        "--min-available-gib", type=float, default=0.75, help="kill the child when MemAvailable falls under this"
    )
    parser.add_argument("--min-count", type=int, default=1, help="CocitationSettings.min_count of the project run")
    parser.add_argument(
        "--buffer-pool-mib",
        type=int,
        default=int(os.environ.get("CITEGRAPH_BUFFER_POOL_MIB", "0")),
        help="the project run's store page cache (StoreConfig.buffer_pool_mib; 0: the engine's default, 80%% of RAM)",
    )
    parser.add_argument("--device", default=None, help="torch device of the project (default: CUDA when present)")
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="count child: also time the citation read as Arrow and cooccurrence(engine='scipy'), after its window",
    )
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.real and args.data is None:
        args.data = Path(os.environ.get("CITEGRAPH_DATA") or "/work/shared/data")

    if args.child:
        result = CHILD_FUNCTIONS[args.child](args.workdir, args)
        (args.workdir / f"{args.child}.json").write_text(json.dumps(result, default=str))
        return 0

    command = shlex.join(
        [os.path.relpath(sys.executable) if sys.executable.startswith(os.getcwd()) else sys.executable, *sys.argv]
    )
    created = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="cocitation_bench_")) if created else args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("store.db", "store.db.wal", "store.db.shadow"):
        target = workdir / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    try:
        data: dict[str, Any]
        if args.real:
            data = {"graph": "real", "data_dir": str(args.data)}
            print(f"real graph: citegraph ingest all --on-error skip from {args.data}", flush=True)
        else:
            t = time.perf_counter()
            papers, cites, stats = generate(args.papers, args.edges, args.seed, args.alpha)
            data = {
                "graph": "synthetic",
                "papers": len(papers),
                "edges": len(cites),
                "generate_seconds": round(time.perf_counter() - t, 2),
                **stats,
            }
            papers.to_parquet(workdir / "papers.parquet", index=False)
            cites.to_parquet(workdir / "cites.parquet", index=False)
            del papers, cites
            gc.collect()
            print(f"generated {data['papers']:,} papers and {data['edges']:,} citations ({stats})", flush=True)

        runs: dict[str, dict[str, Any]] = {}
        runs["load"] = run_child("load", args, workdir, None)
        if not runs["load"]["finished"]:
            raise SystemExit("loading the store failed")
        runs["count"] = run_child("count", args, workdir, None)
        if not runs["count"]["finished"]:
            raise SystemExit("the project's counting path failed")
        c = runs["count"]
        print(
            f"{c['distinct_citations']:,} citations from {c['citing_papers']:,} citing papers "
            f"(mean {c['mean_references']:.2f}, max {c['max_references']} references): "
            f"{c['pair_incidences']:,} pair incidences (sum k(k-1)/2), {c['pairs']:,} distinct co-cited pairs",
            flush=True,
        )
        if not args.skip_cypher:
            runs["cypher"] = run_child("cypher", args, workdir, args.cypher_timeout or args.timeout)
        if not args.skip_networkx:
            runs["networkx"] = run_child("networkx", args, workdir, args.networkx_timeout or args.timeout)
        if not args.skip_project:
            runs["project"] = run_child("project", args, workdir, args.project_timeout)
        if runs.get("project", {}).get("finished"):
            runs["readback"] = run_child("readback", args, workdir, None)

        # identity: the project's counts (and its write-back) against every baseline that finished
        checks: dict[str, Any] = {}
        for baseline in ("cypher", "networkx"):
            if runs.get(baseline, {}).get("finished"):
                checks[f"count_vs_{baseline}"] = compare(workdir, baseline, "count")
                if runs.get("readback", {}).get("finished"):
                    checks[f"written_CO_CITED_vs_{baseline}"] = compare(
                        workdir, baseline, "readback", min_count=args.min_count
                    )
        if runs.get("readback", {}).get("finished"):
            checks["written_CO_CITED_vs_count"] = compare(workdir, "count", "readback", min_count=args.min_count)
        identical = all(check["identical"] for check in checks.values()) if checks else None

        def secs(name: str) -> float | None:
            r = runs.get(name)
            return r["seconds"] if r and r.get("finished") else None

        project_s, count_s = secs("project"), secs("count")
        cooc_s = c["split_seconds"]["cooccurrence"]
        speedups: dict[str, Any] = {}
        for baseline in ("cypher", "networkx"):
            b = secs(baseline)
            if b is None:
                continue
            speedups[baseline] = {
                "vs_compute_cocitation": _ratio(b, project_s),
                "vs_count_path": _ratio(b, count_s),
                "vs_cooccurrence": _ratio(b, cooc_s),
            }
        report = {
            "benchmark": "co-citation counts and write-back",
            "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": command,
            "machine": machine(),
            "versions": versions() | {"networkx": __import__("networkx").__version__, "torch": _torch_version()},
            "parameters": {
                k: (str(v) if isinstance(v, Path) else v)
                for k, v in vars(args).items()
                if k not in ("child", "workdir", "out_json", "keep")
            },
            "cypher": CYPHER,
            "data": data,
            "runs": runs,
            "identity_checks": checks,
            "identical": identical,
            "speedups": speedups,
            "target_speedup_vs_cypher": 20,
            "memory_target_bytes": 24 * GIB,
        }
        print()
        print(f"{'path':<10} {'seconds':>9} {'CPU s':>8} {'others':>6} {'peak RSS MiB':>13} {'pairs':>12}")
        for name in ("load", "count", "cypher", "networkx", "project", "readback"):
            r = runs.get(name)
            if r is None:
                continue
            if r["finished"]:
                print(
                    f"{name:<10} {r['seconds']:>9.2f} {r['cpu_seconds']:>8.1f} {r['others_cores']:>6.2f} "
                    f"{_mib(r['peak_rss_bytes']):>13} {r.get('pairs', ''):>12}"
                )
            else:
                print(f"{name:<10} {'DNF':>9} {'':>8} {'':>6} {_mib(r['peak_rss_bytes']):>13}  {r['why']}")
        print(f"pure cooccurrence: {cooc_s:.2f}s; speed-ups: {speedups}")
        print(f"identity checks: {json.dumps(checks)}")
        if args.out_json:
            args.out_json.parent.mkdir(parents=True, exist_ok=True)
            args.out_json.write_text(json.dumps(report, indent=2, default=str) + "\n")
            print(f"wrote {args.out_json}")
        return 0 if identical in (True, None) else 1
    finally:
        if created and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


if __name__ == "__main__":
    sys.exit(main())
