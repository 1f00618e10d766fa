"""Leave-reference-papers-out cross-validation of the linker on the CL-SciSumm 2018 gold links.

The 40 reference papers are split into ``folds`` groups (seeded); each group is the test set once
while the linker is trained on the others. Every system is scored on the same test citances with
:func:`gnn.linkage.scoring.score_task1a` (micro over all gold files and citances, and macro over
files), the predictions of all folds pooled:

* ``cosine top-k`` / ``bm25 top-k`` / ``bm25_noyear top-k``: the ``k`` sentences with the highest
  embedding cosine / BM25 / BM25 of the citance with its citation years removed, for each ``k`` in
  ``k_values`` (untrained; the best of them is the baseline the linker is compared to — removing
  the years is the linker's strongest single signal, so a plain BM25 given the same cleaning is the
  fair lexical baseline);
* ``linker (gold)``: :func:`~gnn.linkage.model.train_linker` on the training folds' gold;
* ``linker (gold + silver)``: the same plus the silver corpus, its cosine cutoff chosen on the
  training folds' gold pairs (:func:`~gnn.linkage.silver.choose_cutoff`), then balanced;
* ``boosting (gold)``: gradient-boosted trees on the same features, for comparison;
* ``linker + cross-encoder (gold)`` (only with ``LinkageEvalSettings.cross_encoder``): the gold linker's
  top candidates re-ordered by a MiniLM cross-encoder fine-tuned on the same training folds
  (:mod:`gnn.linkage.cross_encoder`; about 10 minutes per fold on 2 CPU cores).

The report also carries :func:`human_agreement`, the annotators' F1 against each other where a
citance has more than one annotator.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from gnn.linkage.corpus import GoldCorpus
from gnn.linkage.cross_encoder import CrossEncodedLinker, CrossEncoderSettings, train_cross_encoder
from gnn.linkage.model import Example, Linker, LinkerSettings, _folds, fixed_scorer, train_linker
from gnn.linkage.scoring import Task1AScore, score_task1a
from gnn.linkage.silver import SilverSource, balance, choose_cutoff, gold_pairs, silver_examples, silver_pairs

log = logging.getLogger(__name__)

BASELINES = ("cosine", "bm25", "bm25_noyear")  # features ranked as untrained top-k baselines


@dataclass(frozen=True)
class LinkageEvalSettings:
    folds: int = 5  # groups of reference papers; 8 papers per test fold on the 40 of CL-SciSumm 2018
    seed: int = 0  # fold assignment, silver negatives
    k_values: tuple[int, ...] = (1, 2, 3, 4, 5)  # k of the top-k baselines
    cutoff_criterion: str = "mcc"  # which criterion picks the silver cutoff inside each fold
    linker: LinkerSettings = field(default_factory=LinkerSettings)  # the learned linkers' settings
    boosting: bool = True  # also score gradient boosting on gold (slower)
    cross_encoder: CrossEncoderSettings | None = None  # also fine-tune and score the cross-encoder (slow)


CROSS_ENCODED = "linker + cross-encoder (gold)"


def _predict(linker: Linker, examples: Sequence[Example], keys: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    out = {}
    for e, key in zip(examples, keys):
        chosen = linker.selection.select(linker.decision(e.matrix())) if len(e.paper) else np.zeros(0, np.int64)
        out[key] = [int(e.paper.sids[j]) for j in chosen]
    return out


def _predict_cross_encoded(
    reranked: CrossEncodedLinker, examples: Sequence[Example], keys: Sequence[Hashable]
) -> dict[Hashable, list[int]]:
    out = {}
    for e, key in zip(examples, keys):
        chosen = reranked.select(e.citance, reranked.linker.decision(e.matrix()), e.paper) if len(e.paper) else []
        out[key] = [int(e.paper.sids[j]) for j, _ in chosen]
    return out


def human_agreement(gold: GoldCorpus) -> dict[str, object]:
    """The human ceiling: each annotator's links scored against another's on the citances both annotated.

    For every citance (same reference paper, citing paper and citing sentences) with links from two
    or more annotators, every ordered pair (a, b) counts a's sids as a prediction of b's
    (:func:`gnn.linkage.scoring.citance_counts`), summed over citances and pairs; the micro F1 is
    symmetric in the pair. ``f1`` is None when no citance has two annotators (the report says how
    many papers have two annotators and how many citances each annotated).
    """
    from itertools import permutations

    from gnn.linkage.scoring import citance_counts

    links: dict[Hashable, dict[str, frozenset[int]]] = {}
    citances_by: dict[str, dict[str, int]] = {}  # paper -> annotator -> citances annotated
    for ex, key, annotator in zip(gold.examples, gold.keys, gold.annotators):
        links.setdefault(key, {})[annotator] = ex.positives
        per_paper = citances_by.setdefault(str(ex.group), {})
        per_paper[annotator] = per_paper.get(annotator, 0) + 1
    shared = {key: by for key, by in links.items() if len(by) >= 2}
    counts = None
    for by in shared.values():
        for a, b in permutations(sorted(by), 2):
            pair = citance_counts(by[a], by[b])
            counts = pair if counts is None else counts + pair
    return {
        "citances_with_two_or_more_annotators": len(shared),
        "papers_with_two_or_more_annotators": {p: by for p, by in citances_by.items() if len(by) >= 2},
        "f1": None if counts is None else round(counts.f1, 4),
        "precision": None if counts is None else round(counts.precision, 4),
        "recall": None if counts is None else round(counts.recall, 4),
    }


def cross_validate(
    gold: GoldCorpus, silver: SilverSource | None, settings: LinkageEvalSettings = LinkageEvalSettings()
) -> dict[str, object]:
    """Scores of every system (see module docstring) and the silver cutoffs chosen per fold."""
    gold_files: dict[Hashable, dict[Hashable, frozenset[int]]] = {}
    for ex, key, annotator in zip(gold.examples, gold.keys, gold.annotators):
        gold_files.setdefault((ex.group, annotator), {})[key] = ex.positives
    predictions: dict[str, dict[Hashable, list[int]]] = {}
    for k in settings.k_values:
        for feature in BASELINES:
            predictions[f"{feature} top-{k}"] = _predict(fixed_scorer(feature, k), gold.examples, gold.keys)
    pool = silver_pairs(silver) if silver is not None else None
    folds = _folds([e.group for e in gold.examples], settings.folds, settings.seed)
    cutoffs, silver_sizes, selections = [], [], []
    timings: dict[str, float] = {}
    for number, test in enumerate(folds):
        train = [e for e in gold.examples if e.group not in test]
        test_idx = [i for i, e in enumerate(gold.examples) if e.group in test]
        test_ex, test_keys = [gold.examples[i] for i in test_idx], [gold.keys[i] for i in test_idx]
        systems: dict[str, Linker] = {}
        started = time.perf_counter()
        systems["linker (gold)"] = train_linker(train, settings.linker)
        timings["linker (gold)"] = timings.get("linker (gold)", 0.0) + time.perf_counter() - started
        selections.append(systems["linker (gold)"].selection)
        if settings.cross_encoder is not None:
            started = time.perf_counter()
            cross = train_cross_encoder(train, systems["linker (gold)"], settings.cross_encoder)
            reranked = CrossEncodedLinker(systems["linker (gold)"], cross)
            predictions.setdefault(CROSS_ENCODED, {}).update(_predict_cross_encoded(reranked, test_ex, test_keys))
            timings[CROSS_ENCODED] = timings.get(CROSS_ENCODED, 0.0) + time.perf_counter() - started
        if pool is not None and silver is not None:
            started = time.perf_counter()
            cutoff, _ = choose_cutoff(*gold_pairs(train), settings.cutoff_criterion)
            corpus = balance(pool, cutoff, seed=settings.seed)
            extra = silver_examples(corpus, silver, settings.linker.silver_weight)
            cutoffs.append(cutoff)
            silver_sizes.append(len(corpus))
            systems["linker (gold + silver)"] = train_linker(
                [*train, *extra], settings.linker, selection_examples=train
            )
            timings["linker (gold + silver)"] = (
                timings.get("linker (gold + silver)", 0.0) + time.perf_counter() - started
            )
        if settings.boosting:
            started = time.perf_counter()
            systems["boosting (gold)"] = train_linker(train, replace(settings.linker, kind="boosting"))
            timings["boosting (gold)"] = timings.get("boosting (gold)", 0.0) + time.perf_counter() - started
        for name, linker in systems.items():
            predictions.setdefault(name, {}).update(_predict(linker, test_ex, test_keys))
        log.info("fold %d/%d: %d test papers, %d test citances", number + 1, len(folds), len(test), len(test_ex))
    scores: dict[str, Task1AScore] = {name: score_task1a(p, gold_files) for name, p in predictions.items()}
    best = {
        feature: max((n for n in scores if n.startswith(feature + " top-")), key=lambda n: scores[n].micro.f1)
        for feature in BASELINES
    }
    return {
        "scores": {name: s.as_dict() for name, s in scores.items()},
        "best_baselines": best,
        "silver_cutoffs": [round(c, 4) for c in cutoffs],
        "silver_rows": silver_sizes,
        "selections": [s.__dict__ for s in selections],
        "train_seconds": {k: round(v, 1) for k, v in timings.items()},
        "folds": [sorted(f) for f in folds],
        "human_agreement": human_agreement(gold),
    }


__all__ = ["BASELINES", "CROSS_ENCODED", "LinkageEvalSettings", "cross_validate", "human_agreement"]
