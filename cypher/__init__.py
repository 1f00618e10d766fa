"""Every Cypher statement of the project, one per ``.cypher`` file, loaded by name.

Resolution order for ``load(name, dialect)``: ``cypher/<dialect>/<name>.cypher`` if it exists,
else ``cypher/<name>.cypher``. Dialect folders hold only what differs between Neo4j and the
embedded database (DDL, bulk load, upserts); ``explore/`` holds the read-only queries analysts
and the API's ``explore`` field may run.

Each file starts with ``//`` header lines naming its parameters and returned columns. Values
always travel as ``$parameters``. Identifiers (labels, relationship types, property names) that
vary with the data model are written as ``__UPPER__`` placeholders — valid Cypher names, so the
files lint as they are — and filled by :func:`render` only with names that pass
:func:`check_identifier`; callers take those names from the schema allowlist (:mod:`graph.schema`).

This package imports nothing of the project. A statement that cannot be loaded or rendered (an
unknown name or dialect, a file without its header, a missing or malformed identifier) raises
:class:`StatementError`; the store backends translate it to their own error tree where they call here.

Known traps of the embedded engine (LadybugDB 0.22), avoided in every statement here:

* ``count(DISTINCT x)`` after an equality filter on a primary key (``MATCH (p:Paper {id: $id})-...``
  or ``WHERE p.id = $id``) ignores the filter and counts over every match; ``count(x)`` /
  ``count(*)`` and ``IN`` filters are correct.
* ``UNWIND ... MATCH (a {...}), (b {...}) CREATE`` runs at tens of rows per second; bulk writes
  go through COPY / LOAD FROM (see :mod:`graph.embedded`).
* Batched lookups across a relationship (``UNWIND $ids AS wanted MATCH (a)-[:R]->(p {id: wanted})``)
  scan the relationship table: 0.5 s on WROTE; ``MATCH (a)-[:R]->(p) WHERE p.id IN $ids`` takes 20 ms.
  Node-only lookups are the other way round (the key index serves ``UNWIND ... {id: wanted}``).
* ``x CONTAINS ''`` is false (not true as in Neo4j); test ``$text = '' OR ...`` first.
* ``ORDER BY ... SKIP $skip LIMIT $limit`` with ``$skip`` far past the last row (beyond ~11,900 rows
  in every shape tried) kills the process with SIGSEGV (``benchmarks/ladybug_skip_crash.py``): a
  statement with ``$skip`` names its count statement in a ``// counted by: name`` header line, which
  the embedded store runs first to clamp a large ``$skip``.
* ``ORDER BY`` inside ``WITH`` needs a ``LIMIT``; ``null`` parameters compared with integers are a
  type error (pass explicit bounds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

DIALECTS = ("embedded", "neo4j")
_PLACEHOLDER = re.compile(r"__([A-Z][A-Z0-9_]*?)__")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_COUNTED_BY = re.compile(r"^//\s*counted by:\s*([a-z0-9_/]+)\s*$", re.MULTILINE)


class StatementError(Exception):
    """A statement cannot be loaded or rendered: unknown name or dialect, no header, a bad or missing identifier."""


@dataclass(frozen=True)
class Statement:
    name: str  # e.g. "count_nodes" or "explore/top_cited"
    dialect: str | None  # None: shared by both backends
    text: str  # the statement without its header
    header: str  # the leading // lines

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER.findall(self.text))

    @property
    def parameters(self) -> frozenset[str]:
        """The ``$names`` the statement reads."""
        return frozenset(_PARAMETER.findall(self.text))

    @property
    def counted_by(self) -> str | None:
        """The statement that counts this one's rows without ``SKIP``/``LIMIT`` (header ``// counted by: name``),
        which the embedded store runs before a large ``$skip`` (see :mod:`graph.embedded`)."""
        found = _COUNTED_BY.search(self.header)
        return found.group(1) if found else None


def check_identifier(name: str) -> str:
    """``name`` if it is a plain Cypher identifier, else :class:`StatementError`; never quote-escaped."""
    if not _IDENTIFIER.match(name):
        raise StatementError(f"{name!r} is not a plain identifier; labels, types and properties come from the schema")
    return name


def _split_header(raw: str) -> tuple[str, str]:
    lines = raw.strip().splitlines()
    header = [line for line in lines if line.startswith("//")]
    body = [line for line in lines if not line.startswith("//")]
    return "\n".join(header), "\n".join(body).strip()


@cache
def load(name: str, dialect: str | None = None) -> Statement:
    """The statement called ``name``, preferring the dialect's own version."""
    if dialect is not None and dialect not in DIALECTS:
        raise StatementError(f"unknown Cypher dialect {dialect!r}; expected one of {DIALECTS}")
    root = resources.files(__name__)
    candidates = ([(dialect, f"{dialect}/{name}.cypher")] if dialect else []) + [(None, f"{name}.cypher")]
    for found_dialect, relative in candidates:
        path = root.joinpath(relative)
        if path.is_file():
            header, text = _split_header(path.read_text(encoding="utf-8"))
            if not header:
                raise StatementError(f"cypher/{relative} has no // header naming its parameters and columns")
            return Statement(name, found_dialect, text, header)
    where = f" for dialect {dialect!r}" if dialect else ""
    raise StatementError(f"no Cypher statement named {name!r}{where}; expected cypher/{candidates[0][1]}")


def render(statement: Statement, identifiers: dict[str, str] | None = None) -> str:
    """The statement text with every ``__NAME__`` placeholder replaced by ``identifiers[NAME]``.

    Identifier values must be plain names (checked) or, for the few list-valued placeholders such
    as ``__ASSIGNMENTS__``, text the caller assembled from checked names only.
    """
    identifiers = identifiers or {}
    missing = statement.placeholders - identifiers.keys()
    if missing:
        raise StatementError(f"statement {statement.name!r} needs identifiers {sorted(missing)}")

    def substitute(match: re.Match[str]) -> str:
        return identifiers[match.group(1)]

    return _PLACEHOLDER.sub(substitute, statement.text)


def names(folder: str | None = None) -> list[str]:
    """Names of the statements in ``cypher/`` (shared) or in one of its folders."""
    root = resources.files(__name__)
    base = root.joinpath(folder) if folder else root
    if not base.is_dir():
        return []
    prefix = f"{folder}/" if folder and folder not in DIALECTS else ""
    return sorted(prefix + entry.name[: -len(".cypher")] for entry in base.iterdir() if entry.name.endswith(".cypher"))


__all__ = ["DIALECTS", "Statement", "StatementError", "check_identifier", "load", "names", "render"]
