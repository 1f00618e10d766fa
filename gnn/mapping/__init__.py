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
from gnn.mapping.data import MappingInput, read_mapping_input
from gnn.mapping.export import export_network, network_tables
from gnn.mapping.historiograph import (
    HISTORIOGRAPH_FORMATS,
    Historiograph,
    historiograph,
    historiograph_of,
    local_citation_scores,
    write_historiograph,
)

__all__ = [
    "EXACT_UP_TO",
    "HISTORIOGRAPH_FORMATS",
    "PAPER_PROPERTIES",
    "PIVOTS",
    "BurstSettings",
    "CentralitySettings",
    "Historiograph",
    "MappingInput",
    "MappingReport",
    "MappingSettings",
    "YearlyCitations",
    "author_network",
    "betweenness",
    "burst_table",
    "coauthor_network",
    "cocitation_network",
    "collaboration_network",
    "compute_mapping",
    "country_network",
    "detect_bursts",
    "export_network",
    "historiograph",
    "historiograph_of",
    "institution_network",
    "local_citation_scores",
    "network_tables",
    "optimal_states",
    "read_mapping_input",
    "reference_network",
    "sigma",
    "source_network",
    "state_costs",
    "strongest_bursts",
    "stub_first_author",
    "write_historiograph",
    "yearly_citations",
]
