"""The ingest step of the registry: every source (``all``: each bundled source under the data folder) or one
named source loaded into the store, one transaction per source (:func:`graph.ingest` and, for the sources read in
batches, :func:`graph.ingest_stream`)."""

from __future__ import annotations

import glob
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

import loaders
from api.pipeline.commands import option, switch
from api.pipeline.registry import Action, StepContext
from api.settings import AppSettings
from graph import ingest, ingest_stream
from graph.errors import ConfigError
from graph.files import StoreFiles
from graph.ingest import MEMORY_LIMIT_MIB
from graph.works import apply_work_changes
from loaders.keywords import KeywordThesaurus, thesaurus_from_env
from loaders.openalex_merged import MergedIds, find_beside, read_merged_ids
from loaders.refmatch import Thesaurus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestSettings:
    """``ingest SOURCE [PATH]``: which source (``all``: every bundled one under ``data``), what a bad record does
    (``fail``: nothing is written; ``skip``: the rest is loaded and the bad ones reported under ``rejects_dir``),
    the batches of a source read in batches, the reference and keyword thesauri, and JSON output."""

    source: str = "all"
    path: str | None = None
    data: str | None = None
    on_error: str = "fail"
    rejects_dir: str | None = None
    chunk_works: int | None = None
    thesaurus: str | None = None
    keyword_thesaurus: str | None = None
    memory_limit: int = MEMORY_LIMIT_MIB
    merged_ids: str | None = None
    json: bool = False

    def command(self) -> tuple[str, ...]:
        return (
            "ingest",
            self.source,
            *((self.path,) if self.path else ()),
            *option("--on-error", self.on_error, "fail"),
            *option("--data", self.data),
            *option("--rejects-dir", self.rejects_dir),
            *option("--chunk-works", self.chunk_works),
            *option("--thesaurus", self.thesaurus),
            *option("--keyword-thesaurus", self.keyword_thesaurus),
            *option("--memory-limit", self.memory_limit, MEMORY_LIMIT_MIB),
            *option("--merged-ids", self.merged_ids),
            *switch("--json", self.json),
        )

    def data_dir(self) -> Path:
        return Path(self.data) if self.data else AppSettings.from_env().data_dir

    def sources(self) -> list[tuple[loaders.Source, Path]]:
        """The sources ``ingest SOURCE [PATH]`` names, each with the path it is read from."""
        data_dir = self.data_dir()
        if self.source == "all":
            if self.path:
                raise ConfigError(
                    "`citegraph ingest all` takes no PATH; it reads every source under --data / CITEGRAPH_DATA"
                )
            sources = [(source, data_dir / source.path) for source in loaders.available(data_dir) if source.bundled]
            if not sources:
                raise ConfigError(
                    f"no known source under {data_dir}; "
                    "set CITEGRAPH_DATA to the data folder (see ../shared/data/README.md)"
                )
            return sources
        if self.source not in loaders.SOURCES:
            raise ConfigError(f"unknown source {self.source!r}; known: all, {', '.join(loaders.SOURCES)}")
        source = loaders.SOURCES[self.source]
        if not self.path and not source.bundled:
            raise ConfigError(
                f"`citegraph ingest {source.name}` needs the PATH of your export (a file, a folder or a quoted glob)"
            )
        return [(source, Path(self.path) if self.path else data_dir / source.path)]

    def reference_thesaurus(self, sources: list[tuple[loaders.Source, Path]]) -> Thesaurus | None:
        """The ``--thesaurus`` file read (None without the flag: the loaders then honour
        ``$CITEGRAPH_REFERENCE_THESAURUS``); a source named on its own that has no reference strings refuses it."""
        if not self.thesaurus:
            return None
        matched = [source.name for source in loaders.SOURCES.values() if source.load_matched is not None]
        if self.source != "all" and sources[0][0].load_matched is None:
            raise ConfigError(
                f"--thesaurus: {self.source} gives its cited works by id, not as reference strings, so there is "
                f"nothing to match; the thesaurus applies to {', '.join(matched)}"
            )
        return Thesaurus.read(Path(self.thesaurus))

    def openalex_merged_ids(self, sources: list[tuple[loaders.Source, Path]]) -> MergedIds | None:
        """OpenAlex's merged works for ``ingest openalex``: ``--merged-ids``, else the ``merged_ids/works`` folder
        of the snapshot the works are in (:func:`loaders.openalex_merged.find_beside`); None for other sources or
        when there is none. A line that cannot be read stops the command with ``--on-error fail``; with ``skip``
        it is left out and logged."""
        openalex = [path for source, path in sources if source.name == "openalex"]
        if self.merged_ids and not openalex:
            raise ConfigError(
                "--merged-ids is OpenAlex's list of merged works: give it with `citegraph ingest openalex`"
            )
        if not openalex:
            return None
        folder = Path(self.merged_ids) if self.merged_ids else find_beside(openalex[0])
        if folder is None:
            return None
        merged = read_merged_ids(folder)
        if merged.rejects and self.on_error == "fail":
            first = merged.rejects[0]
            raise ConfigError(
                f"{folder}: {len(merged.rejects)} merged_ids line(s) cannot be read, nothing was written; first: "
                f"{first.origin}: {first.reason}. Fix the file, or rerun with --on-error skip to apply the rest"
            )
        for reject in merged.rejects:
            log.warning("%s: %s: %s (left out)", folder, reject.origin, reject.reason)
        return merged


def run_ingest(context: StepContext, settings: IngestSettings) -> None:
    app = AppSettings.from_env()
    data_dir = settings.data_dir()
    sources = settings.sources()
    load_context = loaders.LoadContext(data_dir)  # every source reads the same data folder (its Anthology titles)
    thesaurus = settings.reference_thesaurus(sources)
    keyword_thesaurus = (
        KeywordThesaurus.read(Path(settings.keyword_thesaurus)) if settings.keyword_thesaurus else thesaurus_from_env()
    )
    merged_ids = settings.openalex_merged_ids(sources)  # read first: a bad file stops before anything is written
    reports = []
    extra: list[dict[str, object]] = []
    with context.open(create=True) as store:
        rejects_dir = (
            Path(settings.rejects_dir) if settings.rejects_dir else app.rejects_dir or StoreFiles.of(store).rejects
        )
        quiet_bar = len(sources) < 2 or context.quiet
        for source, path in tqdm(sources, desc="ingest", unit="source", disable=quiet_bar):
            if not path.exists() and not glob.has_magic(str(path)):
                raise ConfigError(f"{source.name}: {path} does not exist; pass the right PATH or set CITEGRAPH_DATA")
            try:
                if source.chunks is not None:
                    batches = source.chunks(path, settings.chunk_works or app.ingest_chunk_works)
                    if keyword_thesaurus is not None:
                        batches = map(keyword_thesaurus.apply, batches)
                    report = ingest_stream(
                        store,
                        source.name,
                        batches,
                        on_error=settings.on_error,
                        rejects_dir=rejects_dir,
                        memory_limit_mib=settings.memory_limit,
                    )
                else:
                    batch = source.read(path, load_context, thesaurus)
                    if keyword_thesaurus is not None:
                        batch = keyword_thesaurus.apply(batch)
                    report = ingest(store, batch, on_error=settings.on_error, rejects_dir=rejects_dir)
            except OSError as exc:  # the rejects report, written before the store
                if exc.filename is None or not _within(Path(exc.filename), rejects_dir):
                    raise
                raise ConfigError(
                    f"cannot write the rejected records to {rejects_dir}: {exc.strerror}; nothing was stored. "
                    "Pass --rejects-dir (or set CITEGRAPH_REJECTS to) a folder you can write to"
                ) from exc
            reports.append(report)
            changes = None
            if source.name == "openalex" and merged_ids is not None:
                changes = apply_work_changes(store, merged_ids.merges)
            extra.append({"merged_ids": vars(changes)} if changes is not None else {})
            if report.records == 0:  # nothing read: most likely the wrong file, or an export cut off early
                log.warning(
                    "%s: %s holds no record (0 records read, nothing stored); check that it is the %s export you meant",
                    source.name,
                    path,
                    source.name,
                )
            if not settings.json:
                print(report.summary())
                if changes is not None and merged_ids is not None:
                    files = ", ".join(str(f) for f in merged_ids.files[:3]) + (
                        " …" if len(merged_ids.files) > 3 else ""
                    )
                    print(f"  {changes.summary()} ({len(merged_ids.merges)} merge(s) read from {files})")
    if settings.json:
        print(json.dumps([{**r.as_dict(), **more} for r, more in zip(reports, extra)], indent=2))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


INGEST: Action[IngestSettings] = Action("ingest", run_ingest)


__all__ = ["INGEST", "IngestSettings"]
