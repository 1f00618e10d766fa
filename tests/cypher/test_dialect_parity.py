"""Parity of the two Cypher dialects: the same statement names for both backends, and idempotent DDL.

``cypher.load(name, dialect)`` prefers ``cypher/<dialect>/<name>.cypher`` and falls back to the shared
``cypher/<name>.cypher``. A statement that differs between the backends therefore lives in BOTH dialect
folders under one name; a name in only one folder is allowed only for the backend's own machinery
(DDL, bulk loading, catalog calls), listed below with the reason, and no backend-independent code may
load it.

Do not add ``__init__.py`` to this folder (see test_statements_lint.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import cypher

ROOT = Path(__file__).resolve().parents[2]

# Statements one backend needs and the other has no counterpart for, with why.
ONE_BACKEND: dict[str, dict[str, str]] = {
    "embedded": {
        "add_column": "LadybugDB tables have fixed columns; Neo4j properties need no declaration",
        "copy_columns": "COPY from an Arrow frame is LadybugDB's bulk load; Neo4j merges UNWIND batches",
        "copy_table": "COPY from an Arrow frame is LadybugDB's bulk load; Neo4j merges UNWIND batches",
        "create_node_table": "LadybugDB declares node tables; Neo4j has key constraints instead",
        "create_rel_table": "LadybugDB declares relationship tables; Neo4j needs none",
        "drop_table": "a LadybugDB table swap replaces edges; Neo4j deletes them in batches",
        "drop_table_if_exists": "removes a LadybugDB staging table of the swap; Neo4j has no tables",
        "rename_table": "the LadybugDB staging table takes the replaced table's name; Neo4j has no tables",
        "show_tables": "LadybugDB catalog call, used to find missing tables",
        "storage_info": "LadybugDB storage call, used to find float lists its compression can lose (recover)",
        "table_info": "LadybugDB catalog call, used to check column types (vector sizes)",
    },
    "neo4j": {
        "create_key_constraint": "Neo4j's key uniqueness; LadybugDB tables have a primary key",
        "create_vector_index": "Neo4j vector index for Cypher users; the embedded store has none (faiss serves retrieval)",
        "delete_rels_batch": "Neo4j deletes edges in batches; LadybugDB swaps the table",
        "merge_rels": "Neo4j merges UNWIND batches of edges; LadybugDB COPYs new edges or swaps the table",
        "show_indexes": "Neo4j catalog call, used to check vector index dimensions",
    },
}
# Backend-independent code: any statement it names must load for both dialects.
SHARED_CODE = ["graph/store.py", "graph/ingest.py", "graph/copy.py", "graph/neo4j_admin.py", "api", "gnn", "loaders"]
STRING_LITERAL = re.compile(r"""["']([a-z][a-z0-9_]*(?:/[a-z0-9_]+)?)["']""")
DDL = re.compile(r"^\s*(CREATE|ALTER|DROP)\b", re.IGNORECASE | re.MULTILINE)


def dialect_names(dialect: str) -> set[str]:
    return set(cypher.names(dialect))


def all_statement_names() -> set[str]:
    return {*cypher.names(), *cypher.names("explore"), *dialect_names("embedded"), *dialect_names("neo4j")}


def test_every_dialect_statement_exists_for_both_backends() -> None:
    embedded = dialect_names("embedded") - ONE_BACKEND["embedded"].keys()
    neo4j = dialect_names("neo4j") - ONE_BACKEND["neo4j"].keys()
    assert not embedded - neo4j, (
        f"add cypher/neo4j/ versions of {sorted(embedded - neo4j)} (or list them in ONE_BACKEND)"
    )
    assert not neo4j - embedded, (
        f"add cypher/embedded/ versions of {sorted(neo4j - embedded)} (or list them in ONE_BACKEND)"
    )
    assert embedded, "no statement is shared between the dialect folders: the check above checked nothing"


def test_one_backend_entries_are_real_and_only_in_their_folder() -> None:
    for dialect, entries in ONE_BACKEND.items():
        other = next(d for d in cypher.DIALECTS if d != dialect)
        for name, reason in entries.items():
            assert name in dialect_names(dialect), f"ONE_BACKEND lists {dialect}/{name}, which does not exist"
            assert name not in dialect_names(other), f"{name} exists for both dialects; drop it from ONE_BACKEND"
            assert name not in cypher.names(), f"{name} is also a shared statement"
            assert reason


def test_dialect_files_do_not_shadow_shared_statements() -> None:
    """A dialect file named like a shared one would change one backend silently; put both versions side by side."""
    shared = set(cypher.names())
    for dialect in cypher.DIALECTS:
        assert not shared & dialect_names(dialect), (
            f"cypher/{dialect}/ shadows shared {sorted(shared & dialect_names(dialect))}"
        )


def test_every_name_loads_for_both_backends_unless_backend_only() -> None:
    for name in sorted(all_statement_names()):
        for dialect in cypher.DIALECTS:
            if name in ONE_BACKEND[next(d for d in cypher.DIALECTS if d != dialect)]:
                continue
            assert cypher.load(name, dialect).text


def shared_code_statement_names() -> set[str]:
    known = all_statement_names()
    found: set[str] = set()
    for entry in SHARED_CODE:
        path = ROOT / entry
        for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
            found |= {m for m in STRING_LITERAL.findall(source.read_text(encoding="utf-8")) if m in known}
    return found


def test_backend_independent_code_loads_only_statements_both_backends_have() -> None:
    used = shared_code_statement_names()
    assert {"count_nodes", "every_key", "nodes_by_keys", "rels_from_keys"} <= used  # the scan finds names
    backend_only = ONE_BACKEND["embedded"].keys() | ONE_BACKEND["neo4j"].keys()
    assert not used & backend_only, (
        f"backend-independent code loads backend-only statements {sorted(used & backend_only)}"
    )
    for name in used:
        for dialect in cypher.DIALECTS:
            cypher.load(name, dialect)


@pytest.mark.parametrize("dialect", cypher.DIALECTS)
def test_schema_statements_are_idempotent(dialect: str) -> None:
    """Every CREATE of a table, constraint or index says IF NOT EXISTS; every ALTER ... ADD too; DROP and
    RENAME only swap a staging table in (``EmbeddedStore._replace_edges``)."""
    checked = 0
    for name in sorted(dialect_names(dialect)):
        text = cypher.load(name, dialect).text
        for match in DDL.finditer(text):
            line = text[match.start() :].splitlines()[0].upper()
            checked += 1
            if match.group(1).upper() == "DROP":
                assert name in ("drop_table", "drop_table_if_exists"), (
                    f"{dialect}/{name} drops something outside the table swap"
                )
                continue
            if " RENAME TO " in line:
                assert name == "rename_table", f"{dialect}/{name} renames something outside the table swap"
                continue
            assert "IF NOT EXISTS" in line, f"{dialect}/{name} is not idempotent: {line!r} lacks IF NOT EXISTS"
    assert checked >= 2, f"found no schema statement in cypher/{dialect}/: the check checked nothing"


def test_neo4j_writes_merge_rather_than_create() -> None:
    """Write transactions may be retried by the driver: only MERGE/SET/DELETE, never CREATE of data."""
    for name in sorted({*dialect_names("neo4j"), *cypher.names()}):
        text = cypher.load(name, "neo4j").text
        for line in text.splitlines():
            if re.match(r"^\s*CREATE\b", line, re.IGNORECASE):
                assert re.match(r"^\s*CREATE\s+(VECTOR\s+)?(CONSTRAINT|INDEX)\b", line, re.IGNORECASE), (
                    f"neo4j/{name} creates data with CREATE; use MERGE so a retried transaction does not duplicate"
                )
