"""The store interface every backend implements, and what it returns.

A :class:`GraphStore` knows the schema, runs named statements from :mod:`cypher`, applies a
validated batch atomically, and writes computed properties back. Callers never see driver
objects or Cypher strings; they pass labels/types (checked against the schema) and frames.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from graph.errors import ConfigError, DataError, SchemaError
from graph.integrity import non_finite_rows
from graph.schema import ABSTRACT_SECTION, ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN, NodeType, RelType, Schema
from graph.statements import identifier
from graph.validate import require_valid_rels

PAPER_VECTORS = ("embedding", "taxonomy", "poincare")  # the computed Paper vectors Completeness reports


@dataclass(frozen=True)
class WriteResult:
    created: int  # rows that became new nodes/edges
    matched: int  # rows that were already there (their given properties now set)


@dataclass(frozen=True)
class WorkChange:
    """One all-or-nothing change of the graph (:meth:`GraphStore.apply_change`): nodes deleted with their edges,
    then nodes and edges upserted, as :mod:`graph.works` plans a merge or a deletion of a work."""

    deletes: dict[str, list[str]] = field(default_factory=dict)  # label -> keys deleted with their edges
    nodes: dict[str, pd.DataFrame] = field(default_factory=dict)  # label -> rows upserted (a null keeps a value)
    rels: dict[str, pd.DataFrame] = field(default_factory=dict)  # type -> edges upserted (ends exist by then)

    @property
    def empty(self) -> bool:
        return not any(self.deletes.values()) and not self.nodes and not self.rels


@dataclass(frozen=True)
class Completeness:
    """How far one computed property has come: ``have`` of the ``of`` nodes that should carry it.

    ``fraction`` is ``have / of``, and 1.0 where ``of`` is 0 (nothing to compute is complete). ``have``
    never exceeds ``of``: a node counts only if it should carry the property.
    """

    property: str  # "Label.property", e.g. "Paper.embedding"
    have: int  # nodes among `of` that carry the property
    of: int  # nodes that should carry it: those with a text to embed

    @builtins.property  # the field `property` shadows the builtin inside this class
    def fraction(self) -> float:
        return self.have / self.of if self.of else 1.0

    def as_dict(self) -> dict[str, int | float]:
        """``have``, ``of`` and ``fraction``, for JSON."""
        return {"have": self.have, "of": self.of, "fraction": self.fraction}


class GraphStore(ABC):
    """One graph, one schema, two backends.

    :class:`~graph.embedded.EmbeddedStore` (LadybugDB, default) and :class:`~graph.neo4j.Neo4jStore`.
    """

    backend: str = ""
    dialect: str = ""

    def __init__(self, schema: Schema, *, read_only: bool) -> None:
        self.schema = schema
        self.read_only = read_only
        # Statements this store runs at once from different threads; callers that share it (the API's
        # GraphService) admit that many. 1: one at a time (a read-write embedded open, Neo4j as the API uses it).
        self.read_concurrency = 1

    # lifecycle -------------------------------------------------------------------------------
    @abstractmethod
    def ensure_schema(self) -> None:
        """Create missing tables/constraints (idempotent) and check existing ones against the schema."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @abstractmethod
    def describe(self) -> str:
        """Where this store lives, for messages (path or URI, never credentials)."""

    # reads -----------------------------------------------------------------------------------
    @abstractmethod
    def query(
        self, name: str, params: Mapping[str, Any] | None = None, identifiers: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Rows of the named statement from ``cypher/`` (read-only statements only through the API).

        No step writes a NaN or an infinity, so a result holding one comes from a damaged store: it
        raises :class:`~graph.errors.StoreCorruptError` (:func:`graph.integrity.require_sound`).
        """

    def query_arrow(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        identifiers: Mapping[str, str] | None = None,
        *,
        verify: bool = True,
    ) -> pa.Table:
        """The named statement's result as one Arrow table, for bulk reads (millions of rows).

        Columns are typed Arrow arrays, with no Python object per value: the embedded store hands
        over the engine's own Arrow result; this default (and Neo4j's override, which converts
        record batches as they stream in) builds it from rows. An empty result may have no columns.
        Like :meth:`query`, a result holding a NaN or an infinity raises
        :class:`~graph.errors.StoreCorruptError` (:func:`graph.integrity.require_sound`); ``verify=False``
        hands it over as read (``citegraph check``, which counts such values).
        """
        return pa.Table.from_pylist(self.query(name, params, identifiers))

    def query_keys(self, name: str, each: str, ids: Sequence[str]) -> list[dict[str, Any]]:
        """Rows of the statement ``name`` for the keys ``ids`` (its ``$ids``), or the rows of the statement
        ``each`` (the same columns for one key, its ``$id``) run once per distinct key, where the backend
        answers that faster; in either case the rows of every key, grouped by key.

        Neo4j looks a list of keys up in its index: the one statement (this default). The embedded store
        has no index lookup for ``IN $ids``: it scans the label, where ``= $id`` looks the key up in its
        hash index (:meth:`graph.embedded.EmbeddedStore.query_keys`).
        """
        return self.query(name, {"ids": list(ids)})

    @abstractmethod
    def read_only_query(self, text: str, params: Mapping[str, Any] | None = None) -> tuple[list[str], list[list[Any]]]:
        """Columns and rows of a user's query, refused if it would write."""

    @abstractmethod
    def has_nodes(self, label: str, keys: pd.Series) -> np.ndarray:
        """Boolean mask over ``keys``: which nodes of ``label`` exist in the store."""

    @abstractmethod
    def read_edges(self, rel_type: str) -> pd.DataFrame:
        """Every edge of ``rel_type``: ``source``, ``target`` and each property of the type."""

    def iter_nodes(self, label: str, batch_size: int) -> Iterator[pd.DataFrame]:
        """Every node of ``label`` with every stored property, ``batch_size`` nodes per frame, in key order.

        Columns: the key, then each property of the schema (null where a node has none). Pages are
        key lookups (``nodes_by_keys``), so every backend reads each node once, whatever its size.
        """
        node = self.schema.node(label)
        if batch_size < 1:
            raise ConfigError(f"batch size {batch_size} must be at least 1")
        keys = sorted(row["key"] for row in self.query("every_key", identifiers={"LABEL": label, "KEY": node.key}))
        others = [p for p in node.properties if p.name != node.key]
        identifiers = {
            "LABEL": identifier(label),
            "KEY": identifier(node.key),
            "NODE_COLUMNS": "".join(f", n.{identifier(p.name)} AS {p.name}" for p in others),
        }
        columns = [node.key, *(p.name for p in others)]
        for start in range(0, len(keys), batch_size):
            rows = self.query("nodes_by_keys", {"keys": keys[start : start + batch_size]}, identifiers)
            frame = pd.DataFrame([[row["key"], *(row[p.name] for p in others)] for row in rows], columns=columns)
            yield frame.sort_values(node.key, ignore_index=True)

    def iter_edges(self, rel_type: str, batch_size: int) -> Iterator[pd.DataFrame]:
        """Every edge of ``rel_type`` (``source``, ``target``, each property), at most ``batch_size`` per frame.

        Edges are read by start node, ``batch_size`` start nodes per query (``rels_from_keys``), in key order.
        """
        rel = self.schema.rel(rel_type)
        if batch_size < 1:
            raise ConfigError(f"batch size {batch_size} must be at least 1")
        source, target = self.schema.node(rel.source), self.schema.node(rel.target)
        keys = sorted(
            row["key"] for row in self.query("every_key", identifiers={"LABEL": rel.source, "KEY": source.key})
        )
        identifiers = {
            "SOURCE": identifier(rel.source),
            "SOURCE_KEY": identifier(source.key),
            "TYPE": identifier(rel.type),
            "TARGET": identifier(rel.target),
            "TARGET_KEY": identifier(target.key),
            "COLUMNS": "".join(f", r.{identifier(p.name)} AS {p.name}" for p in rel.properties),
        }
        columns = [SOURCE_COLUMN, TARGET_COLUMN, *(p.name for p in rel.properties)]
        pending: list[list[Any]] = []
        for start in range(0, len(keys), batch_size):
            rows = self.query("rels_from_keys", {"keys": keys[start : start + batch_size]}, identifiers)
            pending += [[row[name] for name in columns] for row in rows]
            while len(pending) >= batch_size:
                yield pd.DataFrame(pending[:batch_size], columns=columns)
                pending = pending[batch_size:]
        if pending:
            yield pd.DataFrame(pending, columns=columns)

    def count_nodes(self, label: str) -> int:
        self.schema.node(label)
        return int(self.query("count_nodes", identifiers={"LABEL": label})[0]["n"])

    def count_rels(self, rel_type: str) -> int:
        self.schema.rel(rel_type)
        return int(self.query("count_rels", identifiers={"TYPE": rel_type})[0]["n"])

    def stats(self) -> dict[str, dict[str, int]]:
        """Node counts per label and relationship counts per type."""
        return {
            "nodes": {label: self.count_nodes(label) for label in self.schema.nodes},
            "relationships": {rel: self.count_rels(rel) for rel in self.schema.rels},
        }

    def completeness(self) -> list[Completeness]:
        """How complete each computed property a user waits for is: ``Paper.embedding``, ``Paper.taxonomy``,
        ``Paper.poincare`` and ``Sentence.embedding``, in that order.

        For papers, ``of`` is the papers with a text to embed, by the rule of
        :mod:`gnn.text.embeddings`: a non-blank title, abstract or reference string, or else (no
        ``abstract``) a non-blank sentence of the :data:`~graph.schema.ABSTRACT_SECTION` section to rebuild
        the abstract from; ``have`` is how many of them carry the property. A paper without text gets
        no vectors and is in no count. For sentences, ``of`` is those with non-blank ``text``. A
        limited build embeds only some sentences on purpose, so ``Sentence.embedding`` below 1.0 is
        progress, not a fault. Co-citation edges have no "of" and are not reported.

        Count statements only (``paper_completeness``, ``sentence_completeness``): no property value
        leaves the store, so this is cheap enough for a readiness probe. Blank is what Cypher's
        ``trim()`` removes; Python's ``str.strip`` also removes Unicode spaces such as U+00A0, so a
        title of nothing else would count here and not be embedded (the loaders collapse such white
        space, so none is stored).
        """
        parts = self.query("paper_completeness", {"section": ABSTRACT_SECTION})  # disjoint parts: summed
        papers = {column: sum(int(row[column]) for row in parts) for column in ("with_text", *PAPER_VECTORS)}
        sentences = self.query("sentence_completeness")[0]
        return [
            *(Completeness(f"Paper.{name}", papers[name], papers["with_text"]) for name in PAPER_VECTORS),
            Completeness("Sentence.embedding", int(sentences["embedding"]), int(sentences["with_text"])),
        ]

    # writes ----------------------------------------------------------------------------------
    @abstractmethod
    def apply(self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame]) -> dict[str, WriteResult]:
        """Upsert validated node and relationship tables, all or nothing.

        Nodes merge on their key; a null in a frame keeps the stored value. Edges merge on
        ``(source, target, *identity)``. Callers go through :func:`graph.ingest.ingest`, which validates.
        """

    def apply_change(self, change: WorkChange) -> None:
        """Apply ``change`` all or nothing: delete its nodes (with every edge they have), then upsert its nodes
        and edges as :meth:`apply` does. The statements are ``delete_nodes`` and the upserts of :meth:`apply`;
        each backend runs them in one transaction (the embedded store's staged copy, which is all or nothing
        itself, without one). Callers: :func:`graph.works.merge_works` and :func:`graph.works.delete_work`."""
        for label, keys in change.deletes.items():
            self.schema.node(label)
            if any(not isinstance(key, str) for key in keys):
                raise SchemaError(f"apply_change: the keys of {label} nodes to delete must be strings")
        for label, frame in change.nodes.items():
            node = self.schema.node(label)
            self.schema.check_properties(node, [c for c in frame.columns if c not in (node.key, ORIGIN_COLUMN)])
        for rel_type, frame in change.rels.items():
            rel = self.schema.rel(rel_type)
            self.schema.check_properties(
                rel, [c for c in frame.columns if c not in (SOURCE_COLUMN, TARGET_COLUMN, ORIGIN_COLUMN)]
            )
        self._apply_change(change)

    @abstractmethod
    def _apply_change(self, change: WorkChange) -> None:
        """:meth:`apply_change` after its checks, in one transaction."""

    def apply_deferring(
        self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame]
    ) -> dict[str, WriteResult]:
        """:meth:`apply`, where a backend may hold the new edges back until :meth:`write_deferred` (the embedded
        store's staged copy spills them to disk and copies each table in a few large COPYs at the end)."""
        return self.apply(nodes, rels)

    def write_deferred(self, memory_bytes: int) -> dict[str, WriteResult]:
        """Write what :meth:`apply_deferring` held back (``memory_bytes``: what the writes may plan to use);
        the changes to the counts it returned (edges found repeated move from created to matched)."""
        return {}

    def staged(self) -> AbstractContextManager[GraphStore] | None:
        """A store to write a load of many batches into (:func:`graph.ingest.ingest_stream`), all or nothing.

        Entering gives the store to write; leaving the block normally makes its contents this store's,
        leaving it with an exception (or a kill) leaves this store as it was. None where the backend
        has no such copy (Neo4j: a streamed load is then written in one transaction).
        """
        return None

    @abstractmethod
    def _set_node_properties(self, label: str, frame: pd.DataFrame) -> None:
        """Set the frame's properties on nodes that exist (keys already checked)."""

    @abstractmethod
    def _replace_edges(self, rel_type: str, frame: pd.DataFrame) -> int:
        """Replace every edge of ``rel_type`` by the frame's (validated) edges, atomically."""

    def replace_edges(self, rel_type: str, frame: pd.DataFrame) -> int:
        """Replace every edge of ``rel_type`` by ``frame`` (``source``, ``target``, properties), atomically.

        For recomputed edges such as CO_CITED: re-running replaces, never duplicates. The frame is
        validated first; any reject raises :class:`~graph.errors.ValidationError` and nothing changes.
        """
        rel = self.schema.rel(rel_type)
        _require_finite_writes(frame, rel, rel_type)
        clean = require_valid_rels(frame, rel, self.has_nodes)
        return self._replace_edges(rel_type, clean)

    def write_node_properties(self, label: str, key: str, frame: pd.DataFrame) -> int:
        """Write computed properties (``frame``: the key column plus properties) onto existing nodes.

        Unlike ingest, a null here is written as a null: a recomputation replaces old values.
        Large frames are written in batches, one transaction each (both backends): a write-back that
        stops half-way leaves some nodes with the new values, and rerunning the step completes it.
        Returns how many nodes were updated; keys that match no node raise :class:`SchemaError`
        naming a few of them, since a write-back for a node that does not exist is a bug upstream.
        """
        node = self.schema.node(label)
        if key != node.key:
            raise SchemaError(f"{label} nodes are keyed by `{node.key}`, not `{key}`")
        self.schema.check_properties(node, [c for c in frame.columns if c not in (key, ORIGIN_COLUMN)])
        if frame.empty:
            return 0
        _require_finite_writes(frame, node, label)
        if frame[key].duplicated().any():
            raise SchemaError(
                f"write-back for {label} repeats keys, e.g. {frame[key][frame[key].duplicated()].iloc[0]!r}"
            )
        present = self.has_nodes(label, frame[key])
        if not present.all():
            missing = frame[key][~present].head(3).tolist()
            raise SchemaError(f"write-back for {label}: {int((~present).sum())} keys match no node, e.g. {missing}")
        self._set_node_properties(label, frame.drop(columns=[ORIGIN_COLUMN], errors="ignore"))
        return len(frame)


def _require_finite_writes(frame: pd.DataFrame, owner: NodeType | RelType, name: str) -> None:
    """A DataError when ``frame`` would write a NaN inside a list or vector, or an infinity, into ``owner``."""
    bad = non_finite_rows(frame, owner)
    if bad:
        counts = ", ".join(f"{name}.{prop} in {n} row(s)" for prop, n in bad.items())
        raise DataError(
            f"refusing to write values that are not finite (NaN or infinity): {counts}; nothing was written. "
            "No step should compute such values: rerun the step with --debug and report it"
        )


__all__ = ["PAPER_VECTORS", "Completeness", "GraphStore", "WorkChange", "WriteResult"]
