"""Science mapping as CiteSpace and bibliometrix users know it: citation bursts, centrality, historiograph.

=================  ======================================================================================
``bursts``         Kleinberg's two-state automaton over each work's yearly citations; burst strength
``centrality``     betweenness centrality of the co-citation network (networkx), CiteSpace's sigma
``cited``          co-citation maps of cited works, their authors and their sources (``build_network``)
``export``         ``citegraph export network``: a unit's map as GraphML, GEXF, VOSviewer, CSV or Parquet
``coauthorship``   co-authorship maps of authors, institutions and countries (``build_network``)
``historiograph``  Garfield's direct-citation chronology of the most locally cited records
``data``           the one bulk read they share: citations, years, which papers are records
``compute``        ``citegraph compute mapping``: bursts, betweenness and sigma written onto every Paper
``keywords``       the KEYWORDS unit: keyword co-occurrence (BᵀB), its Leiden clusters
``thematic``       the thematic map: Callon centrality and density of keyword clusters, their quadrants
``coupling``       bibliographic coupling clusters (``citegraph compute coupling``) and the COUPLING unit
``slices``         CiteSpace's time slices of any unit's network and their merge (``citegraph export slices``)
``overlay``        VOSviewer's overlay: the average citing year of each cited work (``MapNode.avg_year``)
``timeline``       CiteSpace's timeline: each co-citation cluster's citations per year
``documents``      the documents behind a link of any unit's map (``mapEdgeDocuments``)
``units``          which units a store can map, and what to load for the others (``mapUnits``)
=================  ======================================================================================

Betweenness reads the CO_CITED edges that ``citegraph compute cocitation`` stores (:mod:`gnn.cocitation`).
"""

from __future__ import annotations

from gnn.mapping.bursts import BurstSettings, detect_bursts, optimal_states, state_costs, strongest_bursts
from gnn.mapping.centrality import EXACT_UP_TO, PIVOTS, CentralitySettings, betweenness, cocitation_network, sigma
from gnn.mapping.cited import author_network, reference_network, source_network, stub_first_author
from gnn.mapping.coauthorship import coauthor_network, collaboration_network, country_network, institution_network
from gnn.mapping.compute import (
    PAPER_PROPERTIES,
    MappingReport,
    MappingSettings,
    YearlyCitations,
    burst_table,
    compute_mapping,
    yearly_citations,
)
from gnn.mapping.coupling import (
    CouplingCut,
    CouplingReport,
    CouplingSettings,
    compute_coupling,
    coupling_counts,
    coupling_cut,
    coupling_network,
)
from gnn.mapping.data import MappingInput, read_mapping_input
from gnn.mapping.documents import EdgeDocument, edge_documents
from gnn.mapping.export import export_network, network_tables
from gnn.mapping.historiograph import (
    HISTORIOGRAPH_FORMATS,
    Historiograph,
    historiograph,
    historiograph_of,
    local_citation_scores,
    write_historiograph,
)
from gnn.mapping.keywords import (
    KIND_FALLBACK,
    Cooccurrence,
    KeywordUses,
    cooccurrence,
    keyword_clusters,
    keyword_kinds,
    keyword_network,
    keywords_network,
    read_keyword_uses,
)
from gnn.mapping.overlay import average_citing_year, average_citing_years
from gnn.mapping.slices import SlicesReport, export_slices, merge_slices, slice_networks, time_slices
from gnn.mapping.thematic import (
    QUADRANTS,
    THEMATIC_FORMATS,
    ThematicMap,
    Theme,
    callon,
    compute_thematic_map,
    equivalence,
    quadrants,
    thematic_map,
    write_thematic_map,
)
from gnn.mapping.timeline import ClusterTimeline, cluster_timeline, timeline_counts
from gnn.mapping.units import UnitStatus, unit_status

__all__ = [
    "EXACT_UP_TO",
    "HISTORIOGRAPH_FORMATS",
    "KIND_FALLBACK",
    "PAPER_PROPERTIES",
    "PIVOTS",
    "QUADRANTS",
    "THEMATIC_FORMATS",
    "BurstSettings",
    "CentralitySettings",
    "ClusterTimeline",
    "Cooccurrence",
    "CouplingCut",
    "CouplingReport",
    "CouplingSettings",
    "EdgeDocument",
    "Historiograph",
    "KeywordUses",
    "MappingInput",
    "MappingReport",
    "MappingSettings",
    "SlicesReport",
    "ThematicMap",
    "Theme",
    "UnitStatus",
    "YearlyCitations",
    "author_network",
    "average_citing_year",
    "average_citing_years",
    "betweenness",
    "burst_table",
    "callon",
    "cluster_timeline",
    "coauthor_network",
    "cocitation_network",
    "collaboration_network",
    "compute_coupling",
    "compute_mapping",
    "compute_thematic_map",
    "cooccurrence",
    "country_network",
    "coupling_counts",
    "coupling_cut",
    "coupling_network",
    "detect_bursts",
    "edge_documents",
    "equivalence",
    "export_network",
    "export_slices",
    "historiograph",
    "historiograph_of",
    "institution_network",
    "keyword_clusters",
    "keyword_kinds",
    "keyword_network",
    "keywords_network",
    "local_citation_scores",
    "merge_slices",
    "network_tables",
    "optimal_states",
    "quadrants",
    "read_keyword_uses",
    "read_mapping_input",
    "reference_network",
    "sigma",
    "slice_networks",
    "source_network",
    "state_costs",
    "strongest_bursts",
    "stub_first_author",
    "thematic_map",
    "time_slices",
    "timeline_counts",
    "unit_status",
    "write_historiograph",
    "write_thematic_map",
    "yearly_citations",
]
