"""The ASGI app: GraphQL at /graphql, health at /healthz, readiness at /readyz."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from strawberry.fastapi import GraphQLRouter

from api.schema import Context, schema
from api.services import GraphService
from api.settings import AppSettings
from graph import CitegraphError, StoreConfig, open_store


def create_app(config: StoreConfig, settings: AppSettings) -> FastAPI:
    """An app that opens the store read-only at start-up and closes it at shutdown."""
    state: dict[str, GraphService] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        store = open_store(config)
        state["service"] = GraphService(store)
        try:
            yield
        finally:
            store.close()

    async def context_getter() -> Context:
        # DataLoaders live for one request: their cache never serves another client's query.
        return Context.create(state["service"], settings.max_results)

    app = FastAPI(title="citegraph", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.include_router(GraphQLRouter(schema, context_getter=context_getter), prefix="/graphql")

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        service = state.get("service")
        if service is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        try:
            papers = service.store.count_nodes("Paper")
        except CitegraphError:
            return JSONResponse({"status": "store unavailable"}, status_code=503)
        return JSONResponse({"status": "ready", "store": service.store.backend, "papers": papers})

    return app
