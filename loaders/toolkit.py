"""The importers' shared toolkit: reading inputs, parsing JSON with located rejects, building tables, the load context.

Every importer of a user's export (OpenAlex, Semantic Scholar, Crossref, ...) needs the same plumbing, and
before this module each wrote its own: two gzip line readers, three JSON-line parsers with the same reject
text, the Author and CITES tables written out per loader, the data folder found three ways (``--data`` was not
honoured by every source). Here is one of each:

* **reading**: :func:`input_files` (a file, a folder searched recursively, or a quoted glob; sorted),
  :func:`iter_lines` (one file's lines as bytes, gzip sniffed by its magic bytes, a cut stream keeping the lines
  before the cut) and :func:`display_names` (what origins call each file);
* **JSON**: :func:`parse_json_line` (one line, with orjson: ~10x the standard library's ``json`` on OpenAlex
  works, the import's largest cost after gzip) and :func:`json_values` / :func:`json_records` (every JSON value
  of the files, JSON Lines or one document, with ``file:line`` origins and a :class:`graph.errors.Reject` saying
  what is wrong and what to do where a line cannot be read);
* **tables**: :func:`author_table`, :func:`cites_table`, :func:`wrote_table` and :func:`alias_tables`
  (the Author, CITES, WROTE, Alias and ALIAS_OF tables), the canonical columns of :mod:`graph.schema` built once from column lists;
* **parallel parsing**: :func:`line_blocks` and :func:`map_in_order`, a large JSON Lines file parsed in a
  pool of processes (:func:`workers_from_env`, ``CITEGRAPH_INGEST_WORKERS``), the results merged in file order;
* **context**: :class:`LoadContext`, what a load may need beyond its own input (the data folder, the
  Anthology's title index), handed to every source by :meth:`loaders.Source.read`.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pandas as pd

from graph.errors import Reject
from graph.files import data_dir_from_env
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from loaders._common import alias_tables, author_table, input_files, table
from loaders._json_exports import (
    JsonProblem,
    JsonValue,
    display_names,
    iter_json_values,
    iter_lines,
    numbered_lines,
    parse_json_line,
)
from loaders.anthology import load as load_anthology

if TYPE_CHECKING:
    from loaders.resolve import TitleIndex

T = TypeVar("T")
R = TypeVar("R")

# The Anthology's papers under the data folder (the `anthology` source's path): the titles references resolve to.
ANTHOLOGY_PAPERS = "anthology/papers.jsonl.gz"
# The data folder when neither --data nor CITEGRAPH_DATA names one.


def json_values(path: Path) -> Iterator[JsonValue | JsonProblem]:
    """Every JSON value of one file, JSON Lines or one document, gzipped or not (:func:`iter_json_values`)."""
    return iter_json_values(path)


def json_records(
    files: Sequence[Path],
    table_name: str,
    *,
    progress: Callable[[Iterable[object], str], Iterable[object]] | None = None,
) -> Iterator[tuple[object, str, int, bool] | Reject]:
    """Every JSON value of ``files`` in order as ``(value, file's display name, line, whole_file)``; a line or
    file that cannot be read as a :class:`Reject` of ``table_name`` at ``<file>:<line>`` with the reason.

    ``whole_file``: the file holds this one value only, so records inside it are numbered ``<file>:record N``.
    ``progress(iterable, name)`` wraps each file's values (a progress bar), when given.
    """
    for file, name in zip(files, display_names(list(files))):
        values: Iterable[object] = json_values(file)
        if progress is not None:
            values = progress(values, name)
        for item in values:
            if isinstance(item, JsonProblem):
                yield Reject(table_name, f"{name}:{item.line}", item.reason)
            elif isinstance(item, JsonValue):
                yield item.value, name, item.line, item.whole_file


# Lines per block a worker process parses (parse_in_pool): ~5 MB of OpenAlex works, a few hundred ms of work.
BLOCK_LINES = 250
# Files smaller than this on disk are parsed in the loading process: a pool's start (~1 s a worker, spawned)
# costs more than it saves on them.
POOL_MIN_BYTES = 32 << 20


def workers_from_env() -> int:
    """Processes that parse a large JSON Lines input: ``$CITEGRAPH_INGEST_WORKERS``, else the machine's cores."""
    given = os.environ.get("CITEGRAPH_INGEST_WORKERS")
    return max(1, int(given)) if given and given.strip().isdigit() else max(1, os.cpu_count() or 1)


def pooled_json_lines(path: Path, workers: int) -> bool:
    """Whether ``path`` is parsed in a pool of ``workers`` processes: large enough (:data:`POOL_MIN_BYTES`), and
    JSON Lines (its first non-blank line is a JSON value of its own; a document is read whole, in-process)."""
    if workers < 2 or path.stat().st_size < POOL_MIN_BYTES:
        return False
    lines = numbered_lines(path)
    try:
        for number, raw in lines:
            if isinstance(raw, JsonProblem):
                return False
            if raw.strip():
                return isinstance(parse_json_line(raw, number), JsonValue)
        return False
    finally:
        lines.close()


def line_blocks(path: Path, block_lines: int = BLOCK_LINES) -> Iterator[list[tuple[int, bytes | JsonProblem]]]:
    """The file's ``(line number, bytes)`` in blocks of ``block_lines``; a cut gzip stream ends the last block
    with the :class:`JsonProblem` at the line it cut (the lines before it are kept)."""
    block: list[tuple[int, bytes | JsonProblem]] = []
    for item in numbered_lines(path):
        block.append(item)
        if len(block) == block_lines:
            yield block
            block = []
    if block:
        yield block


def map_in_order(
    function: Callable[[T], R], items: Iterable[T], workers: int, *, in_flight: int | None = None
) -> Iterator[R]:
    """``function`` of each item in a pool of ``workers`` spawned processes, the results in the items' order.

    At most ``in_flight`` items (default ``2 * workers``) are read ahead, so memory holds a few blocks, not the
    input. Spawned, not forked: the loading process holds the store's engine and its threads, which a fork
    would copy mid-flight. An error in a worker is raised here, at its item.
    """
    limit = in_flight or 2 * workers
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[R]] = deque()
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) >= limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def cites_table(
    sources: Sequence[object] | np.ndarray,
    targets: Sequence[object] | np.ndarray,
    origins: Sequence[object] | np.ndarray,
    *,
    dataset: str,
    **properties: Sequence[object] | pd.Series | np.ndarray,
) -> pd.DataFrame:
    """The ``CITES`` table: citing and cited keys, ``dataset`` on every edge, and further properties
    (``intents``, ``influential``, ...). The origins are categories: one string per citing work, not per edge."""
    return pd.DataFrame(
        {
            SOURCE_COLUMN: _column(sources),
            TARGET_COLUMN: _column(targets),
            **{name: _column(values) for name, values in properties.items()},
            "dataset": [dataset] * len(sources),
            ORIGIN_COLUMN: pd.Categorical(np.asarray(origins, dtype=object)),
        }
    )


def wrote_table(
    authors: Sequence[object] | np.ndarray,
    papers: Sequence[object] | np.ndarray,
    positions: Sequence[int] | np.ndarray,
    origins: Sequence[object] | np.ndarray,
) -> pd.DataFrame:
    """The ``WROTE`` table: author keys, paper keys, 1-based positions (nullable integers) and origins."""
    return pd.DataFrame(
        {
            SOURCE_COLUMN: _column(authors),
            TARGET_COLUMN: _column(papers),
            "position": pd.Series(np.asarray(positions), dtype="Int64"),
            ORIGIN_COLUMN: _column(origins),
        }
    )


def _column(values: Sequence[object] | pd.Series | np.ndarray) -> Sequence[object] | pd.Series | np.ndarray:
    """A column as pandas takes it: an empty one as an object Series (so that its dtype does not become float)."""
    if isinstance(values, (pd.Series, np.ndarray)) or len(values):
        return values
    return pd.Series([], dtype=object)


@dataclass
class LoadContext:
    """What a source's load may need beyond its own input, given to every source by :meth:`loaders.Source.read`.

    ``data_dir``: the data folder (``--data``, else ``$CITEGRAPH_DATA``, else ``../shared/data``), where the
    Anthology lives whose titles resolve references without ids (unarXive, Crossref). Why one object: the
    sources found that folder three ways before (the environment, the input's grandparent folder, the
    CLI's flag), so ``--data`` reached some of them only. The title index is built once per context, when a
    source first asks for it (~20 s), and shared by every source of one ``citegraph ingest``.
    """

    data_dir: Path = field(default_factory=lambda: data_dir_from_env())
    _titles: list[tuple[str, str]] | None = field(default=None, repr=False)
    _index: TitleIndex | None = field(default=None, repr=False)
    _index_built: bool = field(default=False, repr=False)

    def anthology_papers(self) -> Path:
        """Where the Anthology's papers are under the data folder (the ``anthology`` source's path)."""
        return self.data_dir / ANTHOLOGY_PAPERS

    def anthology_titles(self) -> list[tuple[str, str]]:
        """``(id, title)`` of every Anthology paper of the data folder; none when it is not there."""
        if self._titles is None:
            papers = self.anthology_papers()
            self._titles = []
            if papers.exists():
                frame = load_anthology(papers).nodes["Paper"]
                self._titles = list(zip(frame["id"].tolist(), frame["title"].tolist()))
        return self._titles

    def title_index(self) -> TitleIndex | None:
        """A title index over the Anthology of the data folder (:class:`loaders.resolve.TitleIndex`), or None."""
        if not self._index_built:
            self._index_built = True
            if self.anthology_papers().exists():
                from loaders.resolve import TitleIndex  # MinHash (datasketch): imported when a source needs it

                self._index = TitleIndex.from_papers(load_anthology(self.anthology_papers()).nodes["Paper"])
        return self._index


__all__ = [
    "ANTHOLOGY_PAPERS",
    "BLOCK_LINES",
    "POOL_MIN_BYTES",
    "JsonProblem",
    "JsonValue",
    "LoadContext",
    "alias_tables",
    "author_table",
    "cites_table",
    "display_names",
    "input_files",
    "iter_lines",
    "json_records",
    "json_values",
    "line_blocks",
    "map_in_order",
    "parse_json_line",
    "pooled_json_lines",
    "table",
    "workers_from_env",
    "wrote_table",
]
