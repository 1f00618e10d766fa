"""The Cypher cookbook (cypher/explore/) on a graph where every recipe has something to find.

Each recipe runs as a user runs it (``citegraph cypher --file``: the whole file, header included,
on a read-only store) and is compared with answers worked out by hand from tests/rich_graph.py.
Neo4j's side: every file lints clean (test_statements_lint.py) and the e2e suite runs each recipe on
both backends and compares the rows (tests/graph/test_neo4j_e2e.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from rich_graph import ACM_POINTS, CATEGORY_POINTS, SIZES, fill

import cypher
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store

ROOT = Path(__file__).resolve().parents[2]
# The recipes of issue #10 (the folder holds older ones too).
COOKBOOK = [
    "ego_network",
    "citation_paths",
    "papers_citing_both",
    "top_cocited_pairs_in_years",
    "cocitation_cluster",
    "linked_sentences",
    "taxonomy_neighbours",
    "category_acm_neighbours",
]
TITLES = {
    "p1": "Statistical machine translation",
    "p2": "Word alignment models",
    "p3": "Phrase tables",
    "p4": "Neural machine translation",
    "p5": "Attention for translation",
}


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    path = tmp_path_factory.mktemp("cookbook") / "rich.db"
    with open_store(StoreConfig(db_path=path, sizes=SIZES)) as store:
        fill(store)
    with open_store(StoreConfig(db_path=path, sizes=SIZES, read_only=True)) as store:
        yield store


def run(store: GraphStore, name: str, **params: Any) -> list[dict[str, Any]]:
    text = (ROOT / "cypher" / "explore" / f"{name}.cypher").read_text(encoding="utf-8")
    columns, rows = store.read_only_query(text, params)
    return [dict(zip(columns, row)) for row in rows]


def poincare_distance(x: list[float], y: list[float]) -> float:
    """d(x, y) = 2 artanh(‖(−x) ⊕ y‖) with Möbius addition (curvature −1): another formula than the recipes'."""
    u, v = -np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    uv, uu, vv = u @ v, u @ u, v @ v
    mobius = ((1 + 2 * uv + vv) * u + (1 - uu) * v) / (1 + 2 * uv + uu * vv)
    return 2 * math.atanh(float(np.linalg.norm(mobius)))


@pytest.mark.parametrize("name", COOKBOOK)
def test_recipe_header_names_parameters_columns_and_an_example(name: str) -> None:
    header = cypher.load(f"explore/{name}").header
    assert re.search(r"^// parameters: \$", header, re.M) and re.search(r"^// returns: \w", header, re.M)
    example = re.search(r"^// example: (citegraph cypher --file cypher/explore/(\w+)\.cypher.*)$", header, re.M)
    assert example and example.group(2) == name, f"{name}: add an `// example: citegraph cypher --file ...` line"
    for param in re.findall(r"\$(\w+)", cypher.load(f"explore/{name}").text):
        assert f"${param}" in header, f"{name}: the header does not name ${param}"
        assert f"--param {param}=" in example.group(1) or f"--param '{param}=" in example.group(1), (name, param)


def test_docs_show_every_recipe() -> None:
    docs = (ROOT / "docs" / "cypher.md").read_text(encoding="utf-8")
    for name in cypher.names("explore"):
        assert f"cypher/{name}.cypher" in docs, f"docs/cypher.md does not show {name}"


def test_ego_network(reader: GraphStore) -> None:
    rows = run(reader, "ego_network", paper_id="p4", limit=20)
    # p4 cites p1, p2, p3 and is cited by p5; p1 cites p2 and p3 (among the alters).
    assert [(r["source"], r["target"], r["touches_paper"]) for r in rows] == [
        ("p4", "p1", True),
        ("p4", "p2", True),
        ("p4", "p3", True),
        ("p5", "p4", True),
        ("p1", "p2", False),
        ("p1", "p3", False),
    ]
    assert rows[0]["n_contexts"] == 3 and rows[0]["source_title"] == TITLES["p4"]
    assert len(run(reader, "ego_network", paper_id="p4", limit=2)) == 2
    assert run(reader, "ego_network", paper_id="nope", limit=5) == []


def test_citation_paths(reader: GraphStore) -> None:
    # the engines return the parts of a UNION ALL in any order; each part keeps its own ORDER BY
    rows = sorted(run(reader, "citation_paths", from_id="p5", to_id="p2", limit=5), key=lambda row: row["hops"])
    assert [(r["hops"], r["path"]) for r in rows] == [(2, ["p5", "p4", "p2"]), (3, ["p5", "p4", "p1", "p2"])]
    assert rows[1]["titles"] == [TITLES[p] for p in ["p5", "p4", "p1", "p2"]]
    direct_and_two_hop = sorted(
        run(reader, "citation_paths", from_id="p4", to_id="p2", limit=5), key=lambda row: row["hops"]
    )
    assert [r["path"] for r in direct_and_two_hop] == [
        ["p4", "p2"],
        ["p4", "p1", "p2"],
    ]
    assert run(reader, "citation_paths", from_id="p2", to_id="p5", limit=5) == []  # CITES is followed forwards


def test_papers_citing_both(reader: GraphStore) -> None:
    rows = run(reader, "papers_citing_both", paper_a="p2", paper_b="p3", limit=5)
    assert [(r["id"], r["year"], r["venue"]) for r in rows] == [("p4", 2004, "EMNLP"), ("p1", 2001, 'ACL, "main"')]
    assert run(reader, "papers_citing_both", paper_a="p1", paper_b="p5", limit=5) == []


def test_top_cocited_pairs_in_years(reader: GraphStore) -> None:
    # Co-citing papers: p1 (2001) cites p2, p3; p4 (2004) cites p1, p2, p3.
    everything = run(reader, "top_cocited_pairs_in_years", year_min=1990, year_max=2010, min_count=1, limit=10)
    assert [(r["source"], r["target"], r["citing_papers"], r["all_years"]) for r in everything] == [
        ("p2", "p3", 2, 2),
        ("p1", "p2", 1, 1),
        ("p1", "p3", 1, 1),
    ]
    early = run(reader, "top_cocited_pairs_in_years", year_min=2000, year_max=2003, min_count=1, limit=10)
    assert [(r["source"], r["target"], r["citing_papers"]) for r in early] == [("p2", "p3", 1)]
    assert run(reader, "top_cocited_pairs_in_years", year_min=1990, year_max=2010, min_count=3, limit=10) == []


def test_cocitation_cluster(reader: GraphStore) -> None:
    # p1 and p2 form cluster 0; p3 (cluster 1) is co-cited with both of them.
    rows = run(reader, "cocitation_cluster", paper_id="p1", limit=10)
    assert [(r["id"], r["role"], r["cluster"], r["partners"], r["cocitations"]) for r in rows] == [
        ("p1", "member", 0, 1, 1.0),
        ("p2", "member", 0, 1, 1.0),
        ("p3", "bridge", 1, 2, 3.0),
    ]
    other = run(reader, "cocitation_cluster", paper_id="p3", limit=10)  # cluster 1 = {p3, p4}; p4 has no CO_CITED
    assert [(r["id"], r["role"], r["cocitations"]) for r in other] == [("p2", "bridge", 2.0), ("p1", "bridge", 1.0)]


def test_linked_sentences(reader: GraphStore) -> None:
    cites = run(reader, "linked_sentences", sentence_id="p1#1")
    assert [(r["direction"], r["id"], r["method"], r["annotator"], r["score"]) for r in cites] == [
        ("cites", "p2#3", "gold", "A", 1.0),
        ("cites", "p2#3", "silver", "", 0.62),
    ]
    assert cites[0]["paper_id"] == "p2" and cites[0]["text"] == "We align words." and cites[0]["section"] == "Model"
    cited = run(reader, "linked_sentences", sentence_id="p3#4")
    assert [(r["direction"], r["id"], r["sid"], r["score"]) for r in cited] == [("cited_by", "p1#2", 2, None)]


def test_taxonomy_neighbours_are_hyperbolic_distances(reader: GraphStore) -> None:
    rows = run(reader, "taxonomy_neighbours", class_id="1998:I.2", limit=10)
    origin = ACM_POINTS["1998:I.2"]
    expected = sorted((poincare_distance(origin, p), key) for key, p in ACM_POINTS.items() if key != "1998:I.2")
    assert [r["id"] for r in rows] == [key for _, key in expected] == ["1998:I.2.7", "1998:I", "1998:H"]
    for row, (distance, _) in zip(rows, expected):
        assert row["distance"] == pytest.approx(distance, rel=1e-9)
    assert rows[0]["name"] == "Natural Language Processing" and rows[0]["level"] == 2
    assert [r["id"] for r in run(reader, "taxonomy_neighbours", class_id="1998:I.2", limit=1)] == ["1998:I.2.7"]


def test_category_acm_neighbours(reader: GraphStore) -> None:
    rows = run(reader, "category_acm_neighbours", code="cs.CL", limit=2)
    point = CATEGORY_POINTS["cs.CL"]
    assert [(r["id"], r["mapped"]) for r in rows] == [("1998:I.2.7", True), ("1998:I.2", False)]
    for row in rows:
        assert row["distance"] == pytest.approx(poincare_distance(point, ACM_POINTS[row["id"]]), rel=1e-9)


# Cited-reference stubs without a title: one with the label the loaders store, one with only its reference string.
STUB_LABELS = {
    "ref:goosf1947": "Goos F, 1947, Ann Phys-Berlin 1:333",
    "ref:smithj2001": "SMITH J, 2001, J CHEM PHYS, V5, P12",
}


@pytest.fixture(scope="module")
def stub_reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    path = tmp_path_factory.mktemp("cookbook_stubs") / "rich.db"
    stubs = pd.DataFrame(
        {
            "id": list(STUB_LABELS),
            "stub": [True, True],
            "year": [1947, 2001],
            "label": [STUB_LABELS["ref:goosf1947"], None],
            "reference": ["GOOS F, 1947, ANN PHYS-BERLIN, V1, P333", STUB_LABELS["ref:smithj2001"]],
            "n_cited": [1, 2],
            "cocite_cluster": [0, 0],
        }
    )
    cites = pd.DataFrame(
        {"source": ["p1", "p4", "p4"], "target": ["ref:smithj2001", "ref:smithj2001", "ref:goosf1947"]}
    )
    cocited = pd.DataFrame({"source": ["ref:goosf1947"], "target": ["ref:smithj2001"], "count": [1]})
    with open_store(StoreConfig(db_path=path, sizes=SIZES)) as store:
        fill(store)
        ingest(store, GraphBatch("stubs", nodes={"Paper": stubs}, rels={"CITES": cites, "CO_CITED": cocited}))
    with open_store(StoreConfig(db_path=path, sizes=SIZES, read_only=True)) as store:
        yield store


# recipe -> (parameters, the columns that carry a paper id and its label)
LABELLED = {
    "citation_neighbourhood": ({"paper_id": "p1", "limit": 20}, [("id", "label")]),
    "cluster_bridges": ({"cluster_a": 0, "cluster_b": 0, "limit": 20}, [("id", "label")]),
    "cocitation_cluster": ({"paper_id": "ref:goosf1947", "limit": 20}, [("id", "label")]),
    "cocitation_neighbourhood": ({"paper_id": "ref:goosf1947", "limit": 20}, [("id", "label")]),
    "most_cited_papers": ({"year_min": 1900, "year_max": 2010, "limit": 20}, [("id", "label")]),
    "ego_network": ({"paper_id": "p4", "limit": 20}, [("source", "source_label"), ("target", "target_label")]),
    "top_cocited_pairs": ({"min_count": 1, "limit": 20}, [("source", "source_label"), ("target", "target_label")]),
    "top_cocited_pairs_by_measure": (
        {"measure": "count", "min_count": 1, "limit": 20},
        [("source", "source_label"), ("target", "target_label")],
    ),
    "cocitation_neighbourhood_in_years": (
        {"paper_id": "p2", "year_min": 2003, "year_max": 2005, "min_count": 1, "limit": 20},
        [("id", "label")],
    ),
    "top_cocited_pairs_in_years": (
        {"year_min": 1990, "year_max": 2010, "min_count": 1, "limit": 20},
        [("source", "source_label"), ("target", "target_label")],
    ),
}


@pytest.mark.parametrize("name", sorted(LABELLED))
def test_recipes_label_stubs_readably(stub_reader: GraphStore, name: str) -> None:
    params, columns = LABELLED[name]
    rows = run(stub_reader, name, **params)
    shown = {(row[key], row[label]) for row in rows for key, label in columns}
    stubs = {(key, label) for key, label in shown if key in STUB_LABELS}
    assert stubs and stubs <= set(STUB_LABELS.items()), shown  # a stub reads as its label, never as its key
    assert all(label == TITLES[key] for key, label in shown if key in TITLES)


def test_citation_paths_label_stubs(stub_reader: GraphStore) -> None:
    rows = sorted(
        run(stub_reader, "citation_paths", from_id="p5", to_id="ref:smithj2001", limit=5), key=lambda row: row["hops"]
    )
    assert [(r["path"], r["labels"]) for r in rows] == [
        (["p5", "p4", "ref:smithj2001"], [TITLES["p5"], TITLES["p4"], STUB_LABELS["ref:smithj2001"]]),
        (
            ["p5", "p4", "p1", "ref:smithj2001"],
            [TITLES[p] for p in ("p5", "p4", "p1")] + [STUB_LABELS["ref:smithj2001"]],
        ),
    ]


def test_top_cocited_pairs_by_measure(reader: GraphStore) -> None:
    # stored: (p2, p3) count 2, association 0.5, cosine 1.0; (p1, p2) 1, 0.125, 0.5; (p1, p3) 1, 0.1, 0.5
    rows = run(reader, "top_cocited_pairs_by_measure", measure="association", min_count=1, limit=10)
    assert [(r["source"], r["target"], r["strength"]) for r in rows] == [
        ("p2", "p3", 0.5),
        ("p1", "p2", 0.125),
        ("p1", "p3", 0.1),
    ]
    by_cosine = run(reader, "top_cocited_pairs_by_measure", measure="cosine", min_count=1, limit=2)
    assert [(r["source"], r["target"]) for r in by_cosine] == [("p2", "p3"), ("p1", "p2")]  # ties: count, then ids
    assert rows[0]["source_label"] == TITLES["p2"]
    assert run(reader, "top_cocited_pairs_by_measure", measure="count", min_count=3, limit=10) == []


def test_cocitation_neighbourhood_in_years(reader: GraphStore) -> None:
    # p1 (2001) cites p2, p3; p4 (2004) cites p1, p2, p3
    rows = run(
        reader, "cocitation_neighbourhood_in_years", paper_id="p2", year_min=1990, year_max=2010, min_count=1, limit=10
    )
    assert [(r["id"], r["citing_papers"], r["all_years"]) for r in rows] == [("p3", 2, 2), ("p1", 1, 1)]
    late = run(
        reader, "cocitation_neighbourhood_in_years", paper_id="p2", year_min=2003, year_max=2010, min_count=1, limit=10
    )
    assert [(r["id"], r["citing_papers"], r["label"]) for r in late] == [
        ("p1", 1, TITLES["p1"]),
        ("p3", 1, TITLES["p3"]),
    ]
    assert (
        run(
            reader,
            "cocitation_neighbourhood_in_years",
            paper_id="p2",
            year_min=1990,
            year_max=2010,
            min_count=3,
            limit=10,
        )
        == []
    )


def test_author_and_source_search(reader: GraphStore) -> None:
    authors = run(reader, "authors_by_name", text="A", limit=10)
    assert [(r["id"], r["papers"], r["first_year"], r["last_year"]) for r in authors] == [
        ("a1", 2, 2001, 2004),
        ("a2", 1, 2001, 2001),
    ]
    assert run(reader, "authors_by_name", text="", limit=10) == []
    sources = run(reader, "sources_by_name", text="L", limit=10)  # every venue with an l: ties by name
    assert [(r["source"], r["papers"], r["citations"]) for r in sources] == [
        ('ACL, "main"', 1, 1),
        ("Comput. Linguist.\nvol 19", 1, 2),
        ("EMNLP", 1, 1),
    ]
    assert [r["source"] for r in run(reader, "sources_by_name", text="lingu", limit=10)] == [
        "Comput. Linguist.\nvol 19"
    ]
    papers = run(reader, "papers_in_source", venue="EMNLP", limit=10)
    assert [(r["id"], r["label"], r["year"]) for r in papers] == [("p4", TITLES["p4"], 2004)]
