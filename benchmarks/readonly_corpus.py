"""The read-only guard of ``citegraph cypher`` against the generated corpus, with LadybugDB as judge.

Runs what ``tests/graph/test_readonly_corpus.py`` asserts and writes the counts as a record: every statement
of ``tests/readonly_corpus.py`` that writes, reaches a file or calls a table function goes through
:func:`graph.readonly.check_read_only`; one it lets through is planned by the engine (``EXPLAIN`` on a
writable copy of the tiny graph) and is a *bypass* when the plan does more than read
(:func:`graph.readonly.check_plan`). The corpus's reading statements must all pass both::

    python benchmarks/readonly_corpus.py --out docs/results/readonly_corpus.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

from run_record import commit, run_record, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from readonly_corpus import PARAMS, judge, read_statements, refused_statements  # noqa: E402
from tiny_graph import tiny_batch  # noqa: E402

from graph import StoreConfig, ingest, open_store  # noqa: E402
from graph.errors import CitegraphError  # noqa: E402
from graph.readonly import EMBEDDED_PROCEDURES, check_plan, check_read_only  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, open_store(StoreConfig(db_path=Path(folder) / "g.db")) as store:
        ingest(store, tiny_batch())
        secret = Path(folder) / "secret.csv"
        secret.write_text("root:x:0:0\n", encoding="utf-8")
        harmful = refused_statements(str(secret), str(Path(folder) / "out"))
        verdicts = Counter(judge(store, text) for text in harmful)
        reads = read_statements()
        refused_reads = 0
        for text in reads:
            try:
                check_read_only(text, procedures=EMBEDDED_PROCEDURES)
                check_plan(store._plan(text, PARAMS))  # type: ignore[attr-defined]
            except CitegraphError:
                refused_reads += 1
    rows = [
        {"system": "writing, file and table-function statements", "metric": "generated", "value": len(harmful)},
        {"system": "writing, file and table-function statements", "metric": "refused", "value": verdicts["refused"]},
        {
            "system": "writing, file and table-function statements",
            "metric": "accepted, engine cannot plan",
            "value": verdicts["rejected"],
        },
        {"system": "writing, file and table-function statements", "metric": "bypasses", "value": verdicts["bypass"]},
        {"system": "reading statements", "metric": "generated", "value": len(reads)},
        {"system": "reading statements", "metric": "refused", "value": refused_reads},
    ]
    for row in rows:
        print(row)
    if args.out:
        write_json(
            args.out,
            {
                "capability": "api",
                "kind": "quality",
                "title": "Read-only guard of `citegraph cypher`: a generated corpus, LadybugDB's plan as judge",
                **run_record("benchmarks/readonly_corpus.py", args),
                "commit": commit(),
                "notes": [
                    "Harmful statements: 19 payloads (LOAD FROM, CALL of table functions, COPY TO, CREATE, MERGE, "
                    "SET, DELETE, CHECKPOINT, INSTALL, EXPORT, ATTACH, ...) behind 20 reading preambles that can "
                    "hide them (a variable named `as`, a number glued to the keyword, comments, aliases named "
                    "like clauses) in 4 spellings. A bypass is a statement the guard accepts and the engine "
                    "plans with more than reading operators and describing table functions.",
                    "Reading statements: 15 templates with clause keywords as names (backticks, aliases after a "
                    "value, map keys, labels), strings and comments holding clause words, unicode and mixed case; "
                    "the recipes of cypher/explore/ and docs/cypher.md are tested apart "
                    "(tests/graph/test_readonly_corpus.py).",
                ],
                "tables": [{"title": None, "row_header": "statements", "baselines": [], "served": None, "rows": rows}],
            },
        )


if __name__ == "__main__":
    main()
