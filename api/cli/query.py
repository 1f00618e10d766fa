"""``citegraph stats``, ``citegraph check``, ``citegraph cypher`` and ``citegraph export``: reading the store.

``stats --files`` adds the files the store consists of (:class:`graph.files.StoreFiles`): each
artefact's path, size and what it was built from. ``check`` (and ``stats --check``) reads every
node and relationship and reports each value no step writes (:mod:`graph.check`): a damaged
store exits 65 with what is damaged and what to do.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from api.cli.common import EXIT_DATA, format_rows, open_from_args, parse_param, store_files
from gnn.cocitation.compute import MEASURES
from gnn.cocitation.export import FORMATS, export_cocitation, export_coupling
from graph import GraphStore
from graph.check import check_store
from graph.errors import ConfigError
from graph.files import FileEntry, format_size
from graph.neo4j_admin import export_neo4j_admin


def cmd_stats(args: argparse.Namespace) -> int:
    with open_from_args(args, read_only=True) as store:
        stats: dict[str, Any] = store.stats()
        files = store_files(store, args).describe() if args.files else None
        check = check_store(store) if args.check else None
    if args.json:
        if files is not None:
            stats["files"] = {entry.name: entry.as_dict() for entry in files}
        if check is not None:
            stats["check"] = {"sound": check.sound, "findings": [f.line() for f in check.findings]}
        print(json.dumps(stats, indent=2))
        return 0 if check is None or check.sound else EXIT_DATA
    for section, counts in stats.items():
        print(section)
        for name, count in counts.items():
            print(f"  {name:<16}{count:>12,}")
    if files is not None:
        print(files_table(files))
    if check is not None:
        print(check.summary())
    return 0 if check is None or check.sound else EXIT_DATA


def cmd_check(args: argparse.Namespace) -> int:
    """``citegraph check``: every computed property in its range, every label's keys adding up (exit 65 if not)."""
    with open_from_args(args, read_only=True) as store:
        report = check_store(store, progress=None if args.quiet else lambda name: print(f"checking {name}"))
    print(report.summary())
    return 0 if report.sound else EXIT_DATA


def files_table(entries: list[FileEntry]) -> str:
    """The ``files`` section of ``stats --files``: one line per artefact (absent ones say so)."""
    lines = ["files"]
    for entry in entries:
        if entry.path is None:
            lines.append(f"  {entry.name:<18}{'-':>10}  (none: a server store has no files beside it)")
            continue
        size = format_size(entry.size) if entry.exists else "absent"
        built = ""
        if entry.built_from is not None:
            state = {True: ", current", False: ", the store changed since", None: ""}[entry.current]
            built = f"  [built from {entry.built_from}{state}]"
        lines.append(f"  {entry.name:<18}{size:>10}  {entry.path}{built}")
    return "\n".join(lines)


def cmd_cypher(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.file is None):
        raise ConfigError("give a query string or --file FILE (one of the two)")
    text = Path(args.file).read_text(encoding="utf-8") if args.file else args.query
    params = dict(parse_param(p) for p in args.param)
    with open_from_args(args, read_only=True) as store:
        columns, rows = store.read_only_query(text, params)
    print(format_rows(columns, rows, args.format))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with open_from_args(args, read_only=True) as store:
        if args.kind == "tables":
            fmt = args.format or "csv"
            if fmt not in ("csv", "parquet"):
                raise ConfigError(f"`export tables` writes csv or parquet, not {fmt}")
            out.mkdir(parents=True, exist_ok=True)
            for path, rows in export_tables(store, out, fmt):
                print(f"{path}\t{rows} rows")
            return 0
        if args.kind == "neo4j-admin":
            print(export_neo4j_admin(store, out, progress=not args.quiet).summary())
            return 0
        options = {"fmt": args.format or "csv", "measure": args.measure, "min_count": args.min_count}
        if args.kind == "cocitation":
            report = export_cocitation(store, out, seed_paper=args.seed_paper, depth=args.depth, **options)
        else:
            if args.seed_paper:
                raise ConfigError("--seed-paper applies to `export cocitation` only")
            report = export_coupling(store, out, **options)
    print(report.summary())
    return 0


def export_tables(store: GraphStore, out: Path, fmt: str) -> list[tuple[Path, int]]:
    """Every relationship type as a table (source, target, properties) for pandas/Gephi/VOSviewer users."""
    written = []
    for rel_type in store.schema.rels:
        frame = store.read_edges(rel_type)
        path = out / f"{rel_type}.{fmt}"
        if fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)
        written.append((path, len(frame)))
    return written


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``stats``, ``cypher`` and ``export``."""
    p = sub.add_parser("stats", help="node and relationship counts")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--files",
        action="store_true",
        help="also the files beside the store and under the cache (index, profiles, reranker, cluster labels, "
        "models, caches): path, size, and what each was built from",
    )
    p.add_argument("--check", action="store_true", help="also read every value and report impossible ones (`check`)")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "check",
        help="read every node and relationship and report values no step writes (NaN, out of range): "
        "a damaged store exits 65",
    )
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("cypher", help="run a read-only Cypher query against the store")
    p.add_argument("query", nargs="?", help="the query text")
    p.add_argument("--file", help="read the query from a file")
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="query parameter (VALUE as JSON or text)"
    )
    p.add_argument("--format", choices=["table", "json", "csv"], default="table")
    p.set_defaults(func=cmd_cypher)

    p = sub.add_parser("export", help="export tables or co-citation / coupling networks for analysts")
    p.add_argument(
        "kind",
        choices=["tables", "cocitation", "coupling", "neo4j-admin"],
        help="tables: every relationship type as an edge list (OUT is a folder); cocitation: the CO_CITED "
        "network; coupling: bibliographic coupling (computed on demand); neo4j-admin: node and relationship "
        "CSVs for `neo4j-admin database import full` plus OUT/import.sh (OUT is a folder)",
    )
    p.add_argument(
        "out", help="output folder (tables) or file (networks; vosviewer writes OUT_map.txt + OUT_network.txt)"
    )
    p.add_argument("--format", choices=FORMATS, help="graphml|gexf (Gephi), vosviewer, csv, parquet (default csv)")
    p.add_argument("--measure", choices=MEASURES, default="association", help="edge weight of network exports")
    p.add_argument("--min-count", type=int, default=1, help="smallest co-citation/coupling count exported")
    p.add_argument("--seed-paper", help="export only the neighbourhood of this paper (cocitation)")
    p.add_argument("--depth", type=int, default=1, help="hops around --seed-paper (1 or 2)")
    p.set_defaults(func=cmd_export)


__all__ = ["add_commands", "cmd_check", "cmd_cypher", "cmd_export", "cmd_stats", "export_tables", "files_table"]
