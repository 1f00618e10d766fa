"""What turning LadybugDB's column compression off costs the embedded store, and what it keeps.

``graph.embedded.COMPRESSION`` is off because compressed ``DOUBLE[]`` values were zeroed by later writes and
checkpoints (``benchmarks/ladybug_list_property_loss.py``). For each setting this ingests one source into a
fresh store (``citegraph ingest <source>`` in a child process, the setting patched in) and reports the store's
size on disk and the load's wall time, then writes the loss case's three rounds of ``cocite_probs`` through
the store (each followed by a close, as separate commands) and counts the papers whose list came back wrong::

    python benchmarks/store_compression.py --source anthology --out docs/results/store_compression.json
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.run_record import commit, run_record, write_json  # noqa: E402

# A child process: the CLI's main with the engine's compression set as asked.
INGEST = """
import sys
import graph.embedded
graph.embedded.COMPRESSION = sys.argv[1] == "on"
from api.cli.main import main
raise SystemExit(main(["--db", sys.argv[2], "-q", "ingest", sys.argv[3]]))
"""


def store_bytes(db: Path) -> int:
    """The store's file and its companions (``<db>.wal`` …)."""
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())


def lost_values(compression: bool, folder: Path) -> int:
    """Papers whose ``cocite_probs`` came back other than written, after the loss case's rounds through the store."""
    import graph.embedded

    spec = importlib.util.spec_from_file_location(
        "loss_case", ROOT / "tests" / "graph" / "test_list_property_checkpoint.py"
    )
    assert spec is not None and spec.loader is not None
    case = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(case)
    graph.embedded.COMPRESSION = compression
    return len(case.write_rounds(folder / "loss.db", rewrite_all=False, after_round=case.reopen))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default="anthology", help="what `citegraph ingest` loads (default: anthology)")
    parser.add_argument("--out", default=None, help="write the record here (docs/results/store_compression.json)")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for setting in ("on", "off"):
        with tempfile.TemporaryDirectory(dir=ROOT / "var") as tmp:
            db = Path(tmp) / "store.db"
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", INGEST, setting, str(db), args.source], cwd=ROOT, check=True)
            seconds = time.perf_counter() - start
            system = f"compression {setting}"
            rows += [
                {"system": system, "metric": "store size (MB)", "value": round(store_bytes(db) / 1e6, 1)},
                {"system": system, "metric": "ingest wall time (s)", "value": round(seconds, 1)},
                {
                    "system": system,
                    "metric": "papers with lost cocite_probs",
                    "value": lost_values(setting == "on", Path(tmp)),
                },
            ]
            print(rows[-3:])
    record = {
        "capability": "ingest",
        "kind": "memory",
        "title": f"The embedded store with LadybugDB's column compression on and off: `ingest {args.source}`",
        **run_record("benchmarks/store_compression.py", args),
        "commit": commit(),
        "notes": [
            "The store opens the engine with compression off (graph.embedded.COMPRESSION): with it on, DOUBLE[] "
            "values were zeroed by later writes and checkpoints (benchmarks/ladybug_list_property_loss.py). "
            "Lost values: the loss case's three rounds of cocite_probs written through the store, a close after each.",
            "The machine's two cores ran a CI test run beside it: wall times are rough.",
        ],
        "tables": [
            {
                "title": None,
                "row_header": "setting",
                "baselines": ["compression on"],
                "served": "compression off",
                "rows": rows,
            }
        ],
    }
    if args.out:
        write_json(args.out, record)


if __name__ == "__main__":
    main()
