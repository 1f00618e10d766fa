"""What bibliometrix's documented key counts against what citegraph counts, pair by pair, on the real samples.

bibliometrix (``biblioNetwork(M, analysis = "co-citation", network = "references")``) keys a cited
reference by its label (:func:`loaders.citedrefs.bibliometrix_label`: first author, year and source, the
volume and page cut off); citegraph by the matched work (:mod:`loaders.refmatch`). For the most co-cited
pairs of works of each sample this prints a Markdown table: citegraph's count, bibliometrix's count for the
pair of labels of the two works' most frequent strings, and the reason for every difference::

    python benchmarks/bibliometrix_crosscheck.py --data ../shared/data --top 12 > var/crosscheck.md

(``docs/cocitation.md`` holds its output.)
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loaders import _database_exports, scopus, wos
from loaders.citedrefs import bibliometrix_label
from loaders.refmatch import collapse


def _short(label: str, width: int = 48) -> str:
    label = label.strip()
    return label if len(label) <= width else label[: width - 1] + "…"


def crosscheck(name: str, module: Any, path: Path, top: int) -> list[str]:
    records: list[Any] = []
    rejects: list[Any] = []
    for file in _database_exports.input_files(path, module.SUFFIXES):
        module._read_file(file, records, rejects)
    _, _, works = _database_exports.assemble_with_matching(name, "x", records, rejects, by_title=module is scopus)
    matching = works.matching
    label_pairs: Counter[frozenset[str]] = Counter()
    work_pairs: Counter[frozenset[int]] = Counter()
    label_works: dict[str, set[int]] = {}
    for record in records:
        labels = {label for ref in record.references if (label := bibliometrix_label(ref.raw))}
        found = {matching.group_of[raw] for ref in record.references if (raw := collapse(ref.raw)) in matching.group_of}
        for ref in record.references:
            raw = collapse(ref.raw)
            if (label := bibliometrix_label(ref.raw)) and raw in matching.group_of:
                label_works.setdefault(label, set()).add(matching.group_of[raw])
        label_pairs.update(frozenset(p) for p in itertools.combinations(sorted(labels), 2))
        work_pairs.update(frozenset(p) for p in itertools.combinations(sorted(found), 2))

    def label_of(number: int) -> str:
        return bibliometrix_label(matching.groups[number].representative.raw) or ""

    def reason(number: int) -> str:
        group = matching.groups[number]
        labels = sorted({label for raw in group.strings if (label := bibliometrix_label(raw))})
        parts = []
        if len(labels) > 1:
            shown = ", ".join(f"`{_short(x)}`" for x in labels)
            parts.append(f"citegraph joins {len(labels)} bibliometrix labels of one work ({shown})")
        for label in labels:
            others = label_works.get(label, set()) - {number}
            if others:
                pages = sorted(
                    f"{g.representative.volume}:{g.representative.page}" for g in (matching.groups[o] for o in others)
                )
                parts.append(
                    f"bibliometrix's `{label.strip()}` also names {len(others)} other work(s) ({', '.join(pages)})"
                )
        return "; ".join(parts)

    lines = [
        f"**{name}**",
        "",
        "| work A | work B | citegraph | bibliometrix | why they differ |",
        "|---|---|---:|---:|---|",
    ]
    ranked = sorted(work_pairs.items(), key=lambda kv: (-kv[1], sorted(kv[0])))[:top]
    for pair, count in ranked:
        a, b = sorted(pair)
        bx = label_pairs.get(frozenset((label_of(a), label_of(b))), 0)
        why = "" if bx == count else "; ".join(x for x in (reason(a), reason(b)) if x)
        la, lb = matching.groups[a].label, matching.groups[b].label
        lines.append(f"| {la} | {lb} | {count} | {bx} | {why or ('—' if bx == count else 'see the report')} |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    data = Path(args.data) / "formats"
    out: list[str] = []
    for name, module, path in (
        ("WoS savedrecs.txt", wos, data / "wos" / "savedrecs.txt"),
        ("Scopus (scopus_sample.csv + scopus_testing.csv.scopus)", scopus, data / "scopus"),
    ):
        out += crosscheck(name, module, path, args.top)
    print("\n".join(out))


if __name__ == "__main__":
    main()
