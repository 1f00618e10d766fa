"""``citegraph references report``: how the cited references of WoS / Scopus exports are matched as works.

One row per work (:data:`loaders.refmatch.REPORT_COLUMNS`): its id in the store, its label, the record of the
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
from pathlib import Path

from graph.errors import ConfigError
from loaders import scopus, wos
from loaders.refmatch import REPORT_COLUMNS, Thesaurus

FORMATS = {"wos": wos.references, "scopus": scopus.references}


def cmd_report(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        raise ConfigError(
            f"{path}: no such file or folder; give a Web of Science or Scopus export (or a folder of them)"
        )
    thesaurus = Thesaurus.read(Path(args.thesaurus)) if args.thesaurus else None
    rows = FORMATS[args.source](path, thesaurus=thesaurus)
    if args.joined_only:
        rows = [row for row in rows if row["rules"] != "one string"]
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
    r.add_argument("source", choices=sorted(FORMATS), help="the export format")
    r.add_argument("path", help="an export file or a folder of them")
    r.add_argument("--format", choices=("csv", "json"), default="csv")
    r.add_argument("--out", help="write to this file instead of standard output")
    r.add_argument(
        "--thesaurus",
        help="a thesaurus file (VOSviewer format: label<TAB>replace by; replace by = label keeps a string apart); "
        "default $CITEGRAPH_REFERENCE_THESAURUS",
    )
    r.add_argument("--joined-only", action="store_true", help="only works whose strings were joined")
    r.set_defaults(func=cmd_report)
