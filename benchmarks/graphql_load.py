"""Load benchmark of the GraphQL API: concurrent clients on loopback for a bounded time.

Starts ``citegraph serve`` on a free 127.0.0.1 port against a built store (read-only), then for each
scenario runs ``--clients`` concurrent clients (httpx, one connection each) that POST the scenario's
query in a loop for ``--seconds``; reports requests/s, latency percentiles and errors (any non-200,
any GraphQL error), and how long ``/healthz`` took meanwhile (a separate process asks every 100 ms,
so the clients' own event loop does not colour it). Paper ids are drawn, seeded, from the most
cited papers of the store.

    python benchmarks/graphql_load.py --db var/graphql.db --clients 64 --seconds 10

``--repo`` serves another checkout's code (e.g. a ``git worktree`` of an older commit) with this
script's clients, for a before/after comparison on the same machine.

Scenarios: ``paper`` (a paper with authors and its first citing papers), ``egoNetwork`` (depth 1,
both directions, 50 nodes), ``recommend`` (10 recommendations for a passage built from a seeded
most-cited paper's title, sent as a GraphQL variable; the server starts warm and the scenario waits
until ``/readyz`` lists the recommender as loaded), ``starvation`` (of the clients, ``--heavy`` send the
heaviest operations the limits accept — 15 aliases of ``papers(search: "the", first: 200)`` two ``citedBy(first: 3)``
levels deep, 15 depth-2 ``egoNetwork``, 15 ``explore(top_cocited_pairs_in_years)``, in turn — and the
rest the ``paper`` query; it reports the light queries' latency, the heavy ones' outcomes by code, and
``/healthz`` and ``/readyz`` meanwhile; a heavy client told ``SERVER_BUSY`` waits the ``retryAfter`` it is
given, as a well-behaved client does). Run it with ``--request-timeout 10`` (the server's default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

PAPER = '{ paper(id: "%s") { id title year authors { name } citedBy(first: 5) { totalCount edges { node { id title } } } } }'
EGO = '{ egoNetwork(paperId: "%s", depth: 1, direction: BOTH, limit: 50) { ... on EgoNetwork { truncated nodes { id label year cluster } edges { source target kind weight } } } }'
RECOMMEND = """query Recommend($context: String!) {
  recommend(input: {context: $context, k: 10}) {
    ... on Recommendations { candidates items { rank score paper { id title } } }
    ... on RecommendUnavailable { reason message }
  }
}"""
ALIASES = 15  # api.schema.MAX_ALIASES
NESTED = 'papers(search: "the", first: 200) { edges { node { id citedBy(first: 3) { edges { node { id citedBy(first: 3) { totalCount } } } } } } }'
HEAVY_QUERIES: list[Callable[[str], str]] = [
    lambda _paper: "{ " + " ".join(f"a{i}: {NESTED}" for i in range(ALIASES)) + " }",
    lambda paper: (
        "{ "
        + " ".join(
            f'e{i}: egoNetwork(paperId: "{paper}", depth: 2, limit: 200) {{ ... on EgoNetwork {{ nodes {{ id }} edges {{ source target }} }} }}'
            for i in range(ALIASES)
        )
        + " }"
    ),
    lambda _paper: (
        "{ "
        + " ".join(
            f'x{i}: explore(name: "top_cocited_pairs_in_years", params: {{year_min: {1995 + i}, year_max: {2005 + i}, '
            "min_count: 2, limit: 200}) { ... on ExploreRows { rowCount } }"
            for i in range(ALIASES)
        )
        + " }"
    ),
]
# scenario -> its request body from (a seeded paper, its title)
SCENARIOS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "paper": lambda paper, _title: {"query": PAPER % paper},
    "egoNetwork": lambda paper, _title: {"query": EGO % paper},
    "recommend": lambda _paper, title: {
        "query": RECOMMEND,
        "variables": {"context": f"We follow the approach of {title} [CIT] and extend it."},
    },
}


HEALTH_INTERVAL_S = 0.1  # one /healthz (and, in starvation, one /readyz) request this often during a scenario


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base: str, server: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode} before it was ready")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server at {base} not ready after {timeout:.0f} s")


def seed_papers(base: str, n: int, seed: int) -> list[tuple[str, str]]:
    """``(id, title)`` of ``n`` papers drawn, seeded, from the 200 most cited."""
    query = '{ explore(name: "most_cited_papers", params: {year_min: 0, year_max: 9999, limit: 200}) { ... on ExploreRows { rows } } }'
    rows = httpx.post(f"{base}/graphql", json={"query": query}, timeout=60).json()["data"]["explore"]["rows"]
    papers = [(row["id"], row.get("title") or row["id"]) for row in rows]
    return random.Random(seed).sample(papers, min(n, len(papers)))


def wait_model(base: str, name: str, timeout: float = 600) -> str:
    """Poll ``/readyz`` until the model is no longer loading; its final state."""
    deadline = time.monotonic() + timeout
    state = "loading"
    while time.monotonic() < deadline:
        state = httpx.get(f"{base}/readyz", timeout=5).json().get("models", {}).get(name, "loading")
        if state != "loading":
            return state
        time.sleep(1)
    return state


async def client(
    base: str,
    body: Callable[[str, str], dict[str, Any]],
    papers: list[tuple[str, str]],
    stop: float,
    rng: random.Random,
    out: dict[str, list],
) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                response = await http.post("/graphql", json=body(*rng.choice(papers)))
                failed = response.status_code != 200 or bool(response.json().get("errors"))
            except httpx.HTTPError:
                failed = True
            out["latency"].append(time.perf_counter() - started)
            out["errors"].append(failed)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` and every descendant alive now have used: the server,
    its supervisor and its workers (``/proc``; 0 where it is not readable, e.g. off Linux)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended while the table was read
        child = int(stat.parent.name)
        parents[child] = int(fields[1])
        used[child] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(used.get(p, 0.0) for p in tree)


def percentiles(values: list[float]) -> list[float]:
    """The 1st..99th percentiles of ``values`` (seconds)."""
    ordered = sorted(values)
    return statistics.quantiles(ordered, n=100) if len(ordered) > 1 else ordered * 99


def probe_health(base: str, seconds: float, path: str = "/healthz") -> None:
    """``--probe``: GET ``path`` every HEALTH_INTERVAL_S for ``seconds``; print the latencies' summary."""
    waits: list[float] = []
    failures = 0
    stop = time.monotonic() + seconds
    with httpx.Client(base_url=base, timeout=30) as http:
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                failures += http.get(path).status_code != 200
            except httpx.HTTPError:
                failures += 1
            waits.append(time.perf_counter() - started)
            time.sleep(max(0.0, HEALTH_INTERVAL_S - waits[-1]))
    q = percentiles(waits)
    summary = {"n": len(waits), "p50_ms": q[49] * 1000, "p95_ms": q[94] * 1000, "max_ms": max(waits) * 1000}
    print(json.dumps({**{k: round(v, 1) for k, v in summary.items()}, "failures": failures}), flush=True)


async def scenario(
    base: str,
    body: Callable[[str, str], dict[str, Any]],
    papers: list[tuple[str, str]],
    clients: int,
    seconds: float,
    seed: int,
    server_pid: int,
) -> dict[str, Any]:
    out: dict[str, list] = {"latency": [], "errors": []}
    probe = subprocess.Popen(
        [sys.executable, __file__, "--probe", base, "--seconds", str(seconds)], stdout=subprocess.PIPE, text=True
    )
    cpu = tree_cpu_s(server_pid)
    started = time.monotonic()
    stop = started + seconds
    await asyncio.gather(*(client(base, body, papers, stop, random.Random(seed + i), out) for i in range(clients)))
    elapsed = time.monotonic() - started
    cpu = tree_cpu_s(server_pid) - cpu
    health = json.loads(probe.communicate(timeout=120)[0])
    q = percentiles(out["latency"])
    return {
        "requests": len(out["latency"]),
        "seconds": round(elapsed, 1),
        "rps": round(len(out["latency"]) / elapsed, 1),
        "p50_ms": round(q[49] * 1000, 1),
        "p95_ms": round(q[94] * 1000, 1),
        "p99_ms": round(q[98] * 1000, 1),
        "errors": sum(out["errors"]),
        # the server's CPU time (every process of it) per answered request: what a request costs whatever
        # else the machine runs
        "server_cpu_ms_per_request": round(cpu * 1000 / max(len(out["latency"]), 1), 2),
        "healthz_p50_ms": health["p50_ms"],
        "healthz_p95_ms": health["p95_ms"],
        "healthz_max_ms": health["max_ms"],
        "healthz_failures": health["failures"],
    }


def outcome(response: httpx.Response) -> str:
    """``ok``, the first error's ``extensions.code``, or ``http <status>``."""
    if response.status_code != 200:
        return f"http {response.status_code}"
    errors = response.json().get("errors")
    if not errors:
        return "ok"
    return str((errors[0].get("extensions") or {}).get("code", "error"))


async def heavy_client(
    base: str, papers: list[tuple[str, str]], stop: float, rng: random.Random, first: int, out: dict[str, list]
) -> None:
    """Sends the heavy queries in turn (from ``first``); waits the ``retryAfter`` of a SERVER_BUSY."""
    turn = first
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while time.monotonic() < stop:
            query = HEAVY_QUERIES[turn % len(HEAVY_QUERIES)](rng.choice(papers)[0])
            turn += 1
            started = time.perf_counter()
            try:
                response = await http.post("/graphql", json={"query": query})
                result, retry = outcome(response), 0.0
                if result == "SERVER_BUSY":
                    retry = float(response.json()["errors"][0]["extensions"].get("retryAfter", 1))
            except httpx.HTTPError as exc:
                result, retry = type(exc).__name__, 0.0
            out["heavy"].append((result, time.perf_counter() - started))
            await asyncio.sleep(min(retry, max(0.0, stop - time.monotonic())))


async def starvation(
    base: str, papers: list[tuple[str, str]], clients: int, heavy: int, seconds: float, seed: int, server_pid: int
) -> dict[str, object]:
    """``heavy`` clients send heavy operations, the rest the light ``paper`` query, for ``seconds``."""
    out: dict[str, list] = {"latency": [], "errors": [], "heavy": []}
    probes = {
        path: subprocess.Popen(
            [sys.executable, __file__, "--probe", base, "--probe-path", path, "--seconds", str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for path in ("/healthz", "/readyz")
    }
    cpu, own_cpu = tree_cpu_s(server_pid), time.process_time()
    started = time.monotonic()
    stop = started + seconds
    light = SCENARIOS["paper"]
    await asyncio.gather(
        *(heavy_client(base, papers, stop, random.Random(seed + i), i, out) for i in range(heavy)),
        *(client(base, light, papers, stop, random.Random(seed + i), out) for i in range(heavy, clients)),
    )
    elapsed = time.monotonic() - started
    cpu, own_cpu = tree_cpu_s(server_pid) - cpu, time.process_time() - own_cpu
    health = {path: json.loads(probe.communicate(timeout=120)[0]) for path, probe in probes.items()}
    q = percentiles(out["latency"])
    outcomes: dict[str, int] = {}
    for result, _ in out["heavy"]:
        outcomes[result] = outcomes.get(result, 0) + 1
    heavy_ok = [s for result, s in out["heavy"] if result == "ok"]
    return {
        "seconds": round(elapsed, 1),
        "heavy_clients": heavy,
        "light_requests": len(out["latency"]),
        "light_rps": round(len(out["latency"]) / elapsed, 1),
        "light_p50_ms": round(q[49] * 1000, 1),
        "light_p95_ms": round(q[94] * 1000, 1),
        "light_p99_ms": round(q[98] * 1000, 1),
        "light_errors": sum(out["errors"]),
        "heavy_outcomes": dict(sorted(outcomes.items())),
        "heavy_ok_median_s": round(statistics.median(heavy_ok), 1) if heavy_ok else None,
        # where the machine's cores went meanwhile: the server's processes and these clients (the probers aside)
        "server_cpu_s": round(cpu, 1),
        "clients_cpu_s": round(own_cpu, 1),
        "healthz_p95_ms": health["/healthz"]["p95_ms"],
        "healthz_max_ms": health["/healthz"]["max_ms"],
        "readyz_p95_ms": health["/readyz"]["p95_ms"],
        "readyz_max_ms": health["/readyz"]["max_ms"],
        "readyz_failures": health["/readyz"]["failures"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.environ.get("CITEGRAPH_DB", "var/citegraph.db"))
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10.0, help="per scenario")
    parser.add_argument(
        "--scenarios",
        nargs="*",
        default=list(SCENARIOS),
        choices=[*SCENARIOS, "starvation"],
        help="starvation: see above",
    )
    parser.add_argument("--heavy", type=int, default=8, help="heavy clients of the starvation scenario")
    parser.add_argument(
        "--request-timeout", type=float, default=30.0, help="the server's CITEGRAPH_REQUEST_TIMEOUT (s)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent, help="checkout to serve")
    parser.add_argument("--probe", metavar="BASE_URL", help=argparse.SUPPRESS)  # internal: the /healthz prober
    parser.add_argument("--probe-path", default="/healthz", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe_health(args.probe, args.seconds, args.probe_path)
        return 0
    args.db = str(Path(args.db).resolve())  # the server runs in --repo
    if not Path(args.db).exists():
        raise SystemExit(f"no store at {args.db}; build one with `make build` (or citegraph ingest all + compute all)")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "CITEGRAPH_DB": args.db, "CITEGRAPH_REQUEST_TIMEOUT": f"{args.request_timeout:g}"}
    if "recommend" in args.scenarios:
        env["CITEGRAPH_WARM"] = "1"  # the models load at start-up, not inside the first timed requests
    env["PYTHONPATH"] = str(args.repo)  # the server runs that checkout's code
    server = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "-q", "serve", "--port", str(port)],
        env=env,
        cwd=args.repo,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_ready(base, server)
        papers = seed_papers(base, 100, args.seed)
        results: dict[str, dict[str, Any]] = {}
        for name in args.scenarios:
            if name == "recommend":
                state = wait_model(base, "recommend")
                print(json.dumps({"scenario": name, "model": state}), flush=True)
            if name == "starvation":
                results[name] = asyncio.run(
                    starvation(base, papers, args.clients, args.heavy, args.seconds, args.seed, server.pid)
                )
                results[name]["errors"] = results[name]["light_errors"]
            else:
                results[name] = asyncio.run(
                    scenario(base, SCENARIOS[name], papers, args.clients, args.seconds, args.seed, server.pid)
                )
            print(json.dumps({"scenario": name, "clients": args.clients, **results[name]}), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0 if all(r["errors"] == 0 for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
