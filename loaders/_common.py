"""Helpers every loader shares: reading files, naming origins, assembling canonical tables."""

from __future__ import annotations

import glob
import html
import logging
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from graph.errors import IngestError
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders.ids import author_key, id_kind, orcid

GZIP_MAGIC = b"\x1f\x8b"
log = logging.getLogger(__name__)


def origin(path: Path, line: int) -> str:
    """``<file name>:<line>`` (1-based), the form reject messages point at."""
    return f"{path.name}:{line}"


def require_file(path: Path, what: str) -> None:
    """:class:`IngestError` naming ``path`` unless it is a readable file."""
    if not path.is_file():
        raise IngestError(
            f"{what}: {path} is not a file; pass the right path or set CITEGRAPH_DATA to the data folder "
            "(see ../shared/data/README.md)"
        )


def input_files(path: Path, suffixes: Sequence[str]) -> list[Path]:
    """The files an importer reads from ``path``: a file, a folder (searched recursively), or a glob.

    In a folder or a glob, only names ending in one of ``suffixes`` (``.json``, ``.jsonl.gz``, ...)
    count, in sorted order, so a re-run reads the same files in the same order. An
    :class:`IngestError` names the path when nothing matches.
    """
    text = str(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(tuple(suffixes)))
    elif glob.has_magic(text):
        found = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
    else:
        raise IngestError(f"{path} does not exist; pass a file, a folder or a quoted glob such as 'exports/*.json.gz'")
    if not found:
        raise IngestError(
            f"{path}: no input file in it (looked for names ending in {', '.join(suffixes)}); "
            "pass the export file itself or the folder that holds it"
        )
    return found


def alias_tables(aliases: Mapping[str, tuple[str, str]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``Alias`` node table and the ``ALIAS_OF`` table of ``{alias: (paper key, origin)}``.

    An alias equal to its paper's key is left out (the key resolves by itself). ``kind`` is
    :func:`loaders.ids.id_kind` of the alias.
    """
    rows = [(alias, key, where) for alias, (key, where) in aliases.items() if alias != key]
    nodes = table(
        {
            "id": [a for a, _, _ in rows],
            "kind": [id_kind(a) for a, _, _ in rows],
            ORIGIN_COLUMN: [w for _, _, w in rows],
        }
    )
    rels = table(
        {
            SOURCE_COLUMN: [a for a, _, _ in rows],
            TARGET_COLUMN: [k for _, k, _ in rows],
            ORIGIN_COLUMN: [w for _, _, w in rows],
        }
    )
    return nodes, rels


def iter_lines(path: Path) -> Iterator[bytes]:
    """The file's lines as bytes (line end removed), gunzipped when the file is gzip.

    The one reader of the importers' line files (:mod:`loaders.toolkit`). A gzip stream cut short yields every complete
    line before the cut and only then raises :class:`IngestError` (a 400k-work partition whose
    download stopped early keeps what arrived). Concatenated gzip members are read in turn.
    """
    with path.open("rb") as raw:
        if raw.read(2) != GZIP_MAGIC:
            raw.seek(0)
            for line in raw:
                yield line.rstrip(b"\r\n")
            return
        raw.seek(0)
        stream = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
        pending = b""
        try:
            while chunk := raw.read(1 << 20):
                data = stream.decompress(chunk)
                while stream.eof and stream.unused_data:  # the next member
                    rest, stream = stream.unused_data, zlib.decompressobj(wbits=31)
                    data += stream.decompress(rest)
                *lines, pending = (pending + data).split(b"\n")
                for line in lines:
                    yield line.rstrip(b"\r")
        except zlib.error as exc:
            raise IngestError(f"{path}: the gzip stream is damaged ({exc}); download or copy the file again") from exc
        if not stream.eof:
            raise IngestError(f"{path}: the gzip stream ends early; download or copy the file again") from EOFError(
                "compressed file ended before the end-of-stream marker"
            )
        if pending:
            yield pending.rstrip(b"\r")


def iter_raw_lines(path: Path) -> Iterator[bytes]:
    """:func:`iter_lines`, for the loaders that read a file whole or not at all: a damaged or truncated gzip
    stream is an :class:`IngestError` that says so, and a file without a single non-blank line is logged
    as a warning naming it (it loads nothing, which is rarely what was meant)."""
    blank = True
    try:
        for line in iter_lines(path):
            blank = blank and not line.strip()
            yield line
    except IngestError as exc:
        cause = exc.__cause__ or exc
        raise IngestError(
            f"{path}: the gzip stream is damaged or truncated ({cause}); download the file again"
        ) from cause
    if blank:
        log.warning("%s is empty (no record in it); check that it is the file you meant", path)


def table(columns: Mapping[str, Sequence[object]]) -> pd.DataFrame:
    """A frame from equal-length column lists (built once, never row by row)."""
    return pd.DataFrame(
        {name: values if len(values) else pd.Series([], dtype=object) for name, values in columns.items()}
    )


def nullable_ints(values: list[object]) -> pd.Series:
    """``Int64`` when every value is an int or None; else the values as they are (validation rejects the odd ones)."""
    if all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
        return pd.Series(values, dtype="Int64")
    return pd.Series(values, dtype=object)


def merge_batches(source: str, batches: Sequence[GraphBatch]) -> GraphBatch:
    """One batch with the tables of ``batches`` concatenated per label / type, rejects in order."""
    merged = GraphBatch(source)
    for part in batches:
        for tables, into in ((part.nodes, merged.nodes), (part.rels, merged.rels)):
            for name, frame in tables.items():
                into[name] = pd.concat([into[name], frame], ignore_index=True) if name in into else frame
        merged.rejects.extend(part.rejects)
    return merged


@dataclass(frozen=True)
class WorkAuthor:
    """One distinct author of a work, as :func:`work_authors` reads it from the work's author list."""

    key: str  # loaders.ids.author_key of the name
    name: str  # the name as given, runs of white space made one space
    position: int  # 1-based place in the list (a name listed twice keeps its first place)
    orcid: str | None  # the bare ORCID iD (0000-0002-1825-0097) when the entry has a well-formed one
    source_id: str | None  # the source's own author id (OpenAlex ``A5048491430``), when it gives one


def work_authors(
    entries: object,
    where: str,
    reject: Callable[[str, str, str], None],
    read: Callable[[dict[str, Any]], tuple[object, object, object]],
    *,
    field: str,
    entry: str,
    missing: str = "name",
) -> list[WorkAuthor]:
    """The distinct authors of one work's author list ``entries`` (``field`` in the record), in order.

    ``read(entry) -> (name, raw ORCID, source id)`` takes the values out of one list entry (an
    object). Rejected through ``reject(table, origin, reason)``, the work being loaded all the same:
    ``entries`` that is not a list (``WROTE``), an entry without a name (``Author``: "``entry`` 3
    has no ``missing``"). A name twice on one work is one author at its first place.
    """
    if entries is None:
        return []
    if not isinstance(entries, list):
        reject("WROTE", where, f"`{field}` is {preview(entries)}, expected a list; the work is loaded without authors")
        return []
    found: dict[str, WorkAuthor] = {}
    for position, item in enumerate(entries, start=1):
        name, raw_orcid, source_id = read(item) if isinstance(item, dict) else (None, None, None)
        key = author_key(name) if isinstance(name, str) else None
        if key is None or not isinstance(name, str):
            reject("Author", where, f"{entry} {position} has no {missing} ({preview(item)})")
            continue
        if key not in found:
            source = source_id.strip() or None if isinstance(source_id, str) else None
            found[key] = WorkAuthor(key, " ".join(name.split()), position, orcid(raw_orcid), source)
    return list(found.values())


def author_table(first: Iterable[tuple[WorkAuthor, str]], *, source_id: str | None = None) -> pd.DataFrame:
    """The ``Author`` table of each author's first entry and its origin: ``id``, ``name``, ``orcid``, and the
    source's own author id as the column ``source_id`` names (``openalex_id``), when given."""
    rows = list(first)
    columns: dict[str, list[object]] = {
        "id": [a.key for a, _ in rows],
        "name": [a.name for a, _ in rows],
        "orcid": [a.orcid for a, _ in rows],
    }
    if source_id is not None:
        columns[source_id] = [a.source_id for a, _ in rows]
    columns[ORIGIN_COLUMN] = [where for _, where in rows]
    return table(columns)


__all__ = [
    "ORIGIN_COLUMN",
    "WorkAuthor",
    "alias_tables",
    "author_table",
    "input_files",
    "iter_lines",
    "iter_raw_lines",
    "merge_batches",
    "nullable_ints",
    "origin",
    "require_file",
    "table",
    "text_or_unescaped_null",
    "unescape_entities",
    "work_authors",
]


def text_or_null(value: object) -> object:
    """Strings stripped, with empty meaning unknown (null); other types as they are (validation judges)."""
    if isinstance(value, str):
        return value.strip() or None
    return value


# A character reference with its semicolon: &quot; &amp; &#8220; &#x201C;
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def unescape_entities(text: str) -> str:
    """``text`` with its HTML character references read, also where a source escaped them twice.

    Why: some sources store text HTML-escaped (the ACL Anthology's abstracts: ``R&amp;G``), and the
    CL-SciSumm / ScisummNet XML escapes it a second time (``&amp;quot;``, 10,551 times), so one
    unescaping left ``&quot;`` in stored titles, abstracts and sentences, shown as such by the dashboard,
    the API and the text encoder. The first pass is :func:`html.unescape`; later ones (at most two) read
    only references that end in a semicolon, so text that is no longer escaped (``AT&T``) stays as it is.
    """
    if "&" not in text:
        return text
    text = html.unescape(text)
    for _ in range(2):
        if "&" not in text or not _ENTITY.search(text):
            break
        text = _ENTITY.sub(lambda match: html.unescape(match.group()), text)
    return text


def text_or_unescaped_null(value: object) -> object:
    """:func:`text_or_null` of a source that stores text HTML-escaped: references read (:func:`unescape_entities`)."""
    return text_or_null(unescape_entities(value) if isinstance(value, str) else value)


def integer_or_as_is(value: object) -> object:
    """``"1998"`` -> 1998; ``""`` -> null; anything else as it is, so validation rejects it with its origin."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        return int(text) if text.isascii() and text.isdigit() else value
    return value
