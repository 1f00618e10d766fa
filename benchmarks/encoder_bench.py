"""Text-encoder throughput: the project's pipeline against the bare ``transformers`` forward pass.

Texts are real title + abstract strings read from a built store. In one run, on the same texts:

* ``pipeline``  — :meth:`gnn.text.encoder.TextEncoder.encode` with the cache off: tokenise, sort by
  length, batch, forward, mean-pool, normalise, copy to numpy;
* ``bare``      — only ``model(input_ids, attention_mask)`` over the *same pre-tokenised batches*
  (the upper bound the pipeline's overhead is measured against; target: pipeline ≥ 85 % of it);
* ``unsorted``  — the same pipeline without length sorting (batches in input order), what sorting buys;
* ``sentence-transformers`` — ``SentenceTransformer.encode`` on the same model, the tool a user
  would otherwise reach for;
* ``cached``    — a second ``encode`` call served by the on-disk cache;
* ``host``      — everything the pipeline does on the host but the forward pass (tokenising, sorting,
  padding, pinning), chunk by chunk as ``encode`` does it: the rate the host can feed a device at;
* ``before``    — with ``--before FILE``, the pipeline of another version of ``gnn/text/encoder.py``
  (e.g. ``git show HEAD~1:gnn/text/encoder.py > /tmp/encoder_before.py``), timed in the same run.

Texts come from a store (``--db``) or from a gzipped JSON-lines file of strings (``--texts``), so
a machine without the store (a lent GPU machine) runs on the same texts.

Usage::

    python benchmarks/encoder_bench.py --db var/citegraph.db --n 2000 --out docs/results/encoder_bench.json
    python benchmarks/encoder_bench.py --texts texts.jsonl.gz --n 20000 --batch-size 512 --device cuda
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import torch
from run_record import load_module

from gnn.text.encoder import EncoderSettings, TextEncoder, TokenBatch
from graph import open_store
from graph.config import StoreConfig


def read_texts(db: Path, n: int) -> list[str]:
    """The first ``n`` papers (by id) that have an abstract, as "title. abstract"."""
    with open_store(StoreConfig.from_env(db_path=db, read_only=True), ensure_schema=False) as store:
        _, rows = store.read_only_query(
            "MATCH (p:Paper) WHERE p.abstract IS NOT NULL AND p.abstract <> '' "
            "RETURN p.title, p.abstract ORDER BY p.id LIMIT $n",
            {"n": n},
        )
    return [f"{title or ''}. {abstract}".strip() for title, abstract in rows]


def read_text_file(path: Path, n: int) -> list[str]:
    """The first ``n`` strings of a (gzipped) JSON-lines file, one JSON string per line."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for _, line in zip(range(n), lines)]


def best_times(variants: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best wall time per variant, the variants interleaved round by round so load changes hit all alike."""
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(repeats):
        for name, fn in variants.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, default=Path("var/citegraph.db"))
    parser.add_argument("--n", type=int, default=2000, help="texts (title + abstract)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many runs per variant")
    parser.add_argument("--device", choices=["cpu", "cuda"])
    parser.add_argument("--texts", type=Path, help="gzipped JSON lines of strings, instead of --db")
    parser.add_argument("--before", type=Path, help="another version of gnn/text/encoder.py to time beside")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    texts = read_text_file(args.texts, args.n) if args.texts else read_texts(args.db, args.n)
    base = EncoderSettings.from_env(device=args.device, cache=False)
    settings = EncoderSettings(base.model, base.max_length, args.batch_size, args.device, None)
    encoder = TextEncoder(settings)
    encoder.encode(texts[:64])  # warm-up: first-call allocations and kernel selection

    batches = encoder.tokenize_batches(texts)
    tokens = int(sum(int(b.attention_mask.sum()) for b in batches))

    @torch.inference_mode()
    def bare() -> None:
        for batch in batches:
            encoder.model(
                input_ids=batch.input_ids.to(encoder.device), attention_mask=batch.attention_mask.to(encoder.device)
            )
        if encoder.device.type == "cuda":
            torch.cuda.synchronize()

    def unsorted() -> None:
        for start in range(0, len(texts), settings.batch_size):
            chunk = texts[start : start + settings.batch_size]
            enc = encoder.tokenizer(
                chunk, truncation=True, max_length=settings.max_length, padding=True, return_tensors="pt"
            )
            encoder.forward(TokenBatch(np.arange(len(chunk)), enc["input_ids"], enc["attention_mask"])).cpu()

    def host() -> None:
        by_length = np.argsort([-len(text) for text in texts], kind="stable")
        for start in range(0, len(texts), encoder.CHUNK):
            encoder.tokenize_batches([texts[i] for i in by_length[start : start + encoder.CHUNK]])

    variants: dict[str, Callable[[], object]] = {
        "bare": bare,
        "pipeline": lambda: encoder.encode(texts),
        "unsorted": unsorted,
        "host": host,
    }
    before_agreement: float | None = None
    if args.before:
        earlier = load_module(args.before, "encoder_before").TextEncoder(settings)  # type: ignore[attr-defined]
        earlier.encode(texts[:64])
        variants["before"] = lambda: earlier.encode(texts)
        before_agreement = float(np.abs(earlier.encode(texts) - encoder.encode(texts)).max())
    agreement = float("nan")
    try:
        from sentence_transformers import SentenceTransformer

        reference = SentenceTransformer(settings.model, device=str(encoder.device))
        if encoder.dtype == torch.float16:
            reference.half()  # the same precision as the pipeline's, for a like-for-like rate
        variants["sentence-transformers"] = lambda: reference.encode(
            texts, batch_size=settings.batch_size, normalize_embeddings=True
        )
        agreement = float(
            np.abs(
                reference.encode(texts[:256], batch_size=settings.batch_size, normalize_embeddings=True)
                - encoder.encode(texts[:256])
            ).max()
        )
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as tmp:
        cache_settings = EncoderSettings(settings.model, settings.max_length, args.batch_size, args.device, Path(tmp))
        cached_encoder = TextEncoder(cache_settings)
        cached_encoder.encode(texts)  # fills the cache; the timed calls are all hits
        variants["cached"] = lambda: cached_encoder.encode(texts)
        results = best_times(variants, args.repeats)
        cached_encoder.close()

    report = {
        "benchmark": "text encoder throughput (title + abstract)",
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()} {torch.get_num_threads()} threads, device {encoder.device}",
        "texts": len(texts),
        "tokens": tokens,
        "mean_tokens": round(tokens / len(texts), 1),
        "batch_size": settings.batch_size,
        "seconds": {k: round(v, 3) for k, v in results.items()},
        "texts_per_s": {k: round(len(texts) / v, 1) for k, v in results.items()},
        "pipeline_vs_bare": round(results["bare"] / results["pipeline"], 3),
        "max_abs_diff_vs_before": before_agreement,
        "gpu": torch.cuda.get_device_name(encoder.device) if encoder.device.type == "cuda" else None,
        "torch": torch.__version__,
        "cpu_cores": os.cpu_count(),
        "max_abs_diff_vs_sentence_transformers": agreement,
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
