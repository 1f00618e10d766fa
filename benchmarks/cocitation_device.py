"""The co-citation count on the CPU and on a CUDA GPU, stage by stage, on one synthetic graph.

The graph is ``benchmarks/ingest_bench.py``'s seeded power-law graph (default 1M papers / 10M
citations, the graph of ``benchmarks/cocitation_bench.py``), turned into the codes the compute step
counts: the citing paper of each citation and the cited paper's index among the cited papers (what
``count_cocitation`` passes to ``count_pairs``). No store is needed, so this runs on a machine that
has only PyTorch, NumPy and pandas (a lent GPU machine).

Timed, each the median of ``--repeats`` runs after a warm-up (CPU: ``--cpu-repeats``):

``runs`` lists every time, the warm-up's first: the first call on CUDA also pays for the
context, the kernels' loading and the pinned host buffers' allocation.

* ``cpu``: ``count_pairs(..., device="cpu")``, the NumPy expand–sort–compress;
* ``cuda``: ``count_pairs(..., device="cuda")``, end to end: host arrays in, host arrays out;
* its stages, synchronised one by one: ``h2d`` (the two int64 input arrays to the device),
  ``device`` (:func:`gnn.cocitation.counts.esc_on_device`: deduplicate, expand, sort, compress),
  ``d2h`` (the pairs, counts and occurrences back into pinned host memory);
* with ``--before FILE`` (an earlier ``gnn/cocitation/counts.py``), that version's ``cuda`` and
  ``cpu`` paths on the same input, in the same run.

Every path's pairs and counts are compared to the ``cpu`` result for exact equality.

Usage::

    python benchmarks/cocitation_device.py --out docs/results/cocitation_device.json
    python benchmarks/cocitation_device.py --papers 100000 --edges 1000000 --device cpu   # a dry run
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from ingest_bench import generate, machine  # noqa: E402
from run_record import commit, load_module, run_record, write_json  # noqa: E402

from gnn.cocitation.counts import PairCounts, count_pairs, esc_on_device, to_host  # noqa: E402


def count_input(papers: int, edges: int, seed: int, alpha: float) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """``(members, items, ids)`` as ``count_cocitation`` builds them: citing codes, cited indexes among the cited."""
    paper_frame, cites, _ = generate(papers, edges, seed, alpha)
    index = pd.Index(paper_frame["id"])
    citing = index.get_indexer(cites["source"]).astype(np.int64)
    cited = index.get_indexer(cites["target"]).astype(np.int64)
    cited_mask = np.bincount(cited, minlength=papers) > 0
    position = np.cumsum(cited_mask) - 1
    return citing, position[cited].astype(np.int64), index[cited_mask]


def median_seconds(run: Callable[[], object], repeats: int, synchronise: bool) -> tuple[float, list[float], object]:
    """Median wall time of ``repeats`` runs after one warm-up, every time (the warm-up's first), the last result."""
    start = time.perf_counter()
    result = run()
    if synchronise:
        torch.cuda.synchronize()
    times = [time.perf_counter() - start]
    for _ in range(repeats):
        if synchronise:
            torch.cuda.synchronize()
        start = time.perf_counter()
        result = run()
        if synchronise:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:]), [round(t, 4) for t in times], result


def stages(
    members: np.ndarray, items: np.ndarray, n_items: int, device: torch.device, repeats: int
) -> dict[str, float]:
    """Median seconds of the device path's three stages, each closed by a synchronisation."""
    spent: dict[str, list[float]] = {"h2d": [], "device": [], "d2h": []}

    def synchronise() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for attempt in range(repeats + 1):  # the first is a warm-up
        synchronise()
        start = time.perf_counter()
        members_t = torch.from_numpy(members).to(device)
        items_t = torch.from_numpy(items).to(device)
        synchronise()
        copied_in = time.perf_counter()
        occurrences, _, ranges = esc_on_device(members_t, items_t, n_items)
        on_device = list(ranges)
        synchronise()
        computed = time.perf_counter()
        for triple in on_device:
            [to_host(column) for column in triple]
        to_host(occurrences)
        synchronise()
        copied_out = time.perf_counter()
        if attempt:
            spent["h2d"].append(copied_in - start)
            spent["device"].append(computed - copied_in)
            spent["d2h"].append(copied_out - computed)
        del members_t, items_t, occurrences, on_device
    return {name: round(statistics.median(times), 4) for name, times in spent.items()}


def same_pairs(a: PairCounts, b: PairCounts) -> bool:
    """Exact equality of two counts (duck-typed: an earlier module's PairCounts is another class)."""
    return bool(
        np.array_equal(a.i, b.i)
        and np.array_equal(a.j, b.j)
        and np.array_equal(a.count, b.count)
        and np.array_equal(a.occurrences, b.occurrences)
        and a.n_members == b.n_members
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.8)
    parser.add_argument("--device", default="cuda", help="the device path's device (cuda; cpu for a dry run)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-repeats", type=int, default=2)
    parser.add_argument("--before", type=Path, help="an earlier gnn/cocitation/counts.py to time beside")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    members, items, ids = count_input(args.papers, args.edges, args.seed, args.alpha)
    per_member = np.bincount(members)
    incidences = int((per_member * (per_member - 1) // 2).sum())
    print(
        f"graph: {len(members):,} citations, {len(ids):,} cited papers, {incidences:,} pair incidences "
        f"({time.perf_counter() - started:.1f} s to generate)",
        flush=True,
    )
    device = torch.device(args.device)
    on_cuda = device.type == "cuda"
    paths: dict[str, Callable[[], PairCounts]] = {
        "cpu": lambda: count_pairs(members, items, ids, device="cpu"),
        "device": lambda: count_pairs(members, items, ids, device=device),
    }
    if args.before:
        earlier = load_module(args.before, "counts_before")
        paths["before cpu"] = lambda: earlier.count_pairs(members, items, ids, device="cpu")  # type: ignore[attr-defined]
        paths["before device"] = lambda: earlier.count_pairs(members, items, ids, device=device)  # type: ignore[attr-defined]
    seconds: dict[str, float] = {}
    runs: dict[str, list[float]] = {}
    identical: dict[str, bool] = {}
    reference: PairCounts | None = None
    for name, run in paths.items():
        repeats = args.repeats if name.endswith("device") else args.cpu_repeats
        seconds[name], runs[name], result = median_seconds(run, repeats, on_cuda and name.endswith("device"))
        if reference is None:
            reference = result  # type: ignore[assignment]
        identical[name] = same_pairs(result, reference)  # type: ignore[arg-type]
        print(f"{name:>14}: {seconds[name]:.3f} s (runs {runs[name]}), identical to cpu: {identical[name]}", flush=True)
        del result
    stage_seconds = stages(members, items, len(ids), device, args.repeats)  # on the CPU: the torch code, dry
    if stage_seconds:
        print(f"device stages: {stage_seconds}", flush=True)
    assert reference is not None
    report: dict[str, Any] = {
        **run_record("benchmarks/cocitation_device.py", args),
        "commit": commit(),
        "host": machine(),
        "gpu": torch.cuda.get_device_name(device) if on_cuda else None,
        "torch": torch.__version__,
        "graph": {
            "papers": args.papers,
            "citations": len(members),
            "cited_papers": len(ids),
            "pair_incidences": incidences,
            "distinct_pairs": len(reference),
        },
        "seconds": {k: round(v, 4) for k, v in seconds.items()},
        "runs": runs,
        "device_stages": stage_seconds,
        "identical_to_cpu": identical,
    }
    print(
        json.dumps({k: report[k] for k in ("gpu", "graph", "seconds", "device_stages", "identical_to_cpu")}, indent=2)
    )
    if args.out:
        write_json(args.out, report)
    return 0 if all(identical.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
