"""The Spark co-citation job in local mode beside the single-machine step, on the same synthetic graph.

The graph is ``benchmarks/ingest_bench.py``'s ``generate(papers, edges, seed, alpha)`` (Zipf
popularity of cited papers, so power-law in-degrees; uniform citing papers, so Poisson reference
counts with mean edges/papers), plus ``--heavy`` review papers citing ``--heavy-refs`` distinct
papers each (the skew the job splits into blocks). It is written once as ``CITES.parquet``
(``source``, ``target``), then each path runs in its own process:

* ``spark``: ``gnn.cocitation.spark.run_cocitation`` in ``local[2]`` with ``--driver-memory``
  (in local mode the one executor is the driver JVM, so this caps it), reading the Parquet and
  writing ``CO_CITED/`` and ``papers/``. From Spark's REST API before the session stops: shuffle
  bytes written and read (sum over stages), the executor's peak JVM heap and process-tree RSS
  (``spark.executor.processTreeMetrics.enabled``), the longest task and the median task of the
  stage holding it. The parent samples the RSS of the child and its JVM every 0.2 s.
* ``single``: the same numbers by the single-machine functions ``compute cocitation`` runs
  (``cooccurrence`` → ``cocitation_edges`` → ``noise_distributions`` → ``top_partners``; no store
  read or write, no clusters), timed; after its window it reads the Spark output and checks it:
  pairs and counts exactly, strengths and noise distributions to 1e-9.

Usage::

    python benchmarks/spark_cocitation.py --papers 100000 --edges 1000000 --out-json docs/results/spark_cocitation_100k.json
    python benchmarks/spark_cocitation.py --papers 1000000 --edges 10000000 --out-json docs/results/spark_cocitation_1m.json
    python benchmarks/spark_cocitation.py --papers 100000 --edges 1000000 --heavy 3 --heavy-refs 5000 --block-size 1000000000
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import resource
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from ingest_bench import generate, machine  # noqa: E402
from run_record import commit  # noqa: E402

GIB = 1024**3


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_spark(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    from gnn.cocitation.spark import (
        SparkCocitationSettings,
        read_citations,
        read_mentions,
        run_cocitation,
        spark_session,
    )

    started = time.perf_counter()
    spark = spark_session(
        "local[2]",
        app_name="citegraph spark benchmark",
        driver_memory=args.driver_memory,
        shuffle_partitions=args.partitions,
        ui=True,
        conf={
            "spark.ui.port": str(_free_port()),
            "spark.executor.processTreeMetrics.enabled": "true",
            "spark.executor.metrics.pollingInterval": "500ms",
            "spark.local.dir": str(workdir / "spark-local"),
        },
    )
    session_seconds = time.perf_counter() - started
    settings = SparkCocitationSettings(
        min_count=args.min_count, top_m=args.top_m, power=args.power, block_size=args.block_size
    )
    t = time.perf_counter()
    edges = workdir / "edges"  # MENTIONS.parquet beside CITES (a store's export) adds sentence_count
    report = run_cocitation(
        spark, read_citations(spark, edges), workdir / "spark-out", settings, mentions=read_mentions(spark, edges)
    )
    job_seconds = time.perf_counter() - t
    base = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}"
    stages = _json(f"{base}/stages?status=complete")
    longest: dict[str, Any] = {}
    for stage in sorted(stages, key=lambda s: -s["executorRunTime"])[:6]:  # the heaviest stages
        summary = _json(f"{base}/stages/{stage['stageId']}/{stage['attemptId']}/taskSummary?quantiles=0.5,1.0")
        median, top = summary["executorRunTime"]
        if top > longest.get("max_task_ms", -1):
            longest = {
                "stage": stage["stageId"],
                "tasks": stage["numTasks"],
                "max_task_ms": top,
                "median_task_ms": median,
            }
    executors = _json(f"{base}/allexecutors")
    peaks = executors[0].get("peakMemoryMetrics", {}) if executors else {}
    spark.stop()
    return {
        "seconds": round(job_seconds, 2),
        "session_seconds": round(session_seconds, 2),
        "report": {k: v for k, v in vars(report).items()},
        "shuffle_write_bytes": sum(s["shuffleWriteBytes"] for s in stages),
        "shuffle_read_bytes": sum(s["shuffleReadBytes"] for s in stages),
        "disk_spill_bytes": sum(s["diskBytesSpilled"] for s in stages),
        "executor_cpu_seconds": round(sum(s["executorCpuTime"] for s in stages) / 1e9, 2),  # ns in the REST API
        "stages": len(stages),
        "longest_task": longest,
        "executor_peak_jvm_heap_bytes": peaks.get("JVMHeapMemory"),
        "executor_peak_jvm_offheap_bytes": peaks.get("JVMOffHeapMemory"),
        "executor_peak_process_tree_rss_bytes": peaks.get("ProcessTreeJVMRSSMemory"),
    }


def child_single(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    import pyarrow.dataset as ds

    from gnn.cocitation.compute import cocitation_edges
    from gnn.cocitation.counts import cooccurrence
    from gnn.cocitation.noise import noise_distributions, top_partners

    split: dict[str, float] = {}
    sentence = None
    if args.store:  # the compute step's own read and counts, sentence level included
        from gnn.cocitation.compute import count_cocitation, read_cocitation_input
        from graph import StoreConfig, open_store

        with open_store(StoreConfig(db_path=args.store, read_only=True), ensure_schema=False) as store:
            cpu = time.process_time()
            t0 = time.perf_counter()
            cocite, sentence = count_cocitation(read_cocitation_input(store), device="cpu")
    else:
        cites = pd.read_parquet(workdir / "edges" / "CITES.parquet")
        cpu = time.process_time()
        t0 = time.perf_counter()
        cocite = cooccurrence(cites["source"], cites["target"], device="cpu")
        del cites
    split["count"] = time.perf_counter() - t0
    t = time.perf_counter()
    edges = cocitation_edges(cocite, sentence, min_count=args.min_count)
    split["strengths"] = time.perf_counter() - t
    t = time.perf_counter()
    noise = noise_distributions(cocite, power=args.power, device="cpu")
    partners = top_partners(noise, args.top_m)
    split["noise"] = time.perf_counter() - t
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - cpu
    peak_in_window = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    # identity, outside the window: the Spark output against these arrays
    n = len(cocite.ids)
    got = ds.dataset(str(workdir / "spark-out" / "CO_CITED"), format="parquet").to_table().to_pandas()
    i = cocite.ids.get_indexer(pd.Index(got["source"]))
    j = cocite.ids.get_indexer(pd.Index(got["target"]))
    order = np.argsort(i.astype(np.int64) * n + j, kind="stable")
    want_codes = np.flatnonzero(cocite.count >= args.min_count)
    checks: dict[str, Any] = {"pairs": [len(got), len(want_codes)]}
    same_pairs = len(got) == len(want_codes) and bool(
        np.array_equal(i[order], cocite.i[want_codes]) and np.array_equal(j[order], cocite.j[want_codes])
    )
    checks["pairs_identical"] = same_pairs
    if same_pairs:
        checks["counts_identical"] = bool(
            np.array_equal(got["count"].to_numpy()[order], edges["count"].to_numpy())
            and np.array_equal(got["sentence_count"].to_numpy()[order], edges["sentence_count"].to_numpy())
        )
        checks["strengths_max_abs_diff"] = {
            name: float(np.max(np.abs(got[name].to_numpy()[order] - edges[name].to_numpy()), initial=0.0))
            for name in ("association", "cosine", "jaccard", "inclusion")
        }
    del got, edges
    papers = ds.dataset(str(workdir / "spark-out" / "papers"), format="parquet").to_table().to_pandas()
    papers = papers.sort_values("id", ignore_index=True)
    checks["papers_identical_ids"] = papers["id"].tolist() == list(cocite.ids)
    checks["n_cited_identical"] = bool(np.array_equal(papers["n_cited"].to_numpy(), cocite.occurrences))
    checks["negative_max_abs_diff"] = float(
        np.max(np.abs(papers["negative_weight"].to_numpy() - noise.negative.numpy()))
    )
    have = papers[papers["cocite_partners"].notna()].reset_index(drop=True)
    checks["partner_lists_identical"] = have["id"].tolist() == list(partners["id"]) and all(
        list(a) == list(b) for a, b in zip(have["cocite_partners"], partners["cocite_partners"])
    )
    if checks["partner_lists_identical"]:
        got_p = np.concatenate(have["cocite_probs"].to_numpy())
        want_p = np.concatenate([np.asarray(p) for p in partners["cocite_probs"]])
        checks["probs_max_abs_diff"] = float(np.max(np.abs(got_p - want_p)))
        checks["tail_max_abs_diff"] = float(
            np.max(np.abs(have["cocite_tail"].to_numpy() - partners["cocite_tail"].to_numpy()))
        )
    tolerance = 1e-9
    checks["identical"] = bool(
        same_pairs
        and checks["counts_identical"]
        and max(checks["strengths_max_abs_diff"].values()) <= tolerance
        and checks["papers_identical_ids"]
        and checks["n_cited_identical"]
        and checks["negative_max_abs_diff"] <= tolerance
        and checks["partner_lists_identical"]
        and checks["probs_max_abs_diff"] <= tolerance
        and checks["tail_max_abs_diff"] <= tolerance
    )
    return {
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu_seconds, 2),
        "split_seconds": {k: round(v, 2) for k, v in split.items()},
        "peak_rss_at_window_end_bytes": peak_in_window,
        "pairs": len(cocite),
        "checks": checks,
    }


CHILDREN = {"spark": child_spark, "single": child_single}


def run_child(name: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Run one path in a fresh process; sample the RSS of it and its children (the JVM) every 0.2 s."""
    import psutil

    out = workdir / f"{name}.json"
    out.unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--workdir", str(workdir)]
    command += [f"--{k.replace('_', '-')}={v}" for k, v in _job_flags(args).items()]
    started = time.perf_counter()
    proc = subprocess.Popen(command)
    watcher = psutil.Process(proc.pid)
    peak, peak_jvm = 0, 0
    while proc.poll() is None:
        with contextlib.suppress(psutil.Error):
            tree = [watcher, *watcher.children(recursive=True)]
            rss = {p.pid: p.memory_info().rss for p in tree}
            peak = max(peak, sum(rss.values()))
            peak_jvm = max(peak_jvm, sum(v for pid, v in rss.items() if pid != proc.pid))
        if time.perf_counter() - started > args.timeout:
            with contextlib.suppress(psutil.Error):
                for process in [*watcher.children(recursive=True), watcher]:  # the JVM too, not only python
                    process.kill()
            proc.wait()
            return {"finished": False, "why": f"did not finish within {args.timeout:.0f} s (killed)"}
        time.sleep(0.2)
    if proc.returncode != 0 or not out.exists():
        return {"finished": False, "why": f"exit code {proc.returncode}"}
    result = json.loads(out.read_text())
    result.update(finished=True, process_seconds=round(time.perf_counter() - started, 2))
    result["sampled_peak_rss_bytes"] = peak  # the child and its JVM together
    if name == "spark":
        result["sampled_peak_jvm_rss_bytes"] = peak_jvm
    print(f"{name}: {json.dumps({k: v for k, v in result.items() if k != 'report'})}", flush=True)
    return result


def _job_flags(args: argparse.Namespace) -> dict[str, Any]:
    names = ("min_count", "top_m", "power", "block_size", "driver_memory", "partitions", "store")
    return {k: getattr(args, k) for k in names if getattr(args, k) is not None}


def add_heavy(cites: pd.DataFrame, papers: int, heavy: int, refs: int, seed: int) -> pd.DataFrame:
    """``heavy`` review papers ``R0..``, each citing ``refs`` distinct papers drawn uniformly."""
    rng = np.random.default_rng(seed + 1)
    width = max(7, len(str(papers - 1)))
    rows = [
        pd.DataFrame(
            {"source": f"R{k}", "target": [f"P{i:0{width}d}" for i in rng.choice(papers, refs, replace=False)]}
        )
        for k in range(heavy)
    ]
    return pd.concat([cites[["source", "target"]], *rows], ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.8, help="Zipf exponent of cited-paper popularity")
    parser.add_argument(
        "--store", type=Path, help="an embedded store instead of a generated graph: its CITES and MENTIONS"
    )
    parser.add_argument("--heavy", type=int, default=0, help="review papers with --heavy-refs references each")
    parser.add_argument("--heavy-refs", type=int, default=20_000)
    parser.add_argument("--min-count", type=int, default=1)
    parser.add_argument("--top-m", type=int, default=32)
    parser.add_argument("--power", type=float, default=0.75)
    parser.add_argument("--block-size", type=int, default=2048)
    parser.add_argument("--driver-memory", default="2g", help="the local-mode executor's heap")
    parser.add_argument("--partitions", type=int, default=None, help="spark.sql.shuffle.partitions")
    parser.add_argument("--skip-single", action="store_true")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds each path may run (then killed)")
    parser.add_argument("--machine-note", default="", help="what else ran on the machine (goes into the record)")
    parser.add_argument("--out-json", type=Path)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument(
        "--rerender", type=Path, help="rebuild a record's table and notes from its stored runs (no new measurement)"
    )
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rerender:
        old = json.loads(args.rerender.read_text())
        stored = argparse.Namespace(**old["parameters"])
        new = _record(stored, old["data"], old["runs"], (0.0,), (0.0,))
        old.update(tables=new["tables"], notes=[*new["notes"], *old["notes"][len(new["notes"]) :]])
        args.rerender.write_text(json.dumps(old, indent=2, default=str) + "\n")
        return 0
    if args.child:
        result = CHILDREN[args.child](args.workdir, args)
        (args.workdir / f"{args.child}.json").write_text(json.dumps(result, default=str))
        return 0

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="spark_cocitation_"))
    (workdir / "edges").mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    try:
        if args.store:  # the store's own edge lists, as `citegraph export tables --format parquet` writes them
            from api.cli.main import main as cli

            cli(["-q", "--db", str(args.store), "export", "tables", str(workdir / "edges"), "--format", "parquet"])
            cites, stats = pd.read_parquet(workdir / "edges" / "CITES.parquet"), {"store": str(args.store)}
        else:
            _, cites, stats = generate(args.papers, args.edges, args.seed, args.alpha)
        if args.heavy:
            cites = add_heavy(cites, args.papers, args.heavy, args.heavy_refs, args.seed)
        if not args.store:
            cites[["source", "target"]].to_parquet(workdir / "edges" / "CITES.parquet", index=False)
        refs = cites.drop_duplicates(["source", "target"])["source"].value_counts().to_numpy(dtype=np.int64)
        data = {
            "papers": args.papers if not args.store else None,
            "citations": len(cites),
            "pair_incidences": int((refs * (refs - 1) // 2).sum()),
            "citing_papers": len(refs),
            "max_references": int(refs.max()),
            "heavy": args.heavy,
            "heavy_refs": args.heavy_refs if args.heavy else 0,
            **stats,
        }
        del cites
        print(f"graph: {data}", flush=True)
        runs = {"spark": run_child("spark", args, workdir)}
        if not args.skip_single and runs["spark"]["finished"]:
            runs["single"] = run_child("single", args, workdir)
        record = _record(args, data, runs, load_before, os.getloadavg())
        if args.out_json:
            args.out_json.parent.mkdir(parents=True, exist_ok=True)
            args.out_json.write_text(json.dumps(record, indent=2, default=str) + "\n")
            print(f"wrote {args.out_json}")
        single = runs.get("single", {})
        return 0 if not single or single.get("checks", {}).get("identical") else 1
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def _gib(n: int | None) -> str | None:
    return None if n is None else f"{n / GIB:.2f} GiB"


def _record(
    args: argparse.Namespace, data: dict[str, Any], runs: dict[str, Any], load_before: tuple, load_after: tuple
) -> dict[str, Any]:
    spark, single = runs["spark"], runs.get("single", {})
    size = f"{args.papers / 1e6:g}M" if args.papers >= 1_000_000 else f"{args.papers // 1000}k"
    if getattr(args, "store", None):
        size = f"the store {Path(args.store).name} ({data['citations']:,} citations and its MENTIONS)"
    edges = f"{args.edges / 1e6:g}M"
    blocks = "one block per paper" if args.block_size >= 10**9 else f"blocks of {args.block_size:,}"
    heavy = f" + {args.heavy} reviews of {args.heavy_refs:,} references, {blocks}" if args.heavy else ""
    rows: list[dict[str, Any]] = []
    if spark.get("finished"):
        longest = spark["longest_task"]
        rows += [
            {"system": "spark local[2]", "metric": "wall s (job)", "value": spark["seconds"]},
            {"system": "spark local[2]", "metric": "wall s (process)", "value": spark["process_seconds"]},
            {"system": "spark local[2]", "metric": "CPU s", "value": spark.get("executor_cpu_seconds")},
            {
                "system": "spark local[2]",
                "metric": "shuffle written / read",
                "value": f"{_gib(spark['shuffle_write_bytes'])} / {_gib(spark['shuffle_read_bytes'])}",
            },
            {
                "system": "spark local[2]",
                "metric": "executor peak (JVM heap; process RSS)",
                "value": f"{_gib(spark['executor_peak_jvm_heap_bytes'])}; {_gib(spark['sampled_peak_jvm_rss_bytes'])}",
            },
            {
                "system": "spark local[2]",
                "metric": "longest task (median of its stage)",
                "value": f"{longest.get('max_task_ms', 0) / 1000:.1f} s ({longest.get('median_task_ms', 0) / 1000:.1f} s)",
            },
        ]
    else:
        rows.append({"system": "spark local[2]", "metric": "wall s (job)", "value": f"DNF: {spark['why']}"})
    if single.get("finished"):
        rows += [
            {
                "system": "single machine (counts, strengths, noise)",
                "metric": "wall s (job)",
                "value": single["seconds"],
            },
            {
                "system": "single machine (counts, strengths, noise)",
                "metric": "wall s (process)",
                "value": single["process_seconds"],
            },
            {"system": "single machine (counts, strengths, noise)", "metric": "CPU s", "value": single["cpu_seconds"]},
            {
                "system": "single machine (counts, strengths, noise)",
                "metric": "executor peak (JVM heap; process RSS)",
                "value": f"-; {_gib(single['peak_rss_at_window_end_bytes'])}",
            },
        ]
    identical = single.get("checks", {}).get("identical") if single else None
    notes = [
        f"{data['pair_incidences']:,} pair incidences from {data['citing_papers']:,} citing papers "
        f"(largest {data['max_references']:,} references); "
        + (f"{single['pairs']:,} co-cited pairs. " if single.get("finished") else "")
        + (
            "Spark output against the single-machine step: pairs and counts identical, strengths and noise "
            "distributions within 1e-9."
            if identical
            else ("Identity check: FAILED." if identical is False else "Identity check not run.")
        ),
        f"Spark: driver/executor heap capped at {args.driver_memory}, block size {args.block_size:,}, "
        f"{spark.get('stages', '?')} stages; single machine: gnn.cocitation functions without store read/write or clusters.",
    ]
    return {
        "capability": "cocitation",
        "kind": "speed",
        "title": f"Spark local mode vs one machine: co-citation at {size} papers / {edges} citations{heavy}"
        if not getattr(args, "store", None)
        else f"Spark local mode vs one machine: co-citation on {size}",
        "command": "python " + shlex.join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": (
            f"2-core VM shared with other engineers' jobs (load average {load_before[0]:.1f} before, "
            f"{load_after[0]:.1f} after){'; ' + args.machine_note if args.machine_note else ''}"
        ),
        "date": dt.date.today().isoformat(),
        "commit": commit(),
        "rank": 50,
        "notes": notes,
        "tables": [{"title": None, "row_header": "path", "baselines": [], "served": "spark local[2]", "rows": rows}],
        "benchmark": "spark co-citation",
        "parameters": {k: v for k, v in vars(args).items() if k not in ("child", "workdir", "out_json", "rerender")},
        "data": data,
        "runs": runs,
        "identical": identical,
        "machine_detail": machine(),
    }


if __name__ == "__main__":
    sys.exit(main())
