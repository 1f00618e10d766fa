"""Reading users' export files: the names origins give them, and JSON in either layout.

:func:`display_names`: what a reject calls each input file. :func:`iter_json_values`: the JSON
values of an export file, whatever its layout, JSON Lines or one JSON document.

Exports of the same source come both ways: an OpenAlex snapshot partition has one work per line
(and is gigabytes), a saved API response is one document (one line or pretty-printed). The
layout is told from the content, not the file name:

* the first non-blank line is a complete JSON value: **JSON Lines**, each line read on its own,
  so a huge file streams in bounded memory and a damaged line costs that line only;
* otherwise the whole file is **one document** (read at once: responses and dumps are small);
  when that does not parse either and most of its lines do on their own, it is JSON Lines whose
  first line is damaged.

gzip is read transparently (sniffed by its magic bytes, as :func:`loaders._common.iter_raw_lines`
does; :func:`iter_lines` keeps the lines before the cut of a truncated stream). What cannot be
read is a :class:`JsonProblem` with its line and a reason that says what to do; the caller turns
it into a :class:`graph.errors.Reject` of its own table.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import orjson

from graph.errors import IngestError
from graph.validate import preview
from loaders._common import GZIP_MAGIC, iter_lines

# A first line that does not parse makes the file a candidate document, read whole; past this
# size (on disk) it is taken as JSON Lines with a damaged first line instead of a document.
MAX_DOCUMENT_BYTES = 512 << 20


def display_names(files: Sequence[Path]) -> list[str]:
    """Each file's name as origins show it: relative to the folder the files share.

    One file is its name; files of a folder tree keep the sub-folders that tell them apart (an
    OpenAlex snapshot has a ``part_000.gz`` in every ``updated_date=…`` folder).

    >>> display_names([Path("w/updated_date=2024-01-01/part_000.gz"), Path("w/updated_date=2024-02-01/part_000.gz")])
    ['updated_date=2024-01-01/part_000.gz', 'updated_date=2024-02-01/part_000.gz']
    """
    if len(files) == 1:
        return [files[0].name]
    common = Path(os.path.commonpath([f.resolve().parent for f in files]))
    return [f.resolve().relative_to(common).as_posix() for f in files]


@dataclass(frozen=True)
class JsonValue:
    line: int  # 1-based line the value starts on (1 for a document)
    value: object
    whole_file: bool  # the file holds this one value only (a document, or a single line)


@dataclass(frozen=True)
class JsonProblem:
    line: int  # 1-based line of the damage
    reason: str  # what is wrong and what to do


def iter_json_values(path: Path) -> Iterator[JsonValue | JsonProblem]:
    """Every JSON value of ``path`` in file order, or the problem where one cannot be read."""
    lines = numbered_lines(path)
    head: list[tuple[int, bytes | JsonProblem]] = []  # the first two non-blank lines, or a gzip problem
    for number, raw in lines:
        if isinstance(raw, JsonProblem) or raw.strip():
            head.append((number, raw))
            if len(head) == 2 or isinstance(raw, JsonProblem):
                break
    if not head or isinstance(head[0][1], JsonProblem):
        yield from (raw for _, raw in head if isinstance(raw, JsonProblem))
        return
    first = _parse(head[0][1], head[0][0])
    if isinstance(first, JsonProblem) and path.stat().st_size <= MAX_DOCUMENT_BYTES:
        lines.close()
        yield from _document(path)
        return
    only = len(head) == 1
    for number, raw in chain(head, lines):
        if isinstance(raw, JsonProblem):
            yield raw
            return
        if raw.strip():
            parsed = _parse(raw, number)
            yield parsed if isinstance(parsed, JsonProblem) else JsonValue(number, parsed.value, only)


def numbered_lines(path: Path) -> Generator[tuple[int, bytes | JsonProblem], None, None]:
    """``(line number, bytes)``; a damaged gzip stream ends it with a problem at the line it cut."""
    number = 0
    try:
        for number, raw in enumerate(iter_lines(path), start=1):
            yield number, raw
    except IngestError as exc:
        yield number + 1, JsonProblem(number + 1, gzip_problem(number, exc))


def gzip_problem(lines_read: int, exc: IngestError) -> str:
    """The reason for a gzip stream that stopped after ``lines_read`` lines."""
    return (
        f"the gzip stream is cut or damaged after line {lines_read} ({exc.__cause__}); the lines before it are "
        "read, the rest of the file is lost: download or copy the file again"
    )


# A run of 20 digits: an integer that may not fit 64 bits (or a long decimal, a number in a string); such a
# line is left to the standard library, which reads every integer exactly.
_LONG_NUMBER = re.compile(rb"[0-9]{20}")
# What a line's reject says after "each line must be one complete JSON value" by default.
TRUNCATION_ADVICE = " (a truncated last line means the file was cut: download or copy it again)"


def parse_json_line(
    raw: bytes, line: int, *, expected: str = "JSON value", advice: str = TRUNCATION_ADVICE
) -> JsonValue | JsonProblem:
    """The JSON value of one line (``line``: its 1-based number), or the problem that says why it is none.

    orjson reads the bytes as they are (it checks the UTF-8 itself). What orjson refuses is read again by
    the standard library, so that the accepted values and the reasons given stay exactly those of ``json``:
    ``NaN`` and ``Infinity``, a lone surrogate escape (``"\\ud800"``), which ``json`` accepts and orjson does
    not, still load; bytes that are not UTF-8 or not JSON get the standard library's located message.
    ``expected`` (what a line must be) and ``advice`` end that message. The one JSON Lines parser of the
    importers (:mod:`loaders.toolkit`).
    """
    if _LONG_NUMBER.search(raw) is None:  # orjson reads an integer past 64 bits as a float, json as an int
        try:
            return JsonValue(line, orjson.loads(raw), False)
        except orjson.JSONDecodeError:
            pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonProblem(
            line, f"line is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8"
        )
    try:
        return JsonValue(line, json.loads(text), False)
    except json.JSONDecodeError as exc:
        return JsonProblem(
            line,
            f"line is not JSON ({exc.msg}: column {exc.colno}) {preview(text)}; each line must be one complete "
            f"{expected}{advice}",
        )


_parse = parse_json_line


def _document(path: Path) -> Iterator[JsonValue | JsonProblem]:
    with path.open("rb") as probe:
        compressed = probe.read(2) == GZIP_MAGIC
    try:
        data = gzip.decompress(path.read_bytes()) if compressed else path.read_bytes()
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        yield JsonProblem(1, f"the gzip stream is damaged or truncated ({exc}); download or copy the file again")
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        yield JsonProblem(line, f"file is not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8")
        return
    try:
        yield JsonValue(1, json.loads(text), True)
        return
    except json.JSONDecodeError as exc:
        error = exc
    lines = [(n, raw) for n, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]
    parsed = [_parse(raw, n) for n, raw in lines]
    if len(lines) > 1 and sum(isinstance(p, JsonValue) for p in parsed) * 2 >= len(lines):
        yield from (p if isinstance(p, JsonProblem) else JsonValue(p.line, p.value, False) for p in parsed)
        return
    # A cut file fails where the text ends, or inside a string that runs to the end.
    ends_early = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string")
    yield JsonProblem(
        error.lineno,
        f"file is not JSON ({error.msg}: line {error.lineno} column {error.colno})"
        + (
            "; it ends in the middle of a value: the file is truncated, download or copy it again"
            if ends_early
            else "; fix the file there (each file must be JSON Lines or one JSON document)"
        ),
    )


__all__ = [
    "MAX_DOCUMENT_BYTES",
    "JsonProblem",
    "JsonValue",
    "display_names",
    "gzip_problem",
    "iter_json_values",
    "iter_lines",
    "numbered_lines",
    "parse_json_line",
]
