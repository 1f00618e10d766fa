"""The project's errors: one base class, a small tree, messages that say what to do.

::

    CitegraphError
    ├── ConfigError            bad setting or environment variable
    ├── SchemaError            unknown label/type/property, or a store built with other vector sizes
    ├── QueryError             a named statement is missing, or a read-only query tried to write
    ├── StoreError             the backend failed (translated from ladybug / neo4j errors)
    │   ├── StoreUnavailableError   cannot open or reach the store
    │   └── TransientStoreError     a failure that may pass (deadlock, leader switch): an idempotent write may be retried
    └── IngestError            input rejected before anything was written
        └── ValidationError        records failed validation in ``--on-error fail`` mode

Foreign exceptions are translated where they enter (``raise StoreError(...) from exc``), so callers
catch ``CitegraphError`` and users see one line that names the problem and the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graph.validate import Reject


class CitegraphError(Exception):
    """Base of every error the project raises on purpose."""


class ConfigError(CitegraphError):
    """A setting or environment variable has a value the project cannot use."""


class SchemaError(CitegraphError):
    """A label, relationship type or property is not part of the data model, or the store disagrees with it."""


class QueryError(CitegraphError):
    """A named Cypher statement is missing or malformed, or a read-only query would write."""


class StoreError(CitegraphError):
    """The graph backend failed while running a statement."""


class StoreUnavailableError(StoreError):
    """The store cannot be opened or reached (missing file, lock held, server down, bad credentials)."""


class TransientStoreError(StoreError):
    """The backend failed for a reason that may pass (a deadlock, a leader switch, a timeout).

    The backend's own retries are spent; a caller whose write is idempotent (MERGE) may try again.
    """


class IngestError(CitegraphError):
    """Input was rejected before anything was written; the store is unchanged."""


class ValidationError(IngestError):
    """Some records failed validation and ``on_error`` is ``fail``.

    ``rejects`` holds every rejected record (location and reason), not only the first.
    """

    def __init__(self, message: str, rejects: list[Reject]) -> None:
        super().__init__(message)
        self.rejects = rejects


__all__ = [
    "CitegraphError",
    "ConfigError",
    "IngestError",
    "QueryError",
    "SchemaError",
    "StoreError",
    "StoreUnavailableError",
    "TransientStoreError",
    "ValidationError",
]
