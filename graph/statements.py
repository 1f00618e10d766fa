"""The store's door to :mod:`cypher`: statement texts by name and checked identifiers, in the project's errors.

Every backend loads its statements through here, so :class:`cypher.StatementError` (``cypher/``
knows nothing of :mod:`graph.errors`) becomes a :class:`~graph.errors.QueryError` with the same
message in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

import cypher
from graph.errors import QueryError


def translate_statement_error(exc: cypher.StatementError) -> QueryError:
    """The project's error for a statement that cannot be loaded or rendered; the message is cypher's."""
    return QueryError(str(exc))


def statement_text(name: str, dialect: str, identifiers: Mapping[str, str] | None = None) -> str:
    """The text of statement ``name`` in ``dialect`` with its ``__PLACEHOLDERS__`` filled from ``identifiers``."""
    try:
        return cypher.render(cypher.load(name, dialect), dict(identifiers or {}))
    except cypher.StatementError as exc:
        raise translate_statement_error(exc) from exc


def load_statement(name: str, dialect: str) -> cypher.Statement:
    """Statement ``name`` in ``dialect`` (its header included), or :class:`QueryError`."""
    try:
        return cypher.load(name, dialect)
    except cypher.StatementError as exc:
        raise translate_statement_error(exc) from exc


def identifier(name: str) -> str:
    """``name`` if it is a plain Cypher identifier (a label, type or property of the schema), else :class:`QueryError`."""
    try:
        return cypher.check_identifier(name)
    except cypher.StatementError as exc:
        raise translate_statement_error(exc) from exc


__all__ = ["identifier", "load_statement", "statement_text", "translate_statement_error"]
