"""Keyword co-occurrence (the KEYWORDS unit) and the thematic map, on a six-document corpus worked by hand
and on the real WoS sample counted without the store."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from api.cli.main import main
from gnn.mapping import callon, compute_thematic_map, equivalence, quadrants, thematic_map
from gnn.mapping.networks import UNIT_BUILDERS, MapUnit, Measure, NetworkFilters, build_network
from graph import GraphStore, StoreConfig, ingest, open_store
from loaders import jsonl, wos
from loaders.keywords import normalise_keyword

# d6 has no year: in the network without a window, out of any window.
DOCS = {
    "d1": (2000, ["a", "b", "c"]),
    "d2": (2001, ["a", "b"]),
    "d3": (2002, ["a", "c"]),
    "d4": (2003, ["d", "e"]),
    "d5": (2004, ["d", "e", "a"]),
    "d6": (None, ["d", "e"]),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    folder = tmp_path_factory.mktemp("keywords")
    path = folder / "docs.jsonl"
    lines = [
        json.dumps({"type": "paper", "id": doc, "title": doc, "year": year, "keywords": terms})
        for doc, (year, terms) in DOCS.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open_store(StoreConfig(db_path=folder / "k.db")) as store:
        ingest(store, jsonl.load(path))
        yield store


def _edges(network) -> dict[tuple[str, str], tuple[int, float]]:  # type: ignore[no-untyped-def]
    return {tuple(sorted((e.source, e.target))): (e.count, e.strength) for e in network.edges}


def test_the_unit_is_registered() -> None:
    assert MapUnit.KEYWORDS in UNIT_BUILDERS


def test_counts_by_hand(corpus: GraphStore) -> None:
    net = build_network(corpus, MapUnit.KEYWORDS, NetworkFilters(min_count=1))
    assert {n.id: n.weight for n in net.nodes} == {
        "author:a": 4,
        "author:b": 2,
        "author:c": 2,
        "author:d": 3,
        "author:e": 3,
    }
    assert {k: c for k, (c, _) in _edges(net).items()} == {
        ("author:a", "author:b"): 2,
        ("author:a", "author:c"): 2,
        ("author:b", "author:c"): 1,
        ("author:d", "author:e"): 3,
        ("author:a", "author:d"): 1,
        ("author:a", "author:e"): 1,
    }
    assert [n.id for n in net.nodes][:1] == ["author:a"]  # heaviest first
    a = next(n for n in net.nodes if n.id == "author:a")
    assert a.avg_year == pytest.approx((2000 + 2001 + 2002 + 2004) / 4)
    assert not net.truncated
    two = build_network(corpus, MapUnit.KEYWORDS, NetworkFilters(min_count=2, top=2))
    assert [n.id for n in two.nodes] == ["author:a", "author:d"] and two.edges == [] and two.truncated


def test_year_window_and_measures(corpus: GraphStore) -> None:
    # 2001-2003: d2, d3, d4 -> a 2, b 1, c 1, d 1, e 1; N = 3
    net = build_network(
        corpus, MapUnit.KEYWORDS, NetworkFilters(year_min=2001, year_max=2003, min_count=1, measure=Measure.ASSOCIATION)
    )
    assert {n.id: n.weight for n in net.nodes}["author:a"] == 2
    edges = _edges(net)
    assert edges[("author:a", "author:b")] == (1, pytest.approx(3 * 1 / (2 * 1)))
    assert edges[("author:d", "author:e")] == (1, pytest.approx(3.0))
    cosine = build_network(corpus, MapUnit.KEYWORDS, NetworkFilters(min_count=1, measure=Measure.COSINE))
    assert _edges(cosine)[("author:a", "author:b")][1] == pytest.approx(2 / np.sqrt(4 * 2))
    seeded = build_network(corpus, MapUnit.KEYWORDS, NetworkFilters(min_count=2, seed="author:b"))
    assert sorted(n.id for n in seeded.nodes) == ["author:a", "author:b"]


def test_callon_centrality_and_density_by_hand() -> None:
    # keywords a b c d e with the counts of the corpus above; clusters {a, b, c} and {d, e}
    weights = np.array([4, 2, 2, 3, 3])
    pairs = {(0, 1): 2, (0, 2): 2, (1, 2): 1, (3, 4): 3, (0, 3): 1, (0, 4): 1}
    rows, cols, vals = zip(*[(i, j, c) for (i, j), c in pairs.items()] + [(j, i, c) for (i, j), c in pairs.items()])
    counts = sp.csr_matrix((vals, (rows, cols)), shape=(5, 5))
    e = equivalence(counts, weights).toarray()
    assert e[0, 1] == pytest.approx(4 / 8) and e[1, 2] == pytest.approx(1 / 4) and e[0, 3] == pytest.approx(1 / 12)
    centrality, density = callon(counts, weights, np.array([0, 0, 0, 1, 1]))
    # centrality: 10 * (e_ad + e_ae) for both; density: 100 * (0.5 + 0.5 + 0.25) / 3 and 100 * 1 / 2
    assert centrality == pytest.approx([10 * 2 / 12, 10 * 2 / 12])
    assert density == pytest.approx([125 / 3, 50.0])
    assert quadrants(centrality, density) == ["basic", "motor"]
    assert quadrants(np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 1.0, 2.0, 3.0])) == [
        "niche",
        "emerging/declining",
        "basic",
        "motor",
    ]


def test_thematic_map_of_the_corpus(corpus: GraphStore) -> None:
    themes = thematic_map(corpus, NetworkFilters(min_count=1))
    assert [(t.label, t.keywords) for t in themes.themes] == [("a", ("a", "b", "c")), ("d", ("d", "e"))]
    assert [t.documents for t in themes.themes] == [4, 3]  # d5 carries a and d: in both
    assert themes.themes[0].density == pytest.approx(125 / 3)
    assert themes.themes[1].centrality == pytest.approx(10 * 2 / 12)
    assert [t.quadrant for t in themes.themes] == ["basic", "motor"]


def test_compute_writes_clusters_and_exports(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"type": "paper", "id": d, "title": d, "year": y, "keywords": t}) for d, (y, t) in DOCS.items()
        )
        + "\n",
        encoding="utf-8",
    )
    db = str(tmp_path / "k.db")
    assert main(["--db", db, "ingest", "jsonl", str(path)]) == 0
    assert main(["--db", db, "compute", "thematic-map", "--keyword-min-count", "1"]) == 0
    assert main(["--db", db, "export", "thematic-map", str(tmp_path / "map.csv"), "--keyword-min-count", "1"]) == 0
    assert main(["--db", db, "export", "thematic-map", str(tmp_path / "map.json"), "--keyword-min-count", "1"]) == 0
    rows = (tmp_path / "map.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("cluster,label,quadrant,centrality,density,documents")
    assert rows[1].startswith("0,a,basic,1.666667,41.666667,4,")
    document = json.loads((tmp_path / "map.json").read_text(encoding="utf-8"))
    assert [t["label"] for t in document["themes"]] == ["a", "d"]
    with open_store(StoreConfig(db_path=Path(db))) as store:
        net = build_network(store, MapUnit.KEYWORDS, NetworkFilters(min_count=1, cluster=1))
        assert sorted(n.id for n in net.nodes) == ["author:d", "author:e"]
        assert {n.cluster_label for n in net.nodes} == {"d"}
        _, written = compute_thematic_map(store, NetworkFilters(min_count=1))
        assert written == 5


@pytest.mark.shared_data
def test_wos_sample_cooccurrence_against_the_file(data_dir: Path, tmp_path: Path) -> None:
    """Every pair of author keywords of wos_sample.txt, counted from the file's DE fields."""
    sample = data_dir / "formats" / "wos" / "wos_sample.txt"
    records: list[set[str]] = []
    tag, value = "", []
    for line in [*sample.read_text(encoding="utf-8-sig").splitlines(), "ER"]:
        if line[:2].strip() and not line.startswith("   "):
            if tag == "DE":
                records[-1] = {t for t in (normalise_keyword(p) for p in " ".join(value).split(";")) if t}
            tag, value = line[:2], [line[3:]]
            if tag == "PT":
                records.append(set())
        elif line.startswith("   "):
            value.append(line.strip())
    pairs = Counter(tuple(sorted(p)) for terms in records for p in itertools.combinations(terms, 2))
    with open_store(StoreConfig(db_path=tmp_path / "w.db")) as store:
        ingest(store, wos.load(sample))
        net = build_network(store, MapUnit.KEYWORDS, NetworkFilters(min_count=1, top=5000))
    got = {tuple(k.removeprefix("author:") for k in key): c for key, (c, _) in _edges(net).items()}
    assert got == dict(pairs)
    assert {n.id.removeprefix("author:"): n.weight for n in net.nodes} == Counter(t for r in records for t in r)


def test_the_cypher_recipe_counts_as_the_network(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[3] / "cypher" / "explore" / "keyword_cooccurrence.cypher").read_text(
        encoding="utf-8"
    )
    path = tmp_path / "docs.jsonl"
    lines = [json.dumps({"type": "paper", "id": d, "title": d, "year": y, "keywords": t}) for d, (y, t) in DOCS.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open_store(StoreConfig(db_path=tmp_path / "k.db")) as store:
        ingest(store, jsonl.load(path))
        net = build_network(store, MapUnit.KEYWORDS, NetworkFilters(year_min=2000, year_max=2004, min_count=1))
    params = {"kind": "author", "year_min": 2000, "year_max": 2004, "min_count": 1, "limit": 50}
    with open_store(StoreConfig(db_path=tmp_path / "k.db", read_only=True)) as reader:
        columns, rows = reader.read_only_query(text, params)
    got = {(r[columns.index("keyword_a")], r[columns.index("keyword_b")]): r[2:5] for r in rows}
    weight = {n.id.removeprefix("author:"): n.weight for n in net.nodes}
    expected = {(e.source.removeprefix("author:"), e.target.removeprefix("author:")): [e.count] for e in net.edges}
    assert {tuple(sorted(k)): v[:1] for k, v in got.items()} == {tuple(sorted(k)): v for k, v in expected.items()}
    assert all(v[1] == weight[a] and v[2] == weight[b] for (a, b), v in got.items())
    assert got[("d", "e")][0] == 2  # d6 has no year: outside the range


@pytest.mark.parametrize("min_freq", [1, 2, 3, 4, 5])
def test_min_freq_keeps_the_keywords_of_enough_documents(corpus: GraphStore, tmp_path: Path, min_freq: int) -> None:
    """bibliometrix's minfreq, counted from DOCS without the store: keywords of at least min_freq documents,
    linked as often as they share a document."""
    frequency = Counter(term for _, terms in DOCS.values() for term in terms)
    kept = {f"author:{t}" for t, n in frequency.items() if n >= min_freq}
    shared = Counter(
        (f"author:{a}", f"author:{b}")
        for _, terms in DOCS.values()
        for a, b in itertools.combinations(sorted(terms), 2)
        if frequency[a] >= min_freq and frequency[b] >= min_freq
    )
    net = build_network(corpus, MapUnit.KEYWORDS, NetworkFilters(min_count=1, min_freq=min_freq))
    assert {n.id for n in net.nodes} == kept  # a keyword map shows its keywords, linked or not
    assert {k: c for k, (c, _) in _edges(net).items()} == dict(shared)
    assert not net.truncated
    themes = thematic_map(corpus, NetworkFilters(min_count=1, min_freq=min_freq))
    assert {k for t in themes.themes for k in t.keyword_ids} <= kept


def test_min_freq_from_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"type": "paper", "id": d, "title": d, "year": y, "keywords": t}) for d, (y, t) in DOCS.items()
        )
        + "\n",
        encoding="utf-8",
    )
    db = str(tmp_path / "k.db")
    assert main(["--db", db, "ingest", "jsonl", str(path)]) == 0
    out = tmp_path / "net.csv"
    args = ["--db", db, "export", "network", str(out), "--unit", "keywords", "--min-count", "1", "--min-freq", "3"]
    assert main(args) == 0
    written = " ".join(p.read_text(encoding="utf-8") for p in sorted(tmp_path.glob("net*.csv")))
    assert "author:d" in written and "author:a" in written and "author:b" not in written
    assert (
        main(
            [
                "--db",
                db,
                "export",
                "thematic-map",
                str(tmp_path / "m.csv"),
                "--keyword-min-count",
                "1",
                "--keyword-min-freq",
                "3",
            ]
        )
        == 0
    )
    assert ",b," not in (tmp_path / "m.csv").read_text(encoding="utf-8")
