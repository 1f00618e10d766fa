"""What ``GraphStore.completeness()`` costs (the count statements behind ``stats`` and ``/readyz``).

Times the call on each store given, opened read-only: the first call after opening (the columns are
read from disk) and the median of the warm calls after it, beside ``stats()`` (node and edge counts).
``--fill`` first gives every paper with text and every sentence random vectors (``embedding``,
``taxonomy``, ``poincare``), to time a store as a finished build leaves it; use it on a copy only::

    cp var/regression/store.db /tmp/full.db
    python benchmarks/completeness_bench.py --fill /tmp/full.db
    python benchmarks/completeness_bench.py var/regression/store.db /tmp/full.db \\
        --out docs/results/completeness_cost.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from run_record import commit, run_record, write_json

from gnn.text.embeddings import paper_texts
from graph import StoreConfig, open_store

FILL_BATCH = 20_000  # nodes per write: bounds memory (a 384-d float32 vector is 1.5 KiB)


def fill(path: Path) -> None:
    """Random unit vectors on every paper with text and every sentence (a finished build's columns)."""
    rng = np.random.default_rng(0)
    with open_store(StoreConfig(db_path=path)) as store:
        sizes = store.schema.sizes
        texts = paper_texts(store)
        papers = texts.loc[texts["text"] != "", "id"].tolist()
        sentences = [r["key"] for r in store.query("every_key", identifiers={"LABEL": "Sentence", "KEY": "id"})]
        for label, ids in (("Paper", papers), ("Sentence", sentences)):
            for start in range(0, len(ids), FILL_BATCH):
                part = ids[start : start + FILL_BATCH]
                vectors = rng.normal(size=(len(part), sizes.embedding)).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                frame = pd.DataFrame({"id": part, "embedding": list(vectors)})
                if label == "Paper":
                    poincare = rng.uniform(-0.05, 0.05, size=(len(part), sizes.poincare))  # well inside the ball
                    frame = frame.assign(taxonomy=list(vectors[:, : sizes.taxonomy]), poincare=list(poincare))
                store.write_node_properties(label, "id", frame)
                print(f"{label}: {start + len(part):,} of {len(ids):,}", flush=True)


def time_store(path: Path, repeat: int) -> dict[str, Any]:
    with open_store(StoreConfig(db_path=path, read_only=True)) as store:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            rows = store.completeness()
            times.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        store.stats()
        stats_ms = (time.perf_counter() - start) * 1000
    embedded = rows[0]  # Paper.embedding
    return {
        "label": f"{path}: {embedded.have:,} of {embedded.of:,} papers embedded",
        "papers": embedded.of,
        "store": str(path),
        "rows": {row.property: [row.have, row.of] for row in rows},
        "first_ms": round(times[0]),
        "warm_median_ms": round(statistics.median(times[1:])),
        "stats_ms": round(stats_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", type=Path)
    parser.add_argument("--fill", action="store_true", help="write random vectors into the stores (copies only)")
    parser.add_argument("--repeat", type=int, default=9, help="calls per store: the first, then the warm ones")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--note", action="append", default=[], help="a sentence for the record's notes (repeatable)")
    args = parser.parse_args()
    if args.fill:
        for path in args.stores:
            fill(path)
        return
    runs = [time_store(path, args.repeat) for path in args.stores]
    for run in runs:
        print(run)
    if args.out:
        rows = [
            {"system": run["label"], "metric": metric, "value": run[key]}
            for run in runs
            for metric, key in (
                ("papers with text", "papers"),
                ("first call (ms)", "first_ms"),
                ("warm call, median (ms)", "warm_median_ms"),
                ("stats() (ms)", "stats_ms"),
            )
        ]
        record = {
            "capability": "api",
            "kind": "speed",
            "title": "`completeness()` (behind `stats` and `/readyz`): two count statements on a 133k-paper store",
            **run_record("benchmarks/completeness_bench.py", args),
            # positional stores: run_record would spell them as an option
            "command": f"python benchmarks/completeness_bench.py {' '.join(map(str, args.stores))} "
            f"--repeat {args.repeat} --out {args.out}" + "".join(f" --note {n!r}" for n in args.note),
            "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end of the run",
            "commit": commit(),
            "notes": [
                "The first call after opening reads the columns from disk; later ones find them in the buffer pool. "
                "A store whose vectors are all present costs more than a partly built one: the vector columns "
                "are read to count their nulls.",
                *args.note,
            ],
            "tables": [{"title": None, "row_header": "store", "baselines": [], "served": None, "rows": rows}],
            "runs": runs,
        }
        write_json(args.out, record)


if __name__ == "__main__":
    main()
