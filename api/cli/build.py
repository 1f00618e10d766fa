"""``citegraph build``: every step from the data to a served graph, timed, resumable, one line per step.

The flags become :class:`~api.pipeline.plans.BuildSettings`; the steps (``ingest``, ``compute`` (all),
``index``, ``reranker``, ``linker`` beside the reranker and, with ``--full``, ``linkage links`` and the encoder's
steps) are the step registry's (:func:`api.pipeline.plans.build_plan`), run by :class:`api.pipeline.build.BuildRun`,
which prints one line per step, resumes from ``<db>.build.json`` and ends with a table of every step's time. After
the steps, this command prints ``citegraph stats``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from api.pipeline.build import BuildRun
from api.pipeline.plans import BuildSettings
from api.settings import AppSettings
from graph import StoreConfig


def settings_from_args(args: argparse.Namespace) -> BuildSettings:
    data = Path(args.data) if args.data else AppSettings.from_env().data_dir
    return BuildSettings(full=args.full, embed_limit=args.embed_limit, data=data)


def cmd_build(args: argparse.Namespace) -> int:
    from api.cli.query import cmd_stats

    config = StoreConfig.from_env(db_path=args.db, backend=args.backend)
    stats = argparse.Namespace(**{**vars(args), "files": False, "json": False, "check": False})
    return BuildRun(
        settings_from_args(args),
        config,
        quiet=args.quiet,
        debug=args.debug,
        times_json=Path(args.times_json) if args.times_json else None,
        after_steps=lambda: cmd_stats(stats),
    ).run()


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``build``."""
    p = sub.add_parser(
        "build",
        help="every step from the data to a served graph (what `make build` runs), timed and resumable",
    )
    p.add_argument("--full", action="store_true", help="every step at full scale (make build FULL=1)")
    p.add_argument(
        "--embed-limit",
        type=int,
        default=10_000,
        help="papers (most cited first) and sentences embedded by the default build (default 10000)",
    )
    p.add_argument("--data", help="data folder (default: $CITEGRAPH_DATA or ../shared/data)")
    p.add_argument("--times-json", metavar="FILE", help="also write the per-step times as JSON")
    p.set_defaults(func=cmd_build)


__all__ = ["add_commands", "cmd_build", "settings_from_args"]
