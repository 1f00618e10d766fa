"""Science mapping as CiteSpace and bibliometrix users know it: citation bursts, centrality, historiograph.

=================  ======================================================================================
``bursts``         Kleinberg's two-state automaton over each work's yearly citations; burst strength
``centrality``     betweenness centrality of the co-citation network (networkx), CiteSpace's sigma
``historiograph``  Garfield's direct-citation chronology of the most locally cited records
``data``           the one bulk read they share: citations, years, which papers are records
``compute``        ``citegraph compute mapping``: bursts, betweenness and sigma written onto every Paper
``coupling``       bibliographic coupling clusters (``citegraph compute coupling``) and the COUPLING unit
``slices``         CiteSpace's time slices of any unit's network and their merge (``citegraph export slices``)
``overlay``        VOSviewer's overlay: the average citing year of each cited work (``MapNode.avg_year``)
``timeline``       CiteSpace's timeline: each co-citation cluster's citations per year
=================  ======================================================================================

Betweenness reads the CO_CITED edges that ``citegraph compute cocitation`` stores (:mod:`gnn.cocitation`).
"""

from __future__ import annotations

from gnn.mapping.bursts import BurstSettings, detect_bursts, optimal_states, state_costs, strongest_bursts
from gnn.mapping.centrality import EXACT_UP_TO, PIVOTS, CentralitySettings, betweenness, cocitation_network, sigma
from gnn.mapping.compute import (
    PAPER_PROPERTIES,
    MappingReport,
    MappingSettings,
    YearlyCitations,
    burst_table,
    compute_mapping,
    yearly_citations,
)
from gnn.mapping.coupling import CouplingReport, CouplingSettings, compute_coupling, coupling_counts, coupling_network
from gnn.mapping.data import MappingInput, read_mapping_input
from gnn.mapping.historiograph import (
    HISTORIOGRAPH_FORMATS,
    Historiograph,
    historiograph,
    historiograph_of,
    local_citation_scores,
    write_historiograph,
)
from gnn.mapping.overlay import average_citing_year, average_citing_years
from gnn.mapping.slices import SlicesReport, export_slices, merge_slices, slice_networks, time_slices
from gnn.mapping.timeline import ClusterTimeline, cluster_timeline, timeline_counts

__all__ = [
    "EXACT_UP_TO",
    "HISTORIOGRAPH_FORMATS",
    "PAPER_PROPERTIES",
    "PIVOTS",
    "BurstSettings",
    "CentralitySettings",
    "ClusterTimeline",
    "CouplingReport",
    "CouplingSettings",
    "Historiograph",
    "MappingInput",
    "MappingReport",
    "MappingSettings",
    "SlicesReport",
    "YearlyCitations",
    "average_citing_year",
    "average_citing_years",
    "betweenness",
    "burst_table",
    "cluster_timeline",
    "cocitation_network",
    "compute_coupling",
    "compute_mapping",
    "coupling_counts",
    "coupling_network",
    "detect_bursts",
    "export_slices",
    "historiograph",
    "historiograph_of",
    "local_citation_scores",
    "merge_slices",
    "optimal_states",
    "read_mapping_input",
    "sigma",
    "slice_networks",
    "state_costs",
    "strongest_bursts",
    "time_slices",
    "timeline_counts",
    "write_historiograph",
    "yearly_citations",
]
