"""Citation recommendation: the service (prefetch → enrich → score), its training and its evaluation.

=============  ==========================================================================================
``service``    :class:`RecommendationService`: requests in, ranked and explained recommendations out
``train``      ``citegraph train reranker``: examples on the time split, objectives, the saved scorer
``evaluate``   ``citegraph eval recommend``: every retrieval system on the time-split citances
=============  ==========================================================================================
"""

from __future__ import annotations

from gnn.recommend.evaluate import build_queries
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
