r"""The paper retrieval index beside the store: dense (faiss) and lexical (BM25, bm25s), time-filterable.

One **row** per paper that has a text (title and/or abstract, or for a paper known only from a
bibliography its reference string, as :func:`gnn.text.embeddings.paper_texts` builds it). Rows are
ordered by publication year, unknown years first, so "papers published up to year :math:`y`" is
always a prefix ``rows[:cut(y)]``: the dense search restricts itself with a
faiss ``IDSelectorRange(0, cut)`` and the BM25 scores are sliced, so the time filter costs nothing
and never drops a candidate that a post-filter of a fixed top-N would have lost.

**Dense.** The stored ``Paper.embedding`` vectors (unit length, :mod:`gnn.text.encoder`) scored by inner
product, i.e. cosine similarity :math:`s(q, d) = q^\top d`. Up to ``exact_limit`` rows (default
200,000) the index is exact (``IndexFlatIP``); above it, HNSW (Malkov & Yashunin 2018) with
``hnsw_m`` links per node and ``hnsw_ef_search`` candidates per search, whose recall against the
exact search is measured by ``benchmarks/recommend_latency.py`` (see docs/results.md).

**Lexical.** Okapi BM25 over title + abstract, or the reference string
(:class:`~gnn.retrieval.lexical.LexicalIndex`, whose module holds the formula and the tokenizer), with :math:`k_1` and :math:`b` from :class:`IndexSettings`.

**Incremental.** ``<db>.index/`` holds ``manifest.json`` (settings, a digest of every row's id,
year, text hash and embedding hash, and the size and mtime of the store's files), ``papers.parquet`` (rows in order, with their tokens),
``vectors.npy`` and the bm25s files. :meth:`RetrievalIndex.open` compares the store's rows with the
manifest: the store's files untouched since the build → loaded without reading the store; the
papers unchanged (same digest) → loaded as they are; otherwise the tokens and vectors of
unchanged papers are reused, only new or changed papers are tokenised and their vectors read from
the store, and the global structures (row order, faiss, BM25 statistics, which depend on every
document) are rebuilt from those parts — seconds, not a re-encode.

This module is about 500 lines: the dense index, the year-ordered rows and the incremental build
share the manifest's row layout, so they stay together; the tokenizer and BM25 are in
:mod:`gnn.retrieval.lexical`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import bm25s
import faiss
import numpy as np
import pandas as pd

from gnn.retrieval.lexical import LexicalIndex, tokenize
from gnn.text.embeddings import paper_texts, stored_embeddings
from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError, DataError
from graph.files import StoreFiles, publish_folder, restore_folder, staging_folder, write_atomic
from graph.store import GraphStore

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
UNKNOWN_YEAR = -1  # sorts before every real year: papers of unknown date pass every time filter


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


@dataclass(frozen=True)
class IndexSettings:
    """Settings of the paper index (``<db>.index/``)."""

    # BM25 term-frequency saturation k1 and length normalisation b. Defaults: tuned on the 2010
    # validation citances by R@10 (docs/results.md; k1 2.0 ties 1.6).
    # Lucene's 1.2 / 0.75 give R@10 0.363 there, these 0.374.
    bm25_k1: float = 1.6
    bm25_b: float = 0.5
    # Up to this many rows the dense index is exact (IndexFlatIP); above it HNSW (approximate).
    exact_limit: int = 200_000
    # HNSW graph degree M and search breadth efSearch (only above exact_limit).
    hnsw_m: int = 32
    hnsw_ef_search: int = 512

    def __post_init__(self) -> None:
        if self.bm25_k1 < 0 or not 0.0 <= self.bm25_b <= 1.0:
            raise ConfigError(f"BM25 needs k1 >= 0 and b in [0, 1], got k1={self.bm25_k1}, b={self.bm25_b}")
        if self.exact_limit < 1 or self.hnsw_m < 2 or self.hnsw_ef_search < 1:
            raise ConfigError("exact_limit, hnsw_m (>= 2) and hnsw_ef_search must be positive")


@dataclass(frozen=True)
class IndexReport:
    """What :meth:`RetrievalIndex.open` did."""

    rows: int  # papers in the index
    with_vector: int  # of them, with a stored embedding
    reused: int  # rows whose tokens/vector came from the previous build
    updated: int  # rows tokenised / read again (new or changed)
    removed: int  # rows of the previous build no longer in the store
    rebuilt: bool  # False: loaded as it was
    seconds: float
    stale: bool = False  # loaded as it was although the store's papers changed (opened with build=False)

    def line(self) -> str:
        state = "rebuilt" if self.rebuilt else "older than the store, loaded" if self.stale else "unchanged, loaded"
        return (
            f"index {state}: {self.rows} papers ({self.with_vector} with vectors), {self.reused} reused, "
            f"{self.updated} new or changed, {self.removed} removed, {self.seconds:.1f}s"
        )


class DenseIndex:
    """Inner-product search over row vectors, restricted to a row prefix (the time filter)."""

    def __init__(self, vectors: np.ndarray, settings: IndexSettings) -> None:
        n, dim = vectors.shape
        self.exact = n <= settings.exact_limit
        if self.exact:
            self.index: faiss.Index = faiss.IndexFlatIP(dim)
        else:
            hnsw = faiss.IndexHNSWFlat(dim, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efSearch = settings.hnsw_ef_search
            self.index = hnsw
        self.ef_search = settings.hnsw_ef_search
        if n:
            self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def search(self, queries: np.ndarray, k: int, *, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` rows among ``rows[:limit]`` per query: ``(scores, rows)``, each ``(q, k)``; row -1 pads."""
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.index.d)
        k = max(1, min(k, limit)) if limit > 0 else 1
        if limit <= 0:
            return np.full((len(queries), k), -np.inf, np.float32), np.full((len(queries), k), -1, np.int64)
        if limit >= self.size:
            params = None if self.exact else faiss.SearchParametersHNSW(efSearch=max(self.ef_search, k))  # type: ignore[attr-defined]  # stubs lag
        else:
            selector = faiss.IDSelectorRange(0, limit)
            params = (
                faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]  # stubs lag
                if self.exact
                else faiss.SearchParametersHNSW(sel=selector, efSearch=max(self.ef_search, k))  # type: ignore[attr-defined]
            )
        scores, rows = (
            self.index.search(queries, k, params=params) if params is not None else self.index.search(queries, k)
        )
        return scores, rows


@dataclass
class RetrievalIndex:
    """Rows (papers with text, year-ordered), their tokens and vectors, and the two searchers."""

    ids: np.ndarray  # (n,) paper id per row
    years: np.ndarray  # (n,) int64, UNKNOWN_YEAR where unknown; ascending
    text_hashes: np.ndarray  # (n,) hash of the text the tokens came from
    embedding_hashes: np.ndarray  # (n,) Paper.embedding_hash ("" without a vector)
    tokens: list[list[str]]  # (n,) BM25 tokens per row
    vectors: np.ndarray  # (n, dim) float32; zero rows where a paper has no vector
    settings: IndexSettings
    lexical: LexicalIndex = field(init=False)
    dense: DenseIndex = field(init=False)
    row_of: dict[str, int] = field(init=False)
    _token_ids: tuple[list[list[int]], dict[str, int]] | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.row_of = {paper_id: row for row, paper_id in enumerate(self.ids.tolist())}
        self.lexical = LexicalIndex.build(self.tokens, k1=self.settings.bm25_k1, b=self.settings.bm25_b)
        self.dense = DenseIndex(self.vectors, self.settings)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def cut(self, year: int | None) -> int:
        """Rows published up to ``year`` (unknown years included) are ``rows[:cut(year)]``; all for None."""
        if year is None:
            return len(self.ids)
        return int(np.searchsorted(self.years, year, side="right"))

    def with_bm25(self, k1: float, b: float) -> LexicalIndex:
        """A BM25 over the same rows with other parameters (tuning; the index itself is unchanged).

        The tokens are mapped to ids once and reused, so a grid of parameters pays only for the
        score matrices.
        """
        if self._token_ids is None:
            vocab: dict[str, int] = {}
            ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in self.tokens]
            self._token_ids = (ids, vocab)
        ids, vocab = self._token_ids
        model = bm25s.BM25(k1=k1, b=b)
        model.index((ids, dict(vocab)), show_progress=False)
        return LexicalIndex(model)

    # persistence ----------------------------------------------------------------------------------
    def digest(self) -> str:
        return _digest(self.ids, self.years, self.text_hashes, self.embedding_hashes)

    def save(self, folder: Path) -> None:
        """Write the index to ``folder``, replaced as a whole (:func:`graph.files.publish_folder`): a kill
        leaves the previous index or this one, never a partial one."""
        tmp = staging_folder(folder)
        pd.DataFrame(
            {
                "id": self.ids,
                "year": self.years,
                "text_hash": self.text_hashes,
                "embedding_hash": self.embedding_hashes,
                "tokens": self.tokens,
            }
        ).to_parquet(tmp / "papers.parquet", index=False)
        np.save(tmp / "vectors.npy", self.vectors)
        self.lexical.save(tmp / "bm25")
        if not self.dense.exact:
            faiss.write_index(self.dense.index, str(tmp / "dense.faiss"))
        manifest = {
            "version": FORMAT_VERSION,
            "settings": asdict(self.settings),
            "rows": len(self),
            "dim": self.dim,
            "digest": self.digest(),
            "without_vector": int(sum(1 for h in self.embedding_hashes.tolist() if not h)),
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        publish_folder(tmp, folder)

    @classmethod
    def load(cls, folder: Path, settings: IndexSettings) -> RetrievalIndex:
        """Read a saved index without rebuilding BM25 or faiss (their files are read as they are)."""
        frame = pd.read_parquet(folder / "papers.parquet")
        obj = cls.__new__(cls)
        obj.ids = frame["id"].to_numpy(dtype=object)
        obj.years = frame["year"].to_numpy(dtype=np.int64)
        obj.text_hashes = frame["text_hash"].to_numpy(dtype=object)
        obj.embedding_hashes = frame["embedding_hash"].to_numpy(dtype=object)
        obj.tokens = [list(t) for t in frame["tokens"]]
        obj.vectors = np.load(folder / "vectors.npy")
        obj.settings = settings
        obj._token_ids = None
        obj.row_of = {paper_id: row for row, paper_id in enumerate(obj.ids.tolist())}
        obj.lexical = LexicalIndex.load(folder / "bm25")
        if (folder / "dense.faiss").is_file():
            dense = DenseIndex(np.zeros((0, obj.vectors.shape[1]), np.float32), settings)
            dense.index = faiss.read_index(str(folder / "dense.faiss"))
            dense.exact = False
            obj.dense = dense
        else:
            obj.dense = DenseIndex(obj.vectors, settings)
        return obj

    @classmethod
    def open(
        cls,
        store: GraphStore,
        settings: IndexSettings = IndexSettings(),
        *,
        path: Path | None = None,
        cache: TextEncoder | None = None,
        build: bool = True,
        reread_for_cache: bool = True,
    ) -> tuple[RetrievalIndex, IndexReport]:
        """The index of ``store``'s current papers: loaded when unchanged, else updated and saved.

        ``path`` defaults to ``<db>.index`` beside an embedded store (``StoreFiles.index``). With
        ``cache``, a paper whose ``Paper.embedding`` is not written yet gets the vector the encoder's
        disk cache holds for its text, when it holds one (a lookup, never an encode): the vector
        ``compute embeddings`` would write, so the index is usable while that step is still writing.

        With ``build=False`` (a read-only server) nothing is written: an index older than the store
        is loaded as it is (``report.stale``; papers added since are not found), and a missing or
        unreadable one raises :class:`IndexUnavailableError` naming ``citegraph compute index``.

        ``reread_for_cache=False`` loads the index when the store's papers are those it was built from,
        without asking the cache for vectors of papers the index has none for (a server's start: other
        steps fill the cache after the index step, and its next run, the background build's included,
        takes them); papers that changed still update it as usual.
        """
        start = time.perf_counter()
        folder = path or StoreFiles.of(store).index
        if folder is None:
            raise ConfigError(f"{store.describe()} has no file beside which to keep the index; pass a path")
        if build and restore_folder(folder):
            log.warning("%s: put back the index a killed command left at %s.old", folder, folder.name)
        manifest = _read_manifest(folder)
        if not build and (manifest is None or manifest.get("version") != FORMAT_VERSION):
            where = "" if folder == StoreFiles.of(store).index else f" --index-dir {folder}"
            raise IndexUnavailableError(
                f"no retrieval index of {store.describe()} at {folder}; build it with `{REBUILD_COMMAND}{where}`"
            )
        stamp = StoreFiles.of(store).stamp()
        if (
            manifest
            and stamp is not None
            # a cache may fill missing vectors, unless the caller takes the index as built
            and (cache is None or not reread_for_cache or manifest.get("without_vector") == 0)
            and manifest.get("store_stamp") == stamp
            and manifest.get("settings") == asdict(settings)
            and manifest.get("version") == FORMAT_VERSION
        ):  # the store's files have not changed since the build: skip reading its papers
            index = cls.load(folder, settings)
            report = IndexReport(len(index), _with_vector(index), len(index), 0, 0, False, time.perf_counter() - start)
            log.info(report.line())
            return index, report
        state = _store_state(store)
        if cache is not None:
            # the vectors the index took from the cache when it was built; else whatever the cache holds now
            built = _fill_as_built(state, folder) if manifest and not reread_for_cache else None
            use_built = built is not None and manifest is not None and manifest.get("digest") == _state_digest(built)
            state = built if use_built and built is not None else _fill_from_cache(state, cache)
        digest = _state_digest(state)
        if manifest and manifest.get("digest") == digest and manifest.get("settings") == asdict(settings):
            index = cls.load(folder, settings)
            if build:
                _write_stamp(folder, stamp)
            report = IndexReport(len(index), _with_vector(index), len(index), 0, 0, False, time.perf_counter() - start)
            log.info(report.line())
            return index, report
        if not build:
            index = cls.load(folder, settings)
            report = IndexReport(
                len(index), _with_vector(index), len(index), 0, 0, False, time.perf_counter() - start, stale=True
            )
            log.warning(
                "the retrieval index at %s is older than %s's papers; serving it as it is (papers added or changed "
                "since are not found): rebuild it with `citegraph compute index`",
                folder,
                store.describe(),
            )
            return index, report
        previous = _read_rows(folder) if manifest and manifest.get("version") == FORMAT_VERSION else None
        index, reused, removed = _assemble(store, state, previous, settings, folder, cache)
        index.save(folder)
        _write_stamp(folder, stamp)
        report = IndexReport(
            len(index), _with_vector(index), reused, len(index) - reused, removed, True, time.perf_counter() - start
        )
        log.info(report.line())
        return index, report


class IndexUnavailableError(DataError):
    """There is no retrieval index to load, and the caller may not build one (a read-only server)."""


REBUILD_COMMAND = "citegraph compute index"


@dataclass(frozen=True)
class IndexStatus:
    """Whether the index beside a store is there and built from the store as it is now (for ``/readyz``)."""

    state: str  # "current", "stale" (the store's files changed since the build), "missing", or "unchecked" (Neo4j)
    path: str | None  # the index folder; None where the store has no file beside it (Neo4j without index_dir)
    command: str = REBUILD_COMMAND  # what builds or updates it

    def as_dict(self) -> dict[str, str | None]:
        return {"state": self.state, "path": self.path, "command": self.command}


def index_status(store: GraphStore, *, path: Path | None = None) -> IndexStatus:
    """The state of the retrieval index of ``store`` (``path``: its folder, default ``<db>.index``), read
    from the index's manifest and the store's file stamp alone: no paper is read and nothing is written.

    ``stale`` says the store's files changed since the build; the papers may be the same (a compute
    step ran), which ``citegraph compute index`` then notes in seconds.
    """
    folder = path or StoreFiles.of(store).index
    if folder is None:
        return IndexStatus("missing", None)
    manifest = _read_manifest(folder)
    if manifest is None or manifest.get("version") != FORMAT_VERSION:
        return IndexStatus("missing", str(folder))
    stamp = StoreFiles.of(store).stamp()
    if stamp is None:  # a server store has no files to compare: only reading its papers would tell
        return IndexStatus("unchecked", str(folder))
    return IndexStatus("current" if manifest.get("store_stamp") == stamp else "stale", str(folder))


# building -----------------------------------------------------------------------------------------


def _digest(ids: np.ndarray, years: np.ndarray, text_hashes: np.ndarray, embedding_hashes: np.ndarray) -> str:
    h = hashlib.sha256()
    for row in zip(ids.tolist(), years.tolist(), text_hashes.tolist(), embedding_hashes.tolist()):
        h.update("\x1f".join(map(str, row)).encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()


def built_digest(folder: Path) -> str | None:
    """The digest (:meth:`RetrievalIndex.digest`) of the papers and vectors the index in ``folder`` holds, read
    from its manifest; None when there is no readable index there."""
    manifest = _read_manifest(folder)
    digest = None if manifest is None else manifest.get("digest")
    return digest if isinstance(digest, str) else None


def _write_stamp(folder: Path, stamp: str | None) -> None:
    manifest = _read_manifest(folder)
    if manifest is not None and manifest.get("store_stamp") != stamp:
        manifest["store_stamp"] = stamp
        write_atomic(folder / "manifest.json", json.dumps(manifest, indent=2))


def _with_vector(index: RetrievalIndex) -> int:
    return int(np.count_nonzero(np.asarray([h != "" for h in index.embedding_hashes.tolist()])))


def _read_manifest(folder: Path) -> dict[str, object] | None:
    try:
        manifest: dict[str, object] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        return manifest
    except (OSError, ValueError):
        return None


def _read_rows(folder: Path) -> tuple[pd.DataFrame, np.ndarray] | None:
    try:
        return pd.read_parquet(folder / "papers.parquet"), np.load(folder / "vectors.npy")
    except (OSError, ValueError) as exc:
        log.warning("the previous index in %s is unreadable (%s); building from scratch", folder, exc)
        return None


def _store_state(store: GraphStore) -> pd.DataFrame:
    """Rows of the store's papers with a text, in index order: id, year, text, text_hash, embedding_hash."""
    texts = paper_texts(store)
    years = pd.DataFrame(store.query("paper_years"), columns=["id", "year"])
    frame = texts[texts["text"] != ""].merge(years, on="id", how="left")
    frame["year"] = frame["year"].fillna(UNKNOWN_YEAR).astype(np.int64)
    frame["embedding_hash"] = frame["embedding_hash"].fillna("").astype(str)
    frame["text_hash"] = [text_hash(t) for t in frame["text"]]
    frame = frame.sort_values(["year", "id"], kind="stable", ignore_index=True)
    return frame


def _state_digest(state: pd.DataFrame) -> str:
    return _digest(state["id"], state["year"], state["text_hash"], state["embedding_hash"])


def _fill_as_built(state: pd.DataFrame, folder: Path) -> pd.DataFrame | None:
    """``state`` with each paper that has no stored vector given the embedding hash the index in ``folder``
    holds for the same text (the vector it took from the encoder's cache when it was built); None when the
    index's rows cannot be read."""
    try:
        rows = pd.read_parquet(folder / "papers.parquet", columns=["id", "text_hash", "embedding_hash"])
    except (OSError, ValueError):
        return None
    built = dict(zip(rows["id"] + "\x1f" + rows["text_hash"], rows["embedding_hash"], strict=True))
    state = state.copy()
    missing = state.index[state["embedding_hash"] == ""]
    keys = state.loc[missing, "id"] + "\x1f" + state.loc[missing, "text_hash"]
    state.loc[missing, "embedding_hash"] = [built.get(k, "") for k in keys]
    return state


def _fill_from_cache(state: pd.DataFrame, encoder: TextEncoder) -> pd.DataFrame:
    """Mark papers without a stored vector whose text the encoder's cache holds (``cached`` column)."""
    state = state.copy()
    state["cached"] = False
    if encoder.cache is None:
        return state
    missing = state.index[state["embedding_hash"] == ""]
    hashes = [encoder.text_hash(t) for t in state.loc[missing, "text"]]
    found = encoder.cache.get_many([bytes.fromhex(h) for h in hashes])
    hit = [bytes.fromhex(h) in found for h in hashes]
    state.loc[missing[hit], "embedding_hash"] = [h for h, ok in zip(hashes, hit) if ok]
    state.loc[missing[hit], "cached"] = True
    log.info("%d papers without a stored vector take theirs from the encoder's cache", int(sum(hit)))
    return state


def _assemble(
    store: GraphStore,
    state: pd.DataFrame,
    previous: tuple[pd.DataFrame, np.ndarray] | None,
    settings: IndexSettings,
    folder: Path,
    cache: TextEncoder | None = None,
) -> tuple[RetrievalIndex, int, int]:
    dim = store.schema.sizes.embedding
    n = len(state)
    tokens: list[list[str] | None] = [None] * n
    vectors = np.zeros((n, dim), dtype=np.float32)
    have_vector = np.zeros(n, dtype=bool)
    reused = removed = 0
    if previous is not None:
        old, old_vectors = previous
        old_row = {pid: row for row, pid in enumerate(old["id"].tolist())}
        removed = len(set(old_row) - set(state["id"]))
        for row, (pid, th, eh) in enumerate(zip(state["id"], state["text_hash"], state["embedding_hash"])):
            j = old_row.get(pid)
            if j is None or old["text_hash"].iat[j] != th:
                continue
            tokens[row] = list(old["tokens"].iat[j])
            if eh and old["embedding_hash"].iat[j] == eh and old_vectors.shape[1] == dim:
                vectors[row] = old_vectors[j]
                have_vector[row] = True
            if eh == old["embedding_hash"].iat[j]:
                reused += 1
    todo_tokens = [row for row in range(n) if tokens[row] is None]
    if todo_tokens:
        log.info("tokenising %d papers for BM25", len(todo_tokens))
        for row in todo_tokens:
            tokens[row] = tokenize(state["text"].iat[row])
    if cache is not None and cache.cache is not None and "cached" in state:
        rows_cached = [row for row in range(n) if state["cached"].iat[row] and not have_vector[row]]
        keys = [bytes.fromhex(state["embedding_hash"].iat[row]) for row in rows_cached]
        hits = cache.cache.get_many(keys)
        for row, key in zip(rows_cached, keys):
            if key in hits:
                vectors[row] = hits[key]
                have_vector[row] = True
    wanted = [row for row in range(n) if state["embedding_hash"].iat[row] and not have_vector[row]]
    if wanted:
        log.info("reading %d paper vectors from %s", len(wanted), store.describe())
        ids = state["id"].to_numpy()[wanted].tolist()
        position = {pid: row for pid, row in zip(ids, wanted)}
        for begin in range(0, len(ids), 5_000):
            rows = store.query("paper_embeddings_by_ids", {"ids": ids[begin : begin + 5_000]})
            found, matrix = stored_embeddings(rows, dim)
            for pid, vector in zip(found, matrix):
                vectors[position[pid]] = vector
                have_vector[position[pid]] = True
    missing = int((state["embedding_hash"] == "").sum())
    if missing:
        log.warning(
            "%d of %d papers have no embedding and are found by BM25 only; run `citegraph compute embeddings --embed papers`",
            missing,
            n,
        )
    embedding_hashes = np.where(have_vector, state["embedding_hash"].to_numpy(dtype=object), "")
    index = RetrievalIndex(
        ids=state["id"].to_numpy(dtype=object),
        years=state["year"].to_numpy(dtype=np.int64),
        text_hashes=state["text_hash"].to_numpy(dtype=object),
        embedding_hashes=np.asarray(embedding_hashes, dtype=object),
        tokens=[t if t is not None else [] for t in tokens],
        vectors=vectors,
        settings=settings,
    )
    return index, reused, removed


__all__ = [
    "REBUILD_COMMAND",
    "UNKNOWN_YEAR",
    "DenseIndex",
    "IndexReport",
    "IndexSettings",
    "IndexStatus",
    "IndexUnavailableError",
    "RetrievalIndex",
    "built_digest",
    "index_status",
    "text_hash",
]
