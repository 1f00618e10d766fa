"""Scopus CSV exports -> papers, authors, and citations from their reference lists.

``citegraph ingest scopus PATH`` (a file, a folder searched for ``.csv``/``.scopus``, gzipped or
not, or a quoted glob). The CSV has a header row of column names (a UTF-8 byte-order mark is
skipped) and one record per row; values with commas, quotes or line breaks are quoted. Both column
sets of the samples are read: the current one (with "Author full names", "Funding Texts", …) and
the older one. Columns used:

=========================  ================================================================================
column                     becomes
=========================  ================================================================================
``DOI``                    ``Paper.doi`` (lower-cased) and the key ``doi:<DOI>``
``EID``                    ``scopus:<EID>`` (``scopus:2-s2.0-85045031181``): the key when there is no DOI,
                           else an ``Alias``
``Title``                  ``title``
``Abstract``               ``abstract`` ("[No abstract available]" is null)
``Year``                   ``year`` (an integer; other text is passed on and rejected by validation)
``Source title``           ``venue``
``Author full names``      authors ("Last, First (id)" turned into "First Last" before
                           :func:`loaders.ids.author_key`); when absent or empty, ``Authors``
                           ("Last I.", turned into "I. Last"; "[No author name available]" is none)
``Affiliations``           ``Institution`` + ``AFFILIATION``, ``Country`` + ``IN_COUNTRY``
                           (:func:`loaders.affiliations.scopus_affiliations`)
``References``             cited references (:func:`loaders.citedrefs.split_scopus_references`, either
                           format), resolved to the export's records by DOI, then by first author + year
                           + volume + first page (``Authors``/``Year``/``Volume``/``Page start``), then by
                           title with the same year and first author; the rest are stubs (DOI, else
                           ``ref:<key>``, with the parsed ``title`` and ``year``); ``CITES {dataset="scopus"}``
``Author Keywords``        ``Keyword {kind="author"}``, ``Index Keywords`` ``Keyword {kind="index"}`` (``;``-
                           separated) with ``HAS_KEYWORD`` (:mod:`loaders.keywords`)
=========================  ================================================================================

Origins are ``<file>:<line>`` of the row's first line. Rejected here: a row with neither DOI nor
EID, a row with a value that is not UTF-8, a row with another number of values than the header
(the file ends inside it, or a quote is missing) (``Paper``); a file whose header has no ``Title``
and neither ``EID`` nor ``DOI`` column: no Scopus export (``file``). The rest: :mod:`loaders._database_exports`.
"""

from __future__ import annotations

import csv
import gzip
import io
import logging
import re
import zlib
from pathlib import Path

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.validate import preview
from loaders._common import GZIP_MAGIC, integer_or_as_is, origin, text_or_null
from loaders._database_exports import CitationReport, ExportRecord, load_export, reference_report
from loaders.affiliations import scopus_affiliations
from loaders.citedrefs import RecordFacts, canonical_dois, initials_first, parse_scopus, split_scopus_references
from loaders.ids import SCOPUS_PREFIX
from loaders.keywords import AUTHOR, INDEX, split_keywords
from loaders.refmatch import Thesaurus

log = logging.getLogger(__name__)

SOURCE = "scopus"  # the registry name; a batch is named "scopus:<path name>"
DATASET = "scopus"  # Paper.dataset and CITES.dataset
SUFFIXES = (".csv", ".csv.gz", ".scopus", ".scopus.gz")
FILE_TABLE = "file"  # Reject.table of a file that is no Scopus export
NO_AUTHOR = "[No author name available]"
NO_ABSTRACT = "[No abstract available]"
FIELD_LIMIT = 1 << 28  # csv's default 131,072 characters is less than a long References value

_SCOPUS_AUTHOR_ID = re.compile(r"\s*\(\d+\)")  # "Liu, Fengyuan (60410297700)"
_SURROGATE = re.compile(r"[\udc80-\udcff]")  # a byte that was not UTF-8, kept by surrogateescape


def load(path: Path) -> GraphBatch:
    """Parse Scopus CSV exports (see the module docstring) into a batch named ``scopus:<path name>``."""
    return load_with_report(path)[0]


def load_with_report(path: Path, *, thesaurus: Thesaurus | None = None) -> tuple[GraphBatch, CitationReport]:
    """:func:`load`, and how the references were resolved."""
    return load_export(
        path,
        source=SOURCE,
        dataset=DATASET,
        suffixes=SUFFIXES,
        read_file=_read_file,
        by_title=True,
        thesaurus=thesaurus,
    )


def _text_of(file: Path) -> str:
    """The file's text; bytes that are not UTF-8 kept as surrogates so that only their rows are rejected."""
    data = file.read_bytes()
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise IngestError(
                f"{file}: the gzip stream is damaged or truncated ({exc}); download the file again"
            ) from exc
    return data.decode("utf-8-sig", errors="surrogateescape")


def references(path: Path, *, thesaurus: Thesaurus | None = None) -> list[dict[str, object]]:
    """The works the cited references of the exports under ``path`` name (``citegraph references report``)."""
    return reference_report(
        path, source=SOURCE, suffixes=SUFFIXES, read_file=_read_file, by_title=True, thesaurus=thesaurus
    )


def _read_file(file: Path, records: list[ExportRecord], rejects: list[Reject]) -> None:
    text = _text_of(file)
    if not text.strip():  # an empty file: load_with_report warns
        return
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, FIELD_LIMIT))
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = [name.strip() for name in next(reader)]
        if "Title" not in header or not {"EID", "DOI"} & set(header):
            rejects.append(
                Reject(
                    FILE_TABLE,
                    origin(file, 1),
                    f"not a Scopus CSV export (header {preview(', '.join(header[:6]))}: no Title, EID or DOI column); "
                    "export CSV from Scopus with the citation information, or pass only the export files",
                )
            )
            return
        end = reader.line_num
        for row in reader:
            start, end = end + 1, reader.line_num
            if not any(value.strip() for value in row):
                continue
            _read_row(origin(file, start), header, row, records, rejects)
    finally:
        csv.field_size_limit(limit)


def _read_row(
    where: str, header: list[str], row: list[str], records: list[ExportRecord], rejects: list[Reject]
) -> None:
    if len(row) != len(header):
        rejects.append(
            Reject(
                "Paper",
                where,
                f"row has {len(row)} values, the header {len(header)}: the file ends inside this record "
                "(a cut-short download?) or a quote is missing; export the records again",
            )
        )
        return
    for name, value in zip(header, row):
        if bad := _SURROGATE.search(value):
            rejects.append(
                Reject(
                    "Paper",
                    where,
                    f"`{name}` is not UTF-8 (byte 0x{ord(bad.group()) - 0xDC00:02x}); save the export as UTF-8 "
                    "(Scopus writes UTF-8: export again rather than re-saving it in a spreadsheet)",
                )
            )
            return
    fields = {name: value.strip() for name, value in zip(header, row)}
    dois = canonical_dois([fields.get("DOI", "")])
    eid = fields.get("EID") or None
    ids = [*dois[:1], *([SCOPUS_PREFIX + eid] if eid else [])]
    if not ids:
        rejects.append(Reject("Paper", where, "row has neither DOI nor EID; export with the EID column included"))
        return
    year = integer_or_as_is(fields.get("Year"))
    names = _authors(fields)
    references, current = split_scopus_references(fields.get("References", ""))
    title = text_or_null(fields.get("Title"))
    abstract = fields.get("Abstract")
    records.append(
        ExportRecord(
            origin=where,
            ids=ids,
            title=title,
            abstract=None if abstract == NO_ABSTRACT else text_or_null(abstract),
            year=year,
            venue=text_or_null(fields.get("Source title")),
            venue_abbrev=text_or_null(fields.get("Abbreviated Source Title")),
            authors=[full for _, full in names],
            facts=RecordFacts(
                key=ids[0],
                dois=dois,
                first_author=names[0][0] if names else None,
                year=year if isinstance(year, int) else None,
                volume=fields.get("Volume") or None,
                page=fields.get("Page start") or None,
                sources=tuple(s for s in (fields.get("Source title"), fields.get("Abbreviated Source Title")) if s),
                title=title if isinstance(title, str) else None,
            ),
            references=[parse_scopus(raw, current=current) for raw in references],
            keywords=[
                *((AUTHOR, term) for term in split_keywords(fields.get("Author Keywords"))),
                *((INDEX, term) for term in split_keywords(fields.get("Index Keywords"))),
            ],
            affiliations=scopus_affiliations(fields.get("Affiliations")),
        )
    )


def _authors(fields: dict[str, str]) -> list[tuple[str, str]]:
    """``(as written, "First Last")`` per author, from "Author full names" else "Authors"."""
    full = fields.get("Author full names", "")
    if full:
        names = [_SCOPUS_AUTHOR_ID.sub("", name).strip() for name in full.split(";")]
        out = []
        for name in filter(None, names):
            last, comma, first = name.partition(",")
            out.append((name, f"{first.strip()} {last.strip()}".strip() if comma else name))
        return out
    short = fields.get("Authors", "")
    if not short or short.startswith(NO_AUTHOR):
        return []
    names = short.split(";") if ";" in short else short.split(", ")
    return [(name.strip(), initials_first(name.strip())) for name in names if name.strip()]


__all__ = ["DATASET", "SOURCE", "SUFFIXES", "load", "load_with_report", "references"]
