"""Helpers every loader shares: reading files, naming origins, assembling canonical tables."""

from __future__ import annotations

import glob
import gzip
import io
import logging
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pandas as pd

from graph.errors import IngestError
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from loaders.ids import id_kind

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


def iter_raw_lines(path: Path) -> Iterator[bytes]:
    """The file's lines as bytes (newline removed), gunzipped when the file is gzip.

    Bytes, not text: a line that is not UTF-8 is then one reject, not a failed file. A damaged or
    truncated gzip stream is an :class:`IngestError` naming the file. A file without a single
    non-blank line is logged as a warning naming it (it loads nothing, which is rarely what was meant).
    """
    with path.open("rb") as probe:
        compressed = probe.read(2) == GZIP_MAGIC
    blank = True
    try:
        with gzip.open(path, "rb") if compressed else path.open("rb") as raw:
            for line in io.BufferedReader(raw, buffer_size=1 << 20):
                blank = blank and not line.strip()
                yield line.rstrip(b"\r\n")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise IngestError(f"{path}: the gzip stream is damaged or truncated ({exc}); download the file again") from exc
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


__all__ = [
    "ORIGIN_COLUMN",
    "alias_tables",
    "input_files",
    "iter_raw_lines",
    "merge_batches",
    "nullable_ints",
    "origin",
    "require_file",
    "table",
]


def text_or_null(value: object) -> object:
    """Strings stripped, with empty meaning unknown (null); other types as they are (validation judges)."""
    if isinstance(value, str):
        return value.strip() or None
    return value


def integer_or_as_is(value: object) -> object:
    """``"1998"`` -> 1998; ``""`` -> null; anything else as it is, so validation rejects it with its origin."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        return int(text) if text.isascii() and text.isdigit() else value
    return value
