"""Standalone reproduction of a LadybugDB 0.22 crash: ``ORDER BY ... SKIP s LIMIT l`` with ``s`` far past the end.

The planner turns ``ORDER BY`` + ``SKIP`` + ``LIMIT`` into a ``TOP_K`` operator with ``k = s + l``. When the
result holds fewer rows than ``s`` and ``s`` is large (found: 11,915 on a 10-row table of a string key and an
integer; 45,530 on a 10-row integer table; 61,680 on a 50,000-row one: the bound moves with row width and
row count, but never below ~11,900 in any shape tried), the process dies with SIGSEGV inside the native
library. ``SKIP`` inside the result (199,000 of 200,000 rows), ``SKIP`` without ``LIMIT``, ``LIMIT`` alone
(500,000 on 10 rows) and ``SKIP``/``LIMIT`` without ``ORDER BY`` all run. The minimal text to report
upstream is :data:`MINIMAL`; this script runs it (and a bisection of the bound) in child processes, so the
crash shows as an exit status instead of killing this one::

    python benchmarks/ladybug_skip_crash.py            # the minimal case and two neighbours
    python benchmarks/ladybug_skip_crash.py --bisect   # the smallest crashing SKIP for --rows rows

citegraph never sends this shape: cursors are signed (``api/types/common.py``) and the embedded store
counts the rows of a paged statement before a large ``SKIP`` reaches the engine (``graph/embedded.py``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

MINIMAL = """\
import os, tempfile
import ladybug
db = ladybug.Database(os.path.join(tempfile.mkdtemp(), "db"))
conn = ladybug.Connection(db)
conn.execute("CREATE NODE TABLE P(id INT64, PRIMARY KEY(id))")
conn.execute("UNWIND range(1, {rows}) AS i CREATE (:P {{id: i}})")
conn.execute("MATCH (p:P) RETURN p.id ORDER BY p.id SKIP {skip} LIMIT 1")  # SIGSEGV for SKIP 50000 on 10 rows
print("survived")
"""


def run_case(rows: int, skip: int) -> int:
    """The exit status of :data:`MINIMAL` for ``rows`` rows and ``skip`` (-11: SIGSEGV)."""
    code = MINIMAL.format(rows=rows, skip=skip)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300).returncode


def smallest_crashing_skip(rows: int, low: int, high: int) -> int:
    """Bisect for the smallest SKIP that crashes, given ``low`` runs and ``high`` crashes."""
    while high - low > 1:
        mid = (low + high) // 2
        if run_case(rows, mid) == 0:
            low = mid
        else:
            high = mid
    return high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10, help="rows in the table (default: 10)")
    parser.add_argument("--bisect", action="store_true", help="find the smallest crashing SKIP")
    args = parser.parse_args()
    if args.bisect:
        print(f"{args.rows} rows: smallest crashing SKIP = {smallest_crashing_skip(args.rows, args.rows, 1_000_000)}")
        return
    for skip in (args.rows + 1, 40_000, 50_000):
        status = run_case(args.rows, skip)
        print(f"rows={args.rows} SKIP {skip} LIMIT 1: exit status {status}{' (SIGSEGV)' if status == -11 else ''}")


if __name__ == "__main__":
    main()
