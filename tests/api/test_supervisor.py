"""The supervisor of ``citegraph serve``: a killed worker is restarted on the same socket, and a
request made meanwhile waits in the backlog and is answered; stopping the supervisor stops the worker.

The fast tests supervise a tiny HTTP worker (a few lines of the standard library, answering with its
pid); the slow one runs ``citegraph serve`` itself and kills its worker mid-request.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.supervisor import Supervisor, bind
from tests.api.live import free_port

WORKER = """
import os, socket, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/slow":
            time.sleep(30)
        body = str(os.getpid()).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
server.socket.close()
server.socket = socket.socket(fileno=int(sys.argv[1]))
server.serve_forever()
"""


@pytest.fixture
def supervised() -> Iterator[tuple[Supervisor, str]]:
    """A supervisor of the tiny worker on a free loopback port, running in a thread; stopped after."""
    port = free_port()
    sock = bind("127.0.0.1", port)
    supervisor = Supervisor(sock, lambda fd: [sys.executable, "-c", WORKER, str(fd)], min_backoff_s=0.2)
    thread = threading.Thread(target=supervisor.run, daemon=True)
    thread.start()
    try:
        yield supervisor, f"http://127.0.0.1:{port}"
    finally:
        supervisor.stop()
        thread.join(30)
        sock.close()
    assert not thread.is_alive()
    assert supervisor.worker is not None and supervisor.worker.poll() is not None  # the worker stopped too


def test_a_killed_worker_is_restarted_and_the_next_request_is_answered(supervised: tuple[Supervisor, str]) -> None:
    supervisor, base = supervised
    first = supervisor.wait_started(10)
    assert first is not None
    assert httpx.get(f"{base}/", timeout=10).text == str(first.pid)
    cut: list[BaseException] = []

    def in_flight() -> None:
        try:
            httpx.get(f"{base}/slow", timeout=30)
        except httpx.HTTPError as exc:
            cut.append(exc)

    request = threading.Thread(target=in_flight)
    request.start()
    time.sleep(0.3)  # the worker is inside the slow request now
    os.kill(first.pid, signal.SIGKILL)
    request.join(10)
    # asked at once, during the back-off: the connection waits in the backlog for the next worker
    answer = httpx.get(f"{base}/", timeout=20)
    assert cut, "the request in flight when the worker died was not cut"
    assert answer.status_code == 200 and answer.text != str(first.pid)
    assert [(r.pid, r.returncode) for r in supervisor.restarts] == [(first.pid, -signal.SIGKILL)]


def test_a_worker_that_keeps_dying_is_restarted_after_a_growing_back_off() -> None:
    sock = bind("127.0.0.1", free_port())
    supervisor = Supervisor(sock, lambda fd: [sys.executable, "-c", "raise SystemExit(3)"], min_backoff_s=0.05)
    thread = threading.Thread(target=supervisor.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while len(supervisor.restarts) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    supervisor.stop()
    thread.join(10)
    sock.close()
    assert [r.returncode for r in supervisor.restarts[:3]] == [3, 3, 3]
    assert [r.backoff_s for r in supervisor.restarts[:3]] == [0.05, 0.1, 0.2]


@pytest.mark.slow
def test_citegraph_serve_survives_its_worker_being_killed(rich_store: object, store_path: Path) -> None:
    rich_store.close()  # type: ignore[attr-defined]  # the server opens the file read-only
    port = free_port()
    repo = Path(__file__).resolve().parents[2]
    server = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "--db", str(store_path), "serve", "--port", str(port)],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    pids: list[int] = []
    log: list[str] = []

    def read_log() -> None:
        assert server.stderr is not None
        for line in server.stderr:
            log.append(line)
            found = re.search(r"worker started \(pid (\d+)\)", line)
            if found:
                pids.append(int(found.group(1)))

    threading.Thread(target=read_log, daemon=True).start()
    query = {"query": '{ paper(id: "p1") { title } }'}
    try:
        deadline = time.monotonic() + 60
        while not pids and time.monotonic() < deadline:
            time.sleep(0.1)
        first = httpx.post(f"{base}/graphql", json=query, timeout=60)  # waits in the backlog until it starts
        assert first.json()["data"]["paper"]["title"] == "Statistical machine translation"
        os.kill(pids[0], signal.SIGKILL)
        again = httpx.post(f"{base}/graphql", json=query, timeout=60)
        assert again.json()["data"]["paper"]["title"] == "Statistical machine translation"
        assert len(pids) == 2 and any("died" in line and "SIGKILL" in line for line in log)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0
    for pid in pids:  # SIGTERM stopped the worker too
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_every_worker_signs_cursors_with_one_key() -> None:
    """A worker the supervisor restarts must accept the cursors its predecessor issued: one key for all."""
    from api.cli.serve import worker_env
    from api.types.common import CURSOR_KEY_ENV

    drawn = worker_env({"PATH": "/usr/bin"})
    assert len(drawn[CURSOR_KEY_ENV]) == 64 and drawn["PATH"] == "/usr/bin"
    assert worker_env({CURSOR_KEY_ENV: "shared"})[CURSOR_KEY_ENV] == "shared"  # an operator's key is kept
