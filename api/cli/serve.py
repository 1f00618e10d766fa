"""``citegraph serve``: the GraphQL API, the dashboard and the health checks (:mod:`api.app`)."""

from __future__ import annotations

import argparse

import torch

from api.settings import AppSettings
from graph import StoreConfig, open_store
from graph.errors import ConfigError


def cmd_serve(args: argparse.Namespace) -> int:
    # The web stack (uvicorn, FastAPI, strawberry) is imported by this command alone: every other
    # command starts without it.
    import uvicorn

    from api.app import create_app

    settings = AppSettings.from_env()
    torch.set_num_threads(settings.torch_threads)
    host, port = args.host or settings.host, args.port or settings.port
    # --complete writes (the background build): the store opens read-write, which the embedded store
    # allows one process at a time; otherwise the server never writes, and says so to the store.
    config = StoreConfig.from_env(db_path=args.db, backend=args.backend, read_only=not args.complete)
    if config.backend == "embedded" and not config.db_path.exists():
        raise ConfigError(f"no store at {config.db_path}; run `make build` (or `citegraph ingest`) first")
    open_store(config).close()  # a missing or unopenable store is a one-line error here, not a server traceback
    app = create_app(config, settings, complete=args.complete)
    print(f"citegraph GraphQL API on http://{host}:{port}/graphql  (health: /healthz, ready: /readyz)")
    print("Two example queries (paste into GraphiQL at /graphql, or POST them as JSON):")
    print("  { stats { kind label count } }")
    print(
        '  { papers(search: "machine translation", first: 3) { id title year nCited authors { name } citedBy { id } } }'
    )
    print(f"  curl -s http://{host}:{port}/graphql -H 'content-type: application/json' \\")
    print("""       -d '{"query": "{ stats { kind label count } }"}'""")
    uvicorn.run(app, host=host, port=port, log_level="warning" if args.quiet else "info")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve``."""
    p = sub.add_parser("serve", help="serve the GraphQL API")
    p.add_argument("--host", help="bind address (default: $CITEGRAPH_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: $CITEGRAPH_PORT or 8000)")
    p.add_argument(
        "--complete",
        action="store_true",
        help="while serving, compute what a default `make build` left for later (every paper's embedding, "
        "taxonomy vector and Poincaré point, h_θ, the index) and move recommendation to the new index; "
        "opens the store for writing (progress: /readyz)",
    )
    p.set_defaults(func=cmd_serve)


__all__ = ["add_commands", "cmd_serve"]
