"""GraphQL fields of the science-mapping computations: a paper's burst and centrality, a cluster's label lists,
silhouette, modularity and timeline, the clustering's quality and the store-wide cluster timeline."""

from __future__ import annotations

import math

import pandas as pd
from test_graphql import ok

from api.services import GraphService
from gnn.cocitation.clusters import read_cluster_labels, read_cluster_quality
from gnn.mapping.bursts import BurstSettings
from gnn.mapping.compute import MappingSettings, compute_mapping
from gnn.mapping.timeline import cluster_timeline
from graph.files import StoreFiles

CLUSTERS = """{
  clusters(first: 20) {
    id label llr: labels(method: LLR) ctfidf: labels(method: CTFIDF) silhouette modularity
    timeline { year citations }
    late: timeline(yearMin: 2004) { year citations }
  }
  clusterQuality { modularity silhouette nodes links }
  clusterTimeline(first: 50) { cluster label years { year citations } }
}"""


def test_cluster_labels_quality_and_timeline(service: GraphService) -> None:
    path = StoreFiles.of(service.store).clusters
    assert path is not None
    stored = {c.cluster: c for c in read_cluster_labels(path)}
    data = ok(service, CLUSTERS)
    assert [c["id"] for c in data["clusters"]] == list(stored)
    for cluster in data["clusters"]:
        label = stored[cluster["id"]]
        assert cluster["llr"] == list(label.llr_terms) and cluster["ctfidf"] == list(label.ctfidf_terms)
        assert cluster["label"] == label.label
        assert cluster["silhouette"] == label.silhouette and cluster["modularity"] == label.modularity
    quality = read_cluster_quality(path)
    assert quality is not None
    assert data["clusterQuality"]["modularity"] == quality.modularity
    assert data["clusterQuality"]["nodes"] == quality.nodes
    assert math.isclose(sum(c["modularity"] for c in data["clusters"]), quality.modularity, abs_tol=1e-4)
    expected = {t.cluster: [{"year": y, "citations": n} for y, n in t.years] for t in cluster_timeline(service.store)}
    assert {t["cluster"]: t["years"] for t in data["clusterTimeline"]} == expected
    assert {c["id"]: c["timeline"] for c in data["clusters"]} == expected
    assert any(c["timeline"] for c in data["clusters"])
    for cluster in data["clusters"]:
        assert cluster["late"] == [y for y in cluster["timeline"] if y["year"] >= 2004]


def test_paper_burst_and_centrality(service: GraphService) -> None:
    report = compute_mapping(service.store, MappingSettings(bursts=BurstSettings(min_duration=1)))
    assert report.network_works > 0
    # the tiny graph has no burst: write one as `compute mapping` would, next to the betweenness it computed
    burst = pd.DataFrame(
        {"id": ["p2"], "burst_strength": [2.5], "burst_begin": [2001], "burst_end": [2004], "sigma": [1.75]}
    )
    service.store.write_node_properties("Paper", "id", burst)
    query = "query($id: ID!) { paper(id: $id) { burstStrength burstBegin burstEnd betweenness sigma } }"
    paper = ok(service, query, {"id": "p2"})["paper"]
    assert paper["burstStrength"] == 2.5 and (paper["burstBegin"], paper["burstEnd"]) == (2001, 2004)
    assert paper["sigma"] == 1.75
    central = ok(service, query, {"id": "p1"})["paper"]["betweenness"]
    assert central is not None and 0.0 <= central <= 1.0


def test_nothing_computed_reads_null(service: GraphService) -> None:
    data = ok(service, '{ paper(id: "p1") { burstStrength betweenness sigma } }')
    assert data["paper"] == {"burstStrength": None, "betweenness": None, "sigma": None}
