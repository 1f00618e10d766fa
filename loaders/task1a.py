"""The shared task's folders (CL-SciSumm Task 1A): Task 1A inputs and runs, and the CL-SciSumm gold annotations.

A Task 1A folder holds one sub-folder per reference paper (RP)::

    DIR/<RP>/annotation/<RP>.csv        citances (Task 1A run format, Reference Offset/Text blank)
    DIR/<RP>/Reference_XML/<RP>.xml     the RP's sentences (<S sid=.. ssid=..>), parsed leniently

:func:`link_folder` fills ``Reference Offset`` (``'90','91'``) and ``Reference Text``
(``<S sid="90" ssid="12">...</S>``) of every row and writes ``RUN_DIR/<RP>.csv``. Each CSV is
written to a temporary file and renamed into place, so an interrupted run leaves whole files only.
A citance with no text, or an RP without a usable Reference_XML, gets an empty prediction and a
warning, never a crash.

The editions publish these CSVs with different columns: the 2018 test-set inputs have the eleven
of :data:`loaders.scisumm.TASK1A_COLUMNS`, except ``W99-0623``, whose last column is ``Reference
Citation`` instead of ``Discourse Facet``; the 2018 gold files add a run of unnamed columns and end
lines with CRLF; runs written from a pandas frame have the columns in alphabetical order, and some
lack ``Citation Marker`` and ``Citation Text Clean``. So a Task 1A CSV is read by column name
(:func:`read_task1a_table`): a BOM, CRLF, spaces around a header name and the ``Citation Number``
spelling of ``Citance Number`` are accepted, and only the columns a step uses are required
(:data:`LINK_COLUMNS` to link, :data:`SCORE_COLUMNS` to score). The run keeps the input's layout:
the same columns in the same order, the same line ends, every cell but the two it fills as it was;
``Reference Offset`` and ``Reference Text`` are appended when the input lacks them, since they are
the run's answer and the shared task's scorer reads them by name. Nothing else is added (no
``Discourse Facet``: that is Task 1B).

:func:`write_task_inputs` turns the CL-SciSumm 2018 training set (``annotation/<RP>.ann.txt``,
gold offsets filled) into such an input folder, and :func:`read_gold` reads its gold links, so
runs can be scored with :func:`gnn.linkage.scoring.score_task1a`.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandas as pd

from graph.errors import ConfigError, DataError
from loaders.scisumm import TASK1A_COLUMNS
from loaders.sentences import (
    XmlSentence,
    clean_text,
    decode_lenient,
    parse_annotation_line,
    parse_offsets,
    parse_sentence_xml,
)

log = logging.getLogger(__name__)

_S_ELEMENT = re.compile(r"<S\b[^>]*>(.*?)</S\s*>", re.IGNORECASE | re.DOTALL)
_ANY_TAG = re.compile(r"</?S\b[^>]*>", re.IGNORECASE)


def citance_text(field: str) -> str:
    """The plain text of a ``Citation Text`` field: the bodies of its ``<S ...>`` elements joined by a space.

    ``'<S sid ="39" ssid = "19">Under this ...</S><S sid ="40" ssid = "20">(1996), Och et al.</S>'``
    becomes ``"Under this ... (1996), Och et al."``. A field without ``<S>`` elements is taken as
    plain text with any stray ``<S ...>``/``</S>`` tag removed.
    """
    bodies = [clean_text(b) for b in _S_ELEMENT.findall(field)]
    bodies = [b for b in bodies if b]
    if bodies:
        return " ".join(bodies)
    return clean_text(_ANY_TAG.sub(" ", field))


CitanceKey = tuple[str, str, tuple[int, ...]]  # (RP, citing article key, citation offset sids)
_SSID = re.compile(r"""<S\s[^>]*?\bsid\s*=\s*["']?(\d+)["']?[^>]*?\bssid\s*=\s*["']?(\d+)""", re.IGNORECASE)


@dataclass(frozen=True)
class Reference:
    """An RP's sentences as read from its Reference_XML."""

    paper_id: str
    sentences: tuple[XmlSentence, ...]
    ssids: dict[int, int]  # sid -> ssid where the file gives one (for the Reference Text cells)

    def element(self, sid: int) -> str:
        """``<S sid="90" ssid="12">text</S>`` of sentence ``sid`` (as the shared task writes Reference Text)."""
        by_sid = {s.sid: s for s in self.sentences}
        ssid = f' ssid="{self.ssids[sid]}"' if sid in self.ssids else ""
        return f'<S sid="{sid}"{ssid}>{by_sid[sid].text}</S>'


def citing_key(name: str) -> str:
    """How a ``Citing Article`` is matched: no extension or ``-parscit`` suffix, lower case, ``_`` as ``-``."""
    stem = re.sub(r"\.(xml|txt)$", "", name.strip(), flags=re.IGNORECASE)
    stem = re.sub(r"-parscit\d*$", "", stem, flags=re.IGNORECASE)
    return stem.lower().replace("_", "-")


def citance_key(rp: str, citing_article: str, citation_offset: str) -> CitanceKey:
    """The key that identifies one citance across inputs, runs and gold files."""
    return (rp, citing_key(citing_article), tuple(parse_offsets(citation_offset)))


def read_reference(folder: Path) -> Reference | None:
    """The RP of ``folder`` (``Reference_XML/<RP>.xml``, else the only XML there); None when there is none."""
    xml_dir = folder / "Reference_XML"
    expected = xml_dir / f"{folder.name}.xml"
    found = [expected] if expected.is_file() else sorted(xml_dir.glob("*.xml")) if xml_dir.is_dir() else []
    if len(found) != 1:
        return None
    raw = found[0].read_bytes()
    parsed = parse_sentence_xml(raw)
    text, _ = decode_lenient(raw)
    ssids = {int(m.group(1)): int(m.group(2)) for m in _SSID.finditer(text)}
    return Reference(folder.name, tuple(parsed.sentences), ssids)


def rp_folders(root: Path) -> Iterator[Path]:
    """The RP sub-folders of a Task 1A folder, sorted by name."""
    if not Path(root).is_dir():
        raise ConfigError(f"{root} is not a folder; pass a CL-SciSumm folder with one sub-folder per reference paper")
    yield from sorted(p for p in Path(root).iterdir() if p.is_dir())


def format_offsets(sids: list[int]) -> str:
    """``[90, 91]`` -> ``'90','91'`` (the run format's Reference Offset)."""
    return ",".join(f"'{sid}'" for sid in sids)


def _write_atomic(path: Path, write: Callable[[str], object]) -> None:
    """Call ``write`` with a temporary file beside ``path``, then rename that file to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _frame_to_csv(frame: pd.DataFrame, path: str) -> None:
    frame.to_csv(path, index=False, encoding="utf-8", na_rep="")


# ---------------------------------------------------------------------------------------------
# Task 1A CSVs: read by column name, written back in their own layout

LINK_COLUMNS = ("Citance Number", "Reference Article", "Citing Article", "Citation Text")
"""What :func:`link_folder` needs of an input: which citance a row is, and its text."""

RUN_COLUMNS = ("Reference Offset", "Reference Text")
"""What a run fills in; appended to an input that lacks them (the shared task's scorer reads them by name)."""

SCORE_COLUMNS = ("Citing Article", "Citation Offset", "Reference Offset")
"""What :func:`read_run` needs of a run: the citance key and the predicted sentences."""

# Other spellings of a column name in published CL-SciSumm files. "Citation Number" heads the first
# record of P98-1081's annotation in the 2016, 2017 and 2018 training sets.
HEADER_SPELLINGS = {"Citation Number": "Citance Number"}


def _column_name(cell: str) -> str:
    """The column a header cell names: spaces around it dropped, another spelling replaced by the shared task's."""
    name = cell.strip()
    return HEADER_SPELLINGS.get(name, name)


def _loose(name: str) -> str:
    """A name compared without case, ``_`` or spacing: only to point at a near miss in an error message."""
    return re.sub(r"[\s_]+", " ", name).strip().casefold()


@dataclass
class Task1aTable:
    """One Task 1A CSV as written: its columns in file order, its rows, its line ends."""

    path: Path
    header: list[str]  # column names, stripped; "Citation Number" read as "Citance Number"; "" for unnamed ones
    rows: list[list[str]]  # every row as long as the header
    lines: list[int]  # the file line on which each row starts (for messages)
    line_end: str  # "\r\n" or "\n", as the header line ends

    def column(self, name: str) -> list[str]:
        """The cells of column ``name``; empty cells where the file has no such column."""
        if name not in self.header:
            return [""] * len(self.rows)
        index = self.header.index(name)
        return [row[index] for row in self.rows]

    def set_column(self, name: str, values: list[str]) -> None:
        """Replace the cells of column ``name``; a column the file lacks is appended after the last one."""
        if name not in self.header:
            self.header.append(name)
            for row in self.rows:
                row.append("")
        index = self.header.index(name)
        for row, value in zip(self.rows, values, strict=True):
            row[index] = value


def read_task1a_table(path: Path, required: tuple[str, ...] = ()) -> Task1aTable:
    """A Task 1A CSV of any edition's layout, read by column name; ``required`` names the columns the caller needs.

    UTF-8 with or without a BOM (bytes that are not UTF-8 are read as Windows-1252, with a warning),
    LF or CRLF line ends, fields quoted or not. Blank rows, and rows of empty cells, are skipped; a
    row shorter than the header is padded with empty cells, one longer is a :class:`DataError`
    unless the extra cells are empty. A file without a ``required`` column is a :class:`DataError`
    that names the file, the missing columns, the columns found and the fix.
    """
    path = Path(path)
    text, not_utf8 = decode_lenient(path.read_bytes())
    if not_utf8:
        log.warning("%s: %d bytes are not UTF-8; read as Windows-1252", path, not_utf8)
    records = csv.reader(io.StringIO(text, newline=""))
    try:
        cells = next(records, [])
        header = [_column_name(cell) for cell in cells]
        if not any(header):
            raise DataError(
                f"{path} has no header line; a Task 1A file starts with one naming its columns, such as "
                f"{','.join(TASK1A_COLUMNS)}"
            )
        _check_header(path, cells, header, required)
        rows, lines, last = [], [], records.line_num
        for record in records:
            first, last = last + 1, records.line_num
            if not any(cell.strip() for cell in record):
                continue  # a blank line, or the row of empty cells a spreadsheet leaves after the last
            if len(record) > len(header):
                if any(cell.strip() for cell in record[len(header) :]):
                    raise DataError(
                        f"{path} line {first}: {len(record)} fields, the header has {len(header)}; quote the "
                        'fields that hold a comma ("a, b"), or name the extra columns in the header'
                    )
                record = record[: len(header)]
            rows.append(record + [""] * (len(header) - len(record)))
            lines.append(first)
    except csv.Error as exc:
        raise DataError(
            f"{path} line {records.line_num}: not readable as CSV ({exc}); save it as comma-separated UTF-8 text"
        ) from exc
    end = text.find("\n")
    line_end = "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"
    return Task1aTable(path, header, rows, lines, line_end)


def _check_header(path: Path, cells: list[str], header: list[str], required: tuple[str, ...]) -> None:
    twice = [name for name in TASK1A_COLUMNS if header.count(name) > 1]  # which one would be meant?
    if twice:
        raise DataError(
            f"{path}: column(s) {', '.join(twice)} appear more than once in the header "
            f"({', '.join(c.strip() for c in cells)}); keep one of each"
        )
    missing = [name for name in required if name not in header]
    if not missing:
        return
    found = [cell.strip() for cell in cells if cell.strip()]
    unnamed = len(cells) - len(found)
    renames = [f"rename {cell!r} to {name!r}" for name in missing for cell in found if _loose(cell) == _loose(name)]
    raise DataError(
        f"{path}: not a Task 1A file, missing column(s) {', '.join(missing)} "
        f"(found: {', '.join(found)}{f' and {unnamed} unnamed' if unnamed else ''}); "
        + (f"{'; '.join(renames)}, or " if renames else "")
        + f"add the missing column(s) to the header; a Task 1A file needs {', '.join(required)} "
        f"and may have any of {', '.join(TASK1A_COLUMNS)}"
    )


def _csv_line(cells: list[str], line_end: str) -> str:
    buffer = io.StringIO()
    # "\r\n" as the terminator makes the writer quote a cell that holds either character
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)
    return buffer.getvalue()[:-2] + line_end


def write_task1a_table(table: Task1aTable, path: Path) -> None:
    """Write ``table`` to ``path`` in its own layout: its header, its rows, its line ends; UTF-8 without a BOM.

    No BOM because the shared task's scorer reads runs as Latin-1, where a BOM would become part of
    the first column's name. The file is written beside ``path`` and renamed into place.
    """
    content = "".join(_csv_line(cells, table.line_end) for cells in [table.header, *table.rows])
    _write_atomic(Path(path), lambda tmp: Path(tmp).write_text(content, encoding="utf-8", newline=""))


@dataclass(frozen=True)
class LinkReport:
    papers: int  # RP folders with an input CSV
    citances: int  # rows read
    linked: int  # rows that got at least one sentence
    warnings: int  # rows left empty (no text, no reference sentences)
    seconds: float

    def summary(self) -> str:
        return (
            f"linked {self.linked}/{self.citances} citances of {self.papers} reference papers "
            f"({self.warnings} left empty, see the warnings) in {self.seconds:.1f}s"
        )


# (citance texts, reference) -> one list of sids per citance
Predictor = Callable[[list[str], Reference], list[list[int]]]


def link_folder(scisumm_dir: Path, out_dir: Path, predict: Predictor) -> LinkReport:
    """Fill every ``DIR/<RP>/annotation/<RP>.csv`` with ``predict`` and write ``out_dir/<RP>.csv`` (see module)."""
    import time

    started = time.perf_counter()
    sources = [(folder, folder / "annotation" / f"{folder.name}.csv") for folder in rp_folders(Path(scisumm_dir))]
    # every input is read before anything is predicted or written: a bad file stops the run at once
    tables = [(folder, read_task1a_table(source, LINK_COLUMNS)) for folder, source in sources if source.is_file()]
    if not tables:
        raise DataError(
            f"{scisumm_dir} has no <RP>/annotation/<RP>.csv; for the CL-SciSumm training set (.ann.txt files), "
            "write an input folder first with `citegraph linkage task-input`"
        )
    citances = linked = warnings = 0
    for folder, table in tables:
        citances += len(table.rows)
        reference = read_reference(folder)
        texts = [citance_text(t) for t in table.column("Citation Text")]
        if reference is None or not reference.sentences:
            log.warning(
                "%s: no usable Reference_XML/%s.xml; its %d citances get no links",
                folder.name,
                folder.name,
                len(table.rows),
            )
            predictions: list[list[int]] = [[] for _ in texts]
        else:
            predictions = predict(texts, reference)
        offsets, elements = [], []
        for line, text, sids in zip(table.lines, texts, predictions):
            if not text:
                log.warning("%s line %d: empty Citation Text; no link predicted", table.path, line)
                sids = []
            if not sids:
                warnings += 1
            else:
                linked += 1
            offsets.append(format_offsets(sids))
            elements.append("".join(reference.element(s) for s in sids) if reference is not None else "")
        for name, values in zip(RUN_COLUMNS, (offsets, elements), strict=True):
            table.set_column(name, values)
        write_task1a_table(table, Path(out_dir) / f"{folder.name}.csv")
    papers = len(tables)
    return LinkReport(papers, citances, linked, warnings, time.perf_counter() - started)


# ---------------------------------------------------------------------------------------------
# CL-SciSumm 2018 annotations -> task inputs and gold


@dataclass(frozen=True)
class GoldCitance:
    rp: str
    annotator: str  # "" when the line names none
    key: CitanceKey
    fields: dict[str, str]  # the annotation line's fields
    sids: frozenset[int]  # gold Reference Offset


def read_annotations(folder: Path) -> list[GoldCitance]:
    """Every usable gold record of ``folder/annotation/*.txt`` (lines without citation or reference offsets are skipped)."""
    out = []
    for path in sorted((folder / "annotation").glob("*.txt")):
        text, _ = decode_lenient(path.read_bytes())
        for line in text.splitlines():
            fields = parse_annotation_line(line)
            if "Citing Article" not in fields:
                continue
            reference = parse_offsets(fields.get("Reference Offset", ""))
            if not reference or not parse_offsets(fields.get("Citation Offset", "")):
                continue
            key = citance_key(folder.name, fields["Citing Article"], fields.get("Citation Offset", ""))
            out.append(GoldCitance(folder.name, fields.get("Annotator", "") or "", key, fields, frozenset(reference)))
    return out


def read_gold(root: Path) -> dict[tuple[str, str], dict[CitanceKey, frozenset[int]]]:
    """Gold files of a CL-SciSumm training folder: (RP, annotator) -> citance key -> gold sids.

    A citance annotated twice by one annotator keeps the union of the two offsets.
    """
    files: dict[tuple[str, str], dict[CitanceKey, frozenset[int]]] = {}
    for folder in rp_folders(root):
        for record in read_annotations(folder):
            citances = files.setdefault((record.rp, record.annotator), {})
            citances[record.key] = citances.get(record.key, frozenset()) | record.sids
    return files


def write_task_inputs(training_dir: Path, out_dir: Path) -> int:
    """Write a Task 1A input folder from a CL-SciSumm training folder; returns the number of citances.

    One row per distinct citance (``citance_key``) in ``out_dir/<RP>/annotation/<RP>.csv`` with
    Reference Offset and Reference Text blank, and a copy of ``Reference_XML``.
    """
    total = 0
    for folder in rp_folders(training_dir):
        rows: dict[CitanceKey, dict[str, str]] = {}
        for record in read_annotations(folder):
            if record.key in rows:
                continue
            f = record.fields
            row = {column: f.get(column, "") for column in TASK1A_COLUMNS}
            row["Citance Number"] = str(len(rows) + 1)
            row["Citation Text Clean"] = citance_text(f.get("Citation Text", ""))
            row["Reference Offset"] = row["Reference Text"] = ""
            rows[record.key] = row
        if not rows:
            continue
        target = Path(out_dir) / folder.name
        shutil.copytree(folder / "Reference_XML", target / "Reference_XML", dirs_exist_ok=True)
        frame = pd.DataFrame(list(rows.values()), columns=list(TASK1A_COLUMNS))
        _write_atomic(target / "annotation" / f"{folder.name}.csv", partial(_frame_to_csv, frame))
        total += len(rows)
    return total


def read_run(run_dir: Path) -> dict[CitanceKey, list[int]]:
    """Predictions of a run folder (``<RP>.csv`` files of any layout with :data:`SCORE_COLUMNS`) by citance key."""
    out: dict[CitanceKey, list[int]] = {}
    for path in sorted(Path(run_dir).glob("*.csv")):
        table = read_task1a_table(path, SCORE_COLUMNS)
        columns = (table.column(name) for name in SCORE_COLUMNS)
        for citing, citation_offset, reference_offset in zip(*columns):
            out[citance_key(path.stem, citing, citation_offset)] = parse_offsets(reference_offset)
    return out


__all__ = [
    "HEADER_SPELLINGS",
    "LINK_COLUMNS",
    "RUN_COLUMNS",
    "SCORE_COLUMNS",
    "CitanceKey",
    "GoldCitance",
    "LinkReport",
    "Reference",
    "Task1aTable",
    "citance_key",
    "citance_text",
    "citing_key",
    "format_offsets",
    "link_folder",
    "read_annotations",
    "read_gold",
    "read_reference",
    "read_run",
    "read_task1a_table",
    "rp_folders",
    "write_task1a_table",
    "write_task_inputs",
]
