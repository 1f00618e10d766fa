"""A live uvicorn serving the app on a free loopback port, for the HTTP and browser tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from fastapi import FastAPI

from api.app import create_app
from api.settings import AppSettings
from graph import StoreConfig


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def live_server(store_path: Path, settings: AppSettings) -> Iterator[str]:
    """Serve the store (read-only) on 127.0.0.1; yields the base URL; stops the server on exit."""
    with live_app(create_app(StoreConfig(db_path=store_path, read_only=True), settings)) as base:
        yield base


@contextmanager
def live_app(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1; yields the base URL once it has started; stops the server on exit."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:  # answered once start-up is done
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not become ready within 30 s")
        time.sleep(0.05)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)
