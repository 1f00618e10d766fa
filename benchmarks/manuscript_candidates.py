"""Manuscript mode's candidate side: how many sampled body sentences a full-text candidate should carry.

MP-BERT4CR samples sentences on both sides: the query is the fundamental context plus sampled earlier
sentences of the draft, and a candidate with full text is its abstract plus sampled body sentences.
This runs :func:`gnn.recommend.evaluate.run_manuscript_evaluation` — the CL-SciSumm 2018 gold citances,
plain context vs manuscript mode, each with and without the citing paper's title and abstract, each
against the stored candidate vectors and against body-sampled ones — once per number of body
sentences, in one process, and writes every table to one JSON file. BM25 and the global-information
weights are the tuned values of ``citegraph eval recommend`` (``--k1 --b --global-dense
--global-bm25``), so the rows match its manuscript table.

Usage::

    python benchmarks/manuscript_candidates.py --db var/citegraph.db --sentences 2 5 10 --out var/bench/manuscript.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from run_record import run_record, write_json

from gnn.recommend.evaluate import MANUSCRIPT_POOL, run_manuscript_evaluation
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph import StoreConfig, open_store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="var/citegraph.db")
    parser.add_argument("--index-dir", help="default: <db>.index")
    parser.add_argument("--sentences", type=int, nargs="+", default=[2, 5, 10], help="body sentences per candidate")
    parser.add_argument("--supplemental", type=int, default=2, help="sampled earlier sentences in the query")
    parser.add_argument("--k1", type=float, default=1.6)
    parser.add_argument("--b", type=float, default=0.5)
    parser.add_argument("--global-dense", type=float, default=0.5)
    parser.add_argument("--global-bm25", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="var/bench/manuscript_candidates.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    db = Path(args.db)
    store = open_store(StoreConfig(db_path=db, read_only=True))
    encoder = TextEncoder(EncoderSettings.from_env(device="cpu"))
    index = RetrievalIndex.load(
        Path(args.index_dir) if args.index_dir else db.with_name(db.name + ".index"), IndexSettings()
    )
    lexical = index.with_bm25(args.k1, args.b)
    runs = []
    for sentences in args.sentences:
        start = time.perf_counter()
        result = run_manuscript_evaluation(
            store,
            encoder,
            index,
            lexical=lexical,
            global_weight=(args.global_dense, args.global_bm25),
            supplemental=args.supplemental,
            candidate_sentences=sentences,
            seed=args.seed,
        )
        result["seconds"] = round(time.perf_counter() - start, 1)
        runs.append(result)
        print(
            f"body sentences {sentences} ({result['candidates_with_body']} full-text candidates, {result['seconds']} s)"
        )
        for name, metrics in result["systems"].items():
            pool = f"R@{MANUSCRIPT_POOL}"
            print(f"  {name:<70} R@10 {metrics['R@10']:.3f}  MRR {metrics['MRR']:.3f}  {pool} {metrics[pool]:.3f}")
    report = {
        **run_record("benchmarks/manuscript_candidates.py", args),
        "papers_in_index": len(index),
        "runs": runs,
    }
    write_json(args.out, report)
    encoder.close()
    store.close()


if __name__ == "__main__":
    main()
