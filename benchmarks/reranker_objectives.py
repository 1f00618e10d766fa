"""The reranker's objectives over several model seeds: does a multi-positive one beat plain triplet?

One model per objective and seed, trained on the examples of ``citegraph eval recommend --ablation``
(the same cache, so a store it already ran on builds nothing), scored on the validation and test
splits: mean and standard deviation over seeds of R@10, MRR and the multi-citation R@10 (sentences
citing at least two papers), and for every objective its difference on the multi-citation sentences
to the single-positive triplet and to the triplet over all of a context's targets, with a paired
bootstrap interval (:func:`gnn.recommend.train.compare_objectives`).
A single seed moves the multi-citation R@10 by a few hundredths on about a hundred sentences, so the
ablation table's one row per objective cannot answer this; this benchmark can.

Usage::

    python benchmarks/reranker_objectives.py --db var/citegraph.db --seeds 0 1 2 3 4 --out var/bench/reranker_objectives.json
    python benchmarks/reranker_objectives.py --without cocitation --objectives single_positive triplet source source_target

``--without`` switches feature groups off in every split (the candidates stay), to ask whether the
objectives separate once the model cannot read the co-citation counts directly.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import torch
from run_record import run_record, write_json

from gnn.recommend.examples import TrainSettings
from gnn.recommend.studies import compare_objectives
from gnn.rerank.features import FEATURE_GROUPS
from gnn.rerank.model import OBJECTIVES
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph import StoreConfig, open_store
from graph.files import StoreFiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="var/citegraph.db")
    parser.add_argument("--index-dir", help="default: <db>.index")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=list(OBJECTIVES))
    parser.add_argument(
        "--without", nargs="+", default=[], choices=sorted(FEATURE_GROUPS), help="feature groups switched off"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="var/bench/reranker_objectives.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    logging.basicConfig(level=logging.WARNING)

    db = Path(args.db)
    store = open_store(StoreConfig(db_path=db, read_only=True))
    encoder = TextEncoder(EncoderSettings.from_env(device="cpu"))
    folder = Path(args.index_dir) if args.index_dir else db.with_name(db.name + ".index")
    index, _ = RetrievalIndex.open(store, IndexSettings(), path=folder, cache=encoder)
    result = compare_objectives(
        store,
        encoder,
        index,
        seeds=args.seeds,
        objectives=args.objectives,
        settings=TrainSettings(),
        disabled=args.without,
        cache_dir=StoreFiles().reranker_examples,
    )
    for objective, splits in result["summary"].items():
        for split, entry in splits.items():
            line = "  ".join(f"{m} {v['mean']:.4f} ± {v['sd']:.4f}" for m, v in entry.items() if "mean" in v)
            for key, versus in entry.items():
                if key.startswith("multi_R@10 vs "):
                    low, high = versus["ci95"]
                    line += f"  {key[len('multi_R@10 ') :]} {versus['difference']:+.4f} [{low:+.4f}, {high:+.4f}]"
            print(f"{objective:<14} {split:<10} {line}")
    report = {
        **run_record("benchmarks/reranker_objectives.py", args),
        "papers_in_index": len(index),
        **result,
    }
    write_json(args.out, report)
    encoder.close()
    store.close()


if __name__ == "__main__":
    main()
