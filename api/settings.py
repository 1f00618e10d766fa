"""Application settings read from the environment once, at the edge (CLI entry, server start)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from api.budget import DEFAULT_MAX_RESPONSE_BYTES
from api.cost import DEFAULT_MAX_QUERY_COST
from api.scheduling import DEFAULT_HEAVY_QUEUE, DEFAULT_HEAVY_SLOTS
from graph.errors import ConfigError
from graph.files import data_dir_from_env, default_cache_root

DEFAULT_MAX_BODY_BYTES = 1_000_000
DEFAULT_INGEST_CHUNK_WORKS = 5_000  # works per batch of a streamed import (loaders.openalex.CHUNK_WORKS)


@dataclass(frozen=True)
class AppSettings:
    data_dir: Path  # CITEGRAPH_DATA: the public corpora (default ../shared/data beside the checkout)
    cache_dir: Path  # CITEGRAPH_CACHE: embeddings and trained models, shared by every checkout
    # CITEGRAPH_REJECTS: where ingest writes its reports of rejected records; None: beside the store, in the
    # store's folder (graph.files.StoreFiles.rejects: var/rejects/ for the default var/citegraph.db)
    rejects_dir: Path | None
    host: str = "127.0.0.1"  # CITEGRAPH_HOST: loopback by default; expose deliberately
    port: int = 8000  # CITEGRAPH_PORT
    max_results: int = 200  # cap on any list a client can ask for (first/k/limit)
    api_key: str | None = None  # CITEGRAPH_API_KEY: when set, every GraphQL request must present it
    cors_origins: tuple[str, ...] = ()  # CITEGRAPH_CORS_ORIGINS (comma-separated): browser origins allowed to call
    request_timeout_s: float = 10.0  # CITEGRAPH_REQUEST_TIMEOUT: seconds one GraphQL request may take
    # CITEGRAPH_MAX_QUERY_COST: objects one GraphQL operation may fetch, counted before it runs (api/cost.py);
    # the dashboard's queries cost at most ~4,400 (a title search: a scan), 100 papers with 100 citations each ~20,000
    max_query_cost: int = DEFAULT_MAX_QUERY_COST
    # CITEGRAPH_MAX_RESPONSE_BYTES: bytes of one GraphQL response, counted as it is built (api/budget.py), then
    # RESPONSE_TOO_LARGE; 200 papers with their abstracts take ~2 MB
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    # CITEGRAPH_MAX_BODY_BYTES: longest request body read; a GraphQL request is a few KB, a manuscript-mode
    # `recommend` (2,000 sentences, 300,000 characters) well under 1 MB
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # CITEGRAPH_WARM=1: load the recommendation and linkage models at start-up (in the background; /readyz
    # says when they are in) instead of on the first query that needs them
    warm: bool = False
    # CITEGRAPH_TORCH_THREADS: PyTorch threads of the server. One query's encoder pass is small: p50 37 ms on
    # one thread, 535 ms on two on a 2-core machine with another job (OpenMP waits on the busy core;
    # docs/results.md). Raise it on a dedicated machine with more cores.
    torch_threads: int = 1
    # CITEGRAPH_INGEST_CHUNK_WORKS: works per batch of an importer that streams (`citegraph ingest openalex`);
    # memory holds one batch (5k works: ~150 MB of tables) and, while it is written, one table's write; docs/results.md
    ingest_chunk_works: int = DEFAULT_INGEST_CHUNK_WORKS
    # CITEGRAPH_HEAVY_SLOTS: heavy GraphQL operations (api/scheduling.py) run at once; the rest of the server's
    # store time and cores go to light ones. One on a 2-core machine.
    heavy_slots: int = DEFAULT_HEAVY_SLOTS
    # CITEGRAPH_HEAVY_QUEUE: heavy operations waiting for a slot; one more is answered SERVER_BUSY at once
    heavy_queue: int = DEFAULT_HEAVY_QUEUE

    @classmethod
    def from_env(cls) -> AppSettings:
        env = os.environ
        try:
            port = int(env.get("CITEGRAPH_PORT", "8000"))
        except ValueError as exc:
            raise ConfigError(f"CITEGRAPH_PORT is {env['CITEGRAPH_PORT']!r}; expected a port number") from exc
        try:
            timeout = float(env.get("CITEGRAPH_REQUEST_TIMEOUT", "10"))
        except ValueError as exc:
            raise ConfigError(
                f"CITEGRAPH_REQUEST_TIMEOUT is {env['CITEGRAPH_REQUEST_TIMEOUT']!r}; expected seconds, e.g. 10"
            ) from exc
        if not 0 < timeout <= 3600:
            raise ConfigError(f"CITEGRAPH_REQUEST_TIMEOUT is {timeout:g}; expected seconds between 0 and 3600")
        api_key = env.get("CITEGRAPH_API_KEY") or None
        if api_key is not None and (not api_key.strip() or api_key != api_key.strip()):
            raise ConfigError(
                "CITEGRAPH_API_KEY starts or ends with white space (or is nothing but); set it to the key "
                "itself, or unset it to serve without a key"
            )
        origins = tuple(o.strip().rstrip("/") for o in env.get("CITEGRAPH_CORS_ORIGINS", "").split(",") if o.strip())
        return cls(
            data_dir=data_dir_from_env(env),
            cache_dir=default_cache_root(),
            rejects_dir=Path(env["CITEGRAPH_REJECTS"]) if env.get("CITEGRAPH_REJECTS") else None,
            host=env.get("CITEGRAPH_HOST", "127.0.0.1"),
            port=port,
            api_key=api_key,
            cors_origins=origins,
            request_timeout_s=timeout,
            max_query_cost=_positive_int(env, "CITEGRAPH_MAX_QUERY_COST", DEFAULT_MAX_QUERY_COST),
            max_body_bytes=_positive_int(env, "CITEGRAPH_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES),
            max_response_bytes=_positive_int(env, "CITEGRAPH_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES),
            warm=env.get("CITEGRAPH_WARM", "").strip().lower() in {"1", "true", "yes"},
            torch_threads=_positive_int(env, "CITEGRAPH_TORCH_THREADS", 1),
            ingest_chunk_works=_positive_int(env, "CITEGRAPH_INGEST_CHUNK_WORKS", DEFAULT_INGEST_CHUNK_WORKS),
            heavy_slots=_positive_int(env, "CITEGRAPH_HEAVY_SLOTS", DEFAULT_HEAVY_SLOTS),
            heavy_queue=_positive_int(env, "CITEGRAPH_HEAVY_QUEUE", DEFAULT_HEAVY_QUEUE),
        )


def _positive_int(env: os._Environ[str] | dict[str, str], name: str, default: int) -> int:
    raw = env.get(name, str(default))
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} is {raw!r}; expected a whole number, e.g. {default}") from exc
    if value < 1:
        raise ConfigError(f"{name} is {value}; expected at least 1")
    return value
