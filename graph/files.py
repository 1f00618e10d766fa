"""The files a built store consists of: the one place that names every artefact beside a store.

An embedded store ``<db>`` (a LadybugDB file) is the graph itself; the steps that compute, index and
train leave their results beside it or under the shared cache ``$CITEGRAPH_CACHE``:

======================  ===========================================  ======================================
artefact                path                                         written by
======================  ===========================================  ======================================
store                   ``<db>`` (and ``<db>.wal``)                  ``citegraph ingest``, ``compute``
torn log copies         ``<db>.wal.torn-<time>``                     an open that repaired a torn log (kept)
index                   ``<db>.index/``                              ``compute index``, first ``recommend``
citances                ``<db>.index.citances.parquet``              the index's masked citing sentences
profiles                ``<db>.index.profiles/``                     citation-context profiles (BM25, dense)
reranker                ``<db>.index.reranker/``                     ``train reranker``
clusters                ``<db>.clusters.json``                       ``compute cocitation`` (cluster labels)
coupling_clusters       ``<db>.coupling_clusters.json``              ``compute coupling`` (coupling cluster labels)
cocitation_basis        ``<db>.cocitation/``                         ``compute cocitation``, ``update`` (what the
                                                                     co-citation counts were made from)
served_encoder          ``<db>.encoder.json``                        ``train encoder`` (which encoder serves)
models                  ``<cache>/models/``                          the trained models, each named by its
                                                                     capability (:class:`ModelFile`)
embeddings              ``<cache>/embeddings/``                      the encoder's cache of text vectors
reranker_examples       ``<cache>/reranker_examples/``               ``train reranker`` (its examples)
======================  ===========================================  ======================================

The models under ``<cache>/models/`` are the capabilities' own: each declares its :class:`ModelFile`
(``gnn.linkage.model.LINKER_FILE`` is ``linker.json``, ``gnn.linkage.cross_encoder.CROSS_ENCODER_FILE``
``linker-cross-encoder/``, ``gnn.hyperbolic.compute.HYPERBOLIC_CLASSES`` and ``HYPERBOLIC_MAP``
``hyperbolic_classes/`` and ``hyperbolic_map/``, ``gnn.text.encoder.FINE_TUNED_ENCODERS`` ``encoder/``),
and ``citegraph stats --files`` passes them to :meth:`StoreFiles.describe`.

``--index-dir`` moves the index, and with it the citances, profiles and reranker that sit beside it.
A server store (Neo4j) has no file, so nothing beside it: its index must be given a folder, and
only the cache's artefacts exist. :meth:`StoreFiles.describe` lists each artefact with its size and,
where the artefact records one, what it was built from: the index's store stamp (size and mtime of
the store's files at build time, compared with the store's stamp now), the citances' store stamp
likewise, and the reranker's data hash.

Every artefact is written so that a killed writer never leaves a torn one: a file through
:func:`write_atomic` (a temporary file renamed over it), a folder built complete under
``<folder>.tmp`` and put in place by :func:`publish_folder`. What a kill can leave is a ``.tmp``
(removed by the next write) or, between the two renames of a publication, the previous folder at
``<folder>.old``, which :func:`restore_folder` (called by the commands that write the folder) puts back.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.store import GraphStore

DEFAULT_DATA_DIR = Path("../shared/data")


def data_dir_from_env(env: Mapping[str, str] | None = None) -> Path:
    """``$CITEGRAPH_DATA`` (of ``env``, default the process's), else ``../shared/data``: the data folder when no
    ``--data`` is given. The one place that reads the variable (the loaders' context and the server's settings)."""
    given = (os.environ if env is None else env).get("CITEGRAPH_DATA")
    return Path(given) if given else DEFAULT_DATA_DIR


def default_cache_root() -> Path:
    """``$CITEGRAPH_CACHE`` (default ``~/.cache/citegraph``): embeddings and models, shared by every checkout."""
    return Path(os.environ.get("CITEGRAPH_CACHE", Path.home() / ".cache" / "citegraph"))


@dataclass(frozen=True)
class FileEntry:
    """One artefact of :meth:`StoreFiles.describe`."""

    name: str  # the StoreFiles property that names it
    path: Path | None  # None: this store has no such file (a server store has nothing beside it)
    exists: bool
    size: int  # bytes; a folder's files summed; 0 when absent
    built_from: str | None  # the stamp or hash the artefact records of its inputs, where it records one
    current: bool | None  # index and citances: True when their store stamp is the store's stamp now

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": None if self.path is None else str(self.path),
            "exists": self.exists,
            "size": self.size,
            "built_from": self.built_from,
            "current": self.current,
        }


@dataclass(frozen=True)
class IndexFiles:
    """The files that sit beside a retrieval index folder ``folder`` (wherever ``--index-dir`` put it)."""

    folder: Path

    @property
    def citances(self) -> Path:
        """The masked citing sentences the profiles are built from: ``<index>.citances.parquet``."""
        return self.folder.with_name(self.folder.name + ".citances.parquet")

    @property
    def citances_stamp(self) -> Path:
        """The store stamp the citances were read at: ``<index>.citances.stamp``."""
        return self.citances.with_suffix(".stamp")

    @property
    def profiles(self) -> Path:
        """The citation-context profiles: ``<index>.profiles/``."""
        return self.folder.with_name(self.folder.name + ".profiles")

    @property
    def reranker(self) -> Path:
        """The served reranker (``train reranker`` saves it, ``recommend`` and ``serve`` load it): ``<index>.reranker/``."""
        return self.folder.with_name(self.folder.name + ".reranker")


@dataclass(frozen=True)
class ModelFile:
    """A model a capability keeps under ``<cache>/models/``, shared by every store (``gnn.linkage.model.LINKER_FILE``,
    ...): the capability declares it, so the store knows where models live but not which are computed on it.

    >>> ModelFile("linker", "linker.json").under(StoreFiles(cache=Path("/cache")))
    PosixPath('/cache/models/linker.json')
    """

    name: str  # as `citegraph stats --files` lists it
    relative: str  # its file or folder under <cache>/models/

    def under(self, files: StoreFiles) -> Path:
        """Its path under the cache of ``files``: ``<cache>/models/<relative>``."""
        return files.models / self.relative


@dataclass(frozen=True)
class StoreFiles:
    """Every file beside the store ``db`` and under the cache ``cache``.

    >>> files = StoreFiles(Path("var/citegraph.db"), cache=Path("/cache"))
    >>> files.index, files.reranker, files.models
    (PosixPath('var/citegraph.db.index'), PosixPath('var/citegraph.db.index.reranker'), PosixPath('/cache/models'))
    """

    db: Path | None = None  # the embedded store file; None for a server store (Neo4j)
    index_dir: Path | None = None  # where the retrieval index lives when not at <db>.index (--index-dir)
    cache: Path = field(default_factory=default_cache_root)  # $CITEGRAPH_CACHE: shared by every store

    @classmethod
    def of(cls, store: GraphStore, *, index_dir: Path | None = None) -> StoreFiles:
        """The files of an open store (an embedded store has a ``path``; a server store has none)."""
        path = getattr(store, "path", None)
        return cls(None if path is None else Path(path), index_dir=index_dir)

    # beside the store -------------------------------------------------------------------------------
    @property
    def index(self) -> Path | None:
        """The retrieval index folder: ``--index-dir``, else ``<db>.index/``; None for a server store without one."""
        if self.index_dir is not None:
            return self.index_dir
        return None if self.db is None else self.db.with_name(self.db.name + ".index")

    @property
    def citances(self) -> Path | None:
        """The masked citing sentences the profiles are built from: ``<index>.citances.parquet``."""
        return None if self.index is None else IndexFiles(self.index).citances

    @property
    def profiles(self) -> Path | None:
        """The citation-context profiles: ``<index>.profiles/``."""
        return None if self.index is None else IndexFiles(self.index).profiles

    @property
    def reranker(self) -> Path | None:
        """The served reranker: ``<index>.reranker/``."""
        return None if self.index is None else IndexFiles(self.index).reranker

    @property
    def clusters(self) -> Path | None:
        """The co-citation cluster labels of ``compute cocitation``: ``<db>.clusters.json``."""
        return None if self.db is None else self.db.with_name(self.db.name + ".clusters.json")

    @property
    def coupling_clusters(self) -> Path | None:
        """The bibliographic coupling cluster labels of ``compute coupling``: ``<db>.coupling_clusters.json``."""
        return None if self.db is None else self.db.with_name(self.db.name + ".coupling_clusters.json")

    @property
    def cocitation_basis(self) -> Path | None:
        """What the stored co-citation counts were made from, for ``citegraph update``: ``<db>.cocitation/``
        (:mod:`gnn.cocitation.basis`)."""
        return None if self.db is None else self.db.with_name(self.db.name + ".cocitation")

    @property
    def served_encoder(self) -> Path | None:
        """Which text encoder this store's vectors, index and reranker use, once ``train encoder`` fine-tuned
        one: ``<db>.encoder.json`` (absent: the configured encoder, all-MiniLM-L6-v2 by default); None for a
        server store."""
        return None if self.db is None else self.db.with_name(self.db.name + ".encoder.json")

    @property
    def build_state(self) -> Path | None:
        """The steps ``citegraph build`` finished, with their fingerprints and times: ``<db>.build.json``."""
        return None if self.db is None else self.db.with_name(self.db.name + ".build.json")

    @property
    def rejects(self) -> Path:
        """Where ``ingest`` writes its reports of rejected records: ``rejects/`` in the store's folder
        (``var/rejects/`` for ``var/citegraph.db``), so they land beside the store whatever the working
        directory; ``var/rejects/`` of the working directory for a server store."""
        return Path("var/rejects") if self.db is None else self.db.parent / "rejects"

    # under the cache --------------------------------------------------------------------------------
    @property
    def models(self) -> Path:
        """Trained models shared by every store: ``<cache>/models/``. Each capability names its own file or folder
        there (a :class:`ModelFile`: the linker, the cross-encoder, the hyperbolic layouts, fine-tuned encoders)."""
        return self.cache / "models"

    @property
    def embeddings(self) -> Path:
        """The encoder's disk cache of text vectors, keyed by text hash: ``<cache>/embeddings/``."""
        return self.cache / "embeddings"

    @property
    def reranker_examples(self) -> Path:
        """The reranker's training examples, keyed by their inputs: ``<cache>/reranker_examples/``."""
        return self.cache / "reranker_examples"

    # stamps and the table ---------------------------------------------------------------------------
    def stamp(self) -> str | None:
        """Size and modification time of the store's files: unchanged files mean an unchanged graph.

        None for a server store (no files to look at: every open compares the papers themselves).
        """
        if self.db is None:
            return None
        parts = []
        for file in (self.db, self.db.with_name(self.db.name + ".wal")):
            try:
                info = file.stat()
                parts.append(f"{file.name}:{info.st_size}:{info.st_mtime_ns}")
            except OSError:
                parts.append(f"{file.name}:-")
        return "|".join(parts)

    def describe(self, model_files: Iterable[ModelFile] = ()) -> list[FileEntry]:
        """Each artefact, in the order the steps write them, with its path, size and built-from stamp; the
        capabilities' ``model_files`` (which the store does not know of) after the store's own files."""
        now = self.stamp()
        index_stamp = _json_field(self.index, "manifest.json", "store_stamp")
        citances_stamp = _text(None if self.index is None else IndexFiles(self.index).citances_stamp)
        entries = [
            _entry("store", self.db, extra=None if self.db is None else self.db.with_name(self.db.name + ".wal")),
            _entry("index", self.index, index_stamp, None if index_stamp is None else index_stamp == now),
            _entry(
                "citances", self.citances, citances_stamp, None if citances_stamp is None else citances_stamp == now
            ),
            _entry("profiles", self.profiles),
            _entry("reranker", self.reranker, _json_field(self.reranker, "config.json", "data_hash")),
            _entry("clusters", self.clusters),
            _entry("coupling_clusters", self.coupling_clusters),
            _entry(
                "cocitation_basis",
                self.cocitation_basis,
                _json_field(self.cocitation_basis, "basis.json", "written_at"),
            ),
            _entry("served_encoder", self.served_encoder, _json_field_file(self.served_encoder, "data_hash")),
            *(_entry(model.name, model.under(self)) for model in model_files),
            _entry("embeddings", self.embeddings),
            _entry("reranker_examples", self.reranker_examples),
        ]
        return entries


def _entry(
    name: str,
    path: Path | None,
    built_from: str | None = None,
    current: bool | None = None,
    *,
    extra: Path | None = None,
) -> FileEntry:
    """``extra``: a companion file counted in the size (the store's write-ahead log)."""
    exists = path is not None and path.exists()
    size = _size(path) + _size(extra) if exists else 0
    return FileEntry(name, path, exists, size, built_from, current)


def _size(path: Path | None) -> int:
    """Bytes of a file, or of every file under a folder; 0 when absent."""
    if path is None or not path.exists():
        return 0
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return path.stat().st_size


def _text(path: Path | None) -> str | None:
    """The text of the file ``path``, or None when it is missing or unreadable."""
    try:
        return None if path is None else path.read_text(encoding="utf-8")
    except OSError:
        return None


def _json_field(folder: Path | None, name: str, key: str) -> str | None:
    """``key`` of the JSON file ``folder/name``, or None when the file or the key is missing or unreadable."""
    if folder is None:
        return None
    try:
        value = json.loads((folder / name).read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return None if value is None else str(value)


def _json_field_file(path: Path | None, key: str) -> str | None:
    """``key`` of the JSON file ``path``, or None when the file or the key is missing or unreadable."""
    return None if path is None else _json_field(path.parent, path.name, key)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through ``<path>.tmp`` renamed over it: a kill leaves the old file or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        tmp.write_text(data, encoding="utf-8")
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def staging_folder(folder: Path) -> Path:
    """An empty ``<folder>.tmp`` to build the next ``folder`` in (what a killed build left there is removed)."""
    staging = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    return staging


def publish_folder(staging: Path, folder: Path) -> None:
    """Put the complete folder ``staging`` in place of ``folder``, in two renames.

    At every moment a complete folder is at ``folder``, or (between the renames) the previous one is at
    ``<folder>.old``: never a half-deleted or half-written one, whenever the process is killed.
    """
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)  # a kill after the second rename left it; folder is complete
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def restore_folder(folder: Path) -> bool:
    """Put ``<folder>.old`` back at ``folder`` when a kill between :func:`publish_folder`'s renames left
    ``folder`` missing; True when it did."""
    old = folder.with_name(folder.name + ".old")
    if folder.exists() or not old.is_dir():
        return False
    old.rename(folder)
    return True


def format_size(size: int) -> str:
    """``size`` bytes as a short human-readable figure (``12.3 MiB``)."""
    if size < 1024:
        return f"{size} B"
    value, unit = size / 1024, "KiB"
    for larger in ("MiB", "GiB"):
        if value < 1024:
            break
        value, unit = value / 1024, larger
    return f"{value:.1f} {unit}"


__all__ = [
    "DEFAULT_DATA_DIR",
    "FileEntry",
    "IndexFiles",
    "ModelFile",
    "StoreFiles",
    "data_dir_from_env",
    "default_cache_root",
    "format_size",
    "publish_folder",
    "restore_folder",
    "staging_folder",
    "write_atomic",
]
