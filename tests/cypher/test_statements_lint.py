"""Every Neo4j-dialect Cypher statement passes Neo4j's own linter, offline.

The linter is the npm package ``@neo4j-cypher/language-support`` (``lintCypherQuery``: Neo4j's
parser plus its semantic analysis), driven by ``cypher/lint/lint.mjs`` and pinned in
``cypher/lint/package-lock.json``; install it with ``npm ci --prefix cypher/lint``.

A statement is linted after :func:`cypher.render` fills its ``__PLACEHOLDER__`` identifiers with the
sample values of :data:`SAMPLE_IDENTIFIERS`. No database schema is passed, so every ``$parameter``
is reported as not defined; that one diagnostic is expected and filtered, everything else fails.

Do not add ``__init__.py`` to this folder: pytest would then import this module as
``cypher.test_statements_lint`` and shadow the project's ``cypher`` package.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import cypher

ROOT = Path(__file__).resolve().parents[2]
LINT_DIR = ROOT / "cypher" / "lint"
LINT_SCRIPT = LINT_DIR / "lint.mjs"
LINT_PACKAGE = LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support"
LINT_TIMEOUT_S = 120

# The one place that says which sample identifier fills each placeholder before linting.
# Plain names for identifier placeholders; a representative fragment for list-valued ones.
SAMPLE_IDENTIFIERS: dict[str, str] = {
    "LABEL": "Paper",
    "TYPE": "CITES",
    "KEY": "id",
    "SOURCE": "Paper",
    "TARGET": "Paper",
    "SOURCE_KEY": "id",
    "TARGET_KEY": "id",
    "NAME": "paper_id_unique",
    "TABLE": "Paper",
    "COLUMN": "title",
    "COLUMNS": ", r.n_contexts AS n_contexts",  # read_rels.cypher: one ", r.p AS p" per property
    "NODE_COLUMNS": ", n.title AS title",  # nodes_by_keys.cypher: one ", n.p AS p" per property
    "PROPERTY": "embedding",  # create_vector_index.cypher: the indexed property
    "IDENTITY": " {method: row.identity.method}",  # merge_rels.cypher: identity properties
    "ASSIGNMENTS": "n.title = title",  # embedded upserts (not linted here, kept for completeness)
}

# lintCypherQuery reports each $parameter missing from the (empty) schema with exactly this text:
# `Parameter $${parameter.name} is not defined.` (syntaxValidation.js, errorOnUndeclaredParameters).
PARAMETER_NOT_DEFINED = re.compile(r"^Parameter \$[A-Za-z_][A-Za-z0-9_]*(?:`[^`]*`)? is not defined\.$")

# Statements that must NOT lint clean: proof that the linter runs and reports.
CANARIES = {
    "canary/syntax_error": "MATCH (n RETURN n",
    "canary/undefined_variable": "MATCH (n:Paper) RETURN m",
    "canary/parameter": "MATCH (n:Paper) WHERE n.id = $id RETURN n",
}


def neo4j_statement_names() -> list[str]:
    """Shared, Neo4j-only and explore statements; embedded-only ones are LadybugDB dialect."""
    return sorted(set(cypher.names()) | set(cypher.names("neo4j")) | set(cypher.names("explore")))


def rendered(name: str) -> str:
    statement = cypher.load(name, "neo4j")
    samples = {key: SAMPLE_IDENTIFIERS[key] for key in statement.placeholders if key in SAMPLE_IDENTIFIERS}
    return cypher.render(statement, samples)  # StatementError names any placeholder without a sample


def run_linter(items: list[dict[str, str]]) -> dict[str, list[dict]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; Neo4j's Cypher linter needs Node.js (>= 18.18)")
    if not LINT_PACKAGE.is_dir():
        pytest.skip(f"{LINT_PACKAGE.relative_to(ROOT)} is absent; install it: npm ci --prefix cypher/lint")
    started = time.monotonic()
    completed = subprocess.run(
        [node, str(LINT_SCRIPT)],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=LINT_TIMEOUT_S,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert completed.returncode == 0, f"lint.mjs failed (exit {completed.returncode}):\n{completed.stderr}"
    results = json.loads(completed.stdout)
    assert [result["name"] for result in results] == [item["name"] for item in items]
    print(f"linted {len(items)} statements in {elapsed:.2f}s")
    return {result["name"]: result["diagnostics"] for result in results}


@pytest.fixture(scope="module")
def lint_results() -> dict[str, list[dict]]:
    """Diagnostics of every Neo4j statement and every canary, from one run of the linter."""
    items = [{"name": name, "text": rendered(name)} for name in neo4j_statement_names()]
    items += [{"name": name, "text": text} for name, text in CANARIES.items()]
    return run_linter(items)


def describe(diagnostics: list[dict]) -> str:
    return "\n".join(f"  {d['line']}:{d['column']} {d['severity']}: {d['message']}" for d in diagnostics)


def test_sample_identifiers_cover_every_placeholder() -> None:
    for name in neo4j_statement_names():
        missing = cypher.load(name, "neo4j").placeholders - SAMPLE_IDENTIFIERS.keys()
        assert not missing, f"{name}: add sample identifiers for {sorted(missing)} to SAMPLE_IDENTIFIERS"


@pytest.mark.parametrize("name", neo4j_statement_names())
def test_statement_lints_clean(name: str, lint_results: dict[str, list[dict]]) -> None:
    unexpected = [d for d in lint_results[name] if not PARAMETER_NOT_DEFINED.match(d["message"])]
    assert not unexpected, f"Neo4j's linter rejects {name} as rendered:\n{rendered(name)}\n{describe(unexpected)}"


def test_linter_reports_syntax_errors(lint_results: dict[str, list[dict]]) -> None:
    diagnostics = lint_results["canary/syntax_error"]
    assert diagnostics, "a broken statement linted clean: the linter is not running"
    syntax_errors = [d for d in diagnostics if d["severity"] == "error" and "Invalid input" in d["message"]]
    assert syntax_errors, describe(diagnostics)


def test_linter_reports_semantic_errors(lint_results: dict[str, list[dict]]) -> None:
    diagnostics = lint_results["canary/undefined_variable"]
    assert any("Variable `m` not defined" in d["message"] for d in diagnostics), describe(diagnostics)


def test_parameter_filter_matches_the_real_message(lint_results: dict[str, list[dict]]) -> None:
    diagnostics = lint_results["canary/parameter"]
    assert [d["message"] for d in diagnostics] == ["Parameter $id is not defined."], describe(diagnostics)
    assert all(PARAMETER_NOT_DEFINED.match(d["message"]) for d in diagnostics)
