"""The step registry's core: what a step is, how it is fingerprinted and recorded, and how a plan runs in process.

A :class:`Step` is declared once, as data: its ``name`` (what the build's lines, the timing table, ``/readyz`` and
``<db>.build.json`` call it), the :class:`Action` that runs it (a Python function taking a :class:`StepContext`
and the step's typed settings), those ``settings`` (a frozen dataclass whose ``command()`` is the ``citegraph``
command line that does the same work alone, shown in the build's step line), what it ``reads`` beyond the store
(the data folder of ``ingest``) and whether it runs ``beside`` an earlier step in a second process. The plans
that list steps are in :mod:`api.pipeline.plans`; the CLI (:mod:`api.cli.build`, :mod:`api.cli.compute`) and
the server (:mod:`api.background`) run them through the functions here and in :mod:`api.pipeline.build`.

A step's *fingerprint* (:func:`fingerprint`) is a hash of what decides its result: the fingerprint of the step
before it (so a change anywhere re-runs everything after it), the project's version (the git commit when there
is one), the action's name, its settings and, for a step that reads files, the size and modification time of
each of them. ``<db>.build.json`` maps each finished step to its fingerprint, time and settings; a step whose
fingerprint is recorded is done. A record written with another formula (an older citegraph) matches nothing,
so its steps simply run again (each only computes what is missing or stale).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from graph import CitegraphError, GraphStore, StoreConfig, open_store
from graph.errors import ConfigError, DataError
from graph.files import StoreFiles


class StepSettings(Protocol):
    """What every step's settings give besides their fields: the command line that does the same work alone."""

    def command(self) -> tuple[str, ...]: ...


S = TypeVar("S", bound=StepSettings)


@dataclass(frozen=True)
class StepContext:
    """Where a step runs: the store it opens (``config``) or the open store it is handed (``store``: the server's,
    whose calls hold the server's lock), and whether it prints progress bars."""

    config: StoreConfig | None = None
    quiet: bool = False
    store: GraphStore | None = None

    @contextmanager
    def open(self, *, read_only: bool = False, create: bool = False) -> Iterator[GraphStore]:
        """The store to run on: the one handed over (left open), else ``config``'s, opened as the step needs it.

        Only ``ingest`` passes ``create``: any other step refuses an embedded store that does not exist rather than
        create an empty one and compute nothing in it.
        """
        if self.store is not None:
            yield self.store
            return
        if self.config is None:
            raise ConfigError("a step was given neither a store nor the settings to open one (a bug: report it)")
        config = dataclasses.replace(self.config, read_only=read_only)
        if config.backend == "embedded" and not read_only and not create and not config.db_path.exists():
            raise ConfigError(
                f"no store at {config.db_path}; run `citegraph --db {config.db_path} ingest SOURCE` (or `make build`) "
                "first, or pass --db the store to use"
            )
        with open_store(config) as store:
            yield store

    def on(self, store: GraphStore) -> StepContext:
        """This context with ``store`` handed over: the steps of a composite step share the store it opened."""
        return dataclasses.replace(self, store=store)


@dataclass(frozen=True)
class Action(Generic[S]):
    """What a kind of step does, declared once for every plan and command that runs it.

    ``run``: the work, on the store ``context`` opens. ``skip``: why a plan that completes what is there (the
    server's background build, ``compute all``) may leave the step out on ``store``, or None when it runs; a
    command that names the step runs it regardless. Both are module-level functions, so that a step can be sent to
    a second process (:mod:`multiprocessing` pickles them by name).
    """

    name: str  # the command it stands for, e.g. "compute embeddings"
    run: Callable[[StepContext, S], None]
    skip: Callable[[GraphStore, S], str | None] | None = None


@dataclass(frozen=True)
class Step:
    """One step of a plan (see the module docstring)."""

    name: str
    action: Action[Any]
    settings: Any  # the action's settings: a frozen dataclass with command()
    # The earlier step this one runs beside, in a second process started with it: a step that needs nothing
    # the other makes and keeps a core busy while the other leaves one idle. "" runs it after the step before.
    beside: str = ""
    reads: Path | None = None  # a data folder whose files' sizes and times enter the fingerprint (ingest's)
    # Why a completing plan leaves this step out on a store, beyond its action's skip: e.g. the steps that follow
    # the encoder's fine-tuning run only once a fine-tuned encoder serves.
    guard: Callable[[GraphStore], str | None] | None = None

    @property
    def command(self) -> tuple[str, ...]:
        """The ``citegraph`` command line that does this step's work alone (the build's step line shows it)."""
        return tuple(self.settings.command())

    def why_skipped(self, store: GraphStore) -> str | None:
        """Why a completing plan leaves this step out on ``store`` (its guard, then its action's), or None."""
        reason = self.guard(store) if self.guard is not None else None
        if reason is None and self.action.skip is not None:
            reason = self.action.skip(store, self.settings)
        return reason

    def run(self, context: StepContext) -> None:
        self.action.run(context, self.settings)


# fingerprints ---------------------------------------------------------------------------------------
def version() -> str:
    """The git commit of the checkout (code changes re-run the steps), else the package version."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    from importlib.metadata import version as package_version

    return package_version("citegraph")


def inputs_signature(data_dir: Path) -> str:
    """Size and modification time of every file of every bundled source under ``data_dir``."""
    import loaders  # every loader: imported by the build's fingerprints alone, not by a process running one step

    digest = hashlib.sha256()
    for source in loaders.available(data_dir):
        if not source.bundled:
            continue
        root = data_dir / source.path
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            stat = path.stat()
            digest.update(f"{path}\x1f{stat.st_size}\x1f{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def settings_record(settings: Any) -> dict[str, Any]:
    """A step's settings as JSON-ready data (what its fingerprint hashes and ``<db>.build.json`` keeps)."""
    data: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(settings), sort_keys=True, default=str))
    return data


def fingerprint(step: Step, before: str, code_version: str, inputs: str = "") -> str:
    """sha256 of the step before's fingerprint, the code version, the action, the settings and (for a step that
    reads files) their signature ``inputs``; 16 hex digits."""
    parts = [before, code_version, step.action.name, json.dumps(settings_record(step.settings), sort_keys=True)]
    parts.append(inputs if step.reads is not None else "")
    return hashlib.sha256("\x1e".join(parts).encode()).hexdigest()[:16]


def fingerprints(
    plan: Sequence[Step], code_version: str, signature: Callable[[Path], str] = inputs_signature
) -> dict[str, str]:
    """Each step's fingerprint, chained to the step before it; a step run beside another chains to what
    that one chains to (it needs nothing the other makes), and the step after both to the later of the two."""
    out: dict[str, str] = {}
    chained_to: dict[str, str] = {}
    before = ""
    for step in plan:
        base = chained_to[step.beside] if step.beside else before
        chained_to[step.name] = base
        inputs = signature(step.reads) if step.reads is not None else ""
        out[step.name] = before = fingerprint(step, base, code_version, inputs)
    return out


# <db>.build.json ------------------------------------------------------------------------------------
def state_path(db: Path) -> Path:
    path = StoreFiles(db).build_state
    assert path is not None  # an embedded store always has one
    return path


def read_state(db: Path) -> dict[str, dict[str, Any]]:
    """The recorded steps of the build of ``db`` (name -> fingerprint, seconds, settings, command); empty without
    one, or where the store file is gone (``make clean``: the record describes a store that no longer exists)."""
    path = state_path(db)
    if not db.exists() or not path.is_file():
        return {}
    try:
        steps = json.loads(path.read_text(encoding="utf-8")).get("steps", {})
    except (OSError, ValueError, AttributeError):
        return {}  # an unreadable record: every step runs again (each only computes what is missing)
    return {str(k): v for k, v in steps.items() if isinstance(v, dict)} if isinstance(steps, dict) else {}


def write_state(db: Path, state: dict[str, dict[str, Any]]) -> None:
    path = state_path(db)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"steps": state}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)  # a kill mid-write leaves the previous record, never half of one


def step_record(step: Step, step_fingerprint: str, seconds: float) -> dict[str, Any]:
    """What ``<db>.build.json`` keeps of a finished step: its fingerprint, time, settings and command line (read
    by the background build, :func:`api.pipeline.plans.background_plan`, and by people)."""
    return {
        "fingerprint": step_fingerprint,
        "seconds": round(seconds, 1),
        "settings": settings_record(step.settings),
        "argv": list(step.command),
    }


def record_step(db: Path, name: str, step_fingerprint: str, seconds: float) -> None:
    """Add (or replace) one step's record, keeping the others."""
    state = read_state(db)
    state[name] = {"fingerprint": step_fingerprint, "seconds": round(seconds, 1)}
    write_state(db, state)


def plan_fingerprint(db: Path, name: str, plan: Sequence[Step]) -> str | None:
    """The fingerprint under which a plan run after the build (the background build, an ``update``) is recorded as
    ``name``: its steps' actions and settings, chained to the build's last recorded step, so a new build (new
    data, code or options) runs it again. None where the store has no build record."""
    state = read_state(db)
    last = next((entry for step, entry in reversed(state.items()) if step != name), None)
    if last is None:
        return None
    described = json.dumps(
        [[s.name, s.action.name, settings_record(s.settings)] for s in plan], sort_keys=True
    ).encode()
    parts = [str(last.get("fingerprint", "")), version(), name, hashlib.sha256(described).hexdigest()]
    return hashlib.sha256("\x1e".join(parts).encode()).hexdigest()[:16]


# a plan run in process --------------------------------------------------------------------------------
@dataclass
class StepOutcome:
    name: str
    seconds: float
    skipped: str | None = None  # why a completing plan left it out


@dataclass
class PlanRun:
    """Runs a plan's steps in order on one store, in this process: the server's background build, and any plan
    run after the build (an ``update``). Each step's action skip and guard are honoured (a completing plan leaves
    out what is done or cannot run); ``after_step`` is told of each step that ran or was skipped."""

    plan: Sequence[Step]
    context: StepContext
    after_step: Callable[[Step, StepOutcome], None] = lambda step, outcome: None
    before_step: Callable[[Step], None] = lambda step: None
    outcomes: list[StepOutcome] = field(default_factory=list)

    def run(self) -> list[StepOutcome]:
        for step in self.plan:
            self.before_step(step)
            started = time.perf_counter()
            with self.context.open() as store:
                skipped = step.why_skipped(store)
                if skipped is None:
                    step.run(self.context.on(store))
            outcome = StepOutcome(step.name, time.perf_counter() - started, skipped)
            self.outcomes.append(outcome)
            self.after_step(step, outcome)
        return self.outcomes


# a step as a command ------------------------------------------------------------------------------------
EXIT_DATA = 65  # a DataError: the input or the store must change (sysexits.h EX_DATAERR), not a flag


def run_guarded(step: Step, context: StepContext, *, debug: bool = False) -> int:
    """Run ``step`` and turn its failure into the exit code the CLI gives it, with its one-line message on stderr
    (0 done; 1 a setting or the store; 65 the data; 2 an internal error, the traceback one flag away)."""
    try:
        step.run(context)
    except CitegraphError as exc:
        if debug:
            raise
        print(f"citegraph: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_DATA if isinstance(exc, DataError) else 1
    except Exception as exc:  # a bug: say so in one line
        if debug:
            raise
        print(
            f"citegraph: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            file=sys.stderr,
            flush=True,
        )
        return 2
    return 0


def run_in_child(step: Step, config: StoreConfig, quiet: bool, log: str) -> None:
    """The body of a second process that runs one step (:mod:`multiprocessing`, spawned): its output to ``log``,
    the step's exit code as the process's. This module imports no model: the child loads only what the step's
    own function imports (its threads are set by the environment it was started with)."""
    with open(log, "ab", buffering=0) as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
    code = run_guarded(step, StepContext(config=config, quiet=quiet))
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


__all__ = [
    "EXIT_DATA",
    "Action",
    "PlanRun",
    "Step",
    "StepContext",
    "StepOutcome",
    "StepSettings",
    "fingerprint",
    "fingerprints",
    "inputs_signature",
    "plan_fingerprint",
    "read_state",
    "record_step",
    "run_guarded",
    "run_in_child",
    "settings_record",
    "state_path",
    "step_record",
    "version",
    "write_state",
]
