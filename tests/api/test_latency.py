"""What a light request costs the server beside its document: the worker threads' kept event loops and
the probe answered before the app's layers."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import httpx

from api.app import HealthzFirst
from api.schema import _thread_loop


def test_a_worker_thread_keeps_its_event_loop_and_closes_it_when_it_ends() -> None:
    """Operations on one worker thread share its loop (and the loop's store-call threads); a thread that
    ends takes its loop down with it."""
    seen: list[Any] = []
    worker = threading.Thread(target=lambda: seen.extend([_thread_loop(), _thread_loop()]))
    worker.start()
    worker.join()
    gc.collect()
    assert seen[0] is seen[1] and seen[0].is_closed()
    assert _thread_loop() is not seen[0] and not _thread_loop().is_closed()


def test_healthz_is_answered_before_the_app_and_everything_else_reaches_it() -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(f"{scope['method']} {scope['path']}")
        await send({"type": "http.response.start", "status": 418, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def ask() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=HealthzFirst(app))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return [await client.get("/healthz"), await client.post("/healthz"), await client.get("/healthz/x")]

    health, posted, other = asyncio.run(ask())
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert health.headers["content-type"] == "application/json"
    assert posted.status_code == 418 and other.status_code == 418
    assert reached == ["POST /healthz", "GET /healthz/x"]
