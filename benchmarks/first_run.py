"""A newcomer's first `make demo`: minutes to a serving API, to a whole graph, and the second run.

From a fresh clone (``--clone``, made by the caller with ``git clone``) and an empty cache
(``--cache``), this runs ``make demo`` as a newcomer would, and polls ``/readyz`` every few seconds:

* **serving** — the first moment ``/readyz`` answers with both models (recommendation, linkage)
  ``loaded``; at that moment ``recommend``, ``linkage``, ``egoNetwork`` and ``coCitations`` are
  asked once each over GraphQL, and each must answer with data (not an error, not "unavailable");
* **whole** — the first moment the ``completeness`` of ``Paper.embedding``, ``Paper.taxonomy`` and
  ``Paper.poincare`` is 1 (every paper with text), and the end of the background build (h_θ, the
  new index, the reranker trained again on it);
* **quality** — the served reranker's validation R@10 and MRR beside the fusion score: the build's (its
  training report, kept at serving time) and, after the background build, the one trained again on the
  whole index (``citegraph eval reranker`` on the completed store);
* **second run** — the server is stopped and ``make demo`` run again in the same clone (caches
  warm): minutes until it serves again.

The build's own per-step table (``var/build-times.json``) and the background build's steps (from
``/readyz``) are kept in the record. Run on a quiet machine (nothing else running) for the figures
the README quotes::

    git clone /path/to/citegraph /tmp/first/cg
    python benchmarks/first_run.py --clone /tmp/first/cg --cache /tmp/first/cache \\
        --out docs/results/first_run.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from run_record import commit, run_record, write_json

QUERIES = {
    "recommend": '{ recommend(input: {context: "We tune the feature weights of our phrase-based system with minimum '
    'error rate training [CIT] on the development set.", k: 5}) { __typename ... on Recommendations { items { '
    "paper { id } } } } }",
    "linkage": 'query($paper: ID!) { linkage(citingSentence: "Word alignments are computed with the IBM models and '
    'an HMM.", paperId: $paper, k: 3) { __typename ... on Linkage { sentences { score } } } }',
    "egoNetwork": "query($paper: ID!) { egoNetwork(paperId: $paper) { __typename ... on EgoNetwork { nodes { id } } } }",
    "coCitations": "query($paper: ID!) { coCitations(paperId: $paper) { __typename ... on CoCitationList { "
    "pairs { count } } } }",
}
ANSWER = {
    "recommend": "Recommendations",
    "linkage": "Linkage",
    "egoNetwork": "EgoNetwork",
    "coCitations": "CoCitationList",
}
WHOLE = ("Paper.embedding", "Paper.taxonomy", "Paper.poincare")


def scorer_rows(report_path: Path, when: str) -> list[dict[str, Any]]:
    """Validation R@10 and MRR of a reranker report's last row (the scorer saved and served) and of its
    service-fusion baseline, as record rows."""
    report = json.loads(report_path.read_text(encoding="utf-8"))
    systems = {row["name"]: row for row in report["systems"]}
    served = report["systems"][-1]
    out = []
    for label, row in (
        ("served reranker", served),
        ("service fusion (no reranker)", systems.get("service fusion (no reranker)")),
    ):
        if row is None:
            continue
        for metric in ("R@10", "MRR"):
            out.append(
                {
                    "system": f"{label}, {when} (validation)",
                    "metric": metric,
                    "value": round(row["validation"][metric], 3),
                }
            )
    return out


def get_json(url: str, body: dict[str, Any] | None = None, timeout: float = 60) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read() or b"{}")


def ask(base: str, paper: str, linkage_paper: str) -> dict[str, str]:
    """Each query's answer type (or its error), asked once."""
    answers = {}
    for name, query in QUERIES.items():
        variables = {"paper": linkage_paper if name == "linkage" else paper} if "$paper" in query else None
        reply = get_json(f"{base}/graphql", {"query": query, "variables": variables}, timeout=300)
        data = (reply.get("data") or {}).get(name) or {}
        answers[name] = data.get("__typename") or json.dumps(reply.get("errors"))[:200]
    return answers


def completeness(base: str) -> dict[str, float]:
    reply = get_json(f"{base}/graphql", {"query": "{ completeness { property fraction } }"})
    rows = (reply.get("data") or {}).get("completeness") or []
    return {row["property"]: row["fraction"] for row in rows}


def run_demo(clone: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("ab")
    return subprocess.Popen(
        ["make", "demo"], cwd=clone, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGINT)  # as a person stops the server: Ctrl-C
    try:
        process.wait(120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_serving(base: str, process: subprocess.Popen[bytes], started: float, limit_s: float) -> float:
    """Seconds from ``started`` until /readyz has both models loaded."""
    while time.time() - started < limit_s:
        if process.poll() is not None:
            raise SystemExit(f"make demo exited with {process.returncode} before serving; see its log")
        try:
            ready = get_json(f"{base}/readyz", timeout=10)
            if set((ready.get("models") or {}).values()) == {"loaded"}:
                return time.time() - started
        except (OSError, ValueError):
            pass
        time.sleep(3)
    raise SystemExit(f"not serving after {limit_s:.0f} s")


def serving_rows(serving_s: float, answers: dict[str, str]) -> list[dict[str, Any]]:
    """The minutes to a serving API and what each query answered then, as record rows."""
    system = "`make demo` to a serving API (both models loaded)"
    return [
        {"system": system, "metric": "minutes", "value": round(serving_s / 60, 1)},
        {"system": system, "metric": "queries answered", "value": ", ".join(f"{k}: {v}" for k, v in answers.items())},
    ]


def record(args: argparse.Namespace, title: str, rows: list[dict[str, Any]], notes: list[str]) -> dict[str, Any]:
    """The docs/results record of a run."""
    return {
        "capability": "build",
        "kind": "speed",
        "title": title,
        **run_record("benchmarks/first_run.py", args),
        "machine": "the project's 2-core development machine, nothing else running",
        "commit": commit(short=True),
        "rank": 1,
        "notes": notes,
        "tables": [{"title": None, "row_header": "run", "baselines": [], "served": None, "rows": rows}],
    }


def build_step_rows(clone: Path) -> list[dict[str, Any]]:
    """The minutes of each step the build ran (its ``var/build-times.json``), as record rows."""
    build_times = json.loads((clone / "var" / "build-times.json").read_text(encoding="utf-8"))
    return [
        {"system": f"build step: {name}", "metric": "minutes", "value": round(seconds / 60, 1)}
        for name, status, seconds in build_times["steps"]
        if status == "ran"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clone", required=True, help="a fresh clone of the project (git clone)")
    parser.add_argument("--cache", required=True, help="an empty folder for $CITEGRAPH_CACHE")
    parser.add_argument("--data", default=os.environ.get("CITEGRAPH_DATA", "../shared/data"))
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--paper", default="P03-1021", help="the paper egoNetwork and coCitations are asked about")
    parser.add_argument("--linkage-paper", default="C00-2123", help="a paper with full text, for linkage")
    parser.add_argument("--limit-minutes", type=float, default=90)
    parser.add_argument(
        "--serving-only",
        action="store_true",
        help="stop once the API serves: the serving time, the queries' answers and the build's steps only",
    )
    parser.add_argument("--out", default="docs/results/first_run.json")
    args = parser.parse_args()

    clone, base = Path(args.clone).resolve(), f"http://127.0.0.1:{args.port}"
    env = {
        **os.environ,
        "CITEGRAPH_CACHE": str(Path(args.cache).resolve()),
        "CITEGRAPH_DATA": str(Path(args.data).resolve()),
        "CITEGRAPH_PORT": str(args.port),
    }
    log = clone / "first_run.log"
    limit_s = args.limit_minutes * 60

    started = time.time()
    process = run_demo(clone, env, log)
    serving_s = wait_serving(base, process, started, limit_s)
    answers = ask(base, args.paper, args.linkage_paper)
    print(f"serving after {serving_s / 60:.1f} min: {answers}", flush=True)
    if args.serving_only:
        stop(process)
        rows = [*serving_rows(serving_s, answers), *build_step_rows(clone)]
        title = "A first `make demo` from a fresh clone with an empty cache, to a serving API"
        print(f"wrote {write_json(args.out, record(args, title, rows, ['Stopped once serving (--serving-only).']))}")
        return
    # the build's training report: the background build's reranker step writes its own over it
    reports = clone / "var" / "eval"
    (reports / "reranker_build.json").write_bytes((reports / "reranker.json").read_bytes())

    whole_s, complete_s, background, fractions = None, None, {}, {}
    while time.time() - started < limit_s:
        ready = get_json(f"{base}/readyz", timeout=30)
        background = ready.get("background") or {}
        fractions = completeness(base)
        if whole_s is None and all(fractions.get(p) == 1.0 for p in WHOLE):
            whole_s = time.time() - started
        if background.get("state") in ("complete", "failed"):
            complete_s = time.time() - started
            break
        time.sleep(10)
    answers_whole = ask(base, args.paper, args.linkage_paper)
    print(f"whole after {None if whole_s is None else round(whole_s / 60, 1)} min: {fractions}", flush=True)
    build_steps = build_step_rows(clone)  # before the second run writes its own (every step skipped)
    stop(process)
    served_quality = scorer_rows(reports / "reranker_build.json", "build")
    # the reranker served now (trained again by the background build on the whole index), evaluated on the
    # completed store by the command a user would run
    after = reports / "reranker_after_background.json"
    subprocess.run(
        [str(clone / ".venv" / "bin" / "citegraph"), "--quiet", "eval", "reranker", "--out", str(after)],
        cwd=clone,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    served_quality += scorer_rows(after, "after the background build")

    second_started = time.time()
    process = run_demo(clone, env, log)
    second_s = wait_serving(base, process, second_started, limit_s)
    stop(process)

    ok = all(answers[name] == ANSWER[name] for name in QUERIES)
    rows = [
        *serving_rows(serving_s, answers),
        {
            "system": "to every paper with text carrying embedding, taxonomy, Poincaré point",
            "metric": "minutes",
            "value": None if whole_s is None else round(whole_s / 60, 1),
        },
        {
            "system": "to the background build's end (h_θ, the new index, the reranker trained on it)",
            "metric": "minutes",
            "value": None if complete_s is None else round(complete_s / 60, 1),
        },
        {
            "system": "second `make demo` (caches warm) to a serving API",
            "metric": "minutes",
            "value": round(second_s / 60, 1),
        },
    ]
    rows += build_steps
    rows += [
        {"system": f"background step: {step['name']}", "metric": "minutes", "value": round(step["seconds"] / 60, 1)}
        for step in background.get("steps", [])
    ]
    rows += served_quality
    notes = [
        "Every query answered with data at serving time." if ok else f"Not every query answered: {answers}",
        f"After the background build: {answers_whole}; completeness {fractions}.",
    ]
    title = "A first `make demo` from a fresh clone with an empty cache, and the second"
    print(f"wrote {write_json(args.out, record(args, title, rows, notes))}")


if __name__ == "__main__":
    main()
