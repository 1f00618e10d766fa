"""``citegraph references report``: how the cited references of a source's input are matched as works.

Every source with cited works has it: ``wos`` and ``scopus`` (reference strings matched as works, with the
rules that joined them), and ``crossref``, ``unarxive``, ``jsonl``, ``openalex``, ``semanticscholar`` and
``opencitations`` (:mod:`loaders.citations_report`: the works of the input, the stubs by id and by reference
string). For each it prints to standard error how many citations were matched to works of the input,
stubbed (by id, by reference string) and left unparsed, with examples; the rows go to standard output
(or ``--out``).

For WoS and Scopus: one row per work (:data:`loaders.refmatch.REPORT_COLUMNS`): its id in the store, its label, the record of the
export it is (if any), its DOI, the rules that joined its strings, the strings with their occurrences, its
citations now, and how the old key (one node per reference key) counted them. It reads the files only
(no store), exactly as ``citegraph ingest`` matches them, and honours the same thesaurus
(``--thesaurus``, else ``$CITEGRAPH_REFERENCE_THESAURUS``): review the joins, write the ones to undo or
force into the thesaurus (``label<TAB>replace by``), and ingest again.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

from graph.errors import ConfigError
from graph.ingest import GraphBatch
from loaders import LoadContext, crossref, jsonl, openalex, opencitations, scopus, semanticscholar, unarxive, wos
from loaders.citations_report import CitationCounts, citation_report
from loaders.refmatch import REPORT_COLUMNS, Thesaurus

Report = tuple[list[dict[str, object]], CitationCounts]


def _wos(path: Path, thesaurus: Thesaurus | None) -> Report:
    batch, _ = wos.load_with_report(path, thesaurus=thesaurus)
    return wos.references(path, thesaurus=thesaurus), citation_report(batch)[1]


def _scopus(path: Path, thesaurus: Thesaurus | None) -> Report:
    batch, _ = scopus.load_with_report(path, thesaurus=thesaurus)
    return scopus.references(path, thesaurus=thesaurus), citation_report(batch)[1]


def _crossref(path: Path, thesaurus: Thesaurus | None) -> Report:
    batch, report = crossref.load_with_report(path, LoadContext().anthology_titles, thesaurus=thesaurus)
    return citation_report(batch, unresolved=report.unresolved)


def _unarxive(path: Path, thesaurus: Thesaurus | None) -> Report:
    batch, report = unarxive.load_with_report(path, LoadContext().title_index(), thesaurus=thesaurus)
    return citation_report(batch, unresolved=report.unresolved)


def _by_ids(load: Callable[[Path], GraphBatch]) -> Callable[[Path, Thesaurus | None], Report]:
    """A source whose cited works come by id (or as its own records): no reference strings to match."""

    def report(path: Path, thesaurus: Thesaurus | None) -> Report:
        return citation_report(load(path))

    return report


FORMATS: dict[str, Callable[[Path, Thesaurus | None], Report]] = {
    "wos": _wos,
    "scopus": _scopus,
    "crossref": _crossref,
    "unarxive": _unarxive,
    "jsonl": _by_ids(jsonl.load),
    "openalex": _by_ids(openalex.load),
    "semanticscholar": _by_ids(semanticscholar.load),
    "opencitations": _by_ids(opencitations.load),
}
MATCHED = ("wos", "scopus", "crossref", "unarxive")  # sources whose reference strings a thesaurus joins


def cmd_report(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        raise ConfigError(f"{path}: no such file or folder; give a {args.source} input (a file or a folder of them)")
    if args.thesaurus and args.source not in MATCHED:
        raise ConfigError(
            f"--thesaurus: {args.source} gives its cited works by id, not as reference strings; the thesaurus "
            f"applies to {', '.join(MATCHED)}"
        )
    thesaurus = Thesaurus.read(Path(args.thesaurus)) if args.thesaurus else None
    rows, counts = FORMATS[args.source](path, thesaurus)
    print(counts.summary(), file=sys.stderr)
    if args.joined_only:
        rows = [row for row in rows if row["rules"] not in ("one string", "record", "id")]
    if args.format == "json":
        text = json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(REPORT_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"{len(rows)} works written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``references report``."""
    p = sub.add_parser("references", help="review how cited references are matched as works")
    inner = p.add_subparsers(dest="references_command", required=True, metavar="COMMAND")
    r = inner.add_parser(
        "report",
        help="one row per cited work: its strings, the rule that joined them, its citations before and after (CSV/JSON)",
    )
    r.add_argument("source", choices=sorted(FORMATS), help="the source format (as `citegraph ingest` names it)")
    r.add_argument("path", help="an input file of that source or a folder of them")
    r.add_argument("--format", choices=("csv", "json"), default="csv")
    r.add_argument("--out", help="write to this file instead of standard output")
    r.add_argument(
        "--thesaurus",
        help="a thesaurus file (VOSviewer format: label<TAB>replace by; replace by = label keeps a string apart); "
        "default $CITEGRAPH_REFERENCE_THESAURUS",
    )
    r.add_argument(
        "--joined-only",
        action="store_true",
        help="only works whose strings were joined (wos, scopus); elsewhere: only the works stubbed by reference string",
    )
    r.set_defaults(func=cmd_report)
