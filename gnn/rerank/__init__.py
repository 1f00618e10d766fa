"""Reranking, the precise last stage of recommendation: features, the neural model, LambdaMART and the scorers.

===============  ========================================================================================
``knowledge``    what the features read besides the index: citations as of a cutoff year, taxonomy places
``features``     what the reranker reads of each candidate: text, graph, co-citation, taxonomy, hyperbolic
``examples``     queries with their candidate pools and targets, as training and evaluation see them
``model``        the neural reranker and its objectives (triplet; MP-BERT4CR's multi-positive ones)
``lambdamart``   gradient-boosted trees stacked on the neural score, a bag of seeds, per-feature contributions
``scorer``       the service's final scorers (fusion; the trained reranker), each with ``score`` and ``why``
===============  ========================================================================================
"""

from __future__ import annotations

from gnn.rerank.examples import QueryExample, ranked_ids
from gnn.rerank.features import FEATURE_NAMES, FeatureBuilder, FeatureSettings, QueryInput
from gnn.rerank.knowledge import Knowledge, TaxonomyPlaces
from gnn.rerank.lambdamart import LambdaMart, LambdaMartSettings
from gnn.rerank.model import OBJECTIVES, RerankerSettings
from gnn.rerank.scorer import FusionScorer, Reranker, TrainedReranker, load_trained_reranker

__all__ = [
    "FEATURE_NAMES",
    "OBJECTIVES",
    "FeatureBuilder",
    "FeatureSettings",
    "FusionScorer",
    "Knowledge",
    "LambdaMart",
    "LambdaMartSettings",
    "QueryExample",
    "QueryInput",
    "Reranker",
    "RerankerSettings",
    "TaxonomyPlaces",
    "TrainedReranker",
    "load_trained_reranker",
    "ranked_ids",
]
