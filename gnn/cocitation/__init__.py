"""Co-citation analysis: counts, normalised strengths, noise distributions, clusters and exports.

=============  ==========================================================================================
``counts``     sparse products (ESC, torch, SciPy) of co-occurrence counts; the normalised strengths
``compute``    ``citegraph compute cocitation``: reads, CO_CITED and coupling tables, the step, write-back
``noise``      MP-BERT4CR noise distributions: co-citation partners and negative weights
``settings``   the settings both co-citation steps share (minimum count, partners kept, α)
``basis``      what the stored counts were made from, kept beside the store (``<db>.cocitation/``)
``delta``      ``citegraph update``: counts, strengths and noise brought up to date from what changed
``clusters``   Leiden clusters of the co-citation graph and their c-TF-IDF labels
``export``     co-citation and coupling networks for Gephi, VOSviewer, CSV and Parquet
=============  ==========================================================================================
"""

from __future__ import annotations

from gnn.cocitation.clusters import ClusterLabel, read_cluster_labels
from gnn.cocitation.compute import (
    MEASURES,
    CocitationReport,
    CocitationSettings,
    cocitation_table,
    compute_cocitation,
    coupling_table,
)
from gnn.cocitation.counts import PairCounts, cooccurrence, count_pairs, normalised_strengths
from gnn.cocitation.export import FORMATS, ExportReport, export_cocitation, export_coupling
from gnn.cocitation.noise import NoiseDistributions, NoiseSampler, noise_distributions

__all__ = [
    "FORMATS",
    "MEASURES",
    "ClusterLabel",
    "CocitationReport",
    "CocitationSettings",
    "ExportReport",
    "NoiseDistributions",
    "NoiseSampler",
    "PairCounts",
    "cocitation_table",
    "compute_cocitation",
    "cooccurrence",
    "count_pairs",
    "coupling_table",
    "export_cocitation",
    "export_coupling",
    "noise_distributions",
    "normalised_strengths",
    "read_cluster_labels",
]
