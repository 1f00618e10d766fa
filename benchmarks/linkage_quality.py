"""Sentence linkage quality (CL-SciSumm Task 1A) and the latency of one linkage call.

What it runs, in one process:

1. the gold corpus: every annotated citance of CL-SciSumm 2018's 40 reference papers
   (``gnn.linkage.corpus.load_gold_corpus``), encoded with the project's encoder (disk-cached);
2. the silver source: ScisummNet citances of ``--silver-papers`` reference papers
   (``gnn.linkage.silver.select_papers``; the 40 gold papers are excluded), paired with every
   sentence of their paper;
3. the silver cutoff on all gold pairs for each criterion (balanced accuracy, MCC, F1) with all
   metrics and Cohen's kappa at each;
4. leave-reference-papers-out cross-validation (``gnn.linkage.evaluate.cross_validate``): cosine
   and BM25 top-k baselines, the linker on gold, on gold + silver, and gradient boosting on gold,
   scored as the shared task does (micro and macro P/R/F1);
5. latency: ``LinkageService.linkage`` on an embedded store holding CL-SciSumm 2018
   (``ingest scisumm2018``), a fresh citing sentence per call (so it is encoded), the paper
   encoded once and then served from the service's cache; and the cold call (paper not cached);
   with ``--cross-encoder-model DIR`` also the same calls with that cross-encoder re-ordering the
   linker's top candidates (``citegraph linkage train --cross-encoder`` writes one);
6. with ``--cross-encoder``, the cross-validation also fine-tunes a cross-encoder per fold and
   scores the linker re-ordered by it (about 11 minutes per fold on 2 CPU cores).

Usage::

    .venv/bin/python benchmarks/linkage_quality.py [--silver-papers 60] [--folds 5] [--out var/linkage_quality.json]
        [--cross-encoder] [--cross-encoder-model DIR]

Results go to ``--out`` (JSON) and are printed as Markdown tables (a record for docs/results/ is written by hand from them).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

from gnn.linkage import LinkerSettings, train_linker
from gnn.linkage.corpus import load_gold_corpus, load_silver_source
from gnn.linkage.cross_encoder import CrossEncoder, CrossEncoderSettings
from gnn.linkage.evaluate import CROSS_ENCODED, LinkageEvalSettings, cross_validate
from gnn.linkage.service import LinkageService
from gnn.linkage.silver import CRITERIA, balance, choose_cutoff, gold_pairs, silver_pairs
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph import StoreConfig, ingest, open_store

log = logging.getLogger("linkage_quality")


def latency(
    data: Path, encoder: TextEncoder, corpus_linker: object, repeats: int, cross_encoder: object = None
) -> dict[str, float]:
    from loaders import scisumm

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(StoreConfig(db_path=Path(tmp) / "g.db"))
        try:
            ingest(store, scisumm.load(data / "scisumm" / "Training-Set-2018"), on_error="skip", rejects_dir=Path(tmp))
            service = LinkageService(store, encoder, corpus_linker, cross_encoder=cross_encoder)  # type: ignore[arg-type]
            started = time.perf_counter()
            service.linkage("We use the dynamic programming search of Tillmann and Ney (cold).", "C00-2123", k=5)
            cold = time.perf_counter() - started
            times = []
            for i in range(repeats):
                started = time.perf_counter()
                service.linkage(
                    f"Beam search with pruning threshold variant {i} as in Tillmann and Ney.", "C00-2123", k=5
                )
                times.append(time.perf_counter() - started)
        finally:
            store.close()
    times.sort()
    return {
        "cold_s": round(cold, 3),
        "warm_median_ms": round(1000 * statistics.median(times), 1),
        "warm_p90_ms": round(1000 * times[int(0.9 * (len(times) - 1))], 1),
        "repeats": repeats,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("CITEGRAPH_DATA", "../shared/data"))
    parser.add_argument("--silver-papers", type=int, default=60)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--criterion", choices=CRITERIA, default="mcc", help="silver cutoff criterion inside CV")
    parser.add_argument("--no-boosting", action="store_true")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", default="var/linkage_quality.json")
    parser.add_argument(
        "--cross-encoder", action="store_true", help="also fine-tune and score a cross-encoder per fold"
    )
    parser.add_argument("--cross-encoder-model", help="a trained cross-encoder folder: also time linkage with it")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    data = Path(args.data)
    started = time.perf_counter()
    encoder = TextEncoder(EncoderSettings.from_env(device="cpu"))
    gold = load_gold_corpus(data / "scisumm" / "Training-Set-2018", encoder)
    silver = None
    if args.silver_papers > 0:
        silver = load_silver_source(
            data / "scisumm" / "ScisummNet-2019", encoder, max_papers=args.silver_papers, exclude=set(gold.papers)
        )
    prepared = time.perf_counter() - started

    scores, labels = gold_pairs(gold.examples)
    cutoffs = {}
    pool = silver_pairs(silver) if silver is not None else None
    for criterion in CRITERIA:
        cutoff, metrics = choose_cutoff(scores, labels, criterion)
        row: dict[str, object] = {"cutoff": round(cutoff, 4), **metrics.as_dict()}
        if pool is not None:
            corpus = balance(pool, cutoff, seed=args.seed)
            row["silver_rows"] = len(corpus)
            row["silver_positives"] = int(corpus["label"].sum())
            row["silver_citances_with_positive"] = int(corpus["citing_sentence_id"].nunique())
        cutoffs[criterion] = row
    settings = LinkageEvalSettings(
        folds=args.folds,
        seed=args.seed,
        cutoff_criterion=args.criterion,
        boosting=not args.no_boosting,
        linker=LinkerSettings(seed=args.seed),
        cross_encoder=CrossEncoderSettings(seed=args.seed, device="cpu") if args.cross_encoder else None,
    )
    cv = cross_validate(gold, silver, settings)
    full = train_linker(gold.examples, settings.linker)
    lat = latency(data, encoder, full, args.repeats)
    lat_cross = None
    if args.cross_encoder_model:
        cross = CrossEncoder.load(Path(args.cross_encoder_model), device="cpu")
        lat_cross = latency(data, encoder, full, args.repeats, cross_encoder=cross)
    result = {
        "command": "benchmarks/linkage_quality.py "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k not in ("data", "out")),
        "date": date.today().isoformat(),
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores (shared), {platform.python_version()}",
        "gold": {
            "citance_annotations": len(gold.examples),
            "papers": len(gold.papers),
            "pairs": len(labels),
            "positive_pairs": int(labels.sum()),
        },
        "silver_source": None
        if silver is None
        else {
            "papers": len(silver.papers),
            "citances": len(silver.citances),
            "pairs": 0 if pool is None else len(pool),
        },
        "cutoffs_all_gold": cutoffs,
        "cv": cv,
        "full_model": {
            "weights": dict(zip(__import__("gnn.linkage").linkage.FEATURES, [round(w, 3) for w in full.weights])),
            "selection": full.selection.__dict__,
        },
        "latency": lat,
        "latency_with_cross_encoder": lat_cross,
        "prepare_seconds": round(prepared, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    print(markdown(result))


def markdown(result: dict) -> str:
    cv = result["cv"]
    lines = ["| system | P | R | micro F1 | macro F1 |", "|---|---:|---:|---:|---:|"]
    names = [
        *cv["best_baselines"].values(),
        "linker (gold)",
        CROSS_ENCODED,
        "linker (gold + silver)",
        "boosting (gold)",
    ]
    names += sorted(n for n in cv["scores"] if " top-" in n and n not in names)
    for name in names:
        if name in cv["scores"]:
            s = cv["scores"][name]
            lines.append(
                f"| {name} | {s['precision']:.3f} | {s['recall']:.3f} | {s['micro_f1']:.3f} | {s['macro_f1']:.3f} |"
            )
    lines += [
        "",
        "| cutoff criterion | cutoff | balanced acc. | MCC | F1 | κ | silver rows |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for criterion, row in result["cutoffs_all_gold"].items():
        lines.append(
            f"| {criterion} | {row['cutoff']} | {row['balanced_accuracy']} | {row['mcc']} | {row['f1']} | {row['kappa']} | {row.get('silver_rows', '')} |"
        )
    lines += ["", f"latency: {result['latency']}"]
    if result.get("latency_with_cross_encoder"):
        lines.append(f"latency with the cross-encoder: {result['latency_with_cross_encoder']}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
