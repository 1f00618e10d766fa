"""Where the server's CPU goes for one light request: the ``paper`` query of ``graphql_load.py``, profiled.

Serves the app in this process (uvicorn on a free loopback port, in a thread) under ``yappi`` with its CPU
clock, so every thread is profiled (the event loop, the light pool, the store calls); a client in another
process sends ``--requests`` ``paper`` queries one after the other (``--clients`` at once). Prints the CPU
time per request by package (own time of the functions each package defines) and the functions with the
most own and inclusive time.

    python benchmarks/graphql_profile.py --db var/citegraph.db --requests 400

``yappi`` is a dev dependency (``pip install -e .[dev]``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graphql_load import PAPER, free_port, seed_papers

PACKAGES = (  # the first whose path fragment a function's file holds names its package
    ("strawberry", "/strawberry/"),
    ("graphql-core", "/graphql/"),
    ("starlette", "/starlette/"),
    ("fastapi", "/fastapi/"),
    ("uvicorn", "/uvicorn/"),
    ("h11", "/h11/"),
    ("httptools", "/httptools/"),
    ("ladybug", "/ladybug/"),
    ("asyncio", "/asyncio/"),
    ("json", "/json/"),
    ("logging", "/logging/"),
    ("concurrent", "/concurrent/"),
    ("threading", "/threading.py"),
    ("citegraph api", "/api/"),
    ("citegraph graph", "/graph/"),
    ("citegraph gnn", "/gnn/"),
)


def package_of(path: str) -> str:
    for name, fragment in PACKAGES:
        if fragment in path:
            return name
    if "site-packages" in path:
        return "other libraries"
    return "other (stdlib, builtins)"


def client(base: str, papers: list[str], requests: int, clients: int) -> None:
    """``--client``: ``requests`` paper queries, ``clients`` at a time; exits non-zero on any error."""

    async def one(http: httpx.AsyncClient, turn: list[int], failures: list[int]) -> None:
        while turn[0] < requests:
            paper = papers[turn[0] % len(papers)]
            turn[0] += 1
            response = await http.post("/graphql", json={"query": PAPER % paper})
            failures[0] += response.status_code != 200 or bool(response.json().get("errors"))

    async def run() -> int:
        turn, failures = [0], [0]
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            await asyncio.gather(*(one(http, turn, failures) for _ in range(clients)))
        return failures[0]

    sys.exit(1 if asyncio.run(run()) else 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.environ.get("CITEGRAPH_DB", "var/citegraph.db"))
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--top", type=int, default=30, help="functions listed")
    parser.add_argument("--show", nargs="*", default=[], help="also the inclusive time of these functions (by name)")
    parser.add_argument("--http", default="auto", choices=["auto", "h11", "httptools"], help="uvicorn's HTTP parser")
    parser.add_argument("--plain", action="store_true", help="no profiler: only the server's CPU per request")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1], help="checkout to serve")
    parser.add_argument("--client", nargs=2, metavar=("BASE", "PAPERS"), help=argparse.SUPPRESS)  # internal
    args = parser.parse_args()
    if args.client:
        client(args.client[0], json.loads(args.client[1]), args.requests, args.clients)
        return 0

    sys.path.insert(0, str(args.repo.resolve()))  # that checkout's code, before the installed one
    import uvicorn
    import yappi

    from api.app import create_app
    from api.settings import AppSettings
    from graph import StoreConfig

    config = StoreConfig.from_env(db_path=Path(args.db), read_only=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(
        uvicorn.Config(create_app(config, AppSettings.from_env()), port=port, log_level="warning", http=args.http)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.1)
    papers = [paper for paper, _ in seed_papers(base, 100, 0)]
    for paper in papers:  # warm: first-call imports and the per-text caches are not what a request costs
        httpx.post(f"{base}/graphql", json={"query": PAPER % paper}, timeout=60)
    if not args.plain:
        yappi.set_clock_type("cpu")
        yappi.start(builtins=True, profile_threads=True)
    started = time.process_time()
    command = [sys.executable, __file__, "--requests", str(args.requests), "--clients", str(args.clients)]
    subprocess.run([*command, "--client", base, json.dumps(papers)], check=True)
    cpu = time.process_time() - started
    yappi.stop()
    server.should_exit = True
    thread.join(timeout=30)
    if args.plain:
        print(
            json.dumps(
                {
                    "repo": str(args.repo),
                    "requests": args.requests,
                    "server_cpu_ms_per_request": round(cpu * 1000 / args.requests, 2),
                }
            )
        )
        return 0

    stats = yappi.get_func_stats()
    by_package: dict[str, float] = defaultdict(float)
    for stat in stats:
        by_package[package_of(stat.module)] += stat.tsub
    per = 1000 / args.requests
    print(f"server CPU per request (process time, profiler included): {cpu * per:.2f} ms")
    print(f"profiled own time per request: {sum(by_package.values()) * per:.2f} ms, by package:")
    for name, seconds in sorted(by_package.items(), key=lambda item: -item[1]):
        print(f"  {name:28s} {seconds * per:7.3f} ms")
    for key, title in (("tsub", "own"), ("ttot", "inclusive")):
        print(f"\nfunctions by {title} time per request (ms):")
        stats.sort(key, "desc")
        for stat in list(stats)[: args.top]:
            where = f"{Path(stat.module).parent.name}/{Path(stat.module).name}:{stat.lineno}"
            print(f"  {getattr(stat, key) * per:7.3f}  {stat.ncall / args.requests:7.1f} calls  {stat.name}  {where}")
    if args.show:
        print("\nchosen functions, inclusive time per request (ms):")
        for stat in stats:
            if stat.name in args.show or stat.name.split(".")[-1] in args.show:
                where = f"{Path(stat.module).parent.name}/{Path(stat.module).name}:{stat.lineno}"
                print(f"  {stat.ttot * per:7.3f}  {stat.ncall / args.requests:7.1f} calls  {stat.name}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
