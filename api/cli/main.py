"""The ``citegraph`` command line: the top parser, its global flags, dispatch and exit codes.

Every subcommand opens the store from ``--db`` / ``CITEGRAPH_DB`` (or Neo4j with ``--backend neo4j``
and ``NEO4J_*``), does one job, and exits non-zero with a one-line error on failure (the
traceback only with ``--debug``). Each command group registers its own subparsers
(``add_commands``) from its module: :mod:`~api.cli.ingest`, :mod:`~api.cli.update`, :mod:`~api.cli.compute`,
:mod:`~api.cli.spark`, :mod:`~api.cli.linkage`, :mod:`~api.cli.recommend`, :mod:`~api.cli.query`,
:mod:`~api.cli.data`, :mod:`~api.cli.serve`, and :mod:`~api.cli.build`, which runs the steps from data to a
served graph.

Exit codes: 0 done; 1 a setting, flag or environment variable is wrong, or the store failed
(:class:`~graph.errors.ConfigError`, :class:`~graph.errors.StoreError`, ...); 2 a wrong command
line (argparse) or an internal error; 3 ``fetch-data`` left files to copy by hand; 65 the data does
not fit (:class:`~graph.errors.DataError`: a bad record or file, a store without what the step
needs; ``EX_DATAERR`` of sysexits.h); 130 interrupted.
"""

from __future__ import annotations

import argparse
import errno
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import api.cli.build as build
import api.cli.compute as compute
import api.cli.data as data
import api.cli.ingest as ingest
import api.cli.linkage as linkage
import api.cli.query as query
import api.cli.recommend as recommend
import api.cli.references as references
import api.cli.serve as serve
import api.cli.spark as spark
import api.cli.update as update
from api.cli.common import EXIT_DATA, add_global_flags
from graph import CitegraphError, recovery
from graph.errors import DataError

log = logging.getLogger("citegraph")

# in the order `citegraph --help` lists their commands
GROUPS = (build, ingest, update, compute, spark, linkage, recommend, query, references, data, serve)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citegraph",
        description="Build, compute, query and serve the citation graph.",
        epilog="Exit codes: 0 done, 1 bad setting or flag (or the store failed), 2 bad command line or internal "
        "error, 65 bad data (a record, a file, or a store without what the step needs), 130 interrupted.",
    )
    add_global_flags(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        return int(args.func(args))
    except CitegraphError as exc:
        if args.debug:
            raise
        print(f"citegraph: error: {exc}", file=sys.stderr)
        return EXIT_DATA if isinstance(exc, DataError) else 1
    except OSError as exc:
        if args.debug:
            raise
        if exc.errno != errno.ENOSPC:
            return _internal_error(exc)
        written = Path(str(exc.filename)) if exc.filename else Path.cwd() / "-"  # free_space_text reads its folder
        print(
            f"citegraph: error: the disk is full: writing {exc.filename or 'a file'} failed ({exc.strerror}; "
            f"{recovery.free_space_text(written)}). Files beside the store are written whole and renamed into "
            "place, so the ones there are as before this command; free space, then rerun it",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print("citegraph: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so in one line, the traceback is one flag away
        if args.debug:
            raise
        return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    print(
        f"citegraph: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
