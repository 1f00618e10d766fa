"""CSV files for ``neo4j-admin database import full``: the fastest first load of a large graph into Neo4j.

One header file and one data file per label and per relationship type, in the importer's header
format (Neo4j Operations Manual, "CSV header format"):

* nodes: ``id:ID(Paper),:LABEL,title:string,year:long,...,embedding:float[]`` — the key is the ID
  column (and is stored as the ``id`` property); each label has its own ID space, so a paper and
  an author may share a key; ``:LABEL`` holds the label;
* relationships: ``:START_ID(Paper),:END_ID(Paper),:TYPE,n_contexts:long,...`` — endpoints refer to
  the ID spaces of the type's start and end labels.

Values: strings are always quoted (so an empty string stays an empty string), a missing value is
an empty unquoted field (the importer sets no property), lists are joined with
:data:`ARRAY_DELIMITER` and an empty list is written as missing. Abstracts hold line breaks, so the
import needs ``--multiline-fields=true``; :func:`import_command` writes the whole command.

The importer creates no constraints or indexes: the first command that opens the Neo4j store for
writing (any ``citegraph --backend neo4j ingest|compute|copy``) creates them, idempotently.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from graph.errors import DataError
from graph.schema import Kind, NodeType, Property, RelType
from graph.store import GraphStore

ARRAY_DELIMITER = ";"  # --array-delimiter of the import command (the importer's default)

# The importer's property types (header format), per schema kind; arrays end in [].
HEADER_TYPES = {
    Kind.STRING: "string",
    Kind.INT: "long",
    Kind.FLOAT: "double",
    Kind.BOOL: "boolean",
    Kind.STRING_LIST: "string[]",
    Kind.FLOAT_LIST: "double[]",
    Kind.VECTOR32: "float[]",
    Kind.VECTOR64: "double[]",
}


def node_header(node: NodeType) -> list[str]:
    """Header fields of a label's node file: the key as ``:ID(<label>)``, ``:LABEL``, typed properties."""
    others = [p for p in node.properties if p.name != node.key]
    return [f"{node.key}:ID({node.label})", ":LABEL", *(f"{p.name}:{HEADER_TYPES[p.kind]}" for p in others)]


def rel_header(rel: RelType) -> list[str]:
    """Header fields of a type's relationship file: ``:START_ID``/``:END_ID`` in the endpoints' ID spaces, ``:TYPE``, properties."""
    return [
        f":START_ID({rel.source})",
        f":END_ID({rel.target})",
        ":TYPE",
        *(f"{p.name}:{HEADER_TYPES[p.kind]}" for p in rel.properties),
    ]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def format_value(value: object, prop: Property, *, owner: str = "") -> str:
    """One CSV field in the importer's syntax (see the module docstring)."""
    if prop.is_list:
        if value is None or (not isinstance(value, (list, tuple, np.ndarray)) and _missing(value)):
            return ""
        items = list(value)  # type: ignore[call-overload]
        if not items:
            return ""
        if prop.kind is Kind.STRING_LIST:
            bad = [item for item in items if ARRAY_DELIMITER in str(item)]
            if bad:
                raise DataError(
                    f"{owner}.{prop.name} holds {bad[0]!r}, which contains the array delimiter {ARRAY_DELIMITER!r}; "
                    "neo4j-admin cannot split it back; use `citegraph copy --to neo4j` for this store instead"
                )
            return _quote(ARRAY_DELIMITER.join(str(item) for item in items))
        dtype = np.float32 if prop.kind is Kind.VECTOR32 else np.float64
        # numpy prints each float as the shortest text that reads back to the same value.
        return ARRAY_DELIMITER.join(np.asarray(items, dtype=dtype).astype(str))
    if _missing(value):
        return ""
    if prop.kind is Kind.STRING:
        return _quote(str(value))
    if prop.kind is Kind.INT:
        return str(int(value))  # type: ignore[call-overload]
    if prop.kind is Kind.FLOAT:
        return repr(float(value))  # type: ignore[arg-type]
    return "true" if bool(value) else "false"


@dataclass(frozen=True)
class ImportFile:
    name: str  # label or relationship type
    kind: str  # "nodes" or "relationships"
    header: Path  # the one-line header file (listed first, as the importer requires)
    data: Path  # the rows, no header
    rows: int


@dataclass
class AdminExport:
    out_dir: Path
    files: list[ImportFile] = field(default_factory=list)
    command: str = ""  # the import command for these files

    def summary(self) -> str:
        lines = [f"{f.data}\t{f.rows} rows" for f in self.files]
        return "\n".join(
            [*lines, "", "Import them into a new database (the server stopped, or the database absent):", self.command]
        )


def import_command(files: Iterable[ImportFile], database: str = "neo4j", *, base: Path | None = None) -> str:
    """The ``neo4j-admin database import full`` command line for ``files``, one option per line.

    With ``base`` the file paths are written relative to it (for a script that runs in that folder).
    """

    def where(path: Path) -> str:
        return str(path.relative_to(base)) if base is not None else str(path)

    parts = ["neo4j-admin database import full"]
    parts += [f"--{f.kind}={shlex.quote(f'{where(f.header)},{where(f.data)}')}" for f in files]
    parts += [f"--array-delimiter={shlex.quote(ARRAY_DELIMITER)}", "--multiline-fields=true", "--id-type=string"]
    parts.append(shlex.quote(database))
    return " \\\n  ".join(parts)


def _write_header(path: Path, fields: list[str]) -> None:
    path.write_text(",".join(fields) + "\n", encoding="utf-8")


def export_neo4j_admin(
    store: GraphStore, out_dir: Path, *, database: str = "neo4j", batch_size: int = 10_000, progress: bool = True
) -> AdminExport:
    """Write ``<Label>.header.csv`` + ``<Label>.csv`` per label and ``<TYPE>.header.csv`` + ``<TYPE>.csv``
    per relationship type into ``out_dir``, and ``import.sh`` with the import command."""
    out_dir.mkdir(parents=True, exist_ok=True)
    export = AdminExport(out_dir)
    for node in store.schema.nodes.values():
        header, data = out_dir / f"{node.label}.header.csv", out_dir / f"{node.label}.csv"
        _write_header(header, node_header(node))
        others = [p for p in node.properties if p.name != node.key]
        key = node.prop(node.key)
        rows = 0
        with (
            data.open("w", encoding="utf-8", newline="") as out,
            tqdm(total=store.count_nodes(node.label), desc=f"export {node.label}", disable=not progress) as bar,
        ):
            for frame in store.iter_nodes(node.label, batch_size):
                columns = [frame[p.name].tolist() for p in others]
                for i, value in enumerate(frame[node.key].tolist()):
                    fields = [format_value(value, key, owner=node.label), _quote(node.label)]
                    fields += [format_value(column[i], p, owner=node.label) for column, p in zip(columns, others)]
                    out.write(",".join(fields) + "\n")
                rows += len(frame)
                bar.update(len(frame))
        export.files.append(ImportFile(node.label, "nodes", header, data, rows))
    endpoint = Property("key", Kind.STRING)
    for rel in store.schema.rels.values():
        header, data = out_dir / f"{rel.type}.header.csv", out_dir / f"{rel.type}.csv"
        _write_header(header, rel_header(rel))
        rows = 0
        with (
            data.open("w", encoding="utf-8", newline="") as out,
            tqdm(total=store.count_rels(rel.type), desc=f"export {rel.type}", disable=not progress) as bar,
        ):
            for frame in store.iter_edges(rel.type, batch_size):
                columns = [frame[p.name].tolist() for p in rel.properties]
                for i, (source, target) in enumerate(zip(frame["source"].tolist(), frame["target"].tolist())):
                    fields = [format_value(source, endpoint), format_value(target, endpoint), _quote(rel.type)]
                    fields += [format_value(column[i], p, owner=rel.type) for column, p in zip(columns, rel.properties)]
                    out.write(",".join(fields) + "\n")
                rows += len(frame)
                bar.update(len(frame))
        export.files.append(ImportFile(rel.type, "relationships", header, data, rows))
    export.command = import_command(export.files, database)
    script = out_dir / "import.sh"
    script.write_text(
        "#!/bin/sh\n# Written by `citegraph export neo4j-admin`: run it on the Neo4j server, with the database absent\n"
        '# (or add --overwrite-destination=true), then start the database.\nset -e\ncd "$(dirname "$0")"\n'
        + import_command(export.files, database, base=out_dir)
        + "\n",
        encoding="utf-8",
    )
    return export


__all__ = [
    "ARRAY_DELIMITER",
    "HEADER_TYPES",
    "AdminExport",
    "ImportFile",
    "export_neo4j_admin",
    "format_value",
    "import_command",
    "node_header",
    "rel_header",
]
