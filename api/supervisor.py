"""A watchdog for ``citegraph serve``: it holds the listening socket and restarts the worker that dies.

The server process can die of what Python cannot catch — a native crash (a segfault) in the embedded
store's engine, the kernel's OOM killer — and nothing would restart it. So ``citegraph serve`` runs
as two processes:

* the **supervisor** (this module, in the process the user started) binds and listens on the port
  itself, starts the worker with the listening socket inherited as a file descriptor, and waits;
* the **worker** (``citegraph serve --worker-fd N``) serves on that descriptor (``uvicorn`` with
  ``fd=``): the store, the models, the GraphQL API.

When the worker dies the supervisor logs it and starts another one on the same socket. The socket
never closes in between, so clients that connect during a restart wait in the listen backlog
(:data:`BACKLOG`) and are answered by the new worker instead of being refused. A worker that dies
again soon after starting is restarted after a back-off that doubles from :data:`MIN_BACKOFF_S` up
to :data:`MAX_BACKOFF_S` (a broken store or setting must not spin the CPU); one that served for
:data:`STABLE_AFTER_S` resets it. SIGINT (Ctrl-C) and SIGTERM stop both: the supervisor passes the
signal on, gives the worker :data:`STOP_GRACE_S` to finish its requests and close the store, then kills it.

One worker, always: the embedded store admits one writing process (``serve --complete`` writes
from a thread of the worker), and a restarted worker takes the store over where its predecessor
left it (a write cut short is repaired on open, :mod:`graph.recovery`). Reads run side by side
inside that worker instead: a read-only store holds several connections, whose statements the
engine runs at once outside the GIL (``CITEGRAPH_READ_CONNECTIONS``, :mod:`api.scheduling`).
"""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType

log = logging.getLogger(__name__)

BACKLOG = 2048  # connections the kernel queues while no worker accepts (uvicorn's own default)
MIN_BACKOFF_S = 0.5  # wait before restarting a worker that died soon after it started; doubles each time
MAX_BACKOFF_S = 30.0  # the longest wait between restarts of a worker that keeps dying
STABLE_AFTER_S = 60.0  # a worker that served this long resets the back-off
STOP_GRACE_S = 20.0  # how long a stopping worker may take to finish its requests before it is killed


def bind(host: str, port: int, *, backlog: int = BACKLOG) -> socket.socket:
    """A listening TCP socket on ``host:port`` that a worker process can inherit (IPv6 for a ``:`` host)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


@dataclass
class Restart:
    """One death of the worker, as the supervisor logged it."""

    pid: int
    returncode: int
    ran_s: float
    backoff_s: float


class Supervisor:
    """Runs ``command(fd)`` as the worker on the listening socket ``sock`` and restarts it when it dies.

    ``command`` gives the worker's argv for the descriptor it inherits. :meth:`run` returns when the
    supervisor is stopped (:meth:`stop`, or SIGINT/SIGTERM with :meth:`install_signals`), after
    the worker has stopped too; its result is the exit status to report (0, or 130 on Ctrl-C).
    """

    def __init__(
        self,
        sock: socket.socket,
        command: Callable[[int], Sequence[str]],
        *,
        env: dict[str, str] | None = None,
        min_backoff_s: float = MIN_BACKOFF_S,
        max_backoff_s: float = MAX_BACKOFF_S,
        stable_after_s: float = STABLE_AFTER_S,
        stop_grace_s: float = STOP_GRACE_S,
    ) -> None:
        self.sock = sock
        self.command = command
        self.env = env
        self.min_backoff_s = min_backoff_s
        self.max_backoff_s = max_backoff_s
        self.stable_after_s = stable_after_s
        self.stop_grace_s = stop_grace_s
        self.restarts: list[Restart] = []
        self.worker: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._signal: int | None = None
        self._started = threading.Event()  # set each time a worker has been started

    def install_signals(self) -> None:
        """SIGINT and SIGTERM stop the supervisor and its worker (call from the main thread)."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self._signal = signum
        self._stopping.set()

    def stop(self) -> None:
        """Ask :meth:`run` to stop the worker and return."""
        self._stopping.set()

    def wait_started(self, timeout: float) -> subprocess.Popen[bytes] | None:
        """The current worker once one has been started (for tests and tools)."""
        self._started.wait(timeout)
        return self.worker

    def run(self) -> int:
        backoff = self.min_backoff_s
        fd = self.sock.fileno()
        while not self._stopping.is_set():
            started = time.monotonic()
            # its own process group: a terminal's Ctrl-C reaches the supervisor alone, which passes it on once
            # (a second SIGINT would make uvicorn skip its shutdown, and the store's close with it)
            self.worker = worker = subprocess.Popen(
                list(self.command(fd)), pass_fds=(fd,), env=self.env, process_group=0
            )
            self._started.set()
            log.info("worker started (pid %d) on the supervisor's socket", worker.pid)
            while worker.poll() is None and not self._stopping.wait(0.2):
                pass
            if self._stopping.is_set():
                break
            ran = time.monotonic() - started
            if ran >= self.stable_after_s:
                backoff = self.min_backoff_s
            self.restarts.append(Restart(worker.pid, worker.returncode, ran, backoff))
            log.warning(
                "worker (pid %d) died after %.1f s with %s; restarting it in %.1f s (connections wait in the backlog)",
                worker.pid,
                ran,
                _describe(worker.returncode),
                backoff,
            )
            self._started.clear()
            if self._stopping.wait(backoff):
                break
            backoff = min(backoff * 2, self.max_backoff_s)
        self._stop_worker()
        return 130 if self._signal == signal.SIGINT else 0

    def _stop_worker(self) -> None:
        worker = self.worker
        if worker is None or worker.poll() is not None:
            return
        worker.send_signal(signal.SIGTERM if self._signal != signal.SIGINT else signal.SIGINT)
        try:
            worker.wait(self.stop_grace_s)
        except subprocess.TimeoutExpired:
            log.warning("worker (pid %d) did not stop within %.0f s; killing it", worker.pid, self.stop_grace_s)
            worker.kill()
            worker.wait()


def _describe(returncode: int) -> str:
    """``exit status 1`` or ``signal SIGSEGV`` for a Popen return code."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


__all__ = ["BACKLOG", "Restart", "Supervisor", "bind"]
