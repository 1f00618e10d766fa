"""OpenAlex's merged works: the ``merged_ids`` files of a snapshot, read as (merged work, surviving work) pairs.

An OpenAlex snapshot lists the works it merged into others under ``merged_ids/works/`` beside ``data/works``
(``openalex-snapshot/data/merged_ids/works/2024-01-15.csv.gz``): gzipped CSV files, one merge a line::

    merge_date,id,merge_into_id
    2022-06-09,W4285719527,W2741809807

The work ``id`` is no more; ``merge_into_id`` is the work it became. A work OpenAlex deleted has no
surviving work: an empty ``merge_into_id``, or :data:`DELETED_WORK`, the id OpenAlex merges deleted works
into. ``citegraph ingest openalex`` reads these files (``--merged-ids``, else the ``merged_ids/works``
folder it finds beside the works) and, after the works are stored, merges each merged work that the store
holds into its survivor (:func:`graph.works.merge_works`) and deletes each deleted one
(:func:`graph.works.delete_work`).

Ids are given as ``W…`` or ``https://openalex.org/W…`` and become ``openalex:W…`` (:mod:`loaders.ids`). A
file's lines are applied in date order (a work merged into one that is merged later ends in the last);
a line without a work id, or with ids that are not OpenAlex work ids, is rejected with ``<file>:<line>``.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graph.errors import ConfigError, Reject

DELETED_WORK = "W4285719527"  # OpenAlex's "Deleted Work": the id deleted works are merged into
_WORK_ID = re.compile(r"^(?:https?://openalex\.org/)?(W\d+)$", re.IGNORECASE)
_FOLDERS = ("merged_ids/works", "merged_ids")  # where a snapshot keeps them, relative to data/
TABLE = "merged_ids"  # the table name rejects are reported under


@dataclass
class MergedIds:
    """The merges read: (merged work id, surviving work id or None for a deleted work), in date order."""

    merges: list[tuple[str, str | None]] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def _work_id(value: str | None) -> str | None:
    found = _WORK_ID.match((value or "").strip())
    return f"openalex:{found[1].upper()}" if found else None


def _lines(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        reader = csv.DictReader(text)
        missing = {"id", "merge_into_id"} - set(reader.fieldnames or ())
        if missing:
            raise ConfigError(
                f"{path}: not an OpenAlex merged_ids file: no column {', '.join(sorted(missing))} in its header "
                f"({', '.join(reader.fieldnames or ()) or 'none'}); expected merge_date,id,merge_into_id"
            )
        for row in reader:
            yield reader.line_num, row


def merged_files(path: Path) -> list[Path]:
    """The merged_ids files of ``path``: the file itself, or every ``*.csv`` / ``*.csv.gz`` under the folder."""
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(
            p for p in path.rglob("*") if p.is_file() and (p.name.endswith(".csv") or p.name.endswith(".csv.gz"))
        )
    raise ConfigError(
        f"--merged-ids {path}: no such file or folder; give a merged_ids/works folder or one of its files"
    )


def find_beside(works: Path) -> Path | None:
    """The ``merged_ids/works`` folder of the snapshot that ``works`` (a works folder, partition or file) is in,
    or None: looked for beside each of its parent folders (``data/works/updated_date=…/part_000.gz`` finds
    ``data/merged_ids/works``)."""
    start = works if works.is_dir() else works.parent
    for folder in [start, *start.parents][:4]:
        for name in _FOLDERS:
            candidate = folder / name
            if candidate.is_dir():
                return candidate
    return None


def read_merged_ids(path: Path) -> MergedIds:
    """Every merge of the merged_ids file or folder ``path`` (module docstring)."""
    out = MergedIds(files=merged_files(path))
    dated: list[tuple[str, int, tuple[str, str | None]]] = []
    for file in out.files:
        for line, row in _lines(file):
            where = f"{file.name}:{line}"
            loser = _work_id(row.get("id"))
            target = (row.get("merge_into_id") or "").strip()
            survivor = _work_id(target)
            if loser is None:
                out.rejects.append(Reject(TABLE, where, f"id {row.get('id')!r} is not an OpenAlex work id (W…)"))
                continue
            if target and survivor is None:
                out.rejects.append(
                    Reject(TABLE, where, f"merge_into_id {target!r} is not an OpenAlex work id (W…) nor empty")
                )
                continue
            if survivor == f"openalex:{DELETED_WORK}":
                survivor = None
            dated.append(((row.get("merge_date") or "").strip(), len(dated), (loser, survivor)))
    out.merges = [merge for _date, _n, merge in sorted(dated)]
    return out


__all__ = ["DELETED_WORK", "MergedIds", "find_beside", "merged_files", "read_merged_ids"]
