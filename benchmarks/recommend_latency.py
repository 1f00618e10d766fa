"""Recommendation latency: one query end to end through the service, warm, on the full store.

What is timed (model load, index load and profile build are *not*: they happen once, before):

* ``single``  — :meth:`gnn.recommend.service.RecommendationService.recommend` for one query at a time:
  encode the context (the encoder's disk cache is off for this run, so every context goes through
  the model), dense + BM25 + both profile channels, RRF, the enricher (citations in memory), the
  final score — the trained reranker's features and model when one is saved beside the index
  (``--no-reranker``: the fusion score) — and the titles of the top 10 from the store. Reported:
  p50, p95, mean (ms).
* ``stages``  — the same queries split into stages (encode, dense, bm25, profiles, enrich, score)
  so a slow stage is visible.
* ``batch``   — :meth:`~gnn.recommend.service.RecommendationService.recommend_many` in batches of 64:
  queries per second.
* ``hnsw`` (``--hnsw``) — what an approximate index would keep: recall@200 of faiss HNSW
  (M = 32) against the exact inner-product search, and its time per query, at several efSearch.

Queries are ScisummNet validation citances (citing year 2010), masked, with their citing paper
(global information and the time filter apply as in ``citegraph eval recommend``).

Usage::

    python benchmarks/recommend_latency.py --db var/retrieval.db --queries 200 --out var/bench/recommend_latency.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import date
from pathlib import Path

import faiss
import numpy as np
import torch

from gnn.recommend.citances import build_queries
from gnn.recommend.service import RecommendationService, RecommendRequest, ServiceSettings
from gnn.rerank.scorer import FusionScorer
from gnn.retrieval.prefetch import PrefetchQuery
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph import open_store
from graph.config import StoreConfig


def percentiles(ms: list[float]) -> dict[str, float]:
    values = np.asarray(ms)
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 1),
        "p95_ms": round(float(np.percentile(values, 95)), 1),
        "mean_ms": round(float(values.mean()), 1),
    }


def hnsw_recall(vectors: np.ndarray, queries: np.ndarray, k: int, efs: list[int]) -> dict[str, object]:
    exact = faiss.IndexFlatIP(vectors.shape[1])
    exact.add(vectors)
    _, truth = exact.search(queries, k)
    start = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(vectors.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.add(vectors)
    built = time.perf_counter() - start
    out: dict[str, object] = {"build_s": round(built, 1), "k": k}
    t0 = time.perf_counter()
    for q in queries:
        exact.search(q[None], k)
    out["exact_ms_per_query"] = round((time.perf_counter() - t0) / len(queries) * 1000, 2)
    for ef in efs:
        hnsw.hnsw.efSearch = ef
        t0 = time.perf_counter()
        found = np.vstack([hnsw.search(q[None], k)[1] for q in queries])
        per_query = (time.perf_counter() - t0) / len(queries) * 1000
        recall = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(found.tolist(), truth.tolist())]))
        out[f"efSearch={ef}"] = {"recall@k_vs_exact": round(recall, 4), "ms_per_query": round(per_query, 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=None, help="the store (default: $CITEGRAPH_DB)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=256, help="queries for the throughput run")
    parser.add_argument("--hnsw", action="store_true", help="also measure HNSW recall against the exact index")
    parser.add_argument(
        "--threads", type=int, default=1, help="PyTorch threads (the server's CITEGRAPH_TORCH_THREADS; default 1)"
    )
    parser.add_argument(
        "--no-reranker", action="store_true", help="score with the fusion even when a trained reranker is saved"
    )
    parser.add_argument("--out", type=Path, default=Path("var/bench/recommend_latency.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    config = StoreConfig.from_env(db_path=args.db, read_only=True)
    base = EncoderSettings.from_env()
    cached = TextEncoder(base)  # opens the index and profiles (vectors by text hash, as `recommend` does)
    encoder = TextEncoder(EncoderSettings(base.model, base.max_length, base.batch_size, base.device, None))  # no cache
    with open_store(config) as store:
        t0 = time.perf_counter()
        service = RecommendationService.open(
            store, ServiceSettings(use_reranker=not args.no_reranker), encoder=cached, build=True
        )
        open_s = time.perf_counter() - t0
        service.encoder = service.prefetcher.encoder = encoder  # every timed query goes through the model
        frame = build_queries(store)
        frame = frame[frame["citing_year"] == 2010].sample(n=args.queries + args.batch + 10, random_state=0)
        requests = [
            RecommendRequest(context=c, citing_paper_id=p, k=10) for c, p in zip(frame["context"], frame["citing_id"])
        ]
        for request in requests[:10]:  # warm-up: first calls touch faiss/BM25/ladybug caches
            service.recommend(request)
        single = []
        for request in requests[10 : 10 + args.queries]:
            start = time.perf_counter()
            service.recommend(request)
            single.append((time.perf_counter() - start) * 1000)

        # stages, on the same queries
        p, settings = service.prefetcher, service.settings.prefetch
        stages: dict[str, list[float]] = {
            "encode": [],
            "dense": [],
            "bm25": [],
            "profiles": [],
            "enrich": [],
            "score": [],
        }
        for request in requests[10 : 10 + args.queries]:
            query: PrefetchQuery
            query, enrich_query = service._resolve([request])[0]
            p._recent.clear()  # the single-query pass encoded these contexts already: encode them again
            t = time.perf_counter()
            vectors = p.context_vectors([query])
            t1 = time.perf_counter()
            p.dense([query], settings.depth, global_weight=settings.global_weight, context_vectors=vectors)
            t2 = time.perf_counter()
            p.bm25([query], settings.depth, global_weight=settings.global_weight_bm25)
            t3 = time.perf_counter()
            p.profile_bm25([query], settings.depth)
            p.profile_dense([query], settings.depth, context_vectors=vectors)
            t4 = time.perf_counter()
            prefetched = p.prefetch([query], settings)
            t5 = time.perf_counter()
            [candidates] = service.enricher.enrich(prefetched, [enrich_query])
            t6 = time.perf_counter()
            service.reranker.score(query, candidates)
            t7 = time.perf_counter()
            stages["enrich"].append((t6 - t5) * 1000)
            stages["score"].append((t7 - t6) * 1000)
            stages["encode"].append((t1 - t) * 1000)
            stages["dense"].append((t2 - t1) * 1000)
            stages["bm25"].append((t3 - t2) * 1000)
            stages["profiles"].append((t4 - t3) * 1000)
        batch_requests = requests[10 + args.queries :][: args.batch]
        start = time.perf_counter()
        for begin in range(0, len(batch_requests), 64):
            service.recommend_many(batch_requests[begin : begin + 64])
        batch_s = time.perf_counter() - start
        result: dict[str, object] = {
            "date": date.today().isoformat(),
            "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores (shared with other jobs)",
            "papers_in_index": len(service.index),
            "exact_dense_index": service.index.dense.exact,
            "profiles_papers": service.profiles.papers if service.profiles else 0,
            "service_open_s": round(open_s, 1),
            "torch_threads": args.threads,
            "scorer": repr(service.reranker) if not isinstance(service.reranker, FusionScorer) else "fusion",
            "queries": len(single),
            "single": percentiles(single),
            "stages_p50_ms": {k: round(float(np.median(v)), 1) for k, v in stages.items() if v},
            "batch": {
                "queries": len(batch_requests),
                "seconds": round(batch_s, 1),
                "queries_per_s": round(len(batch_requests) / batch_s, 1),
            },
        }
        if args.hnsw:
            vectors = service.index.vectors
            queries = encoder.encode([r.context for r in requests[:200]])
            result["hnsw"] = hnsw_recall(vectors, queries, 200, [64, 128, 256, 512])
        service.close()
        cached.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
