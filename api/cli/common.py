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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from api.settings import AppSettings
from graph import GraphStore, StoreConfig, open_store
from graph.errors import ConfigError
from graph.files import StoreFiles


def open_from_args(args: argparse.Namespace, *, read_only: bool = False) -> GraphStore:
    """The store of ``--db`` / ``--backend`` (else ``CITEGRAPH_DB`` / ``CITEGRAPH_BACKEND``, ``NEO4J_*``)."""
    return open_store(StoreConfig.from_env(db_path=args.db, backend=args.backend, read_only=read_only))


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
        return name, json.loads(raw)
    except json.JSONDecodeError:
        return name, raw


def format_rows(columns: list[str], rows: list[list[Any]], fmt: str) -> str:
    """Rows as ``json`` (objects), ``csv`` (with a header) or a ``table`` (cells cut at 60 characters)."""
    if fmt == "json":
        return json.dumps([dict(zip(columns, row)) for row in rows], indent=2, default=str)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(columns)
        writer.writerows(rows)
        return buffer.getvalue().rstrip("\n")
    cells = [[str(c) for c in columns]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [min(60, max(len(r[i]) for r in cells)) for i in range(len(columns))]
    lines = [" | ".join(v[:60].ljust(w) for v, w in zip(r, widths)) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join([*lines, f"({len(rows)} rows)"])


def print_report(
    report: dict[str, Any],
    out: Path,
    write: Callable[[dict[str, Any], Path], tuple[Path, Path]],
    markdown: Callable[[dict[str, Any]], str],
    lead: str,
) -> int:
    """Write a harness report (JSON + Markdown beside it), print its table and where it went."""
    json_path, md_path = write(report, out)
    print(markdown(report))
    print(f"\n{lead}: {json_path}, {md_path}")
    return 0


__all__ = [
    "data_dir",
    "format_rows",
    "index_dir",
    "open_from_args",
    "parse_param",
    "print_report",
    "store_files",
]
