"""The background build: what a default ``make build`` leaves for later, computed while the API serves.

A default build embeds the most-cited papers and serves; the rest of the corpus is embedded here, in
a thread of the server (``citegraph serve --complete``, what ``make demo`` runs), followed by the steps
that read those vectors — taxonomy vectors and inferred categories, Poincaré points and h_θ, the
retrieval index — and the recommendation service is then rebuilt on the new index and put in place
of the old one, so new papers are found without a restart. The reranker the build trained on the
partial index is then trained again on the whole one with the build's flags and swapped in the same
way. The steps are the step registry's background plan (:func:`api.pipeline.plans.background_plan`), each run
by its function (:class:`api.pipeline.registry.PlanRun`) on the server's store, as the CLI runs the same steps.

Why a thread of the server and not a second process: the embedded store admits one process that
writes or several that only read, never both, so whoever writes must be the server. The server's
store calls (GraphQL resolvers, ``/readyz``) hold :attr:`api.services.GraphService.lock`; the
background build reaches the store through :class:`SerialisedStore`, which holds the same lock for
each call and releases it between calls — queries wait for one write batch at most, never for a
whole step, and the model's forward passes run outside the lock.

Each step is incremental (unchanged vectors are skipped, trained models load from the cache), and
when the last one succeeds its fingerprint is recorded in ``<db>.build.json`` next to the build's
steps (:func:`api.pipeline.registry.plan_fingerprint`): a restart over the same build skips the
background build at once, and a build interrupted by a stop or a kill goes on where it stopped.
Progress is in ``/readyz`` (``background``) and, for each computed property, in the GraphQL
``completeness`` field and ``citegraph stats``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import torch

from api.pipeline.plans import background_plan
from api.pipeline.registry import PlanRun, Step, StepContext, StepOutcome, plan_fingerprint, read_state, record_step
from graph import CitegraphError
from graph.store import GraphStore

log = logging.getLogger(__name__)


class SerialisedStore:
    """``store`` with every method call made while holding ``lock`` (the server's store lock).

    Attribute reads pass through; calls are serialised one by one, so a compute step interleaves
    with the server's queries between its reads and writes instead of holding the store throughout.
    """

    def __init__(self, store: GraphStore, lock: threading.Lock) -> None:
        self._store = store
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if not callable(value):
            return value

        def serialised(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return value(*args, **kwargs)

        return serialised


@dataclass
class BackgroundStatus:
    """What ``/readyz`` says of the background build."""

    state: str = "waiting"  # waiting | running | complete | failed
    step: str | None = None  # the step running now
    steps: list[dict[str, object]] = field(default_factory=list)  # finished steps: name, seconds
    error: str | None = None  # why it failed, in a sentence (the server log has the rest)
    started: float | None = None  # time.time() at start
    finished: float | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "state": self.state,
            "step": self.step,
            "steps": list(self.steps),
            "error": self.error,
            "seconds": None if self.started is None else round((self.finished or time.time()) - self.started, 1),
        }


class BackgroundBuild:
    """Run the background plan of the step registry (:func:`~api.pipeline.plans.background_plan`: its reranker
    and sentence steps sized by the build) in a daemon thread on the server's store, each step by its function.

    ``reload_recommend``: called once a step has written what the recommendation service loads — the index
    step, and the reranker step when it trained (the app rebuilds its recommendation service there).
    ``threads``: torch threads while the build runs (the server serves with fewer, for latency; the encoder
    wants every core), restored afterwards.
    """

    def __init__(
        self,
        store: GraphStore,
        lock: threading.Lock,
        db: Path | None,
        *,
        reload_recommend: Callable[[], None],
        threads: int,
        steps: Sequence[Step] | None = None,
    ) -> None:
        self.store = cast(GraphStore, SerialisedStore(store, lock))
        self.db = db
        self.reload_recommend = reload_recommend
        self.threads = threads
        self.plan = list(steps if steps is not None else background_plan(db))
        self.status = BackgroundStatus()
        self._thread: threading.Thread | None = None
        self._started = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="background-build", daemon=True)
        self._thread.start()
        self._started.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the build to end (at most ``timeout`` seconds in all), including for it to start: the
        server starts it once its models are loaded."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._started.wait(timeout):
            return
        if self._thread is not None:
            self._thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def run(self) -> None:
        """Every step in order; the status says which runs, which finished, and why one failed."""
        status = self.status
        status.started = time.time()
        fingerprint = plan_fingerprint(self.db, "background", self.plan) if self.db is not None else None
        recorded = read_state(self.db).get("background", {}) if self.db is not None else {}
        if fingerprint is not None and recorded.get("fingerprint") == fingerprint:
            status.state, status.finished = "complete", time.time()
            log.info("background build: done already for this build (same data, code and options)")
            return
        status.state = "running"
        previous_threads = torch.get_num_threads()
        torch.set_num_threads(max(self.threads, previous_threads))
        run = PlanRun(self.plan, StepContext(quiet=True, store=self.store), self._after_step, self._before_step)
        try:
            run.run()
        except CitegraphError as exc:
            status.state, status.error = "failed", f"step {status.step}: {exc}"
            log.error("background build: step %s failed: %s; restart the server to resume", status.step, exc)
            return
        except Exception:  # a bug must not take the server down: it keeps serving what it has
            status.state, status.error = "failed", f"step {status.step}: internal error (see the server log)"
            log.exception("background build: step %s failed", status.step)
            return
        finally:
            torch.set_num_threads(previous_threads)
            status.finished = time.time()
        status.state, status.step = "complete", None
        if fingerprint is not None and self.db is not None:
            record_step(self.db, "background", fingerprint, status.finished - status.started)
        log.info("background build: complete in %.0f s", status.finished - status.started)

    def _before_step(self, step: Step) -> None:
        self.status.step = step.name
        log.info("background build: %s (citegraph %s)", step.name, " ".join(step.command))

    def _after_step(self, step: Step, outcome: StepOutcome) -> None:
        """Report the step in the status, and rebuild the recommendation service after one that wrote what it
        loads. A step is skipped where :meth:`~api.pipeline.registry.Step.why_skipped` says so: taxonomy and
        hyperbolic on a store without taxonomy classes, as ``compute all`` does; the reranker when it was trained
        on the index built now, or the build trained none; the encoder's steps without citation contexts or a
        fine-tuned encoder in service."""
        done: dict[str, object] = {"name": step.name, "seconds": round(outcome.seconds, 1)}
        self.status.steps.append(done | ({"skipped": outcome.skipped} if outcome.skipped else {}))
        if step.name in RELOADS_RECOMMEND and not outcome.skipped:
            self.reload_recommend()

    def run_step(self, step: Step) -> str | None:
        """Run one step on the serialised store as the plan does; why it was skipped, or None when it ran."""
        skipped = step.why_skipped(self.store)
        if skipped is None:
            step.run(StepContext(quiet=True, store=self.store))
        return skipped


# The steps after which the server's recommendation service is rebuilt: they write what it loads (the index and
# the reranker; those of the fine-tuned encoder with it, which the rebuilt service then encodes queries with).
RELOADS_RECOMMEND = frozenset({"index", "reranker", "encoder index", "encoder reranker"})


__all__ = ["BackgroundBuild", "BackgroundStatus", "SerialisedStore"]
