"""What the command modules share: opening the store, ``--param`` parsing, output formats, reports.

Each command group lives in its own module (``ingest``, ``compute``, ``query``, ``recommend``,
``linkage``, ``data``, ``serve``) and registers its subparsers with ``add_commands(sub)``;
:mod:`api.cli.main` holds the top parser and maps errors to exit codes.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from api.paper_ids import resolve_paper_ids, unknown_ids_message
from api.pipeline.registry import StepContext
from api.pipeline.train import print_report
from api.settings import AppSettings
from graph import GraphStore, StoreConfig, open_store
from graph.errors import ConfigError, NotFoundError
from graph.files import StoreFiles

EXIT_DATA = 65  # a DataError: the input or the store must change (sysexits.h EX_DATAERR), not a flag


def add_global_flags(parser: argparse.ArgumentParser) -> None:
    """The flags every command takes before its name: ``--db``, ``--backend``, ``--debug``, ``-q``."""
    parser.add_argument("--db", help="embedded store file (default: $CITEGRAPH_DB or var/citegraph.db)")
    parser.add_argument(
        "--backend", choices=["embedded", "neo4j"], help="store backend (default: $CITEGRAPH_BACKEND or embedded)"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("-q", "--quiet", action="store_true", help="less output (no progress bars)")


def open_from_args(args: argparse.Namespace, *, read_only: bool = False, create: bool = False) -> GraphStore:
    """The store of ``--db`` / ``--backend`` (else ``CITEGRAPH_DB`` / ``CITEGRAPH_BACKEND``, ``NEO4J_*``).

    Only ``ingest`` passes ``create``: every other command refuses an embedded store that does not
    exist rather than create an empty one and compute nothing in it.
    """
    config = StoreConfig.from_env(db_path=args.db, backend=args.backend, read_only=read_only)
    if config.backend == "embedded" and not read_only and not create and not config.db_path.exists():
        raise ConfigError(
            f"no store at {config.db_path}; run `citegraph --db {config.db_path} ingest SOURCE` (or `make build`) "
            "first, or pass --db the store to use"
        )
    return open_store(config)


def step_context(args: argparse.Namespace) -> StepContext:
    """Where a command runs a step of the registry: the store of ``--db`` / ``--backend`` (opened by the step as it
    needs it), quietly with ``-q``."""
    return StepContext(config=StoreConfig.from_env(db_path=args.db, backend=args.backend), quiet=args.quiet)


def index_dir(args: argparse.Namespace) -> Path | None:
    """``--index-dir`` of the commands that have it; None: the index beside the store (``<db>.index``)."""
    return Path(args.index_dir) if getattr(args, "index_dir", None) else None


def store_files(store: GraphStore, args: argparse.Namespace) -> StoreFiles:
    """The files of ``store``, with the index where ``--index-dir`` puts it."""
    return StoreFiles.of(store, index_dir=index_dir(args))


def data_dir(args: argparse.Namespace) -> Path:
    """``--data`` where the command has it, else ``CITEGRAPH_DATA``."""
    return Path(args.data) if getattr(args, "data", None) else AppSettings.from_env().data_dir


def parse_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` of ``cypher --param``: VALUE as JSON when it parses, else as plain text."""
    name, sep, raw = text.partition("=")
    if not sep or not name.isidentifier():
        raise ConfigError(f"--param {text!r} is not NAME=VALUE (VALUE is JSON, or plain text)")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return name, raw
    problem = _unstorable(value)
    if problem:
        raise ConfigError(f"--param {name}: {problem}; give a value the store can hold (quote it to pass text)")
    return name, value


INT64 = (-(2**63), 2**63 - 1)  # the stores' integer range


def _unstorable(value: Any) -> str | None:
    """Why a JSON value cannot be a query parameter (an integer past 64 bits, NaN, infinity), or None."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return None
    if isinstance(value, int):
        return None if INT64[0] <= value <= INT64[1] else f"{value} does not fit a 64-bit integer"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    items = value.values() if isinstance(value, dict) else value
    return next((p for p in map(_unstorable, items) if p), None)


TABLE_WIDTH = 60  # the widest a table cell is shown (``--width``); wider values end in "…"


def is_id_column(name: str) -> bool:
    """Whether a result column holds keys (``id``, ``p.id``, ``paper_id``, ``doi``): a table never cuts
    these, since keys that share their first characters would read as one."""
    last = name.rsplit(".", 1)[-1].lower()
    return last in ("id", "key", "doi", "code") or last.endswith("_id")


def format_cell(value: Any) -> str:
    """A value as the table and CSV formats write it: maps and lists (nodes, relationships, paths and
    collections of them) as JSON, nothing for null, anything else as its text."""
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def format_rows(columns: list[str], rows: list[list[Any]], fmt: str, *, width: int = TABLE_WIDTH) -> str:
    """Rows as ``json`` (objects), ``csv`` (with a header) or a ``table``.

    A table cell longer than ``width`` characters is cut to ``width`` ending in "…" (0: never cut); the
    cells of id columns (:func:`is_id_column`) are never cut.
    """
    if fmt == "json":
        return json.dumps([dict(zip(columns, row)) for row in rows], indent=2, default=str)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(columns)
        writer.writerows([format_cell(value) for value in row] for row in rows)
        return buffer.getvalue().rstrip("\n")
    limits = [None if width <= 0 or is_id_column(name) else width for name in columns]

    def cut(text: str, limit: int | None) -> str:
        return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"

    cells = [[str(c) for c in columns]] + [
        [cut(format_cell(v), limit) for v, limit in zip(row, limits)] for row in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = [" | ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join([*lines, f"({len(rows)} rows)"])


__all__ = [
    "EXIT_DATA",
    "data_dir",
    "format_cell",
    "format_rows",
    "index_dir",
    "is_id_column",
    "open_from_args",
    "paper_keys",
    "parse_param",
    "print_report",
    "step_context",
    "store_files",
]


def paper_keys(store: GraphStore, given: Sequence[str], option: str) -> list[str]:
    """The stored key of each paper id a user typed (any id a source gave the paper: a DOI, an arXiv id
    with or without version, an OpenAlex W-id, a MAG number, ...: :func:`api.paper_ids.resolve_paper_ids`),
    or :class:`NotFoundError` naming the ids that name nothing."""
    keys = resolve_paper_ids(store, given)
    unknown = [raw for raw, key in keys.items() if key is None]
    if unknown:
        raise NotFoundError(unknown_ids_message(option, unknown, store))
    return [str(keys[raw]) for raw in given]
