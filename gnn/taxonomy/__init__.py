"""Taxonomy fusion (SymTax, §3): arXiv categories and ACM classes as one graph, fused class vectors.

=================  =====================================================================================
``graph``          the joint arXiv + ACM graph with text features; MAPS_TO inferred where missing
``fusion``         fused class vectors: the vector mean, or a GNN trained on link prediction
``links``          held-out link prediction: the train / validation / test split and its metrics
``fusion_models``  the GNN layers (GAT, APPNP) and the link scorer
``categories``     papers' categories: given ones kept, the rest inferred by cosine, calibrated
``compute``        ``citegraph compute taxonomy``: the three steps, written back to the graph
=================  =====================================================================================
"""

from __future__ import annotations

from gnn.taxonomy.categories import CategorySettings, paper_vectors, top_categories
from gnn.taxonomy.compute import TaxonomySettings, compute_taxonomy
from gnn.taxonomy.fusion import FusionSettings

__all__ = [
    "CategorySettings",
    "FusionSettings",
    "TaxonomySettings",
    "compute_taxonomy",
    "paper_vectors",
    "top_categories",
]
