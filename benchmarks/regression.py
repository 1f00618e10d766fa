"""Behaviour regression: record what the user-facing commands answer on a store, and compare two records.

A refactoring that should change nothing is checked by recording these outputs before and after it:

- ``recommend --batch`` rankings (ids and scores) for 200 time-split ScisummNet citances (validation year,
  the citing paper's other citations given, every cited paper's marker masked),
- ``link`` output on the CL-SciSumm 2018 training folders (Task 1A input written by ``linkage task-input``),
- ``stats --json``, ``export cocitation --format csv``,
- GraphQL answers to the README's example queries, from a running ``citegraph serve``.

Every command runs as a subprocess through ``api.cli:main`` with ``--code`` as its import root, so an older
checkout (a ``git worktree``) can be recorded with the same script::

    python benchmarks/regression.py build  --db var/regression/store.db            # a small store (~20 min)
    python benchmarks/regression.py record --db var/regression/store.db --out var/regression/before \\
        --code ../before-checkout
    python benchmarks/regression.py record --db var/regression/store.db --out var/regression/after \\
        --queries var/regression/before/queries.jsonl
    python benchmarks/regression.py compare var/regression/before var/regression/after

``compare`` exits 1 and names the first differences when a ranking, a row or a count differs, or a float
differs by more than ``--tolerance`` (default 1e-6).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUERIES = 200
VALIDATION_YEAR = 2010

# The README's GraphQL examples (ego network, title search, recommend, linkage) and a few fields beside them.
GRAPHQL = {
    "ego_network": '{ egoNetwork(paperId: "A00-1031", depth: 1, direction: IN, limit: 3) { ... on EgoNetwork '
    "{ truncated reached nodes { id label year cluster hops } edges { source target kind weight } } "
    "... on NotFound { message } } }",
    "papers_search": '{ papers(search: "machine translation", first: 2) { totalCount pageInfo { hasNextPage '
    "endCursor } edges { node { id title year nCited } } } }",
    "recommend": '{ recommend(input: {context: "We tag with a trigram HMM tagger [CIT].", k: 10, yearMax: 2005}) '
    "{ ... on Recommendations { items { rank score foundBy stages paper { id title year } } } "
    "... on RecommendUnavailable { reason message } } }",
    "linkage": '{ linkage(citingSentence: "Word alignments are computed with the IBM models and an HMM as in [1].", '
    'paperId: "C00-2123", k: 3) { ... on Linkage { sentences { sid section text score linked } } '
    "... on LinkageUnavailable { reason message } } }",
    "cocitations": '{ coCitations(paperId: "A00-1031", first: 10) { ... on CoCitationList { pairs { count '
    "association cosine jaccard source { id } target { id } } } ... on NotFound { message } } }",
    "stats": "{ stats { label count } }",
    "paper": '{ paper(id: "J93-2004") { id title year nCited coCited(first: 5) { count paper { id } } } }',
}


def citegraph(code: Path, db: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run ``citegraph --db DB -q ARGS`` from the checkout ``code``; its stdout, or exit with its stderr."""
    command = [
        sys.executable,
        "-c",
        "import sys; from api.cli import main; sys.exit(main())",
        "--db",
        str(db),
        "-q",
    ]
    done = subprocess.run([*command, *args], cwd=code, env=_env(code, env), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"citegraph {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout


def _env(code: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1")
    env.setdefault("CITEGRAPH_DATA", str((ROOT / ".." / "shared" / "data").resolve()))
    env.update(extra or {})
    return env


# --- build -------------------------------------------------------------------------------------------------


def build(args: argparse.Namespace) -> None:
    """A small, fully computed store: every source, 2,000 embedded papers, a quick reranker and linker."""
    db = Path(args.db).resolve()
    db.parent.mkdir(parents=True, exist_ok=True)
    code = Path(args.code).resolve()
    steps = [
        ("ingest", "all", "--on-error", "skip", "--rejects-dir", str(db.parent / "rejects")),
        ("compute", "all", "--limit", str(args.embed_limit)),
        ("compute", "index"),
        (
            "train",
            "reranker",
            "--objective",
            "triplet",
            "--limit",
            str(args.train_limit),
            "--mart-seeds",
            "1",
            "--out",
            str(db.parent / "reranker.json"),
        ),
        ("linkage", "train"),
    ]
    for step in steps:
        start = time.perf_counter()
        citegraph(code, db, *step)
        print(f"{' '.join(step[:2])}: {time.perf_counter() - start:.0f} s", flush=True)


# --- record ------------------------------------------------------------------------------------------------


def write_queries(code: Path, db: Path, out: Path) -> None:
    """200 validation-year citances (sorted by sentence id, seeded sample) as ``recommend --batch`` input."""
    script = f"""
import json, sys
import pandas as pd
from graph import StoreConfig, open_store
try:  # a checkout from before the recommendation package (its module wins over this checkout's)
    from api.recommend_eval import build_queries
except ImportError:
    from gnn.recommend.citances import build_queries
with open_store(StoreConfig.from_env(db_path={str(db)!r}, read_only=True)) as store:
    frame = build_queries(store)
frame = frame[frame["citing_year"] == {VALIDATION_YEAR}].sort_values("sentence_id")
frame = frame.sample(n=min({QUERIES}, len(frame)), random_state=0).sort_values("sentence_id")
for row in frame.itertuples():
    print(json.dumps({{"id": row.sentence_id, "context": row.context, "citing_paper_id": row.citing_id,
                      "year": int(row.citing_year), "cited_ids": list(row.cited_elsewhere)}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=code, env=_env(code), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"building the queries failed:\n{done.stderr[-4000:]}")
    out.write_text(done.stdout, encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def graphql_answers(code: Path, db: Path) -> dict[str, Any]:
    """Start ``citegraph serve`` on a free loopback port and ask it each query of :data:`GRAPHQL`."""
    port = _free_port()
    extra = {"CITEGRAPH_REQUEST_TIMEOUT": "600", "CITEGRAPH_WARM": "0"}
    command = [sys.executable, "-c", "import sys; from api.cli import main; sys.exit(main())", "--db", str(db)]
    server = subprocess.Popen(
        [*command, "serve", "--port", str(port)],
        cwd=code,
        env=_env(code, extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=5)
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None:
                    sys.exit(f"citegraph serve exited:\n{server.stderr.read()[-4000:] if server.stderr else ''}")
                time.sleep(0.5)
        answers = {}
        for name, query in GRAPHQL.items():
            request = urllib.request.Request(
                f"{url}/graphql",
                data=json.dumps({"query": query}).encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=900) as response:
                answers[name] = json.loads(response.read())
        return answers
    finally:
        server.terminate()
        server.wait(timeout=60)


def record(args: argparse.Namespace) -> None:
    """Each output of :data:`OUTPUTS` into ``--out``; one already there is kept (a stopped record resumes)."""
    code, db, out = Path(args.code).resolve(), Path(args.db).resolve(), Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    queries = out / "queries.jsonl"
    if args.queries:
        queries.write_text(Path(args.queries).read_text(encoding="utf-8"), encoding="utf-8")
    elif not queries.is_file():
        write_queries(code, db, queries)
    task = out / "task1a_input"
    steps: dict[str, Callable[[Path], object]] = {
        "recommend.jsonl": lambda path: citegraph(code, db, "recommend", "--batch", str(queries), "--out", str(path)),
        "link": lambda path: (
            citegraph(code, db, "linkage", "task-input", "--out", str(task)),
            citegraph(code, db, "link", "--scisumm-dir", str(task), "--out", str(path)),
        ),
        "stats.json": lambda path: path.write_text(citegraph(code, db, "stats", "--json"), encoding="utf-8"),
        "cocitation.csv": lambda path: citegraph(code, db, "export", "cocitation", str(path), "--format", "csv"),
        "graphql.json": lambda path: path.write_text(json.dumps(graphql_answers(code, db), indent=1), encoding="utf-8"),
    }
    for name, step in steps.items():
        if (out / name).exists():
            print(f"{name}: kept", flush=True)
            continue
        start = time.perf_counter()
        step(out / name)
        print(f"{name}: {time.perf_counter() - start:.0f} s", flush=True)


# --- compare -----------------------------------------------------------------------------------------------


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _same(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(a, str) and isinstance(b, str) and a != b:
        x, y = _number(a), _number(b)
        return x is not None and y is not None and _same(x, y, tolerance)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, tolerance) for x, y in zip(a, b))
    return bool(a == b)


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    """Comparable records of one output file or folder, keyed by file and line."""
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file():
                yield from ((f"{child.relative_to(path)}:{k}", v) for k, v in _records(child))
        return
    if path.suffix == ".jsonl":
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            yield str(number), json.loads(line)
    elif path.suffix == ".json":
        yield "", json.loads(path.read_text(encoding="utf-8"))
    elif path.suffix == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as rows:
            for number, row in enumerate(csv.reader(rows), start=1):
                yield str(number), row
    else:
        yield "", path.read_bytes().decode("utf-8", errors="replace")


OUTPUTS = ("queries.jsonl", "recommend.jsonl", "link", "stats.json", "cocitation.csv", "graphql.json")


def compare(args: argparse.Namespace) -> int:
    before, after = Path(args.before), Path(args.after)
    failures, rows = [], []
    for name in OUTPUTS:
        old, new = dict(_records(before / name)), dict(_records(after / name))
        if old.keys() != new.keys():
            failures.append(f"{name}: records differ ({sorted(old.keys() ^ new.keys())[:5]} …)")
            rows.append({"system": name, "metric": "records", "value": f"{len(old)} before, {len(new)} after"})
            continue
        differing = [key for key in old if not _same(old[key], new[key], args.tolerance)]
        status = "identical" if not differing else f"{len(differing)} of {len(old)} records differ"
        print(f"{name:<16} {len(old):>7} records  {status}")
        rows += [
            {"system": name, "metric": "records", "value": len(old)},
            {"system": name, "metric": "differing", "value": len(differing)},
        ]
        for key in differing[:3]:
            failures.append(f"{name}:{key}\n  before: {str(old[key])[:400]}\n  after:  {str(new[key])[:400]}")
    for failure in failures:
        print(failure)
    if args.record:
        write_record(Path(args.record), rows, args)
    return 1 if failures else 0


def _commit(code: Path) -> str | None:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=code, capture_output=True, text=True)
    return done.stdout.strip() or None


def write_record(path: Path, rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """The comparison as a docs/results record (benchmarks/render_results.py renders it)."""
    record = {
        "capability": "regression",
        "kind": "quality",
        "title": "The user-facing outputs before and after a change",
        "command": f"python benchmarks/regression.py compare {args.before} {args.after} --tolerance {args.tolerance}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "date": date.today().isoformat(),
        "commit": args.after_commit or _commit(ROOT),
        "notes": [
            f"Before: the record of commit {args.before_commit}; after: commit {args.after_commit or _commit(ROOT)}, "
            "both on the "
            "store `python benchmarks/regression.py build` made (every source, 2,000 embedded papers, a reranker "
            "trained on 400 queries per split with one LambdaMART seed, the linker).",
            "Floats compared to a relative and absolute tolerance of "
            f"{args.tolerance:g}; rankings, ids, texts and counts exactly.",
        ],
        "tables": [{"title": None, "row_header": "output", "baselines": [], "served": None, "rows": rows}],
    }
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="build the small regression store from $CITEGRAPH_DATA")
    p.add_argument("--db", default="var/regression/store.db")
    p.add_argument("--code", default=str(ROOT), help="checkout whose code runs the commands")
    p.add_argument("--embed-limit", type=int, default=2000, help="papers embedded (compute all --limit)")
    p.add_argument("--train-limit", type=int, default=400, help="queries per split the reranker trains on")
    p = sub.add_parser("record", help="record the outputs of the user-facing commands on a store")
    p.add_argument("--db", default="var/regression/store.db")
    p.add_argument("--out", required=True, help="folder for the outputs")
    p.add_argument("--code", default=str(ROOT), help="checkout whose code runs the commands")
    p.add_argument("--queries", help="recommend --batch input to reuse (default: 200 built from the store)")
    p = sub.add_parser("compare", help="compare two records; exit 1 on a difference")
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--tolerance", type=float, default=1e-6)
    p.add_argument("--record", help="also write the comparison as a docs/results record (JSON) here")
    p.add_argument("--before-commit", default="(not given)", help="the commit the 'before' record was made at")
    p.add_argument("--after-commit", help="the commit the 'after' record was made at (default: this checkout's)")
    args = parser.parse_args()
    if args.command != "compare":
        # models, embeddings and examples live in the store's own cache, so a record depends on nothing else
        os.environ["CITEGRAPH_CACHE"] = str(Path(args.db).resolve().parent / "cache")
    if args.command == "build":
        build(args)
    elif args.command == "record":
        record(args)
    else:
        return compare(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
