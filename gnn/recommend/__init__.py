"""Citation recommendation: the service (prefetch → enrich → score), its training and its evaluation.

================  ===============================================================================================
``service``       :class:`RecommendationService`: requests in, ranked and explained recommendations out
``citances``      citing sentences with the cited paper's marker masked, and the query sets built from them
``examples``      the reranker's training examples: the time split, the service's pools, sampled extras
``train``         ``citegraph train reranker``: objectives, trees, the served scorer chosen and saved
``studies``       research on a training run: the ablation, the objectives compared over seeds (paired bootstrap)
``evaluate``      ``citegraph eval recommend``: every retrieval system on the time-split citances
``finetune``      ``citegraph train encoder``: the text encoder fine-tuned on citation contexts (MP-BERT4CR)
``encoder_eval``  frozen vs fine-tuned encoders: the dense channel on the time split, paired intervals
================  ===============================================================================================
"""

from __future__ import annotations

from gnn.recommend.citances import build_queries
from gnn.recommend.service import (
    DEFAULT_K,
    RecommendationService,
    RecommendRequest,
    RecommendResponse,
    ServiceSettings,
)

__all__ = [
    "DEFAULT_K",
    "RecommendRequest",
    "RecommendResponse",
    "RecommendationService",
    "ServiceSettings",
    "build_queries",
]
