"""``citegraph copy`` (the whole graph between stores) and ``citegraph fetch-data`` (the public corpora)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from api.cli.flags import FlagSpec, add_settings_flags, settings_from_args
from api.settings import AppSettings
from graph import StoreConfig, open_store, recovery
from graph.copy import CopySettings, copy_store
from graph.errors import CitegraphError, ConfigError, StoreError, StoreFullError
from loaders.fetch import fetch_data

log = logging.getLogger("citegraph")

COPY_FLAGS: tuple[FlagSpec, ...] = ("batch_size",)  # the CopySettings fields `copy` offers as flags (api/cli/flags.py)


def cmd_copy(args: argparse.Namespace) -> int:
    if args.target == "embedded" and not args.to_db:
        raise ConfigError("--to embedded needs --to-db PATH, the store file to write (the source is --from-db or --db)")
    if args.source == args.target == "neo4j":
        raise ConfigError("both stores would be the Neo4j database of NEO4J_*; use Neo4j's own tools for that")
    source_config = StoreConfig.from_env(db_path=args.from_db or args.db, backend=args.source, read_only=True)
    target_config = StoreConfig.from_env(db_path=args.to_db, backend=args.target)
    default_progress = Path("var") / f"copy-{args.source}-to-{args.target}.progress.json"
    settings = settings_from_args(
        CopySettings,
        args,
        COPY_FLAGS,
        progress_path=Path(args.progress_file) if args.progress_file else default_progress,
        restart=args.restart,
    )
    with open_store(source_config) as source, open_store(target_config) as target:
        report = copy_store(source, target, settings, progress=not args.quiet)
    print(report.summary())
    return 0


def cmd_fetch_data(args: argparse.Namespace) -> int:
    settings = AppSettings.from_env()
    report = fetch_data(
        Path(args.dest) if args.dest else settings.data_dir,
        args.sources or None,
        timeout=args.timeout,
        cache_dir=Path(args.cache) if args.cache else settings.cache_dir / "downloads",
        mirror=args.mirror,
        force=args.force,
    )
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.summary())
    return 0 if report.complete else 3  # 3: some files must be copied by hand (see the summary)


def cmd_recover(args: argparse.Namespace) -> int:
    """``citegraph recover``: open the store read-write, which repairs what a killed writer left beside it
    (a first load's ``.building`` files, staging tables, a torn log, an interrupted checkpoint) and adds
    the tables and columns a newer version of the data model has (empty), and close it; then check the repair
    as the next command would meet it: no engine file left beside the store, and a read-only open that works.

    Exits non-zero while a repair is pending (a checkpoint the full disk did not let it finish, most often),
    saying what it could not repair and what to do; on success it prints what the store holds, so that after a
    write interrupted by a full disk the user sees whether that write is in."""
    config = StoreConfig.from_env(db_path=args.db)
    path = config.db_path
    if not path.exists():
        raise ConfigError(f"no store at {path}; give the path of an embedded store file with --db")
    open_store(config).close()
    left = recovery.companions(path)
    if left:
        names = ", ".join(f"{p.name} ({recovery.size_text(p.stat().st_size)})" for p in left if p.exists())
        raise StoreError(
            f"{path}: opened read-write and closed, but {names} are still beside it: the engine did not finish "
            f"its checkpoint, so the repair is pending ({recovery.free_space_text(path)}). Free space on that "
            f"filesystem and run `{recovery.recovery_command(path)}` again; until it succeeds, commands cannot open "
            "the store"
        )
    from graph.embedded import EmbeddedStore  # here: the other commands of this module never open the engine

    try:
        with open_store(StoreConfig.from_env(db_path=path, read_only=True)) as store:
            stats = store.stats()
            at_risk = store.compressed_float_lists() if isinstance(store, EmbeddedStore) else {}
    except StoreFullError:
        raise
    except CitegraphError as exc:
        raise StoreError(
            f"{path}: opened read-write and closed, but a read-only open (what `stats`, `recommend` and the server "
            f"do) still fails, so a repair is pending: {exc}"
        ) from exc
    held = ", ".join(f"{name} {count:,}" for counts in stats.values() for name, count in counts.items() if count)
    print(
        f"{path}: opens read-write and read-only, with every table and column of this version; nothing left to "
        f"repair. It holds {held or 'nothing'}"
    )
    if at_risk:
        lists = ", ".join(
            f"{name} ({chunks} chunk{'s' if chunks > 1 else ''})" for name, chunks in sorted(at_risk.items())
        )
        log.warning(
            "%s was written with the engine's compression on, which this version turns off: float lists stored "
            "compressed (%s) can lose values when they are written again (LadybugDB 0.22; docs/architecture.md). "
            "Rebuild the store (`make clean build`, or ingest and compute into a new --db) before computing on it",
            path,
            lists,
        )
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``copy``, ``fetch-data`` and ``recover``."""
    p = sub.add_parser("copy", help="copy the whole graph between stores (embedded <-> Neo4j), resumable")
    p.add_argument("--from", dest="source", choices=["embedded", "neo4j"], required=True, help="the store to read")
    p.add_argument("--to", dest="target", choices=["embedded", "neo4j"], required=True, help="the store to write")
    p.add_argument("--from-db", help="embedded source file (default: --db or $CITEGRAPH_DB)")
    p.add_argument("--to-db", help="embedded target file (required with --to embedded)")
    add_settings_flags(p, CopySettings, COPY_FLAGS)
    p.add_argument(
        "--progress-file", help="where finished labels/types are recorded (default: var/copy-FROM-to-TO.progress.json)"
    )
    p.add_argument("--restart", action="store_true", help="forget earlier progress and copy everything again")
    p.set_defaults(func=cmd_copy)

    p = sub.add_parser("fetch-data", help="download the public corpora (pinned commits, checked digests)")
    p.add_argument("sources", nargs="*", help="which sources (default: all)")
    p.add_argument("--dest", help="data folder to fill (default: $CITEGRAPH_DATA)")
    p.add_argument("--cache", help="download cache (default: $CITEGRAPH_CACHE/downloads)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a server")
    p.add_argument("--mirror", help="a server holding <host>/<path> copies of the pinned URLs")
    p.add_argument("--force", action="store_true", help="replace files that exist but differ")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_fetch_data)

    p = sub.add_parser(
        "recover",
        help="repair what a killed command left beside the store and add the tables and columns of this "
        "version (open read-write, then close); read-write opens do it anyway",
    )
    p.set_defaults(func=cmd_recover)


__all__ = ["add_commands", "cmd_copy", "cmd_fetch_data", "cmd_recover"]
