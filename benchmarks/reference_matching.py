"""Cost and quality of matching cited-reference strings as works (:mod:`loaders.refmatch`).

Synthetic works (first author, year, journal, volume, first page, DOI for some) are cited by reference
strings in WoS ``CR`` style with planted variants whose truth is known: the author's surname misspelt
(one edit), truncated as WoS truncates it (``COSTADEB.O``), with its particle dropped or glued on; the
journal abbreviated (J9 style) or in full; the year off by one; the DOI present or absent; and, as the
hard negatives, other works of the same journal volume by the same author (different first pages).

Measured: wall time and peak resident memory of :func:`loaders.refmatch.match_references`, and the
precision and recall of its joins over pairs of distinct strings (a pair is a join when both strings
are in one predicted work; it is right when both come from one synthetic work)::

    nice python benchmarks/reference_matching.py --strings 1000000 --works 300000 \\
        --out docs/results/reference_matching.json

``--samples`` measures instead the effect on the real WoS (plain text and BibTeX) and Scopus samples (works
before = one per reference key, after = one per matched work; co-cited pairs before and after), and on the
Crossref and unarXive samples (references without an id keyed by their fields, after; unresolved before)::

    python benchmarks/reference_matching.py --samples --out docs/results/reference_matching_samples.json
"""

from __future__ import annotations

import argparse
import itertools
import random
import resource
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.run_record import commit, run_record, write_json
from loaders.citedrefs import parse_wos
from loaders.refmatch import match_references

# Journals as (J9 abbreviation, full title): the abbreviation is what WoS writes, the title what Scopus writes.
JOURNALS = [
    ("PHYS REV D", "Physical Review D"),
    ("PHYS REV LETT", "Physical Review Letters"),
    ("J INFORMETR", "Journal of Informetrics"),
    ("SCIENTOMETRICS", "Scientometrics"),
    ("J AM SOC INF SCI TEC", "Journal of the American Society for Information Science and Technology"),
    ("ANN PHYS-BERLIN", "Annalen der Physik Berlin"),
    ("J OPT SOC AM", "Journal of the Optical Society of America"),
    ("APPL PHYS LETT", "Applied Physics Letters"),
    ("NUCL PHYS B", "Nuclear Physics B"),
    ("J CHEM PHYS", "Journal of Chemical Physics"),
    ("RES POLICY", "Research Policy"),
    ("J BUS RES", "Journal of Business Research"),
    ("CANCER RES", "Cancer Research"),
    ("NEW ENGL J MED", "New England Journal of Medicine"),
    ("P NATL ACAD SCI USA", "Proceedings of the National Academy of Sciences of the United States of America"),
    ("IEEE T PATTERN ANAL", "IEEE Transactions on Pattern Analysis and Machine Intelligence"),
]
SYLLABLES = [
    "ka",
    "ro",
    "mi",
    "ten",
    "bau",
    "re",
    "gard",
    "lo",
    "tsch",
    "fe",
    "dor",
    "ov",
    "sen",
    "im",
    "bert",
    "ma",
    "zet",
    "gin",
    "burg",
    "ri",
    "card",
    "win",
    "ter",
    "so",
    "nu",
    "val",
    "do",
    "ber",
    "stein",
    "ha",
]
PARTICLES = ["de", "van", "von", "di"]


def synthetic_works(n: int, rng: random.Random) -> list[dict[str, Any]]:
    """``n`` works; every fifth author writes several works in one volume (the pages tell them apart)."""
    works: list[dict[str, Any]] = []
    while len(works) < n:
        surname = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        particle = rng.choice(PARTICLES) if rng.random() < 0.08 else None
        initials = "".join(rng.choice("ABCDEFGHJKLMNPRSTW") for _ in range(rng.randint(1, 2)))
        journal = rng.randrange(len(JOURNALS))
        year = rng.randint(1950, 2024)
        volume = str(rng.randint(1, 400))
        for _ in range(rng.randint(2, 4) if rng.random() < 0.2 else 1):  # the same volume, other pages
            works.append(
                {
                    "surname": surname,
                    "particle": particle,
                    "initials": initials,
                    "journal": journal,
                    "year": year,
                    "volume": volume,
                    "page": str(rng.randint(1, 3000)),
                    "doi": f"10.{rng.randint(1000, 9999)}/x{len(works)}" if rng.random() < 0.4 else None,
                }
            )
    return works[:n]


def _misspell(word: str, rng: random.Random) -> str:
    if len(word) < 6:
        return word
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + rng.choice("aeiou") + word[i + 1 :]


def cite(work: dict[str, Any], rng: random.Random) -> str:
    """One reference string of ``work``, with variants planted at realistic rates."""
    surname = work["surname"]
    if work["particle"]:
        surname = rng.choice([f"{work['particle']} {surname}", work["particle"] + surname, surname])
    name = f"{surname.upper()} {work['initials']}"
    roll = rng.random()
    if roll < 0.05:
        name = f"{_misspell(surname, rng).upper()} {work['initials']}"
    elif roll < 0.08 and len(surname.replace(" ", "")) > 8:
        name = f"{surname.replace(' ', '').upper()[:8]}.{work['initials'][0]}"  # WoS's truncation
    abbreviation, full = JOURNALS[work["journal"]]
    source = full if rng.random() < 0.15 else abbreviation
    year = work["year"] + (rng.choice((-1, 1)) if rng.random() < 0.03 else 0)
    text = f"{name}, {year}, {source}, V{work['volume']}, P{work['page']}"
    if work["doi"] and rng.random() < 0.6:
        text += f", DOI {work['doi']}"
    return text


def pair_scores(truth: dict[str, int], predicted: dict[str, int]) -> tuple[float, float, int, int]:
    """Precision and recall of joins over pairs of distinct strings, and the predicted and true pair counts."""

    def pairs(counter: Counter[Any]) -> int:
        return sum(n * (n - 1) // 2 for n in counter.values())

    both = pairs(Counter((truth[s], predicted[s]) for s in truth))
    joined = pairs(Counter(predicted[s] for s in truth))
    true = pairs(Counter(truth.values()))
    return (both / joined if joined else 1.0), (both / true if true else 1.0), joined, true


def synthetic(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    works = synthetic_works(args.works, rng)
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(works))]  # a few works cited often, most rarely
    chosen = rng.choices(range(len(works)), weights=weights, k=args.strings)
    truth: dict[str, int] = {}
    raws: list[str] = []
    for work in chosen:
        raw = cite(works[work], rng)
        truth.setdefault(raw, work)
        raws.append(raw)
    refs = [parse_wos(raw) for raw in raws]
    started = time.perf_counter()
    matching = match_references(refs)
    seconds = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    predicted = {raw: number for raw, number in matching.group_of.items()}
    precision, recall, joined, true = pair_scores(truth, predicted)
    cited_works = len(set(truth.values()))
    rows = [
        {"system": f"{args.strings:,} strings", "metric": "distinct strings", "value": len(truth)},
        {"system": f"{args.strings:,} strings", "metric": "works cited (truth)", "value": cited_works},
        {"system": f"{args.strings:,} strings", "metric": "works found", "value": len(matching.groups)},
        {"system": f"{args.strings:,} strings", "metric": "precision of joins", "value": round(precision, 4)},
        {"system": f"{args.strings:,} strings", "metric": "recall of joins", "value": round(recall, 4)},
        {"system": f"{args.strings:,} strings", "metric": "matching seconds", "value": round(seconds, 1)},
        {"system": f"{args.strings:,} strings", "metric": "peak RSS MiB (process)", "value": round(peak_mib)},
    ]
    return {
        "capability": "ingest",
        "kind": "quality",
        "title": "Cited references matched as works: synthetic strings with planted variants",
        "notes": [
            f"{args.works:,} synthetic works in {len(JOURNALS)} journals, cited {args.strings:,} times (Zipf-like, "
            "exponent 0.8); planted: misspelt surname 5%, WoS truncation 3%, particle dropped/glued, full journal "
            "title 15%, year off by one 3%, DOI on 40% of works and given in 60% of their strings, 20% of authors "
            "with 2-4 works in one volume (other pages: the hard negatives).",
            f"Pairs of distinct strings joined: {joined:,}; pairs that are one work: {true:,}. Peak RSS is the "
            "whole process (strings, parsed references and matching).",
        ],
        "tables": [{"title": None, "baselines": [], "served": None, "rows": rows}],
    }


def samples(args: argparse.Namespace) -> dict[str, Any]:
    from loaders import _database_exports, scopus, wos
    from loaders.citedrefs import reference_key
    from loaders.refmatch import collapse

    data = Path(args.data) / "formats"
    rows: list[dict[str, Any]] = []
    for name, module, path in (
        ("WoS savedrecs.txt", wos, data / "wos" / "savedrecs.txt"),
        ("WoS wos_sample.txt", wos, data / "wos" / "wos_sample.txt"),
        ("WoS wos_m.bib (BibTeX)", wos, data / "bibtex_ris" / "wos_m.bib"),
        ("Scopus (both samples)", scopus, data / "scopus"),
    ):
        records: list[Any] = []
        rejects: list[Any] = []
        for file in _database_exports.input_files(path, module.SUFFIXES):
            module._read_file(file, records, rejects)
        _, _, works = _database_exports.assemble_with_matching(name, "x", records, rejects, by_title=module is scopus)
        before_pairs: Counter[frozenset[str]] = Counter()
        after_pairs: Counter[frozenset[int]] = Counter()
        keys: set[str] = set()
        for record in records:
            old = {k for ref in record.references if (k := reference_key(ref.raw))}
            new = {
                works.matching.group_of[r]
                for ref in record.references
                if (r := collapse(ref.raw)) in works.matching.group_of
            }
            keys |= old
            before_pairs.update(frozenset(p) for p in itertools.combinations(sorted(old), 2))
            after_pairs.update(frozenset(p) for p in itertools.combinations(sorted(new), 2))
        joined = sum(1 for g in works.matching.groups if len(g.before()) > 1)
        split = sum(1 for n in Counter(k for g in works.matching.groups for k in g.before()).values() if n > 1)
        rows += [
            {"system": name, "metric": "works before (reference keys)", "value": len(keys)},
            {"system": name, "metric": "works after (matched)", "value": len(works.matching.groups)},
            {"system": name, "metric": "works joining several keys", "value": joined},
            {"system": name, "metric": "keys split into several works", "value": split},
            {"system": name, "metric": "co-cited pairs before", "value": len(before_pairs)},
            {"system": name, "metric": "co-cited pairs after", "value": len(after_pairs)},
        ]
    rows += free_form_rows(Path(args.data))
    return {
        "capability": "ingest",
        "kind": "quality",
        "title": "Cited references matched as works: the real WoS, Scopus, Crossref and unarXive samples, before and after",
        "notes": [
            "Before: one work per reference key (bibliometrix's label, case and punctuation folded); after: one "
            "per matched work (loaders.refmatch). Works resolved to a record of the export are counted once, as "
            "the record. Pairs: distinct co-cited pairs of works over the records of the export.",
            "Crossref and unarXive: references without a DOI (an id) that no title matches were not stored before; "
            "after, those whose fields (structured, or parsed from the string: loaders.refstrings) give author + year "
            "or volume + first page are keyed as works (ref:… stubs with their aliases); the rest stay unresolved.",
        ],
        "tables": [{"title": None, "baselines": [], "served": None, "rows": rows}],
    }


def free_form_rows(data: Path) -> list[dict[str, Any]]:
    """Crossref and unarXive: references without an id, before (unresolved) and after (keyed by their fields)."""
    from loaders import crossref, unarxive

    rows: list[dict[str, Any]] = []
    runs = (
        ("Crossref (formats/crossref)", lambda: crossref.load_with_report(data / "formats" / "crossref")),
        ("unarXive sample", lambda: unarxive.load_with_report(data / "unarxive" / "unarXive_data_sample_2022.tar.gz")),
    )
    for name, load in runs:
        batch, report = load()
        by_fields, unresolved = int(report.by_fields), int(report.unresolved)
        works = int(batch.nodes["Paper"]["id"].str.startswith("ref:").sum())
        rows += [
            {
                "system": name,
                "metric": "references without an id or title match (before: not stored)",
                "value": by_fields + unresolved,
            },
            {"system": name, "metric": "keyed as works by their fields (after)", "value": by_fields},
            {"system": name, "metric": "still unresolved (after)", "value": unresolved},
            {"system": name, "metric": "works they name (ref: stubs)", "value": works},
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strings", type=int, default=1_000_000)
    parser.add_argument("--works", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--samples", action="store_true", help="measure the real samples instead")
    parser.add_argument("--data", default="../shared/data", help="$CITEGRAPH_DATA (for --samples)")
    parser.add_argument("--note", help="a sentence on the machine's load, added to the record")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    report = samples(args) if args.samples else synthetic(args)
    record = {**report, **run_record("benchmarks/reference_matching.py", args), "commit": commit()}
    if args.note:
        record["notes"].append(args.note)
    path = write_json(args.out, record)
    print(path)
    for row in record["tables"][0]["rows"]:
        print(f"{row['system']:>24}  {row['metric']:<32} {row['value']}")


if __name__ == "__main__":
    main()
