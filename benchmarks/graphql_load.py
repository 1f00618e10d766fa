"""Load benchmark of the GraphQL API: concurrent clients on loopback for a bounded time.

Starts ``citegraph serve`` on a free 127.0.0.1 port against a built store (read-only), then for each
scenario runs ``--clients`` concurrent clients (httpx, one connection each) that POST the scenario's
query in a loop for ``--seconds``; reports requests/s, latency percentiles and errors (any non-200,
any GraphQL error). Paper ids are drawn, seeded, from the most cited papers of the store.

    python benchmarks/graphql_load.py --db var/graphql.db --clients 64 --seconds 10

Scenarios: ``paper`` (a paper with authors and its first citing papers), ``egoNetwork`` (depth 1,
both directions, 50 nodes). ``recommend`` is a hook: add its query to SCENARIOS when the field is
served and it runs like the others.
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
from pathlib import Path

import httpx

PAPER = '{ paper(id: "%s") { id title year authors { name } citedBy(first: 5) { totalCount edges { node { id title } } } } }'
EGO = '{ egoNetwork(paperId: "%s", depth: 1, direction: BOTH, limit: 50) { ... on EgoNetwork { truncated nodes { id label year cluster } edges { source target kind weight } } } }'
SCENARIOS: dict[str, str] = {
    "paper": PAPER,
    "egoNetwork": EGO,
    # "recommend": '{ recommend(input: {context: "%s", k: 10}) { ... } }',  # hook: enable when served
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base: str, server: subprocess.Popen[bytes], timeout: float = 60) -> None:
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


def seed_ids(base: str, n: int, seed: int) -> list[str]:
    query = '{ explore(name: "most_cited_papers", params: {year_min: 0, year_max: 9999, limit: 200}) { ... on ExploreRows { rows } } }'
    rows = httpx.post(f"{base}/graphql", json={"query": query}, timeout=60).json()["data"]["explore"]["rows"]
    ids = [row["id"] for row in rows]
    return random.Random(seed).sample(ids, min(n, len(ids)))


async def client(
    base: str, template: str, ids: list[str], stop: float, rng: random.Random, out: dict[str, list]
) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                response = await http.post("/graphql", json={"query": template % rng.choice(ids)})
                failed = response.status_code != 200 or bool(response.json().get("errors"))
            except httpx.HTTPError:
                failed = True
            out["latency"].append(time.perf_counter() - started)
            out["errors"].append(failed)


async def scenario(
    base: str, template: str, ids: list[str], clients: int, seconds: float, seed: int
) -> dict[str, float]:
    out: dict[str, list] = {"latency": [], "errors": []}
    started = time.monotonic()
    stop = started + seconds
    await asyncio.gather(*(client(base, template, ids, stop, random.Random(seed + i), out) for i in range(clients)))
    elapsed = time.monotonic() - started
    latency = sorted(out["latency"])
    q = statistics.quantiles(latency, n=100) if len(latency) > 1 else latency * 99
    return {
        "requests": len(latency),
        "seconds": round(elapsed, 1),
        "rps": round(len(latency) / elapsed, 1),
        "p50_ms": round(q[49] * 1000, 1),
        "p95_ms": round(q[94] * 1000, 1),
        "p99_ms": round(q[98] * 1000, 1),
        "errors": sum(out["errors"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.environ.get("CITEGRAPH_DB", "var/citegraph.db"))
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10.0, help="per scenario")
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not Path(args.db).exists():
        raise SystemExit(f"no store at {args.db}; build one with `make build` (or citegraph ingest all + compute all)")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "CITEGRAPH_DB": args.db, "CITEGRAPH_REQUEST_TIMEOUT": "30"}
    exe = Path(sys.executable).with_name("citegraph")
    server = subprocess.Popen([str(exe), "-q", "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL)
    try:
        wait_ready(base, server)
        ids = seed_ids(base, 100, args.seed)
        results = {}
        for name in args.scenarios:
            results[name] = asyncio.run(scenario(base, SCENARIOS[name], ids, args.clients, args.seconds, args.seed))
            print(json.dumps({"scenario": name, "clients": args.clients, **results[name]}), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0 if all(r["errors"] == 0 for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
