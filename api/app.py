"""The ASGI app: GraphQL at /graphql, the dashboard at /, health at /healthz, readiness at /readyz.

* ``/graphql``: POST (or GET with ``query``) runs GraphQL; GET from a browser shows GraphiQL, served
  offline from local npm packages (:mod:`api.web`).
* ``/``: the dashboard (``api/static/dashboard``), a static page built on the same API.
* ``/assets``: the npm packages GraphiQL and the dashboard load (``api/static/node_modules``).
* When ``CITEGRAPH_API_KEY`` is set, GraphQL requests must send it (``Authorization: Bearer <key>``
  or ``X-API-Key: <key>``); pages, assets and health checks stay open. Browser origins allowed to
  call the API cross-origin come from ``CITEGRAPH_CORS_ORIGINS``.
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from strawberry.fastapi import GraphQLRouter

from api.lazy import Lazy
from api.schema import Context, schema
from api.services import GraphService
from api.settings import AppSettings
from api.web import DASHBOARD_DIR, NODE_MODULES, missing_assets, offline_graphiql_html
from gnn.linkage.service import LinkageService
from gnn.recommend.service import RecommendationService, ServiceSettings
from graph import CitegraphError, StoreConfig, open_store
from graph.files import StoreFiles

log = logging.getLogger(__name__)
GRAPHQL_PATH = "/graphql"
API_KEY_HEADERS = ("authorization", "x-api-key")


class OfflineGraphQLRouter(GraphQLRouter[Context, None]):
    """strawberry's router whose GraphiQL page loads its scripts from this server, not a CDN.

    It also answers 400, as strawberry does for malformed JSON, to JSON that is not UTF-8 or not an
    object (a body of ``null`` or ``[1]``, a ``variables`` of ``3``), which strawberry itself lets
    escape as a 500 (found by tests/api/test_fuzz.py).
    """

    def decode_json(self, data: str | bytes) -> object:
        try:
            value = json.loads(data)
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"not UTF-8: {exc.reason}", "", 0) from exc
        if not isinstance(value, dict):
            raise json.JSONDecodeError("expected a JSON object", "", 0)
        return value

    @property
    def graphql_ide_html(self) -> str:
        problems = missing_assets()
        if problems:
            items = "".join(f"<li>{p}</li>" for p in problems)
            return f"<!doctype html><title>GraphiQL unavailable</title><h1>GraphiQL assets missing</h1><ul>{items}</ul>"
        return offline_graphiql_html()


class ApiKeyMiddleware:
    """Refuses GraphQL requests without the configured key (401, code UNAUTHENTICATED).

    The GraphiQL page itself (a browser's GET without a query) stays open so a person can type the
    key into its Headers tab; so do the dashboard, assets and health checks.
    """

    def __init__(self, app: ASGIApp, api_key: str) -> None:
        self.app = app
        self.api_key = api_key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._guarded(scope) or self._presented(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "errors": [
                    {
                        "message": "this API needs a key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`",
                        "extensions": {"code": "UNAUTHENTICATED"},
                    }
                ]
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _guarded(scope: Scope) -> bool:
        if scope["path"].rstrip("/") != GRAPHQL_PATH:
            return False
        if scope["method"] == "OPTIONS":  # CORS preflight carries no credentials
            return False
        if scope["method"] == "GET":
            return b"query=" in scope.get("query_string", b"")  # GET without a query is the GraphiQL page
        return True

    def _presented(self, scope: Scope) -> bool:
        headers = dict(scope["headers"])
        given = headers.get(b"x-api-key", b"")
        authorization = headers.get(b"authorization", b"")
        if authorization[:7].lower() == b"bearer ":
            given = given or authorization[7:].strip()
        return bool(given) and hmac.compare_digest(given, self.api_key)


def _linkage_service(service: GraphService) -> LinkageService:
    """The app's sentence-linkage service: the trained linker (ConfigError without one), the encoder,
    and the cross-encoder where one was trained (``citegraph linkage train --cross-encoder``).

    Built on the first ``linkage`` query, not at start-up: loading the encoder takes seconds and
    memory a server that never links should not pay. It shares the graph service's store lock.
    """
    from api.cli.linkage import load_linker
    from gnn.linkage.cross_encoder import CrossEncoder
    from gnn.text.encoder import EncoderSettings, TextEncoder

    linker = load_linker(None)  # before the encoder: fails fast where no model was trained
    cross = CrossEncoder.load_if_saved(StoreFiles().cross_encoder)
    encoder = TextEncoder(EncoderSettings.from_env())
    return LinkageService(service.store, encoder, linker, lock=service.lock, cross_encoder=cross)


def _recommendation_service(service: GraphService) -> RecommendationService:
    """The app's recommendation service: the retrieval index beside the store (``<db>.index/``), the
    citation-context profiles and the encoder, as ``citegraph recommend`` opens them.

    Built on the first ``recommend`` query, not at start-up (the encoder and the index take seconds
    and memory). DataError where the store has no embeddings, ConfigError where it has no folder for an index. It
    shares the graph service's store lock.
    """
    return RecommendationService.open(service.store, ServiceSettings(), lock=service.lock)


def _close_linkage(linkage: LinkageService) -> None:
    linkage.encoder.close()  # the service shares the store (closed by the app) and holds no other resource


def _warm(services: dict[str, Lazy[RecommendationService] | Lazy[LinkageService]], models: dict[str, str]) -> None:
    """Build each lazy service now (a warm start); record why one cannot be built (no index, no linker)."""
    for name, lazy in services.items():
        try:
            lazy.get()
            models[name] = "loaded"
        except CitegraphError as exc:
            models[name] = f"unavailable: {exc}"
            log.warning("warm start: %s is unavailable: %s", name, exc)
        except Exception:  # a broken model must not stop the server; the query path reports it alike
            models[name] = "unavailable: internal error (see the server log)"
            log.exception("warm start: loading %s failed", name)


def create_app(config: StoreConfig, settings: AppSettings) -> FastAPI:
    """An app that opens the store read-only at start-up and closes it at shutdown."""
    state: dict[str, GraphService] = {}
    models: dict[str, str] = {}  # model -> loading / loaded / the reason it is unavailable (warm start only)
    linkers: dict[str, Lazy[LinkageService]] = {}
    recommenders: dict[str, Lazy[RecommendationService]] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        store = open_store(config)
        service = state["service"] = GraphService(store)
        linkers["linkage"] = linkage = Lazy(lambda: _linkage_service(service), close=_close_linkage)
        recommenders["recommend"] = recommend = Lazy(
            lambda: _recommendation_service(service), close=RecommendationService.close
        )
        for problem in missing_assets():
            log.warning("GraphiQL will not load offline: %s", problem)
        if settings.warm:
            models.update({"recommend": "loading", "linkage": "loading"})
            threading.Thread(
                target=_warm, args=({"recommend": recommend, "linkage": linkage}, models), daemon=True
            ).start()
        try:
            yield
        finally:
            linkage.close()
            recommend.close()
            store.close()

    async def context_getter() -> Context:
        # DataLoaders live for one request: their cache never serves another client's query.
        return Context.create(
            state["service"],
            settings.max_results,
            settings.request_timeout_s,
            linkage=linkers["linkage"],
            recommend=recommenders["recommend"],
        )

    app = FastAPI(title="citegraph", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(OfflineGraphQLRouter(schema, context_getter=context_getter), prefix=GRAPHQL_PATH)
    if NODE_MODULES.is_dir():
        app.mount("/assets", StaticFiles(directory=NODE_MODULES), name="assets")
    app.mount("/dashboard", StaticFiles(directory=DASHBOARD_DIR), name="dashboard")

    @app.get("/", include_in_schema=False)
    async def dashboard() -> FileResponse:
        return FileResponse(DASHBOARD_DIR / "index.html", media_type="text/html")

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
        body: dict[str, Any] = {"status": "ready", "store": service.store.backend, "papers": papers}
        for name, lazy in (("recommend", recommenders.get("recommend")), ("linkage", linkers.get("linkage"))):
            body.setdefault("models", {})[name] = (
                "loaded" if lazy is not None and lazy.loaded else models.get(name, "loads on first use")
            )
        return JSONResponse(body)

    if settings.api_key:
        app.add_middleware(ApiKeyMiddleware, api_key=settings.api_key)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["content-type", *API_KEY_HEADERS],
            max_age=600,
        )
    return app
