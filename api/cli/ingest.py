"""``citegraph ingest``: load a source (or every source under the data folder) into the store."""

from __future__ import annotations

import argparse
import glob
import json
import logging
from pathlib import Path

from tqdm import tqdm

import loaders
from api.cli.common import open_from_args
from api.settings import AppSettings
from gnn.cocitation.spark_load import load_spark_output
from graph import ingest, ingest_stream
from graph.errors import ConfigError
from graph.files import StoreFiles
from graph.ingest import MEMORY_LIMIT_MIB, ON_ERROR
from loaders.keywords import THESAURUS_ENV, KeywordThesaurus, thesaurus_from_env
from loaders.refmatch import Thesaurus

log = logging.getLogger(__name__)

# Not a source: the computed co-citation tables of `citegraph spark cocitation` (replaced, as compute writes them).
COCITATION = "cocitation"


def cmd_ingest(args: argparse.Namespace) -> int:
    if args.source == COCITATION:
        return _ingest_cocitation(args)
    settings = AppSettings.from_env()
    data_dir = Path(args.data) if args.data else settings.data_dir
    sources = _sources(args, data_dir)
    context = loaders.LoadContext(data_dir)  # every source reads the same data folder (its Anthology titles)
    thesaurus = _thesaurus(args, sources)
    keyword_thesaurus = (
        KeywordThesaurus.read(Path(args.keyword_thesaurus)) if args.keyword_thesaurus else thesaurus_from_env()
    )
    reports = []
    with open_from_args(args, create=True) as store:
        rejects_dir = (
            Path(args.rejects_dir) if args.rejects_dir else settings.rejects_dir or StoreFiles.of(store).rejects
        )
        for source, path in tqdm(sources, desc="ingest", unit="source", disable=len(sources) < 2 or args.quiet):
            if not path.exists() and not glob.has_magic(str(path)):
                raise ConfigError(f"{source.name}: {path} does not exist; pass the right PATH or set CITEGRAPH_DATA")
            try:
                if source.chunks is not None:
                    chunk = args.chunk_works or settings.ingest_chunk_works
                    batches = source.chunks(path, chunk)
                    if keyword_thesaurus is not None:
                        batches = map(keyword_thesaurus.apply, batches)
                    report = ingest_stream(
                        store,
                        source.name,
                        batches,
                        on_error=args.on_error,
                        rejects_dir=rejects_dir,
                        memory_limit_mib=args.memory_limit,
                    )
                else:
                    batch = source.read(path, context, thesaurus)
                    if keyword_thesaurus is not None:
                        batch = keyword_thesaurus.apply(batch)
                    report = ingest(store, batch, on_error=args.on_error, rejects_dir=rejects_dir)
            except OSError as exc:  # the rejects report, written before the store
                if exc.filename is None or not _within(Path(exc.filename), rejects_dir):
                    raise
                raise ConfigError(
                    f"cannot write the rejected records to {rejects_dir}: {exc.strerror}; nothing was stored. "
                    "Pass --rejects-dir (or set CITEGRAPH_REJECTS to) a folder you can write to"
                ) from exc
            reports.append(report)
            if (
                report.records == 0
            ):  # nothing read: most likely the wrong file, or an export cut off before its first record
                log.warning(
                    "%s: %s holds no record (0 records read, nothing stored); check that it is the %s export you meant",
                    source.name,
                    path,
                    source.name,
                )
            if not args.json:
                print(report.summary())
    if args.json:
        print(json.dumps([r.as_dict() for r in reports], indent=2))
    return 0


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


def _thesaurus(args: argparse.Namespace, sources: list[tuple[loaders.Source, Path]]) -> Thesaurus | None:
    """The ``--thesaurus`` file read (None without the flag: the loaders then honour
    ``$CITEGRAPH_REFERENCE_THESAURUS``); a source named on its own that has no reference strings refuses it."""
    if not args.thesaurus:
        return None
    matched = [source.name for source in loaders.SOURCES.values() if source.load_matched is not None]
    if args.source != "all" and sources[0][0].load_matched is None:
        raise ConfigError(
            f"--thesaurus: {args.source} gives its cited works by id, not as reference strings, so there is nothing "
            f"to match; the thesaurus applies to {', '.join(matched)}"
        )
    return Thesaurus.read(Path(args.thesaurus))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _sources(args: argparse.Namespace, data_dir: Path) -> list[tuple[loaders.Source, Path]]:
    """The sources ``ingest SOURCE [PATH]`` names, each with the path it is read from."""
    if args.source == "all":
        if args.path:
            raise ConfigError(
                "`citegraph ingest all` takes no PATH; it reads every source under --data / CITEGRAPH_DATA"
            )
        sources = [(source, data_dir / source.path) for source in loaders.available(data_dir) if source.bundled]
        if not sources:
            raise ConfigError(
                f"no known source under {data_dir}; "
                "set CITEGRAPH_DATA to the data folder (see ../shared/data/README.md)"
            )
        return sources
    if args.source not in loaders.SOURCES:
        raise ConfigError(f"unknown source {args.source!r}; known: all, {', '.join(loaders.SOURCES)}")
    source = loaders.SOURCES[args.source]
    if not args.path and not source.bundled:
        raise ConfigError(
            f"`citegraph ingest {source.name}` needs the PATH of your export (a file, a folder or a quoted glob)"
        )
    return [(source, Path(args.path) if args.path else data_dir / source.path)]


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
    p.add_argument("--json", action="store_true", help="print the ingest reports as JSON")


__all__ = ["add_commands", "add_ingest_options", "cmd_ingest"]
