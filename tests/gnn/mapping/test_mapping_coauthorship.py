"""Co-authorship maps (gnn/mapping/coauthorship.py) on a collection counted by hand.

d1 (2001) by Ada, Bob, Cy; d2 (2003) by Ada, Bob; d3 (2005) by Cy, Dee. Pairs: Ada-Bob 2 (d1, d2), Ada-Cy and
Bob-Cy 1 (d1), Cy-Dee 1 (d3); documents: Ada, Bob, Cy 2, Dee 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import gnn.mapping  # noqa: F401  (registers the builders)
from gnn.mapping.networks import MapNetwork, MapUnit, Measure, NetworkFilters, build_network
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store

WROTE = [("ada", "d1"), ("bob", "d1"), ("cy", "d1"), ("ada", "d2"), ("bob", "d2"), ("cy", "d3"), ("dee", "d3")]


def coauthor_batch() -> GraphBatch:
    papers = pd.DataFrame({"id": ["d1", "d2", "d3"], "year": [2001, 2003, 2005], "title": ["D1", "D2", "D3"]})
    authors = pd.DataFrame({"id": ["ada", "bob", "cy", "dee"], "name": ["Ada Lovelace", "Bob Bo", "Cy Young", "Dee D"]})
    wrote = pd.DataFrame(WROTE, columns=["source", "target"]).assign(position=[1, 2, 3, 1, 2, 1, 2])
    return GraphBatch("coauthors", nodes={"Paper": papers, "Author": authors}, rels={"WROTE": wrote})


@pytest.fixture(scope="module")
def coauthor_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    with open_store(StoreConfig(db_path=tmp_path_factory.mktemp("coauthors") / "c.db")) as store:
        ingest(store, coauthor_batch())
        yield store


def links(network: MapNetwork) -> dict[frozenset[str], int]:
    return {frozenset((e.source, e.target)): e.count for e in network.edges}


def test_coauthors_linked_by_documents_written_together(coauthor_store: GraphStore) -> None:
    network = build_network(coauthor_store, MapUnit.COAUTHORS, NetworkFilters(min_count=1))
    assert links(network) == {
        frozenset({"ada", "bob"}): 2,
        frozenset({"ada", "cy"}): 1,
        frozenset({"bob", "cy"}): 1,
        frozenset({"cy", "dee"}): 1,
    }
    assert [(n.id, n.weight, n.label) for n in network.nodes] == [
        ("ada", 2, "Ada Lovelace"),
        ("bob", 2, "Bob Bo"),
        ("cy", 2, "Cy Young"),
        ("dee", 1, "Dee D"),
    ]
    assert network.nodes[2].avg_year == pytest.approx(2003.0)  # Cy: d1 2001, d3 2005
    late = build_network(coauthor_store, MapUnit.COAUTHORS, NetworkFilters(min_count=1, year_min=2002))
    assert links(late) == {frozenset({"ada", "bob"}): 1, frozenset({"cy", "dee"}): 1}
    strong = build_network(coauthor_store, MapUnit.COAUTHORS, NetworkFilters(measure=Measure.JACCARD))
    assert [(e.source, e.target, e.count, e.strength) for e in strong.edges] == [("ada", "bob", 2, 1.0)]


def test_an_empty_map_is_written_with_its_columns(tmp_path: Path) -> None:
    """A map without nodes (countries of records that each name one country) is an empty table, not an error."""
    from gnn.cocitation.export import write_network
    from gnn.mapping.export import network_tables

    edges, nodes = network_tables(MapNetwork(MapUnit.COUNTRIES, NetworkFilters(min_count=1)))
    assert len(nodes) == 0 and list(nodes.columns[:4]) == ["id", "label", "title", "n_cited"]
    assert len(edges) == 0
    write_network(edges, nodes, tmp_path / "countries.csv", "csv", "count")
    assert (tmp_path / "countries.csv").is_file()
