"""Sentence-level citation linkage (CL-SciSumm Task 1A; Singha Roy & Mercer's silver corpus).

Given a citing sentence and a cited paper with full text, score every sentence of that paper and
select the linked ones. Modules:

=================  ===================================================================================
``features``       the signals: embedding cosine, BM25 within the paper, section/position priors,
                   the citance's discourse cues (:class:`CitedPaper`, :func:`features`)
``model``          logistic-regression linker + selection rule, trained and stored as JSON
``scoring``        Task 1A micro/macro scoring, the selection rule and its fitting
``cross_encoder``  MiniLM cross-encoder that re-orders the linker's top candidates
``pipeline``       encoder glue: cited papers; where the trained linker and cross-encoder are kept
``silver``         the silver corpus: cosine cutoff on gold, balancing, Cohen's kappa
``corpus``         corpus building: gold citances (CL-SciSumm) and the silver source (ScisummNet)
``evaluate``       leave-reference-papers-out cross-validation with cosine/BM25 baselines
``writeback``      ``citegraph compute linkage``: model LINKS_TO edges into the graph
``service``        the linkage service (GraphQL ``linkage``) and the Task 1A predictor (``citegraph link``)
=================  ===================================================================================
"""

from __future__ import annotations

from gnn.linkage.corpus import GoldCorpus, GoldRecord, gold_corpus, load_gold_corpus, load_silver_source
from gnn.linkage.features import FEATURES, CitedPaper, features
from gnn.linkage.model import Example, Linker, LinkerSettings, fixed_scorer, train_linker
from gnn.linkage.pipeline import cited_paper
from gnn.linkage.scoring import Counts, Selection, Task1AScore, choose_selection, score_task1a
from gnn.linkage.writeback import MODEL_METHOD, LinkageWriteReport, compute_linkage, load_papers

__all__ = [
    "FEATURES",
    "MODEL_METHOD",
    "CitedPaper",
    "Counts",
    "Example",
    "GoldCorpus",
    "GoldRecord",
    "LinkageWriteReport",
    "Linker",
    "LinkerSettings",
    "Selection",
    "Task1AScore",
    "choose_selection",
    "cited_paper",
    "compute_linkage",
    "features",
    "fixed_scorer",
    "gold_corpus",
    "load_gold_corpus",
    "load_papers",
    "load_silver_source",
    "score_task1a",
    "train_linker",
]
