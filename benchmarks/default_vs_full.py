"""What the default build gives up: its reranker settings against `make build FULL=1`'s, and the linker, in one run.

On one store with every paper embedded (a copy of the store a first `make demo` completed in the
background, ``--db``), this run

1. trains the reranker with the default build's flags (:data:`api.pipeline.plans.DEFAULT_RERANKER`: one
   objective, the latest training fold, one LambdaMART seed at rate 0.1) and reports it beside the
   baselines of that training run;
2. trains it with the full build's (every objective on every fold, the bag of five seeds), beside the
   same baselines;
3. evaluates the linker both builds train (``linkage train`` is the same step in both) with
   ``citegraph linkage eval`` (leave-reference-papers-out cross-validation on CL-SciSumm 2018, with its
   baselines).

Each training replaces the copy's served reranker; the reports go to ``--work``. The
record keeps every report's validation and test rows; the README quotes the validation R@10 and MRR of
the two served scorers and the linker's F1::

    python benchmarks/default_vs_full.py --db /tmp/full/citegraph.db --work /tmp/full/work \\
        --out docs/results/default_vs_full.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from run_record import commit, run_record, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataclasses import replace

from api.pipeline.plans import DEFAULT_RERANKER


def reranker_rows(report: dict[str, Any], build: str) -> list[dict[str, Any]]:
    """Each system of a training report as record rows (validation and test R@10, MRR), the served scorer
    (the last row) named as the build's."""
    rows = []
    last = report["systems"][-1]["name"]
    for system in report["systems"]:
        name = f"{build}: served scorer ({system['name']})" if system["name"] == last else f"{build}: {system['name']}"
        for split in ("validation", "test"):
            for metric in ("R@10", "MRR"):
                rows.append({"system": name, "metric": f"{split} {metric}", "value": round(system[split][metric], 3)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="a store with every paper embedded (a copy)")
    parser.add_argument("--work", type=Path, required=True, help="where the reports and models go")
    parser.add_argument("--out", default="docs/results/default_vs_full.json")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    rows: list[dict[str, Any]] = []
    seconds: dict[str, float] = {}
    # the default build leaves its test queries out (--no-test); here both report them
    # (its command's flags, less the report path this run chooses)
    default_flags = list(replace(DEFAULT_RERANKER, test=True).command()[2:-2])
    builds = {"default build": default_flags, "FULL=1 build": []}
    for build, flags in builds.items():
        report_path = args.work / f"reranker_{'default' if build.startswith('default') else 'full'}.json"
        seconds[build] = _train(args, flags, report_path)
        rows += reranker_rows(json.loads(report_path.read_text(encoding="utf-8")), build)

    # the linker of both builds: `linkage train` on the CL-SciSumm 2018 gold, no silver (the build's step)
    started = time.perf_counter()
    command = [sys.executable, "-m", "api.cli.main", "--quiet", "linkage", "eval", "--max-papers", "0"]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    seconds["linker"] = time.perf_counter() - started
    linker = json.loads(done.stdout)
    (args.work / "linkage_eval.json").write_text(json.dumps(linker, indent=1), encoding="utf-8")
    rows += linker_rows(linker)

    record = {
        "capability": "recommend",
        "kind": "quality",
        "title": "What the default build gives up: its reranker against FULL=1's, and the linker both train",
        **run_record("benchmarks/default_vs_full.py", args),
        "commit": commit(short=True),
        "rank": 2,
        "notes": [
            "One store with every paper embedded (the default build's store after its background build); both "
            "rerankers trained on it in this run, each beside the baselines of its own training run "
            "(the same queries); the served scorer is each run's last row.",
            f"Seconds on the project's 2-core CPU: {json.dumps({k: round(v) for k, v in seconds.items()})}.",
        ],
        "tables": [{"title": None, "row_header": "system", "baselines": [], "served": None, "rows": rows}],
    }
    print(f"wrote {write_json(args.out, record)}")


def _train(args: argparse.Namespace, flags: list[str], report_path: Path) -> float:
    """`train reranker` with ``flags`` on the store (a copy: its served reranker is replaced); its seconds."""
    command = [sys.executable, "-m", "api.cli.main", "--db", str(args.db), "--quiet", "train", "reranker", *flags]
    started = time.perf_counter()
    subprocess.run([*command, "--out", str(report_path)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def linker_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Micro and macro F1, precision and recall of every system of the linkage evaluation."""
    rows = []
    for name, scores in report["scores"].items():
        for metric, value in scores.items():
            if metric in ("precision", "recall", "micro_f1", "macro_f1"):
                rows.append({"system": f"linker: {name}", "metric": metric, "value": round(float(value), 3)})
    return rows


if __name__ == "__main__":
    main()
