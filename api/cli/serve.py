"""``citegraph serve``: the GraphQL API, the dashboard and the health checks (:mod:`api.app`).

The command supervises (:mod:`api.supervisor`): it binds the port, then runs the server in a worker
process on that socket and restarts the worker when it dies (a native crash in the store's engine),
while connections wait in the backlog. ``--no-supervise`` serves in this process instead.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Mapping

import torch

from api.settings import AppSettings
from graph import StoreConfig, open_store
from graph.errors import ConfigError


def cmd_serve(args: argparse.Namespace) -> int:
    # The web stack (uvicorn, FastAPI, strawberry) is imported by this command alone: every other
    # command starts without it.
    import uvicorn

    settings = AppSettings.from_env()
    host, port = args.host or settings.host, args.port or settings.port
    # --complete writes (the background build): the store opens read-write, which the embedded store
    # allows one process at a time; otherwise the server never writes, and says so to the store.
    config = StoreConfig.from_env(db_path=args.db, backend=args.backend, read_only=not args.complete)
    log_level = "warning" if args.quiet else "info"
    if args.worker_fd is not None:  # the supervisor's worker: serve on the socket it inherited
        torch.set_num_threads(settings.torch_threads)
        from api.app import create_app

        uvicorn.run(create_app(config, settings, complete=args.complete), fd=args.worker_fd, log_level=log_level)
        return 0
    if config.backend == "embedded" and not config.db_path.exists():
        raise ConfigError(f"no store at {config.db_path}; run `make build` (or `citegraph ingest`) first")
    open_store(config).close()  # a missing or unopenable store is a one-line error here, not a server traceback
    _print_banner(host, port)
    if args.no_supervise:
        torch.set_num_threads(settings.torch_threads)
        from api.app import create_app

        uvicorn.run(create_app(config, settings, complete=args.complete), host=host, port=port, log_level=log_level)
        return 0
    return _supervise(args, host, port)


def _supervise(args: argparse.Namespace, host: str, port: int) -> int:
    """Bind ``host:port`` here and run the server as a restarted worker on it (:class:`api.supervisor.Supervisor`)."""
    from api.supervisor import Supervisor, bind

    try:
        sock = bind(host, port)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another `--port` (or stop what uses it)"
        ) from exc
    supervisor = Supervisor(sock, lambda fd: worker_command(args, fd), env=worker_env(os.environ))
    supervisor.install_signals()
    try:
        return supervisor.run()
    finally:
        sock.close()


def worker_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of every worker: ``environ`` plus one cursor key drawn now, unless ``environ`` has one,
    so that every worker signs cursors alike and a page's ``endCursor`` still works after a restart."""
    from api.types.common import CURSOR_KEY_ENV

    return {**environ, CURSOR_KEY_ENV: environ.get(CURSOR_KEY_ENV) or secrets.token_hex(32)}


def worker_command(args: argparse.Namespace, fd: int) -> list[str]:
    """The argv of a worker that serves on descriptor ``fd`` with this command's store and flags."""
    command = [sys.executable, "-m", "api.cli"]
    if args.db:
        command += ["--db", str(args.db)]
    if args.backend:
        command += ["--backend", args.backend]
    if args.debug:
        command.append("--debug")
    if args.quiet:
        command.append("-q")
    command += ["serve", "--worker-fd", str(fd)]
    if args.complete:
        command.append("--complete")
    return command


def _print_banner(host: str, port: int) -> None:
    print(f"citegraph GraphQL API on http://{host}:{port}/graphql  (health: /healthz, ready: /readyz)")
    print("Two example queries (paste into GraphiQL at /graphql, or POST them as JSON):")
    print("  { stats { kind label count } }")
    print(
        '  { papers(search: "machine translation", first: 3) { id title year nCited authors { name } citedBy { id } } }'
    )
    print(f"  curl -s http://{host}:{port}/graphql -H 'content-type: application/json' \\")
    print("""       -d '{"query": "{ stats { kind label count } }"}'""", flush=True)


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
    p.add_argument(
        "--no-supervise",
        action="store_true",
        help="serve in this process, without the supervisor that restarts a crashed server (for debugging)",
    )
    p.add_argument("--worker-fd", type=int, help=argparse.SUPPRESS)  # internal: the supervisor's worker
    p.set_defaults(func=cmd_serve)


__all__ = ["add_commands", "cmd_serve", "worker_command"]
