"""The graph store: one interface (:class:`GraphStore`), an embedded backend and a Neo4j backend.

>>> from graph import StoreConfig, open_store
>>> with open_store(StoreConfig(db_path="var/citegraph.db")) as store:   # doctest: +SKIP
...     store.stats()
"""

from __future__ import annotations

from graph.config import StoreConfig
from graph.errors import (
    CitegraphError,
    ConfigError,
    DataError,
    IngestError,
    QueryError,
    Reject,
    SchemaError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
    ValidationError,
)
from graph.ingest import GraphBatch, IngestReport, TableCount, ingest, ingest_stream
from graph.schema import Schema, VectorSizes, build_schema
from graph.store import Completeness, GraphStore, WriteResult


def open_store(config: StoreConfig, *, ensure_schema: bool = True) -> GraphStore:
    """Open the configured backend; with ``ensure_schema`` create/check tables or constraints."""
    schema = build_schema(config.sizes)
    store: GraphStore
    if config.backend == "neo4j":
        from graph.neo4j import Neo4jStore  # the driver is imported only when used

        store = Neo4jStore.from_config(config, schema)
    else:
        from graph.embedded import EmbeddedStore

        store = EmbeddedStore(
            config.db_path,
            schema,
            read_only=config.read_only,
            buffer_pool_mib=config.buffer_pool_mib,
            read_connections=config.read_connections,
        )
    if ensure_schema:
        try:
            store.ensure_schema()
        except BaseException:
            store.close()
            raise
    return store


__all__ = [
    "CitegraphError",
    "Completeness",
    "ConfigError",
    "DataError",
    "GraphBatch",
    "GraphStore",
    "IngestError",
    "IngestReport",
    "QueryError",
    "Reject",
    "Schema",
    "SchemaError",
    "StoreConfig",
    "StoreError",
    "StoreFullError",
    "StoreUnavailableError",
    "TableCount",
    "ValidationError",
    "VectorSizes",
    "WriteResult",
    "build_schema",
    "ingest",
    "ingest_stream",
    "open_store",
]
