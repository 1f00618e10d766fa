"""The read-only guard against a generated corpus (``tests/readonly_corpus.py``), with the engine as judge.

A statement the guard lets through is planned by LadybugDB (``EXPLAIN``, on a writable store, so writes
plan rather than fail): a plan with anything but reading operators and describing table functions
(:func:`graph.readonly.check_plan`) is a bypass. The corpus also holds reading statements that use clause
keywords as names, strings, comments, unicode and mixed case: none may be refused, and each must plan
as a read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from readonly_corpus import PARAMS, PAYLOADS, judge, read_statements, refused_statements
from tiny_graph import tiny_batch

import cypher
from graph import GraphStore, StoreConfig, ingest, open_store
from graph.errors import CitegraphError, QueryError
from graph.readonly import EMBEDDED_PROCEDURES, NEO4J_PROCEDURES, check_plan, check_read_only

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    """One writable store holding the tiny graph for the whole module: EXPLAIN plans and writes nothing."""
    with open_store(StoreConfig(db_path=tmp_path_factory.mktemp("corpus") / "graph.db")) as opened:
        ingest(opened, tiny_batch())
        yield opened


def test_every_payload_alone_is_more_than_a_read(store: GraphStore, tmp_path: Path) -> None:
    """The corpus has teeth: each payload on its own is planned with a writing operator or a table function,
    or is a command the engine will not plan (CHECKPOINT, BEGIN, ATTACH, ...)."""
    secret = tmp_path / "secret.csv"
    secret.write_text("root:x:0:0\n", encoding="utf-8")
    for payload in PAYLOADS:
        text = payload.format(file=secret, out=tmp_path / "out")
        if "read_csv_serial" in text:
            continue  # LadybugDB 0.22 dies (SIGSEGV) planning it; the guard refuses it before the engine sees it
        try:
            plan = store._plan(text, PARAMS)  # type: ignore[attr-defined]
        except CitegraphError:
            continue
        with pytest.raises(QueryError):
            check_plan(plan)


def test_the_generated_corpus_has_no_bypass(store: GraphStore, tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("root:x:0:0\n", encoding="utf-8")
    out = tmp_path / "out"
    statements = refused_statements(str(secret), str(out))
    verdicts = {text: judge(store, text) for text in statements}
    counts = Counter(verdicts.values())
    bypasses = [text for text, verdict in verdicts.items() if verdict == "bypass"]
    assert bypasses == [], f"{len(bypasses)} bypass(es) of {len(statements)}: {bypasses[:5]}"
    # what the guard let through, the engine cannot plan at all (a syntax error), never runs as a read
    assert counts["read"] == 0, [text for text, verdict in verdicts.items() if verdict == "read"][:5]
    assert len(statements) > 1000 and counts["refused"] > 0.95 * len(statements), counts
    assert not out.exists()


def test_generated_reads_pass_and_plan_as_reads(store: GraphStore) -> None:
    statements = read_statements()
    refused: dict[str, str] = {}
    for text in statements:
        try:
            check_read_only(text, procedures=EMBEDDED_PROCEDURES)
            check_plan(store._plan(text, PARAMS))  # type: ignore[attr-defined]
        except CitegraphError as exc:
            refused[text] = str(exc)
    assert len(statements) > 200
    assert refused == {}, f"{len(refused)} of {len(statements)} reads refused"


def _doc_statements() -> list[str]:
    """The Cypher of docs/cypher.md (its ```cypher blocks) and every recipe of cypher/explore/."""
    doc = (REPO / "docs" / "cypher.md").read_text(encoding="utf-8")
    blocks = [block.strip() for block in re.findall(r"```cypher\n(.*?)```", doc, re.S)]
    return blocks + [cypher.load(name).text for name in cypher.names("explore")]


@pytest.mark.parametrize("text", _doc_statements())
def test_the_project_recipes_and_documented_statements_pass(text: str) -> None:
    """On the backend they are written for: the embedded one, or Neo4j where they call its procedures."""
    procedures = NEO4J_PROCEDURES if "CALL db." in text else EMBEDDED_PROCEDURES
    check_read_only(text, procedures=procedures)
