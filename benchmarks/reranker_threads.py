"""Reranker training speed by PyTorch thread count, on synthetic queries of the real shapes.

One epoch of ``--queries`` queries (300 candidates each, 384-d vectors over a 100,000-row table,
the reranker's feature count) plus a validation pass over 100 of them, with ``--threads`` threads.
It shows why ``citegraph train reranker`` sets one thread on a small shared CPU.

Usage::

    python benchmarks/reranker_threads.py --threads 1
    python benchmarks/reranker_threads.py --threads 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from gnn.rerank.examples import QueryExample
from gnn.rerank.features import FEATURE_NAMES
from gnn.rerank.model import RerankerSettings, RerankerTrainer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--queries", type=int, default=640)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(100_000, 384)).astype(np.float32)
    examples = []
    for _ in range(args.queries):
        rows = rng.choice(len(vectors), 300, replace=False)
        ids = [str(r) for r in rows]
        features = rng.normal(size=(300, len(FEATURE_NAMES))).astype(np.float32)
        examples.append(QueryExample(vectors[rows[0]], np.zeros(384, np.float32), rows, features, ids, {ids[0]}))
    trainer = RerankerTrainer(vectors, RerankerSettings(epochs=1, patience=1))
    start = time.perf_counter()
    trainer.fit(examples, examples[:100])
    print(
        f"{args.threads} thread(s): one epoch of {args.queries} queries + validation of 100: "
        f"{time.perf_counter() - start:.2f} s"
    )


if __name__ == "__main__":
    main()
