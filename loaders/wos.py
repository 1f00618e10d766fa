"""Web of Science exports -> papers, authors, and citations from their cited references.

``citegraph ingest wos PATH`` (a file, a folder searched for ``.txt``/``.ciw``/``.tsv``/``.bib``,
gzipped or not, or a quoted glob). Three export formats, told apart by their first non-blank line (a
UTF-8 byte-order mark is skipped):

* **Plain text** ("Plain text file", also EndNote's ``.ciw``): a header ``FN Clarivate Analytics
  Web of Science`` (or ``FN Thomson Reuters Web of Science™``) and ``VR 1.0``; then records, each
  from ``PT`` to ``ER``, one field per two-letter tag, a value continued on lines indented by
  three spaces (multi-valued fields ``AU``, ``AF``, ``CR`` hold one value per line); ``EF`` ends
  the file;
* **Tab-delimited** ("Tab delimited file"): a header row of the tags (``PT AU BA … UT …``), then
  one record per row, ``"; "`` between the values of ``AU``, ``AF``, ``CR``;
* **BibTeX** ("BibTeX"): ``@article{ WOS:…,`` entries whose fields are read as the tags below
  (:data:`BIBTEX_TAGS`: ``Unique-ID`` = ``UT``, ``Author`` = ``AF``, ``Journal``/``Booktitle`` = ``SO``,
  ``Journal-ISO`` = ``JI``, ``Pages`` = ``BP``-…, ``Cited-References`` = ``CR``, one reference per line,
  LaTeX escapes such as ``{[}`` and ``\\_`` undone and each reference's closing full stop dropped).

Each record becomes (see :mod:`loaders._database_exports` for the tables):

==========  =====================================================================================
tag         becomes
==========  =====================================================================================
``DI``      ``Paper.doi`` (lower-cased) and the key ``doi:<DI>``
``UT``      ``wos:<UT without "WOS:">`` (``wos:000454757800001``, ``wos:A1979GV55600001``): the key
            when there is no DI, else an ``Alias``
``TI``      ``title`` (continuation lines joined with a space)
``AB``      ``abstract``
``PY``      ``year`` (an integer; else the year in ``EA``, the early-access date; other text is
            passed on and rejected by validation with the record's origin)
``SO``      ``venue``
``AF``      authors, "Last, First" turned into "First Last" before :func:`loaders.ids.author_key`;
            ``AU`` ("Last, Initials") when there is no ``AF``
``C1``      ``Institution`` + ``AFFILIATION``, ``Country`` + ``IN_COUNTRY`` (:mod:`loaders.affiliations`:
            the institution is the first part of each address, the country its last)
``CR``      cited references (:mod:`loaders.citedrefs`), resolved to the export's records by DOI,
            then by first author + year + volume + first page against ``AU``/``PY``/``VL``/``BP``
            (``J9``/``JI``/``SO`` break ties); the rest are stubs (DOI, else ``ref:<key>``);
            ``CITES {dataset="wos"}``
``DE``      author keywords, ``ID`` Keywords Plus (``;``-separated, continuation lines joined with a
            space): ``Keyword {kind="author"|"plus"}`` and ``HAS_KEYWORD`` (:mod:`loaders.keywords`)
==========  =====================================================================================

Origins are ``<file>:<line>`` of the record's first line (``PT`` line, or its row). Rejected here:
a record with neither ``UT`` nor ``DI``, a record with a line that is not UTF-8, a record the file
ends inside (no ``ER``: a cut-short download), a row with another number of fields than the header
(``Paper``); a line outside any record that is not part of the header (``line``); a file that is
neither format (``file``). The rest: :mod:`loaders._database_exports`.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graph.errors import Reject
from graph.ingest import GraphBatch
from graph.validate import preview
from loaders._common import integer_or_as_is, iter_raw_lines, origin, text_or_null
from loaders._database_exports import CitationReport, ExportRecord, load_export, reference_report
from loaders.affiliations import split_wos_addresses, wos_addresses
from loaders.citedrefs import RecordFacts, canonical_dois, parse_wos
from loaders.ids import WOS_PREFIX
from loaders.keywords import AUTHOR, PLUS, split_keywords
from loaders.refmatch import Thesaurus

log = logging.getLogger(__name__)

SOURCE = "wos"  # the registry name; a batch is named "wos:<path name>"
DATASET = "wos"  # Paper.dataset and CITES.dataset
SUFFIXES = (".txt", ".txt.gz", ".ciw", ".ciw.gz", ".tsv", ".tsv.gz", ".bib", ".bib.gz")
LINE_TABLE = "line"  # Reject.table of a line outside any record
FILE_TABLE = "file"  # Reject.table of a file that is no Web of Science export
LIST_TAGS = frozenset({"AU", "AF", "CR"})  # one value per line (plain text) or "; "-separated (tab-delimited)
BOM = b"\xef\xbb\xbf"

_TAG_LINE = re.compile(r"([A-Z][A-Z0-9])(?: (.*))?")
_UT_PREFIX = re.compile(r"^(?:WOS|ISI):", re.IGNORECASE)
_YEAR = re.compile(r"\b(\d{4})\b")


def load(path: Path) -> GraphBatch:
    """Parse Web of Science exports (see the module docstring) into a batch named ``wos:<path name>``."""
    return load_with_report(path)[0]


def load_with_report(path: Path, *, thesaurus: Thesaurus | None = None) -> tuple[GraphBatch, CitationReport]:
    """:func:`load`, and how the cited references were resolved."""
    return load_export(
        path,
        source=SOURCE,
        dataset=DATASET,
        suffixes=SUFFIXES,
        read_file=_read_file,
        by_title=False,
        thesaurus=thesaurus,
    )


def references(path: Path, *, thesaurus: Thesaurus | None = None) -> list[dict[str, object]]:
    """The works the cited references of the exports under ``path`` name (``citegraph references report``)."""
    return reference_report(
        path, source=SOURCE, suffixes=SUFFIXES, read_file=_read_file, by_title=False, thesaurus=thesaurus
    )


def _read_file(file: Path, records: list[ExportRecord], rejects: list[Reject]) -> None:
    lines = iter_raw_lines(file)
    first = next(lines, None)
    if first is None or (not first.strip() and all(not line.strip() for line in lines)):
        return  # an empty file, or blank lines only: load_with_report warns (docs/data.md, "An empty input")
    first = first.removeprefix(BOM)
    skipped = 0  # blank lines before the first one (a BibTeX export starts with one)
    while not first.strip():
        following = next(lines, None)
        if following is None:
            return
        first, skipped = following, skipped + 1
    if first.lstrip().startswith(b"@"):
        _read_bibtex(file, first, lines, skipped, records, rejects)
    elif first.startswith((b"FN ", b"PT ")) or first in (b"FN", b"PT"):
        _read_tagged(file, first, lines, records, rejects)
    elif first.startswith(b"PT\t"):
        _read_tab_delimited(file, first, lines, records, rejects)
    else:
        what = (
            "UTF-16 text"
            if first.startswith((b"\xff\xfe", b"\xfe\xff"))
            else preview(first[:60].decode("utf-8", "replace"))
        )
        rejects.append(
            Reject(
                FILE_TABLE,
                origin(file, 1),
                f"not a Web of Science export (it starts with {what}); export 'Plain text file', "
                "'Tab delimited file' (UTF-8) or 'BibTeX' from Web of Science, or pass only the export files",
            )
        )


# --- plain text -------------------------------------------------------------------------------


@dataclass
class _Pending:
    """A record being read: its fields and the first problem found in it."""

    start: int
    fields: dict[str, list[str]] = field(default_factory=dict)
    problem: str | None = None


def _read_tagged(
    file: Path, first: bytes, rest: Iterator[bytes], records: list[ExportRecord], rejects: list[Reject]
) -> None:
    record: _Pending | None = None
    tag: str | None = None
    for number, raw in enumerate(_chain(first, rest), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problem = f"line {number} is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
            if record is not None:
                record.problem = record.problem or problem
            else:
                rejects.append(Reject(LINE_TABLE, origin(file, number), f"{problem}; save the export as UTF-8"))
            continue
        if not text.strip():
            continue
        if text.startswith("   "):  # a continuation of the last tag
            if record is not None and tag is not None:
                record.fields[tag].append(text.strip())
            else:
                rejects.append(
                    Reject(
                        LINE_TABLE, origin(file, number), f"continuation line {preview(text.strip())} outside a record"
                    )
                )
            continue
        match = _TAG_LINE.fullmatch(text.rstrip())
        if match is None:
            problem = f"line {number} {preview(text)} is neither a field (a two-letter tag and a space) nor a continuation (three spaces)"
            if record is not None:
                record.problem = record.problem or problem
            else:
                rejects.append(Reject(LINE_TABLE, origin(file, number), problem))
            continue
        tag, value = match.group(1), (match.group(2) or "").strip()
        if tag == "PT":
            if record is not None:
                _finish(file, record, records, rejects, ended=False)
            record = _Pending(number, {"PT": [value]})
        elif tag == "ER":
            if record is None:
                rejects.append(
                    Reject(LINE_TABLE, origin(file, number), "ER (end of record) without a PT line before it")
                )
            else:
                _finish(file, record, records, rejects, ended=True)
            record, tag = None, None
        elif record is None:
            if tag not in ("FN", "VR", "EF"):
                rejects.append(
                    Reject(
                        LINE_TABLE, origin(file, number), f"field {tag} outside a record (records run from PT to ER)"
                    )
                )
            tag = None
        else:
            record.fields.setdefault(tag, []).append(value)
    if record is not None:
        _finish(file, record, records, rejects, ended=False)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _finish(file: Path, record: _Pending, records: list[ExportRecord], rejects: list[Reject], *, ended: bool) -> None:
    where = origin(file, record.start)
    if not ended:
        rejects.append(
            Reject(
                "Paper",
                where,
                "record has no ER line: the file ends inside it or the next PT begins before it ends "
                "(a cut-short download?); export the records again",
            )
        )
    elif record.problem is not None:
        rejects.append(Reject("Paper", where, f"record: {record.problem}; save the export as UTF-8 and check the line"))
    else:
        _add_record(where, {tag: values for tag, values in record.fields.items()}, records, rejects)


# --- tab-delimited ----------------------------------------------------------------------------


def _read_tab_delimited(
    file: Path, first: bytes, rest: Iterator[bytes], records: list[ExportRecord], rejects: list[Reject]
) -> None:
    header = [name.strip() for name in first.decode("utf-8", "replace").split("\t")]
    for number, raw in enumerate(rest, start=2):
        if not raw.strip():
            continue
        where = origin(file, number)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            rejects.append(
                Reject(
                    "Paper",
                    where,
                    f"row is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "export 'Tab delimited file' as UTF-8",
                )
            )
            continue
        values = text.split("\t")
        while len(values) > len(header) and not values[-1].strip():  # exports end rows with a tab
            values.pop()
        if len(values) != len(header):
            rejects.append(
                Reject(
                    "Paper",
                    where,
                    f"row has {len(values)} fields, the header {len(header)}: the file ends inside this row "
                    "(a cut-short download?) or a value holds a tab; export the records again",
                )
            )
            continue
        fields: dict[str, list[str]] = {}
        for tag, value in zip(header, values):
            value = value.strip()
            if value:
                fields[tag] = [v.strip() for v in value.split("; ") if v.strip()] if tag in LIST_TAGS else [value]
        _add_record(where, fields, records, rejects)


# --- BibTeX ----------------------------------------------------------------------------------

# A BibTeX field of Web of Science's export -> the tag of the plain-text export it holds.
BIBTEX_TAGS = {
    "unique-id": "UT",
    "doi": "DI",
    "title": "TI",
    "abstract": "AB",
    "year": "PY",
    "journal": "SO",
    "booktitle": "SO",
    "journal-iso": "JI",
    "volume": "VL",
    "pages": "BP",
    "early-access-date": "EA",
    "author": "AF",
    "cited-references": "CR",
}
_BIBTEX_ENTRY = re.compile(r"\s*@\s*(\w+)\s*\{\s*([^,\s]*)\s*,")
_BIBTEX_FIELD = re.compile(r"\s*([A-Za-z][\w-]*)\s*=\s*")
# LaTeX escapes of the export: {[} and {]} for brackets, a backslash before & _ % # $ { }.
_BIBTEX_ESCAPES = ((r"{[}", "["), (r"{]}", "]"), ("\\&", "&"), ("\\_", "_"), ("\\%", "%"), ("\\#", "#"), ("\\$", "$"))


def _unescape(value: str) -> str:
    for escaped, plain in _BIBTEX_ESCAPES:
        value = value.replace(escaped, plain)
    return value


def _read_bibtex(
    file: Path, first: bytes, rest: Iterator[bytes], skipped: int, records: list[ExportRecord], rejects: list[Reject]
) -> None:
    """A BibTeX export ("BibTeX" in Web of Science's export menu): ``@article{ WOS:…,`` entries of
    ``Field = {value},`` lines, a value continued on lines indented by three spaces. The fields are
    read as their plain-text tags (:data:`BIBTEX_TAGS`); ``Cited-References`` holds one reference per
    line, each ending with a full stop that the plain-text ``CR`` does not have, ``{[}`` for ``[``."""
    text_lines: list[tuple[int, str]] = []
    for number, raw in enumerate(_chain(first, rest), start=1 + skipped):
        try:
            text_lines.append((number, raw.decode("utf-8")))
        except UnicodeDecodeError as exc:
            rejects.append(
                Reject(
                    FILE_TABLE,
                    origin(file, number),
                    f"line {number} is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "export BibTeX again, as UTF-8",
                )
            )
            return
    text = "\n".join(line for _, line in text_lines)
    starts = [0]
    for _, line in text_lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    numbers = [number for number, _ in text_lines]

    def line_at(offset: int) -> int:
        return numbers[max(0, bisect.bisect_right(starts, offset) - 1)]

    position = 0
    while (at := text.find("@", position)) >= 0:
        entry = _BIBTEX_ENTRY.match(text, at)
        where = origin(file, line_at(at))
        if entry is None:
            rejects.append(
                Reject("Paper", where, "an '@' that starts no BibTeX entry ('@type{key,'); the line is skipped")
            )
            position = at + 1
            continue
        fields, end, problem = _bibtex_fields(text, entry.end())
        position = end
        if problem is not None:
            rejects.append(
                Reject("Paper", where, f"BibTeX entry {entry.group(2)!r}: {problem}; export the records again")
            )
            continue
        tagged: dict[str, list[str]] = {}
        for name, value in fields:
            tag = BIBTEX_TAGS.get(name.lower())
            if tag is None or tag in tagged:
                continue
            if tag == "CR":
                tagged[tag] = [ref.strip().removesuffix(".") for ref in value.split("\n") if ref.strip()]
            elif tag == "AF":
                tagged[tag] = [name.strip() for name in " ".join(value.split()).split(" and ") if name.strip()]
            elif tag == "BP":
                tagged[tag] = [value.split("-")[0].strip()]
            else:
                tagged[tag] = [" ".join(value.split())]
        _add_record(where, tagged, records, rejects)


def _bibtex_fields(text: str, position: int) -> tuple[list[tuple[str, str]], int, str | None]:
    """The ``name = {value}`` (or ``"value"``, or a bare number) fields of one entry from ``position``, the
    offset after its closing brace, and a problem (an unclosed brace) or None. Values are unescaped; their
    line breaks kept (``Cited-References`` is one reference per line)."""
    fields: list[tuple[str, str]] = []
    length = len(text)
    while True:
        while position < length and text[position] in " \t\r\n,":
            position += 1
        if position >= length:
            return fields, position, "the file ends inside the entry (a cut-short download?)"
        if text[position] == "}":
            return fields, position + 1, None
        match = _BIBTEX_FIELD.match(text, position)
        if match is None:
            following = text.find("\n@", position)  # resume at the next entry
            return fields, following if following >= 0 else length, f"{text[position : position + 30]!r} is no field"
        name, position = match.group(1), match.end()
        if position < length and text[position] in '{"':
            close = "}" if text[position] == "{" else '"'
            depth, start = 0, position
            while position < length:
                char = text[position]
                if char == "\\":
                    position += 2
                    continue
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                if (close == "}" and depth == 0) or (close == '"' and char == '"' and position > start):
                    break
                position += 1
            if position >= length:
                return fields, position, f"field {name} is never closed (a cut-short download?)"
            value = text[start + 1 : position]
            position += 1
        else:
            bare = re.match(r"[^,}\s]*", text[position:])
            value = bare.group(0) if bare else ""
            position += len(value)
        lines = [line.strip() for line in _unescape(value).split("\n")]
        fields.append((name, "\n".join(lines)))


# --- one record -------------------------------------------------------------------------------


def _text(fields: dict[str, list[str]], tag: str) -> str | None:
    value = text_or_null(" ".join(fields.get(tag, [])))
    return value if isinstance(value, str) else None


def _first_last(name: str) -> str:
    """``"Toh, Ming Liang"`` -> ``"Ming Liang Toh"``; a name without a comma as it is."""
    last, comma, first = name.partition(",")
    return f"{first.strip()} {last.strip()}".strip() if comma else name.strip()


def _add_record(where: str, fields: dict[str, list[str]], records: list[ExportRecord], rejects: list[Reject]) -> None:
    ut = _text(fields, "UT")
    ut = _UT_PREFIX.sub("", ut).strip() if ut else None
    dois = canonical_dois([_text(fields, "DI") or ""])
    ids = [*dois[:1], *([WOS_PREFIX + ut] if ut else [])]
    if not ids:
        rejects.append(
            Reject(
                "Paper",
                where,
                "record has neither UT (accession number) nor DI (DOI); export the 'Full Record', which includes UT",
            )
        )
        return
    year = integer_or_as_is(_text(fields, "PY"))
    if year is None and (early := _YEAR.search(_text(fields, "EA") or "")):
        year = int(early.group(1))
    authors = fields.get("AF") or fields.get("AU") or []
    short_names = fields.get("AU") or fields.get("AF") or []  # AU: "Aria, M", the form cited references use
    first_author = short_names[0] if short_names else None
    records.append(
        ExportRecord(
            origin=where,
            ids=ids,
            title=_text(fields, "TI"),
            abstract=_text(fields, "AB"),
            year=year,
            venue=_text(fields, "SO"),
            venue_abbrev=_text(fields, "J9") or _text(fields, "JI"),
            authors=[_first_last(name) for name in authors],
            facts=RecordFacts(
                key=ids[0],
                dois=dois,
                first_author=first_author,
                year=year if isinstance(year, int) else None,
                volume=_text(fields, "VL"),
                page=_text(fields, "BP"),
                sources=tuple(s for s in (_text(fields, t) for t in ("J9", "JI", "SO")) if s),
                title=_text(fields, "TI"),
            ),
            references=[parse_wos(raw) for raw in fields.get("CR", [])],
            keywords=[
                *((AUTHOR, term) for term in split_keywords(_text(fields, "DE"))),
                *((PLUS, term) for term in split_keywords(_text(fields, "ID"))),
            ],
            affiliations=[a for value in fields.get("C1", []) for a in wos_addresses(split_wos_addresses(value))],
        )
    )


__all__ = ["DATASET", "SOURCE", "SUFFIXES", "load", "load_with_report", "references"]
