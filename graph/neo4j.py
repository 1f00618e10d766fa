"""The Neo4j backend: the same store interface over the official ``neo4j`` driver.

Reads go through ``driver.execute_query(..., routing_=READ)``; every write is a managed
transaction (``session.execute_write``) made of ``UNWIND $rows`` batches of
:attr:`StoreConfig.batch_size <graph.config.StoreConfig.batch_size>` rows. The statements only
MERGE (or delete before re-merging), so the driver may retry a transaction function safely, and
each function consumes its results before it returns. :meth:`Neo4jStore.apply` runs the whole
batch in ONE transaction: a failure anywhere leaves the store as it was.

Driver errors are translated where they enter (:meth:`Neo4jStore._calling`, which every statement
runs inside, by :func:`translate_neo4j_error`): users see a
:class:`~graph.errors.StoreUnavailableError` that names ``NEO4J_URI`` or ``NEO4J_USER`` /
``NEO4J_PASSWORD``, or a :class:`~graph.errors.QueryError` / :class:`~graph.errors.StoreError`
naming the statement, never a driver traceback.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import pandas as pd
import pyarrow as pa
from neo4j import READ_ACCESS, Driver, GraphDatabase, ManagedTransaction, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    CypherSyntaxError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from neo4j.graph import Node, Path, Relationship

from graph.arrow import arrow_table
from graph.config import StoreConfig
from graph.errors import (
    CitegraphError,
    ConfigError,
    QueryError,
    SchemaError,
    StoreError,
    StoreUnavailableError,
    TransientStoreError,
)
from graph.integrity import require_sound
from graph.readonly import NEO4J_PROCEDURES, check_read_only
from graph.schema import SOURCE_COLUMN, TARGET_COLUMN, Kind, Property, RelType, Schema
from graph.statements import identifier, statement_text
from graph.store import GraphStore, WorkChange, WriteResult

log = logging.getLogger(__name__)

T = TypeVar("T")
Row = dict[str, Any]
# Records converted to Arrow at once by query_arrow: bounds the Python objects alive together.
ARROW_BATCH_ROWS = 100_000

_DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"
_ACCESS_MODE = "Neo.ClientError.Statement.AccessMode"  # a write in a read-access transaction
_QUERY_KINDS = {"w": "writes", "rw": "reads and writes", "s": "changes the schema"}  # summary.query_type
_ENDPOINTS = [
    (SOURCE_COLUMN, Property(SOURCE_COLUMN, Kind.STRING)),
    (TARGET_COLUMN, Property(TARGET_COLUMN, Kind.STRING)),
]


def readable_graph_value(value: Any) -> Any:
    """``value`` of a user's query with each node, relationship and path as the embedded backend hands them
    out (:func:`graph.embedded.readable_graph_value`): a node as ``{"_label": ..., property: value}``, a
    relationship as ``{"_type": ..., property: value}``, a path as ``{"nodes": [...], "relationships": [...]}``;
    so ``citegraph cypher "... RETURN p"`` prints the same on both backends."""
    if isinstance(value, Node):
        return {"_label": ":".join(sorted(value.labels)), **{k: readable_graph_value(v) for k, v in value.items()}}
    if isinstance(value, Relationship):
        return {"_type": value.type, **{k: readable_graph_value(v) for k, v in value.items()}}
    if isinstance(value, Path):
        return {
            "nodes": [readable_graph_value(node) for node in value.nodes],
            "relationships": [readable_graph_value(rel) for rel in value.relationships],
        }
    if isinstance(value, list):
        return [readable_graph_value(item) for item in value]
    if isinstance(value, dict):
        return {key: readable_graph_value(item) for key, item in value.items()}
    return value


@dataclass
class _Step:
    """The statement running now, so an error raised later in a transaction names it."""

    name: str


def _snake(label: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", label).lower()


def constraint_name(label: str, key: str) -> str:
    """Name of the key constraint: ``("ArxivCategory", "code")`` -> ``arxiv_category_code_unique``."""
    return identifier(f"{_snake(label)}_{key}_unique")


# Node properties that get a Neo4j vector index, so Cypher users can ask for neighbours directly
# (``CALL db.index.vector.queryNodes('paper_embedding_vector', 10, $vector)``); the project's own
# retrieval keeps faiss. Dimensions come from the store's VectorSizes.
VECTOR_PROPERTIES = (("Paper", "embedding"), ("Sentence", "embedding"))
VECTOR_SIMILARITY = "cosine"  # text-encoder vectors are compared by angle


def vector_index_name(label: str, prop: str) -> str:
    """Name of a vector index: ``("Paper", "embedding")`` -> ``paper_embedding_vector``."""
    return identifier(f"{_snake(label)}_{prop}_vector")


@dataclass(frozen=True)
class VectorIndex:
    name: str  # e.g. paper_embedding_vector
    label: str
    property: str
    dimensions: int  # the vector size the store was built with (VectorSizes)
    similarity: str  # vector.similarity_function: "cosine"


def _public_uri(uri: str) -> str:
    """``uri`` without any ``user:password@`` part, for messages."""
    parts = urlsplit(uri)
    if parts.username is None and parts.password is None:
        return uri
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def _reason(exc: BaseException) -> str:
    """The driver's or server's own message, first line only."""
    message = getattr(exc, "message", None)
    # Errors built locally (not from a server reply) carry a placeholder message; their args say more.
    if not isinstance(message, str) or not message or message.startswith("An unknown error"):
        message = str(exc)
    lines = message.strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def translate_neo4j_error(
    exc: Neo4jError | DriverError, *, uri: str, user: str, where: str, what: str, user_query: bool = False
) -> CitegraphError:
    """The project's error for a driver or server error, with the server's reason and what to do.

    Args:
        exc: the driver's error (a server error carries a ``Neo.*`` code).
        uri: the server, without credentials; user: the user name, for refused credentials.
        where: the store as :meth:`Neo4jStore.describe` names it.
        what: the statement that failed (``"connect"``, ``"query"`` for a user's query, or a statement name).
        user_query: the query is a user's (``citegraph cypher``), not one of ``cypher/``'s statements.
    """
    reason = _reason(exc)
    code = exc.code if isinstance(exc, Neo4jError) else ""
    if isinstance(exc, AuthError):  # a ClientError too: check it first
        return StoreUnavailableError(
            f"Neo4j at {uri} refused the credentials of user {user!r}: {reason}; check NEO4J_USER / NEO4J_PASSWORD"
        )
    if isinstance(exc, (ServiceUnavailable, SessionExpired)):
        return StoreUnavailableError(
            f"cannot reach Neo4j at {uri}: {reason}; check NEO4J_URI and that the server is running"
        )
    if code == _DATABASE_NOT_FOUND:
        return StoreUnavailableError(
            f"{where}: {reason}; check NEO4J_DATABASE (unset it to use the server's default database)"
        )
    if code == _ACCESS_MODE:
        return QueryError(f"`{what}` would write, and {where} runs it read-only: {reason}")
    if isinstance(exc, CypherSyntaxError):
        if user_query:
            return QueryError(f"the query is not valid Cypher: {reason}")
        return QueryError(
            f"statement `{what}` is not valid Neo4j Cypher: {reason}; fix cypher/neo4j/{what}.cypher "
            f"(or cypher/{what}.cypher) and run tests/cypher/test_statements_lint.py"
        )
    if isinstance(exc, ClientError):
        if user_query:
            return QueryError(f"Neo4j refused the query: {reason}")
        return StoreError(f"{where}: `{what}` was refused: {reason}")
    if isinstance(exc, TransientError):
        return TransientStoreError(f"{where}: `{what}` failed after retries: {reason}; try again later")
    return StoreError(f"{where}: `{what}` failed: {reason}")


class Neo4jStore(GraphStore):
    """A :class:`GraphStore` on a Neo4j server (5.x or later).

    Args:
        driver: an open :class:`neo4j.Driver`; the store closes it in :meth:`close`.
        schema: the data model (labels, types, properties allowed in statements).
        uri: where ``driver`` points, for messages (credentials are stripped).
        database: the database to use; ``None`` lets the server pick its default.
        user: the user name, for messages about refused credentials.
        batch_size: rows per ``UNWIND $rows`` statement (default: 2000).
        read_only: refuse writes and skip creating constraints (default: ``False``).
    """

    backend = "neo4j"
    dialect = "neo4j"

    def __init__(
        self,
        driver: Driver,
        schema: Schema,
        *,
        uri: str,
        database: str | None = None,
        user: str = "neo4j",
        batch_size: int = 2_000,
        read_only: bool = False,
    ) -> None:
        super().__init__(schema, read_only=read_only)
        self._driver: Driver | None = driver
        self.uri = _public_uri(uri)
        self.database = database
        self.user = user
        self.batch_size = batch_size

    @classmethod
    def from_config(cls, config: StoreConfig, schema: Schema) -> Neo4jStore:
        """A store on ``config.neo4j_uri`` (no connection is made until the first statement)."""
        uri = config.neo4j_uri
        if not uri:
            raise ConfigError("the neo4j backend needs NEO4J_URI (e.g. neo4j://localhost:7687) and NEO4J_PASSWORD")
        if _public_uri(uri) != uri:
            raise ConfigError("NEO4J_URI must not carry credentials; set NEO4J_USER and NEO4J_PASSWORD instead")
        # No password: connect without authentication (a server with auth disabled accepts that).
        auth = (config.neo4j_user, config.neo4j_password) if config.neo4j_password is not None else None
        try:
            driver = GraphDatabase.driver(uri, auth=auth)
        except (ConfigurationError, ValueError) as exc:
            raise ConfigError(
                f"NEO4J_URI {uri!r} is not usable: {_reason(exc)}; expected e.g. neo4j://localhost:7687 or bolt://host:7687"
            ) from exc
        return cls(
            driver,
            schema,
            uri=uri,
            database=config.neo4j_database,
            user=config.neo4j_user,
            batch_size=config.batch_size,
            read_only=config.read_only,
        )

    def describe(self) -> str:
        database = f"database {self.database}" if self.database else "the server's default database"
        return f"Neo4j {self.uri} ({database})"

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    @property
    def driver(self) -> Driver:
        if self._driver is None:
            raise StoreError(f"{self.describe()} is closed; open the store again")
        return self._driver

    # errors ----------------------------------------------------------------------------------
    @contextmanager
    def _calling(self, what: str, *, user_query: bool = False) -> Iterator[_Step]:
        """Translate driver errors raised in the block; the block may advance ``step.name``."""
        step = _Step(what)
        try:
            yield step
        except (Neo4jError, DriverError) as exc:
            raise translate_neo4j_error(
                exc, uri=self.uri, user=self.user, where=self.describe(), what=step.name, user_query=user_query
            ) from exc

    # statements ------------------------------------------------------------------------------
    def _text(self, name: str, identifiers: Mapping[str, str] | None = None) -> str:
        return statement_text(name, self.dialect, identifiers)

    def _read(self, name: str, text: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        with self._calling(name):
            records, _, _ = self.driver.execute_query(
                text, dict(params or {}), routing_=RoutingControl.READ, database_=self.database
            )
        return [record.data() for record in records]

    def query(
        self, name: str, params: Mapping[str, Any] | None = None, identifiers: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Rows of a named statement, run in a read transaction (a statement that writes is refused by the server)."""
        return self._read(name, self._text(name, identifiers), params)

    def query_arrow(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        identifiers: Mapping[str, str] | None = None,
        *,
        verify: bool = True,
    ) -> pa.Table:
        """A named statement's rows as Arrow, converted :data:`ARROW_BATCH_ROWS` records at a time as they stream.

        The driver has no Arrow output, so each record is still a Python object once; batching
        bounds how many are alive together (``query`` keeps every row as a dict).
        """
        text = self._text(name, identifiers)

        def work(tx: ManagedTransaction) -> pa.Table:
            result = tx.run(text, dict(params or {}))
            keys = list(result.keys())
            batches: list[pa.Table] = []
            rows: list[list[Any]] = []
            for record in result:
                rows.append(list(record.values()))
                if len(rows) == ARROW_BATCH_ROWS:
                    batches.append(_arrow_batch(keys, rows))
                    rows = []
            if rows or not batches:
                batches.append(_arrow_batch(keys, rows))
            return pa.concat_tables(batches, promote_options="default")  # a batch of nulls takes the others' types

        with (
            self._calling(name),
            self.driver.session(database=self.database, default_access_mode=READ_ACCESS) as session,
        ):
            table: pa.Table = session.execute_read(work)
        return require_sound(table, store=self.describe(), what=name) if verify else table

    def read_only_query(self, text: str, params: Mapping[str, Any] | None = None) -> tuple[list[str], list[list[Any]]]:
        """Columns and rows of a user's query; refused unless Neo4j plans it as a pure read.

        ``EXPLAIN`` plans the query without running it and the summary's ``query_type`` says what
        it would do (``r``, ``rw``, ``w``, or ``s`` for schema changes). Only ``r`` runs, in a
        session opened with read access, so the server refuses a write that slipped past the plan.
        A plan of ``r`` still passes :func:`graph.readonly.check_read_only`: ``LOAD CSV`` of a file
        and plugin procedures read as ``r``.
        """
        parameters = dict(params or {})
        with self._calling("query", user_query=True):
            planned = self.driver.execute_query(
                f"EXPLAIN {text}", parameters, routing_=RoutingControl.READ, database_=self.database
            )
        query_type = planned.summary.query_type
        if query_type != "r":
            kind = _QUERY_KINDS.get(str(query_type), "may write")
            raise QueryError(
                f"this query {kind} (Neo4j plans it as {query_type!r}); `citegraph cypher` runs read-only queries only"
            )
        check_read_only(text, procedures=NEO4J_PROCEDURES)  # a plan of "r" may still read files (LOAD CSV)

        def work(tx: ManagedTransaction) -> tuple[list[str], list[list[Any]]]:
            result = tx.run(text, parameters)
            rows = [[readable_graph_value(value) for value in record.values()] for record in result]
            return list(result.keys()), rows

        with (
            self._calling("query", user_query=True),
            self.driver.session(database=self.database, default_access_mode=READ_ACCESS) as session,
        ):
            return session.execute_read(work)

    # schema ----------------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        """A uniqueness constraint (and so an index) on every label's key and the vector indexes of
        :data:`VECTOR_PROPERTIES` (checked against the schema's sizes); read-only: only connect.

        Connecting first fails fast on a wrong URI or password; statements would retry for ~30 s.
        """
        with self._calling("connect"):
            self.driver.verify_connectivity()
        if self.read_only:
            return
        for node in self.schema.nodes.values():
            name = constraint_name(node.label, node.key)
            text = self._text(
                "create_key_constraint",
                {"NAME": name, "LABEL": identifier(node.label), "KEY": identifier(node.key)},
            )
            with self._calling("create_key_constraint"):
                self.driver.execute_query(text, routing_=RoutingControl.WRITE, database_=self.database)
            log.debug("%s: constraint %s in place", self.describe(), name)
        self._ensure_vector_indexes()

    def vector_indexes(self) -> list[VectorIndex]:
        """The vector indexes this store keeps: one per :data:`VECTOR_PROPERTIES` entry, sized by the schema."""
        indexes = []
        for label, name in VECTOR_PROPERTIES:
            prop = self.schema.node(label).prop(name)
            if not prop.is_vector or prop.size is None:
                raise SchemaError(f"{label}.{name} is not a fixed-size vector; it cannot carry a vector index")
            indexes.append(VectorIndex(vector_index_name(label, name), label, name, prop.size, VECTOR_SIMILARITY))
        return indexes

    def _ensure_vector_indexes(self) -> None:
        """Create the vector indexes (idempotent), then check that existing ones have the schema's sizes.

        ``IF NOT EXISTS`` keeps an index built with other dimensions as it is, so the sizes are read
        back: like the embedded store's column types, they record the sizes the store was built with.
        """
        wanted = self.vector_indexes()
        for index in wanted:
            text = self._text(
                "create_vector_index",
                {
                    "NAME": identifier(index.name),
                    "LABEL": identifier(index.label),
                    "PROPERTY": identifier(index.property),
                },
            )
            params = {"dimensions": index.dimensions, "similarity": index.similarity}
            try:
                with self._calling("create_vector_index"):
                    self.driver.execute_query(text, params, routing_=RoutingControl.WRITE, database_=self.database)
            except QueryError as exc:  # a syntax error here means a server without vector indexes
                raise StoreError(
                    f"{self.describe()} cannot create vector index {index.name}: {exc}; vector indexes need "
                    "Neo4j 5.13 or later: upgrade the server"
                ) from exc
        rows = self._read("show_indexes", self._text("show_indexes"), {"names": [index.name for index in wanted]})
        found = {row["name"]: row for row in rows}
        for index in wanted:
            row = found.get(index.name)
            if row is None:
                raise StoreError(f"{self.describe()}: vector index {index.name} is missing after creating it")
            if str(row.get("type", "")).upper() != "VECTOR" or row.get("labels") != [index.label]:
                raise SchemaError(
                    f"{self.describe()}: index {index.name} exists but is not a vector index on "
                    f":{index.label}({index.property}); drop it (DROP INDEX {index.name}) and open the store again"
                )
            config = (row.get("options") or {}).get("indexConfig") or {}
            dimensions = config.get("vector.dimensions")
            if dimensions is not None and int(dimensions) != index.dimensions:
                raise SchemaError(
                    f"{self.describe()}: vector index {index.name} has {dimensions} dimensions but the settings say "
                    f"{index.dimensions}; set CITEGRAPH_EMBEDDING_DIM to match the store, or drop the index "
                    f"(DROP INDEX {index.name}) after re-embedding"
                )
            log.debug("%s: vector index %s in place (%s dimensions)", self.describe(), index.name, dimensions)

    # reads used by ingest --------------------------------------------------------------------
    def has_nodes(self, label: str, keys: pd.Series) -> np.ndarray:
        node = self.schema.node(label)
        text = self._text("node_keys", {"LABEL": identifier(label), "KEY": identifier(node.key)})
        wanted = [key for key in pd.unique(keys.to_numpy(dtype=object)) if not pd.isna(key)]
        found: set[Any] = set()
        for start in range(0, len(wanted), self.batch_size):
            rows = self._read("node_keys", text, {"keys": wanted[start : start + self.batch_size]})
            found.update(row["key"] for row in rows)
        return np.asarray(keys.isin(found), dtype=bool)

    def read_edges(self, rel_type: str) -> pd.DataFrame:
        rel = self.schema.rel(rel_type)
        source, target = self.schema.node(rel.source), self.schema.node(rel.target)
        names = [identifier(p.name) for p in rel.properties]
        text = self._text(
            "read_rels",
            {
                "SOURCE": identifier(rel.source),
                "SOURCE_KEY": identifier(source.key),
                "TYPE": identifier(rel.type),
                "TARGET": identifier(rel.target),
                "TARGET_KEY": identifier(target.key),
                "COLUMNS": "".join(f", r.{name} AS {name}" for name in names),
            },
        )
        rows = self._read("read_rels", text)
        frame = pd.DataFrame(rows, columns=[SOURCE_COLUMN, TARGET_COLUMN, *names])
        # The same typed columns as the embedded store returns (nullable ints as floats, etc.).
        return arrow_table(frame, [*_ENDPOINTS, *((p.name, p) for p in rel.properties)]).to_pandas()

    # writes ----------------------------------------------------------------------------------
    def _require_writable(self) -> None:
        if self.read_only:
            raise QueryError(f"{self.describe()} is open read-only; writes need a store opened for writing")

    def _write(self, what: str, work: Callable[[ManagedTransaction, _Step], T]) -> T:
        """``work`` in one managed write transaction (retried by the driver on transient errors)."""
        self._require_writable()
        with self._calling(what) as step, self.driver.session(database=self.database) as session:
            return session.execute_write(work, step)

    def _unwind(
        self, tx: ManagedTransaction, step: _Step, name: str, text: str, rows: list[Row], counter: str = ""
    ) -> int:
        """Run ``text`` once per batch of ``rows``; the sum of ``counter`` over the batches' summaries."""
        step.name = name
        total = 0
        for start in range(0, len(rows), self.batch_size):
            summary = tx.run(text, {"rows": rows[start : start + self.batch_size]}).consume()
            if counter:
                total += int(getattr(summary.counters, counter))
        return total

    def _node_rows(self, label: str, frame: pd.DataFrame, *, keep_nulls: bool) -> list[Row]:
        """``{key, props}`` rows; without ``keep_nulls`` props hold only known values (a null keeps the stored one)."""
        node = self.schema.node(label)
        columns = [
            (node.key, node.prop(node.key)),
            *((name, node.prop(name)) for name in self._node_properties(label, frame)),
        ]
        rows = []
        for record in arrow_table(frame, columns).to_pylist():  # native ints, floats and lists
            key = record.pop(node.key)
            rows.append(
                {"key": key, "props": record if keep_nulls else {k: v for k, v in record.items() if v is not None}}
            )
        return rows

    def _node_properties(self, label: str, frame: pd.DataFrame) -> list[str]:
        """The frame's property columns (not the key, not ``_origin``)."""
        node = self.schema.node(label)
        known = {p.name for p in node.properties}
        return [c for c in frame.columns if c != node.key and c in known]

    def _node_statement(self, name: str, label: str) -> str:
        node = self.schema.node(label)
        return self._text(name, {"LABEL": identifier(label), "KEY": identifier(node.key)})

    def _rel_statement(self, rel: RelType) -> str:
        source, target = self.schema.node(rel.source), self.schema.node(rel.target)
        identity = ", ".join(f"{identifier(p)}: row.identity.{p}" for p in rel.identity)
        return self._text(
            "merge_rels",
            {
                "SOURCE": identifier(rel.source),
                "SOURCE_KEY": identifier(source.key),
                "TARGET": identifier(rel.target),
                "TARGET_KEY": identifier(target.key),
                "TYPE": identifier(rel.type),
                "IDENTITY": f" {{{identity}}}" if identity else "",
            },
        )

    def _rel_rows(self, rel: RelType, frame: pd.DataFrame) -> list[Row]:
        """``{source, target, identity, props}`` rows; props hold only known, non-identity values."""
        names = [c for c in frame.columns if c in {p.name for p in rel.properties} and c not in rel.identity]
        columns = [*_ENDPOINTS, *((name, rel.prop(name)) for name in (*rel.identity, *names))]
        rows = []
        for record in arrow_table(frame, columns).to_pylist():
            rows.append(
                {
                    "source": record[SOURCE_COLUMN],
                    "target": record[TARGET_COLUMN],
                    # A missing identity property is "" (none given), as validation makes it.
                    "identity": {name: "" if record[name] is None else record[name] for name in rel.identity},
                    "props": {name: record[name] for name in names if record[name] is not None},
                }
            )
        return rows

    def _upsert_plan(
        self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame]
    ) -> tuple[dict[str, tuple[str, list[Row]]], dict[str, tuple[str, list[Row]]]]:
        """The statements and rows that upsert ``nodes`` and ``rels``, converted once, outside the transaction
        function, which the driver may call again on retry."""
        node_plan = {
            label: (self._node_statement("merge_nodes", label), self._node_rows(label, frame, keep_nulls=False))
            for label, frame in nodes.items()
        }
        rel_plan: dict[str, tuple[str, list[Row]]] = {}
        for rel_type, frame in rels.items():
            rel = self.schema.rel(rel_type)
            rel_plan[rel_type] = (self._rel_statement(rel), self._rel_rows(rel, frame))
        return node_plan, rel_plan

    def _upsert(
        self,
        tx: ManagedTransaction,
        step: _Step,
        node_plan: dict[str, tuple[str, list[Row]]],
        rel_plan: dict[str, tuple[str, list[Row]]],
    ) -> dict[str, WriteResult]:
        results: dict[str, WriteResult] = {}
        for label, (text, rows) in node_plan.items():
            created = self._unwind(tx, step, "merge_nodes", text, rows, "nodes_created")
            results[label] = WriteResult(created=created, matched=len(rows) - created)
        for rel_type, (text, rows) in rel_plan.items():
            created = self._unwind(tx, step, "merge_rels", text, rows, "relationships_created")
            results[rel_type] = WriteResult(created=created, matched=len(rows) - created)
        return results

    def apply(self, nodes: Mapping[str, pd.DataFrame], rels: Mapping[str, pd.DataFrame]) -> dict[str, WriteResult]:
        """Merge every table in ONE write transaction: nodes first, then the edges between them."""
        self._require_writable()
        node_plan, rel_plan = self._upsert_plan(nodes, rels)

        def work(tx: ManagedTransaction, step: _Step) -> dict[str, WriteResult]:
            return self._upsert(tx, step, node_plan, rel_plan)

        results = self._write("apply", work)
        log.debug("%s: applied %s", self.describe(), results)
        return results

    def _apply_change(self, change: WorkChange) -> None:
        """The deletes (``delete_nodes``: DETACH DELETE by key) and the upserts of :meth:`apply` in ONE write
        transaction."""
        self._require_writable()
        deletes = [
            (self._node_statement("delete_nodes", label), list(keys)) for label, keys in change.deletes.items() if keys
        ]
        node_plan, rel_plan = self._upsert_plan(change.nodes, change.rels)

        def work(tx: ManagedTransaction, step: _Step) -> None:
            step.name = "delete_nodes"
            for text, keys in deletes:
                for start in range(0, len(keys), self.batch_size):
                    tx.run(text, {"keys": keys[start : start + self.batch_size]}).consume()
            self._upsert(tx, step, node_plan, rel_plan)

        self._write("apply_change", work)

    def _set_node_properties(self, label: str, frame: pd.DataFrame) -> None:
        """One write transaction per batch; a null removes the property (a recomputation replaces it)."""
        if not self._node_properties(label, frame):
            return
        text = self._node_statement("set_node_properties", label)
        rows = self._node_rows(label, frame, keep_nulls=True)
        for start in range(0, len(rows), self.batch_size):
            batch = rows[start : start + self.batch_size]

            def work(tx: ManagedTransaction, step: _Step, batch: list[Row] = batch) -> None:
                self._unwind(tx, step, "set_node_properties", text, batch)

            self._write("set_node_properties", work)

    def _replace_edges(self, rel_type: str, frame: pd.DataFrame) -> int:
        """Delete every edge of the type in batches, then merge the frame's, in one write transaction."""
        rel = self.schema.rel(rel_type)
        delete = self._text("delete_rels_batch", {"TYPE": identifier(rel.type)})
        merge = self._rel_statement(rel)
        rows = self._rel_rows(rel, frame)

        def work(tx: ManagedTransaction, step: _Step) -> int:
            step.name = "delete_rels_batch"
            while True:
                record = tx.run(delete, {"batch": self.batch_size}).single(strict=True)
                if int(record["deleted"]) == 0:
                    break
            return self._unwind(tx, step, "merge_rels", merge, rows, "relationships_created")

        self._write("replace_edges", work)
        return len(rows)


def _arrow_batch(keys: list[str], rows: list[list[Any]]) -> pa.Table:
    """Rows (one list of values per record, in ``keys`` order) as an Arrow table with those columns."""
    columns = list(zip(*rows)) if rows else [() for _ in keys]
    return pa.table({key: pa.array(list(values)) for key, values in zip(keys, columns)})


__all__ = [
    "VECTOR_PROPERTIES",
    "Neo4jStore",
    "VectorIndex",
    "constraint_name",
    "translate_neo4j_error",
    "vector_index_name",
]
