"""Copy a whole graph from one store to another (embedded <-> Neo4j), resumable by label and type.

Every label, then every relationship type, is streamed from the source in frames of
:attr:`CopySettings.batch_size` rows (:meth:`GraphStore.iter_nodes` / :meth:`GraphStore.iter_edges`)
and written to the target through :func:`graph.ingest.ingest`, so each frame is validated against the
target's schema and written in one transaction. All stored properties travel, computed ones included
(embeddings, co-citation strengths, noise distributions, clusters).

Resuming: a small JSON progress file records the labels and types that finished. A rerun skips them
and copies the others from their start; that is safe because every write merges (nodes on their key,
edges on their identity), so rows a broken run already wrote are matched, not duplicated.
``restart`` clears the file. The file also names the source and target, and a rerun against other
stores refuses to use it.

Retries: the Neo4j driver retries transient failures inside each transaction; when those retries are
spent (:class:`~graph.errors.TransientStoreError`) or the server drops away
(:class:`~graph.errors.StoreUnavailableError`), the frame is written again up to
:attr:`CopySettings.retries` times, waiting ``retry_wait_s``, then twice as long, and so on.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from graph.errors import ConfigError, DataError, StoreError, StoreUnavailableError, TransientStoreError, ValidationError
from graph.ingest import GraphBatch, ingest
from graph.store import GraphStore

log = logging.getLogger(__name__)

PROGRESS_VERSION = 1


@dataclass(frozen=True)
class CopySettings:
    # rows per write transaction: big enough to amortise a Neo4j round trip and the embedded store's endpoint
    # checks, small enough for the server's memory
    batch_size: int = field(default=10_000, metadata={"help": "rows per write transaction (default %(default)s)"})
    retries: int = 3  # extra attempts for a frame that failed transiently (the writes merge, so retrying is safe)
    retry_wait_s: float = 2.0  # wait before the first retry; doubled before each further one
    progress_path: Path = Path("var/copy.progress.json")  # labels/types finished so far; a rerun skips them
    restart: bool = False  # forget the progress file and copy everything again

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ConfigError(f"--batch-size is {self.batch_size}; use a positive number of rows (default 10000)")
        if self.retries < 0 or self.retry_wait_s < 0:
            raise ConfigError("retries and the wait between them cannot be negative")


@dataclass
class CopyReport:
    source: str  # describe() of each store
    target: str
    copied: dict[str, int] = field(default_factory=dict)  # label/type -> rows written in this run
    skipped: list[str] = field(default_factory=list)  # finished by an earlier run (progress file)
    retried: int = 0  # frames written again after a transient failure
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [f"copied {self.source} -> {self.target} in {self.seconds:.1f}s"]
        lines += [f"  {name:<14}{rows:>12,} rows" for name, rows in self.copied.items()]
        if self.skipped:
            lines.append(f"  already copied by an earlier run: {', '.join(self.skipped)}")
        if self.retried:
            lines.append(f"  {self.retried} batch(es) written again after a transient failure")
        return "\n".join(lines)


class _Progress:
    """The progress file: which labels/types are finished, for which pair of stores."""

    def __init__(self, path: Path, source: str, target: str, *, restart: bool) -> None:
        self.path = path
        self.header = {"version": PROGRESS_VERSION, "source": source, "target": target}
        self.done: list[str] = []
        if restart:
            path.unlink(missing_ok=True)
        elif path.exists():
            self._load()

    def _load(self) -> None:
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
            done = stored["done"]
            same = all(stored.get(key) == value for key, value in self.header.items())
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DataError(
                f"progress file {self.path} is unreadable ({exc}); delete it or pass --restart to copy everything again"
            ) from exc
        if not same:
            raise DataError(
                f"progress file {self.path} belongs to a copy from {stored.get('source')} to {stored.get('target')}; "
                "pass --restart to start this copy from scratch, or --progress-file to keep both"
            )
        self.done = [str(name) for name in done]

    def finish(self, name: str) -> None:
        self.done.append(name)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".tmp")
        partial.write_text(json.dumps({**self.header, "done": self.done}, indent=2) + "\n", encoding="utf-8")
        os.replace(partial, self.path)  # atomic: a crash leaves the old file or the new one


def copy_store(
    source: GraphStore,
    target: GraphStore,
    settings: CopySettings = CopySettings(),
    *,
    progress: bool = True,
    sleep: Callable[[float], None] = time.sleep,
) -> CopyReport:
    """Copy every node and edge of ``source`` into ``target``; see the module docstring."""
    if source.describe() == target.describe():
        raise ConfigError(f"the source and the target are the same store ({source.describe()}); copy to another one")
    if source.schema.sizes != target.schema.sizes:
        raise ConfigError(
            f"the stores have different vector sizes ({source.schema.sizes} vs {target.schema.sizes}); "
            "set CITEGRAPH_EMBEDDING_DIM / CITEGRAPH_TAXONOMY_DIM / CITEGRAPH_POINCARE_DIM to the source's sizes"
        )
    started = time.perf_counter()
    state = _Progress(settings.progress_path, source.describe(), target.describe(), restart=settings.restart)
    report = CopyReport(source.describe(), target.describe())
    # Nodes first: edges are checked against the target's nodes.
    tables = [(label, True) for label in source.schema.nodes] + [(rel, False) for rel in source.schema.rels]
    for name, is_node in tables:
        if name in state.done:
            report.skipped.append(name)
            continue
        total = source.count_nodes(name) if is_node else source.count_rels(name)
        frames = (
            source.iter_nodes(name, settings.batch_size) if is_node else source.iter_edges(name, settings.batch_size)
        )
        written = 0
        with tqdm(total=total, desc=f"copy {name}", unit="row", disable=not progress, leave=False) as bar:
            for frame in frames:
                batch = GraphBatch(
                    f"copy:{name}", nodes={name: frame} if is_node else {}, rels={} if is_node else {name: frame}
                )
                report.retried += _write(target, batch, name, settings, sleep)
                written += len(frame)
                bar.update(len(frame))
        report.copied[name] = written
        state.finish(name)
        log.info("copied %s: %d rows", name, written)
    report.seconds = time.perf_counter() - started
    return report


def _write(
    target: GraphStore, batch: GraphBatch, name: str, settings: CopySettings, sleep: Callable[[float], None]
) -> int:
    """Write one frame, retrying transient failures; returns how many retries it took."""
    wait = settings.retry_wait_s
    for attempt in range(settings.retries + 1):
        try:
            ingest(target, batch, on_error="fail", merge_known_ids=False)  # a faithful copy: keys as they are
            return attempt
        except ValidationError as exc:
            raise ValidationError(
                f"copy {name}: {target.describe()} refuses {len(exc.rejects)} record(s) of the source, nothing of "
                f"this batch was written; first: {exc.rejects[0].origin}: {exc.rejects[0].reason}. Fix the source "
                "store (or copy into an empty target); finished labels/types are kept in the progress file",
                exc.rejects,
            ) from exc
        except (TransientStoreError, StoreUnavailableError) as exc:
            if attempt == settings.retries:
                raise StoreError(
                    f"copy {name}: gave up after {settings.retries + 1} attempts: {exc}. Rerun the same command to "
                    f"resume: labels/types already finished are skipped ({settings.progress_path})"
                ) from exc
            log.warning("copy %s: %s; retrying in %.1fs", name, exc, wait)
            sleep(wait)
            wait *= 2
    raise AssertionError("unreachable")  # the loop returns or raises


__all__ = ["CopyReport", "CopySettings", "copy_store"]
