"""Store settings: a frozen dataclass, read from the environment only at the edge (the CLI).

Secrets and connection URIs come from the environment only, never from files in the project.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from graph.errors import ConfigError
from graph.schema import VectorSizes

BACKENDS = ("embedded", "neo4j")


@dataclass(frozen=True)
class StoreConfig:
    backend: str = "embedded"  # "embedded" (LadybugDB file, no server) or "neo4j"
    db_path: Path = Path("var/citegraph.db")  # embedded store file; CITEGRAPH_DB
    read_only: bool = False  # the server and `citegraph cypher` open the store read-only
    neo4j_uri: str | None = None  # NEO4J_URI, e.g. neo4j://localhost:7687
    neo4j_user: str = "neo4j"  # NEO4J_USER
    neo4j_password: str | None = field(default=None, repr=False)  # NEO4J_PASSWORD; never printed
    neo4j_database: str | None = None  # NEO4J_DATABASE; None lets the server pick its default
    batch_size: int = 2_000  # rows per UNWIND batch on Neo4j: large enough to amortise round trips,
    #                          small enough to keep each parameter map well under the server's limits
    sizes: VectorSizes = field(default_factory=VectorSizes)  # lengths of the vector properties (encoder, fusion, ball)
    buffer_pool_mib: int = 0  # embedded store's page cache in MiB; CITEGRAPH_BUFFER_POOL_MIB. 0: the engine's
    #                           default (80% of the machine's memory), which leaves too little beside a large
    #                           compute step's own arrays; see docs/results.md (co-citation at 1M papers)
    read_connections: int = 2  # CITEGRAPH_READ_CONNECTIONS: statements a read-only embedded store runs at once,
    #                            one connection each (the server's light reads do not wait behind a heavy one);
    #                            2 on a 2-core machine: more only adds statements that share the same cores

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"CITEGRAPH_BACKEND is {self.backend!r}; expected one of {', '.join(BACKENDS)}")
        if not 1 <= self.batch_size <= 100_000:
            raise ConfigError(f"batch size {self.batch_size} is out of range; use 1..100000 (default 2000)")
        if self.buffer_pool_mib < 0:
            raise ConfigError(
                f"CITEGRAPH_BUFFER_POOL_MIB is {self.buffer_pool_mib}; use a size in MiB, or 0 for the engine's default"
            )
        if not 1 <= self.read_connections <= 64:
            raise ConfigError(
                f"CITEGRAPH_READ_CONNECTIONS is {self.read_connections}; use 1..64 connections (default 2)"
            )
        if self.backend == "neo4j" and not self.neo4j_uri:
            raise ConfigError("the neo4j backend needs NEO4J_URI (e.g. neo4j://localhost:7687) and NEO4J_PASSWORD")

    @classmethod
    def from_env(
        cls, *, db_path: str | Path | None = None, backend: str | None = None, read_only: bool = False
    ) -> StoreConfig:
        """Settings from CITEGRAPH_* and NEO4J_* variables; explicit arguments (CLI flags) win."""
        env = os.environ
        try:
            batch_size = int(env.get("CITEGRAPH_BATCH_SIZE", "2000"))
            buffer_pool_mib = int(env.get("CITEGRAPH_BUFFER_POOL_MIB", "0"))
            sizes = VectorSizes(
                embedding=int(env.get("CITEGRAPH_EMBEDDING_DIM", VectorSizes.embedding)),
                taxonomy=int(env.get("CITEGRAPH_TAXONOMY_DIM", VectorSizes.taxonomy)),
                poincare=int(env.get("CITEGRAPH_POINCARE_DIM", VectorSizes.poincare)),
            )
        except ValueError as exc:
            raise ConfigError(f"a CITEGRAPH_* size variable is not an integer: {exc}") from exc
        raw_connections = env.get("CITEGRAPH_READ_CONNECTIONS", "2")
        try:
            read_connections = int(raw_connections)
        except ValueError as exc:
            raise ConfigError(
                f"CITEGRAPH_READ_CONNECTIONS is {raw_connections!r}; use a number of connections, 1..64 (default 2)"
            ) from exc
        return cls(
            backend=backend or env.get("CITEGRAPH_BACKEND", "embedded"),
            db_path=Path(db_path or env.get("CITEGRAPH_DB", "var/citegraph.db")),
            read_only=read_only,
            neo4j_uri=env.get("NEO4J_URI"),
            neo4j_user=env.get("NEO4J_USER", "neo4j"),
            neo4j_password=env.get("NEO4J_PASSWORD"),
            neo4j_database=env.get("NEO4J_DATABASE"),
            batch_size=batch_size,
            sizes=sizes,
            buffer_pool_mib=buffer_pool_mib,
            read_connections=read_connections,
        )
