"""Compute steps: each reads from the store, computes (PyTorch where it pays off), writes back.

Every step is idempotent: running it twice leaves the same graph.
"""

from __future__ import annotations

from gnn.clusters import ClusterLabel, cluster_labels_path, read_cluster_labels
from gnn.cocitation import (
    CocitationReport,
    CocitationSettings,
    cocitation_table,
    compute_cocitation,
    coupling_table,
)
from gnn.export import FORMATS, ExportReport, export_cocitation, export_coupling
from gnn.noise import NoiseDistributions, NoiseSampler, noise_distributions

__all__ = [
    "FORMATS",
    "ClusterLabel",
    "CocitationReport",
    "CocitationSettings",
    "ExportReport",
    "NoiseDistributions",
    "NoiseSampler",
    "cluster_labels_path",
    "cocitation_table",
    "compute_cocitation",
    "coupling_table",
    "export_cocitation",
    "export_coupling",
    "noise_distributions",
    "read_cluster_labels",
]
