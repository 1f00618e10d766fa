"""The ASGI app: GraphQL at /graphql, the dashboard at /, health at /healthz, readiness at /readyz.

* ``/graphql``: POST (or GET with ``query``) runs GraphQL; GET from a browser shows GraphiQL, served
  offline from local npm packages (:mod:`api.web`).
* ``/``: the dashboard (``api/static/dashboard``), a static page built on the same API.
* ``/assets``: the npm packages GraphiQL and the dashboard load (``api/static/node_modules``).
* When ``CITEGRAPH_API_KEY`` is set, every request to ``/graphql`` but the GraphiQL page (a browser's
  GET without a ``query`` parameter, which runs nothing) must send it (``Authorization: Bearer <key>``
  or ``X-API-Key: <key>``). The router decides on the request as it parses it — the decoded query
  parameters and the body it would run — so no spelling of a request runs an operation without the
  key; keys are compared in constant time. ``/readyz`` needs it too (it tells the store's size and
  state); pages, assets and ``/healthz`` stay open. Browser
  origins allowed to call the API cross-origin come from ``CITEGRAPH_CORS_ORIGINS``.
* Request bodies longer than ``CITEGRAPH_MAX_BODY_BYTES`` are refused while they are read (413),
  JSON nested deeper than :data:`api.errors.MAX_JSON_DEPTH` is refused (400), and every refusal
  is a JSON ``{"errors": [...]}`` body with ``extensions.code`` (:mod:`api.errors`).
* With ``complete`` (``citegraph serve --complete``, what ``make demo`` runs) the store is opened for
  writing and the background build (:mod:`api.background`) computes what a default build left for
  later while the API serves; ``/readyz`` says how far it is, and the recommendation service moves
  to the new index when it is built. Without it the store is opened read-only.
* ``/healthz`` and ``/readyz`` answer from memory, never from the store: a probe is answered at once
  while heavy queries hold the store. GraphQL operations are scheduled fairly (:mod:`api.scheduling`):
  a time budget per request, a bounded queue of heavy operations, light ones served first.
* GraphQL runs over HTTP only: the schema has no subscriptions, and WebSocket transports (which
  would run queries outside these checks) are off.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from cross_web import HTTPException
from fastapi import FastAPI, Request, Response, WebSocket
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.fastapi import GraphQLRouter
from strawberry.schema import BaseSchema
from strawberry.types.unset import UNSET

from api.background import BackgroundBuild
from api.errors import MAX_JSON_DEPTH, http_error_body
from api.lazy import Lazy
from api.scheduling import Scheduler
from api.schema import Context, schema
from api.services import GraphService
from api.settings import AppSettings
from api.web import DASHBOARD_DIR, NODE_MODULES, missing_assets, offline_graphiql_html
from gnn.cocitation.basis import currency as cocitation_currency
from gnn.linkage.service import LinkageService
from gnn.recommend.service import RecommendationService, ServiceSettings
from gnn.retrieval.index import index_status
from gnn.text.encoder import served_description
from graph import CitegraphError, StoreConfig, open_store
from graph.files import StoreFiles

log = logging.getLogger(__name__)
T = TypeVar("T")
GRAPHQL_PATH = "/graphql"
API_KEY_HEADERS = ("authorization", "x-api-key")
READY_REFRESH_S = 15.0  # how stale /readyz's counts may be while the background build writes
READY_POLL_S = 0.5  # how soon after the background build ends /readyz's counts are read again


_HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
}
_HOW_TO_ASK = (
    'send a POST with content-type application/json and a body {"query": "...", "variables": {...}}, '
    "or a GET with ?query=..."
)


class HttpRefusal(Exception):
    """A request refused before GraphQL sees it: the status, the code and a message for the client."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code or _HTTP_CODES.get(status, "BAD_REQUEST" if status < 500 else "INTERNAL_SERVER_ERROR")

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(http_error_body(str(self), self.code), status_code=self.status, headers=headers)


def json_too_deep(value: object, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` nests more than ``limit`` arrays and objects (iterative: any depth is safe)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


class OfflineGraphQLRouter(GraphQLRouter[Context, None]):
    """strawberry's router with the checks of this app: the API key, JSON limits, coded refusals.

    * The key (when one is set) is checked on every request the router would run — everything but
      the GraphiQL page, which strawberry itself renders only for a browser's GET without ``query``.
    * The GraphiQL page loads its scripts from this server, not a CDN.
    * JSON that is not UTF-8 or not an object (a body of ``null`` or ``[1]``, a ``variables`` of ``3``)
      is a 400, as malformed JSON is (strawberry itself lets those escape as a 500, found by
      tests/api/test_fuzz.py); JSON nested deeper than :data:`MAX_JSON_DEPTH` is a 400 too.
    * Every refusal is a JSON body with ``extensions.code``, not strawberry's plain text.
    """

    def __init__(self, schema: BaseSchema, *, context_getter: Any, api_key: str | None) -> None:
        super().__init__(schema, context_getter=context_getter, subscription_protocols=())
        self._api_key = api_key.encode() if api_key else None

    async def run(  # type: ignore[override]
        self, request: Request | WebSocket, context: Context | None = UNSET, root_value: None = UNSET
    ) -> Response | WebSocket:
        try:
            if isinstance(request, Request) and self._api_key is not None:
                self._authenticate(request)
            return await super().run(request, context, root_value)  # type: ignore[arg-type]
        except HttpRefusal as exc:
            headers = {"www-authenticate": "Bearer"} if exc.status == 401 else None
            return exc.response(headers)
        except HTTPException as exc:
            hint = f"; {_HOW_TO_ASK}" if exc.status_code == 400 else ""
            return HttpRefusal(exc.status_code, f"{exc.reason}{hint}").response()

    def _authenticate(self, request: Request) -> None:
        """Nothing for the GraphiQL page or a request that presents the key; else a 401 refusal."""
        if self.should_render_graphql_ide(self.request_adapter_class(request)):
            return  # strawberry answers this request with the page and runs nothing
        if not any(hmac.compare_digest(given, self._api_key or b"") for given in presented_keys(request.headers)):
            raise HttpRefusal(401, "this API needs a key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`")

    def decode_json(self, data: str | bytes) -> object:
        try:
            value = json.loads(data)
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"not UTF-8: {exc.reason}", "", 0) from exc
        except RecursionError:  # the decoder's own guard, far deeper than the limit
            raise _too_deep() from None
        except json.JSONDecodeError:
            raise
        except ValueError as exc:  # a number of more than 4,300 digits: Python's int conversion limit
            raise json.JSONDecodeError("a number is too long to read", "", 0) from exc
        if json_too_deep(value):
            raise _too_deep()
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


def _too_deep() -> HttpRefusal:
    return HttpRefusal(
        400, f"the JSON nests deeper than {MAX_JSON_DEPTH} levels; send flatter `variables`", "JSON_TOO_DEEP"
    )


def presented_keys(headers: Headers) -> list[bytes]:
    """Every key the request presents: each ``X-API-Key`` and each ``Authorization: Bearer`` token
    (header names and the scheme in any case; blank values present nothing)."""
    keys = [value.strip() for value in headers.getlist("x-api-key")]
    for value in headers.getlist("authorization"):
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() == "bearer":
            keys.append(token.strip())
    return [key.encode("latin-1") for key in keys if key]


class BodyLimitMiddleware:
    """Refuses request bodies longer than ``max_bytes`` (413, code PAYLOAD_TOO_LARGE) while reading them.

    A ``Content-Length`` over the limit is refused before a byte of the body is read; a chunked body
    is read up to the limit and refused when it goes past. The body read is handed on to the app.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        length = headers.get("content-length")
        if length is None and "chunked" not in headers.get("transfer-encoding", "").lower():
            await self.app(scope, receive, send)  # no body
            return
        try:
            if length is not None and int(length) > self.max_bytes:
                raise self._too_large()
            body = await self._read(receive)
        except HttpRefusal as exc:
            await exc.response({"connection": "close"})(scope, receive, send)
            return
        except ValueError:
            await HttpRefusal(400, f"Content-Length is {length!r}, not a number of bytes").response()(
                scope, receive, send
            )
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away; the app sees an empty body
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                raise self._too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    def _too_large(self) -> HttpRefusal:
        return HttpRefusal(
            413,
            f"the request body is longer than this server's limit of {self.max_bytes:,} bytes "
            "(CITEGRAPH_MAX_BODY_BYTES); send a shorter request",
        )


HEALTH_BODY = b'{"status":"ok"}'


class HealthzFirst:
    """Answers ``GET /healthz`` before any other layer of the app (routing, the body limit, CORS, FastAPI's
    dependency solving and response encoding): a liveness probe does nothing but answer.

    Under load the server's event loop runs every client's HTTP work in turn, each step after waiting for
    the GIL; the fewer steps a probe takes there, the sooner it is answered. Everything else goes on to
    the app. The answer is the one the route gave (``{"status":"ok"}``, JSON, 200).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/healthz" and scope["method"] == "GET":
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(HEALTH_BODY)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": HEALTH_BODY})
            return
        await self.app(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` as one message, then defers to the client's (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _linkage_service(service: GraphService) -> LinkageService:
    """The app's sentence-linkage service: the trained linker (ConfigError without one), the encoder,
    and the cross-encoder where one was trained (``citegraph linkage train --cross-encoder``).

    Built on the first ``linkage`` query, not at start-up: loading the encoder takes seconds and
    memory a server that never links should not pay. It shares the graph service's store lock.
    """
    from api.pipeline.linkage import load_linker
    from gnn.linkage.cross_encoder import CROSS_ENCODER_FILE, CrossEncoder
    from gnn.text.encoder import EncoderSettings, TextEncoder

    linker = load_linker(None)  # before the encoder: fails fast where no model was trained
    cross = CrossEncoder.load_if_saved(CROSS_ENCODER_FILE.under(StoreFiles()))
    encoder = TextEncoder(EncoderSettings.from_env())
    return LinkageService(service.store, encoder, linker, lock=service.lock, cross_encoder=cross)


def _recommendation_service(service: GraphService) -> RecommendationService:
    """The app's recommendation service: the retrieval index beside the store (``<db>.index/``), the
    citation-context profiles and the encoder, as ``citegraph recommend`` opens them.

    Built on the first ``recommend`` query, not at start-up (the encoder and the index take seconds
    and memory). DataError where the store has no embeddings or no paper with text to index,
    ConfigError where it has no folder for an index. It shares the graph service's store lock.
    """
    # the index as the build left it: the cache's vectors for papers it has none for wait for the next index
    # step (the background build's), rather than a rebuild of about 30 s before the first answer
    return RecommendationService.open(service.store, ServiceSettings(), lock=service.lock, reread_for_cache=False)


def _settled(value: T) -> T:
    """``value``, after moving every object alive now out of the garbage collector's generations.

    What the server holds for its lifetime (the store's service, the modules, a loaded index or
    model: millions of objects) would otherwise be traversed by every full collection, and a full
    collection holds the GIL throughout: under 64 clients such pauses of 0.4-1.4 s stopped every
    thread, ``/healthz`` included. Frozen objects are never traversed (``gc.freeze``, Python 3.7+), so
    a full collection only scans what requests allocate. Called at start-up and after each lazily
    built service; objects unreachable later are still freed by reference counting, only cycles
    among frozen objects stay.
    """
    gc.collect()  # what start-up left unreachable goes first, rather than being frozen with the rest
    gc.freeze()
    return value


def _close_linkage(linkage: LinkageService) -> None:
    linkage.encoder.close()  # the service shares the store (closed by the app) and holds no other resource


def _warm(
    services: dict[str, Lazy[RecommendationService] | Lazy[LinkageService]],
    models: dict[str, str],
    then: Callable[[], None] | None = None,
) -> None:
    """Build each lazy service now (a warm start); record why one cannot be built (no index, no linker);
    then call ``then`` (the background build, which would otherwise slow the loading and change the
    index under it)."""
    try:
        _load_each(services, models)
    finally:
        if then is not None:
            then()


def _load_each(services: dict[str, Lazy[RecommendationService] | Lazy[LinkageService]], models: dict[str, str]) -> None:
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


class _Server:
    """What one app holds from start-up to shutdown: the store's graph service and the lazily built models."""

    def __init__(self, config: StoreConfig, settings: AppSettings, *, complete: bool = False) -> None:
        self.config = config
        self.settings = settings
        self.complete = complete
        self.service: GraphService | None = None
        self.models: dict[str, str] = {}  # model -> loading / loaded / the reason it is unavailable (warm start)
        self.linkage: Lazy[LinkageService] | None = None
        self.recommend: Lazy[RecommendationService] | None = None
        self.background: BackgroundBuild | None = None
        self.scheduler = Scheduler(settings.heavy_slots, settings.heavy_queue)  # light pool, heavy slots
        self._ready: dict[str, Any] | None = None  # what /readyz shows of the store and index (_read_readiness)
        self._api_key = settings.api_key.encode() if settings.api_key else None

    @asynccontextmanager
    async def lifespan(self, _: FastAPI) -> AsyncIterator[None]:
        """Open the store at start-up (warm the models if asked, start the background build with
        ``complete``); close everything at shutdown."""
        store = open_store(self.config)
        service = self.service = GraphService(store)
        self.linkage = linkage = Lazy(lambda: _settled(_linkage_service(service)), close=_close_linkage)
        self.recommend = recommend = Lazy(
            lambda: _settled(_recommendation_service(service)), close=RecommendationService.close
        )
        await asyncio.to_thread(self._read_readiness, service)
        _settled(None)
        for problem in missing_assets():
            log.warning("GraphiQL will not load offline: %s", problem)
        if self.complete:
            self.background = BackgroundBuild(
                store,
                service.lock,
                self.config.db_path if self.config.backend == "embedded" else None,
                reload_recommend=lambda: self._reload_recommend(service, recommend),
                threads=os.cpu_count() or 1,
            )
        start_background = self.background.start if self.background is not None else None
        if self.settings.warm:  # the background build starts once both models are loaded
            self.models.update({"recommend": "loading", "linkage": "loading"})
            threading.Thread(
                target=_warm,
                args=({"recommend": recommend, "linkage": linkage}, self.models, start_background),
                daemon=True,
            ).start()
        elif start_background is not None:
            start_background()
        stop_refresh = threading.Event()
        threading.Thread(target=self._keep_ready, args=(service, stop_refresh), daemon=True).start()
        try:
            yield
        finally:
            stop_refresh.set()
            self.scheduler.close()
            linkage.close()
            recommend.close()
            store.close()

    def _reload_recommend(self, service: GraphService, recommend: Lazy[RecommendationService]) -> None:
        """The background build wrote a new index or reranker: a loaded recommendation service is rebuilt on
        them and swapped in (requests keep the old one until then); one not loaded yet will load the new ones."""
        if recommend.loaded:
            recommend.replace(_settled(_recommendation_service(service)))
            log.info("recommendation service rebuilt on the background build's new index and reranker")

    async def context(self) -> Context:
        """The GraphQL context of one request: its DataLoaders live for that request only, so their cache
        never serves another client's query."""
        assert self.service is not None and self.linkage is not None and self.recommend is not None  # started
        return Context.create(
            self.service,
            self.settings.max_results,
            self.settings.request_timeout_s,
            linkage=self.linkage,
            recommend=self.recommend,
            max_query_cost=self.settings.max_query_cost,
            scheduler=self.scheduler,
            max_response_bytes=self.settings.max_response_bytes,
        )

    def _read_readiness(self, service: GraphService) -> None:
        """Read what ``/readyz`` shows from the store and the index folder into :attr:`_ready` (a thread's work:
        the counts read vector columns, a fraction of a second on the full corpus, under the store lock)."""
        try:
            with service.lock:
                papers = service.store.count_nodes("Paper")
            with service.lock:
                completeness = [{"property": row.property, **row.as_dict()} for row in service.store.completeness()]
            index = index_status(service.store)
        except CitegraphError as exc:
            log.warning("/readyz: the store could not be read: %s", exc)
            self._ready = {"status": "store unavailable"}
            return
        folder = Path(index.path).name if index.path else None  # the folder's name: no absolute path to clients
        served = StoreFiles.of(service.store).served_encoder
        self._ready = {
            "status": "ready",
            "store": service.store.backend,
            "papers": papers,
            "index": {"state": index.state, "folder": folder, "command": index.command},
            # which encoder the store's vectors are (a fine-tuned one once `train encoder --serve` ran)
            "encoder": served_description(served),
            "completeness": completeness,
            # how current co-citation is: when its counts and clusters were made (`citegraph update`)
            "cocitation": cocitation_currency(StoreFiles.of(service.store).cocitation_basis),
            "checked": time.time(),
        }

    def _keep_ready(self, service: GraphService, stop: threading.Event) -> None:
        """Re-read :attr:`_ready` every :data:`READY_REFRESH_S` while the background build writes, and as soon
        as it ends; a read-only server's store does not change, so it was read once at start-up."""
        background = self.background
        if background is None:
            return
        last = time.monotonic()
        while not stop.wait(READY_POLL_S):
            done = background.status.finished is not None
            if done or time.monotonic() - last >= READY_REFRESH_S:
                self._read_readiness(service)
                last = time.monotonic()
            if done:
                return

    async def readiness(self, request: Request) -> JSONResponse:
        """``/readyz``: the store's paper count, the retrieval index's state, each model's, how complete each
        computed property is, and with ``complete`` the background build's progress.

        Answered from what the server keeps in memory (read at start-up, and again every few seconds while
        the background build writes): never a store call, so a probe is answered at once while heavy
        queries hold the store. It shows no path of the server's files, and needs the API key when one is set.
        """
        if self._api_key is not None and not any(
            hmac.compare_digest(given, self._api_key) for given in presented_keys(request.headers)
        ):
            refusal = HttpRefusal(
                401, "/readyz needs the API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`"
            )
            return refusal.response({"www-authenticate": "Bearer"})
        ready = self._ready
        if self.service is None or ready is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        if ready["status"] != "ready":
            return JSONResponse(ready, status_code=503)
        body: dict[str, Any] = {key: value for key, value in ready.items() if key != "checked"}
        body["checked_s_ago"] = round(time.time() - ready["checked"], 1)
        if self.background is not None:
            body["background"] = self.background.status.as_dict()
        if self.recommend is not None and self.recommend.loaded:  # the encoder the loaded service really encodes with
            body["encoder"] = self.recommend.get().encoder.describe()
        body["models"] = {
            name: "loaded" if lazy is not None and lazy.loaded else self.models.get(name, "loads on first use")
            for name, lazy in (("recommend", self.recommend), ("linkage", self.linkage))
        }
        return JSONResponse(body)


def create_app(config: StoreConfig, settings: AppSettings, *, complete: bool = False) -> FastAPI:
    """An app that opens the store at start-up (read-only unless ``complete``: then it runs the background
    build, :mod:`api.background`) and closes it at shutdown."""
    server = _Server(config, settings, complete=complete)
    app = FastAPI(title="citegraph", lifespan=server.lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.server = server  # what the app holds (its background build, its services), for tests and tools
    router = OfflineGraphQLRouter(schema, context_getter=server.context, api_key=settings.api_key)
    app.include_router(router, prefix=GRAPHQL_PATH)
    if NODE_MODULES.is_dir():
        app.mount("/assets", StaticFiles(directory=NODE_MODULES), name="assets")
    app.mount("/dashboard", StaticFiles(directory=DASHBOARD_DIR), name="dashboard")

    @app.exception_handler(StarletteHTTPException)
    async def coded_http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Starlette's own refusals (an unknown path, a PUT) in the API's error shape."""
        return HttpRefusal(exc.status_code, str(exc.detail)).response(dict(exc.headers or {}))

    @app.get("/", include_in_schema=False)
    async def dashboard() -> FileResponse:
        return FileResponse(DASHBOARD_DIR / "index.html", media_type="text/html")

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    app.get("/readyz")(server.readiness)

    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["content-type", *API_KEY_HEADERS],
            max_age=600,
        )
    app.add_middleware(HealthzFirst)  # added last: the outermost of the app's own layers
    return app
