"""``citegraph ingest``: load a source (or every source under the data folder) into the store."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import loaders
from api.cli.common import open_from_args, step_context
from api.pipeline.ingest import INGEST, IngestSettings
from gnn.cocitation.spark_load import load_spark_output
from graph.errors import ConfigError
from graph.ingest import MEMORY_LIMIT_MIB, ON_ERROR
from loaders.keywords import THESAURUS_ENV

log = logging.getLogger(__name__)

# Not a source: the computed co-citation tables of `citegraph spark cocitation` (replaced, as compute writes them).
COCITATION = "cocitation"


def cmd_ingest(args: argparse.Namespace) -> int:
    """``ingest SOURCE [PATH]``: the step registry's ingest (:mod:`api.pipeline.ingest`) with the flags' settings;
    ``ingest cocitation DIR`` loads the co-citation tables of ``citegraph spark cocitation``."""
    if args.source == COCITATION:
        return _ingest_cocitation(args)
    INGEST.run(step_context(args), ingest_settings(args))
    return 0


def ingest_settings(args: argparse.Namespace) -> IngestSettings:
    """``ingest``'s flags as the step registry's settings."""
    return IngestSettings(
        source=args.source,
        path=args.path,
        data=args.data,
        on_error=args.on_error,
        rejects_dir=args.rejects_dir,
        chunk_works=args.chunk_works,
        thesaurus=args.thesaurus,
        keyword_thesaurus=args.keyword_thesaurus,
        memory_limit=args.memory_limit,
        merged_ids=args.merged_ids,
        json=args.json,
    )


def _ingest_cocitation(args: argparse.Namespace) -> int:
    """``ingest cocitation DIR``: the output of ``citegraph spark cocitation``, written as the compute step writes."""
    if not args.path:
        raise ConfigError("`citegraph ingest cocitation` needs DIR, the --out folder of `citegraph spark cocitation`")
    with open_from_args(args) as store:
        report = load_spark_output(store, Path(args.path))
    print(
        json.dumps({"folder": str(report.folder), "edges": report.edges, "papers": report.papers})
        if args.json
        else report.summary()
    )
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``ingest``."""
    p = sub.add_parser("ingest", help="load a source (or all sources) into the store")
    known = "; ".join(f"{s.name}: {s.description}" for s in loaders.SOURCES.values())
    p.add_argument(
        "source",
        help=f"'all' or one source ({known}); or 'cocitation DIR': the output of `citegraph spark cocitation`",
    )
    p.add_argument(
        "path",
        nargs="?",
        help="file, folder or quoted glob of the source (default for the bundled corpora: their place under --data)",
    )
    add_ingest_options(p)
    p.set_defaults(func=cmd_ingest)


def add_ingest_options(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The options of ``ingest`` after its source and path (``citegraph update`` ingests with them too)."""
    p.add_argument("--data", help="data folder (default: $CITEGRAPH_DATA or ../shared/data)")
    p.add_argument(
        "--on-error",
        choices=ON_ERROR,
        default="fail",
        help="fail: stop before writing on any bad record; skip: load the rest",
    )
    p.add_argument(
        "--rejects-dir",
        help="where to write the reports of rejected records, <source>.rejects.jsonl "
        "(default: $CITEGRAPH_REJECTS, else rejects/ in the store's folder: var/rejects/ for var/citegraph.db)",
    )
    p.add_argument(
        "--chunk-works",
        type=int,
        help="works per batch of a source read in batches (openalex): memory holds one batch, the store gets all "
        "of them or none (default: $CITEGRAPH_INGEST_CHUNK_WORKS, else 5000)",
    )
    p.add_argument(
        "--thesaurus",
        metavar="FILE",
        help="a thesaurus of cited references (VOSviewer format: label<TAB>replace by; replace by = label keeps a "
        "string apart) for the sources whose cited works are reference strings; "
        "default $CITEGRAPH_REFERENCE_THESAURUS (review the joins with `citegraph references report`)",
    )
    p.add_argument(
        "--keyword-thesaurus",
        metavar="FILE",
        help="a keyword thesaurus (VOSviewer format: label<TAB>replace by; an empty replace by drops the term) "
        f"applied to the keywords loaded (default: ${THESAURUS_ENV}, else none)",
    )
    p.add_argument(
        "--memory-limit",
        type=int,
        default=MEMORY_LIMIT_MIB,
        metavar="MIB",
        help="memory in MiB that a source read in batches (openalex) plans its held-back relationship writes for: "
        "its edges are spilled to disk and copied at the end in parts of a quarter of it "
        f"(default: {MEMORY_LIMIT_MIB})",
    )
    p.add_argument(
        "--merged-ids",
        metavar="PATH",
        help="openalex: the snapshot's merged_ids/works folder (or one of its CSV files): merged works the store "
        "holds become aliases of their survivors, deleted ones are removed (default: the merged_ids/works folder "
        "beside the works, when there is one)",
    )
    p.add_argument("--json", action="store_true", help="print the ingest reports as JSON")


__all__ = ["add_commands", "add_ingest_options", "cmd_ingest", "ingest_settings"]
