"""The project's errors: one base class, a small tree, messages that say what went wrong and what to do.

::

    CitegraphError
    ├── ConfigError                 a setting, flag, argument or environment variable the project cannot use
    ├── DataError                   a record, file or store whose contents do not fit what is asked of it
    │   ├── SchemaError             unknown label/type/property, or a store built with other vector sizes
    │   ├── StoreCorruptError       the store holds values no step writes (NaN, out of range): its file is damaged
    │   └── IngestError             input rejected before anything was written
    │       └── ValidationError     records failed validation in ``--on-error fail`` mode (``rejects``)
    ├── QueryError                  a named statement is missing or malformed, or a read-only query would write
    └── StoreError                  the backend failed (translated from LadybugDB / Neo4j driver errors)
        ├── StoreUnavailableError   cannot open or reach the store
        ├── StoreFullError          the disk that holds the store filled up; says what was written and what to do
        └── TransientStoreError     a failure that may pass (deadlock, leader switch): an idempotent write may be retried

Outside this module: ``loaders.fetch.FetchError`` (a download failed; ``SourceUnreachableError``,
``ChecksumError``) and ``loaders.ids.PaperIdError`` (an ``IngestError``) belong to the same tree.
``cypher.StatementError`` does not: ``cypher/`` knows nothing of this package, so the backends
translate it to :class:`QueryError` where they load a statement.

**ConfigError or DataError?** By what is wrong, not by the fix. ConfigError: a value someone gave
(a setting, a flag, an argument, an environment variable, a path given that points nowhere) is out
of range, unknown or inconsistent with another. DataError: the contents of a record, a file, the
store or what was built beside it do not fit (a line that is not JSON, a file with no rows, a store
without embeddings, no trained reranker, a model file trained on other features, a taxonomy with
nothing to learn from). The CLI exits 1 on the
first and 65 (``EX_DATAERR``) on the second.

Foreign exceptions are translated where they enter, one helper per backend
(``graph.embedded.translate_ladybug_error``, ``graph.neo4j.translate_neo4j_error``,
``gnn.device.translate_torch_error``), so callers catch :class:`CitegraphError` and users see one
line that names the problem and the fix, never a driver traceback.

This module imports nothing of the project: every package may raise these errors.
"""

from __future__ import annotations

from dataclasses import dataclass


class CitegraphError(Exception):
    """Base of every error the project raises on purpose."""


class ConfigError(CitegraphError):
    """A setting, flag, argument or environment variable has a value the project cannot use."""


class DataError(CitegraphError):
    """A record, a file or the store's contents do not fit what the step needs; the data must change."""


class SchemaError(DataError):
    """A label, relationship type or property is not part of the data model, or the store disagrees with it."""


class StoreCorruptError(DataError):
    """The store holds a value no step writes (a NaN, a probability above 1): its file is damaged.

    Raised where such a value is read (:func:`graph.integrity.require_sound`); ``citegraph check``
    lists every one. The message says to restore a copy or rebuild.
    """


class IngestError(DataError):
    """Input was rejected before anything was written; the store is unchanged."""


@dataclass(frozen=True)
class Reject:
    """One record that was not stored, and why."""

    table: str  # label or relationship type
    origin: str  # file:line or "<table> record N"
    reason: str


class ValidationError(IngestError):
    """Some records failed validation and ``on_error`` is ``fail``.

    ``rejects`` holds every rejected record (location and reason), not only the first.
    """

    def __init__(self, message: str, rejects: list[Reject]) -> None:
        super().__init__(message)
        self.rejects = rejects


class NotFoundError(CitegraphError):
    """An id the user gave names nothing in the store (not as a key, not as any alias)."""


class QueryError(CitegraphError):
    """A named Cypher statement is missing or malformed, or a read-only query would write."""


class StoreError(CitegraphError):
    """The graph backend failed while running a statement."""


class StoreUnavailableError(StoreError):
    """The store cannot be opened or reached (missing file, lock held, server down, bad credentials)."""


class StoreFullError(StoreError):
    """The filesystem that holds the store (or a copy of it being written) ran out of space.

    Translated from an ``OSError`` with ``errno.ENOSPC`` and from the embedded engine's "No space left on
    device". The message names the store, the free space (and the space needed where it is known), says
    what was written — nothing, everything up to a point, or, when the disk filled during the engine's
    checkpoint after a commit, one whole write or none of it until ``citegraph recover`` finishes that
    checkpoint — and what to do. ``pending_recovery``: a checkpoint was left unfinished, so every open of
    the store needs a read-write open (``recover``) with room on the disk first.
    """

    def __init__(self, message: str, *, pending_recovery: bool = False) -> None:
        super().__init__(message)
        self.pending_recovery = pending_recovery


class TransientStoreError(StoreError):
    """The backend failed for a reason that may pass (a deadlock, a leader switch, a timeout).

    The backend's own retries are spent; a caller whose write is idempotent (MERGE) may try again.
    """


__all__ = [
    "CitegraphError",
    "ConfigError",
    "DataError",
    "IngestError",
    "NotFoundError",
    "QueryError",
    "Reject",
    "SchemaError",
    "StoreCorruptError",
    "StoreError",
    "StoreFullError",
    "StoreUnavailableError",
    "TransientStoreError",
    "ValidationError",
]
