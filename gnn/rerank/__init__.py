"""Reranking, the precise last stage of recommendation: features, the neural model and LambdaMART.

===============  ========================================================================================
``features``     what the reranker reads of each candidate: text, graph, co-citation, taxonomy, hyperbolic
``model``        the neural reranker and its objectives (triplet; MP-BERT4CR's multi-positive ones)
``lambdamart``   gradient-boosted trees stacked on the neural score, a bag of seeds
===============  ========================================================================================
"""

from __future__ import annotations

from gnn.rerank.features import FEATURE_NAMES, FeatureBuilder, FeatureSettings, Knowledge, QueryInput
from gnn.rerank.lambdamart import LambdaMart, LambdaMartSettings
from gnn.rerank.model import OBJECTIVES, QueryExample, RerankerSettings, TrainedReranker

__all__ = [
    "FEATURE_NAMES",
    "OBJECTIVES",
    "FeatureBuilder",
    "FeatureSettings",
    "Knowledge",
    "LambdaMart",
    "LambdaMartSettings",
    "QueryExample",
    "QueryInput",
    "RerankerSettings",
    "TrainedReranker",
]
