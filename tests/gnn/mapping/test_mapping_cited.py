"""Author and source co-citation maps (gnn/mapping/cited.py): a fixture counted by hand, a brute-force count
of every pair, and the Web of Science sample counted independently from the store's tables.

The fixture: cited works w1 (a record by Henry Small and Belver Griffith, in Scientometrics), w2 (a stub
"Garfield E, 1955, Science 122:108"), w3 (a stub "Small H, 1973, J Am Soc Inf Sci 24:265", venue
"J. Am. Soc. Inf. Sci."), w4 and w5 (stubs without an author, in "Science"); citing documents d1 (2001) -> w1,
w2, w3; d2 (2003) -> w2, w3; d3 (2005) -> w1, w4, w5.

First authors: d1 {Small H, Garfield E} (two works by Small count once), d2 {Garfield E, Small H}, d3
{Small H}; every author (w1 adds Griffith B): d1 {Small, Griffith, Garfield}, d3 {Small, Griffith}.
Sources: d1 {scientometrics, science, j am soc inf sci}, d2 {science, j am soc inf sci}, d3 {scientometrics,
science}.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import gnn.mapping  # noqa: F401  (registers the builders)
from gnn.mapping.cited import abbreviation_joins, author_id, source_id, stub_first_author
from gnn.mapping.networks import MAX_NODES, MapNetwork, MapUnit, Measure, NetworkFilters, build_network
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError
from graph.labels import author_label


def fixture_batch() -> GraphBatch:
    papers = pd.DataFrame(
        {
            "id": ["w1", "w2", "w3", "w4", "w5", "d1", "d2", "d3"],
            "year": [1973, 1955, 1973, 1999, 1990, 2001, 2003, 2005],
            "title": ["Co-citation in the scientific literature", None, None, None, None, "D1", "D2", "D3"],
            "label": [
                None,
                "Garfield E, 1955, Science 122:108",
                "Small H, 1973, J Am Soc Inf Sci 24:265",
                "1999, Science",
                "1990, Science",
                None,
                None,
                None,
            ],
            "venue": ["Scientometrics", "SCIENCE", "J. Am. Soc. Inf. Sci.", "Science", "Science", None, None, None],
            "stub": [False, True, True, True, True, False, False, False],
        }
    )
    authors = pd.DataFrame({"id": ["au:small", "au:griffith"], "name": ["Henry Small", "Belver Griffith"]})
    wrote = pd.DataFrame({"source": ["au:small", "au:griffith"], "target": ["w1", "w1"], "position": [1, 2]})
    cites = pd.DataFrame(
        [
            ("d1", "w1"),
            ("d1", "w2"),
            ("d1", "w3"),
            ("d2", "w2"),
            ("d2", "w3"),
            ("d3", "w1"),
            ("d3", "w4"),
            ("d3", "w5"),
        ],
        columns=["source", "target"],
    )
    return GraphBatch("cited-units", nodes={"Paper": papers, "Author": authors}, rels={"WROTE": wrote, "CITES": cites})


@pytest.fixture(scope="module")
def cited_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    with open_store(StoreConfig(db_path=tmp_path_factory.mktemp("cited") / "cited.db")) as store:
        ingest(store, fixture_batch())
        yield store


def links(network: MapNetwork) -> dict[frozenset[str], int]:
    return {frozenset((e.source, e.target)): e.count for e in network.edges}


def weights(network: MapNetwork) -> dict[str, int]:
    return {n.id: n.weight for n in network.nodes}


EVERY = NetworkFilters(min_count=1, top=MAX_NODES)


def test_author_cocitation_counts_documents_by_hand(cited_store: GraphStore) -> None:
    first = build_network(cited_store, MapUnit.AUTHORS, EVERY)
    assert links(first) == {frozenset({"SMALL H", "GARFIELD E"}): 2}
    assert weights(first) == {"SMALL H": 3, "GARFIELD E": 2}
    assert [n.label for n in first.nodes] == ["Small H", "Garfield E"]
    assert first.nodes[0].avg_year == pytest.approx((2001 + 2003 + 2005) / 3)
    every = build_network(cited_store, MapUnit.AUTHORS, NetworkFilters(min_count=1, all_authors=True))
    assert links(every) == {
        frozenset({"SMALL H", "GARFIELD E"}): 2,
        frozenset({"SMALL H", "GRIFFITH B"}): 2,
        frozenset({"GARFIELD E", "GRIFFITH B"}): 1,
    }
    late = build_network(cited_store, MapUnit.AUTHORS, NetworkFilters(min_count=1, year_min=2002))
    assert links(late) == {frozenset({"SMALL H", "GARFIELD E"}): 1}  # d2 only; d3 names Small alone
    assert weights(late) == {"SMALL H": 2, "GARFIELD E": 1}


def test_source_cocitation_joins_spellings_of_one_source(cited_store: GraphStore) -> None:
    network = build_network(cited_store, MapUnit.SOURCES, EVERY)
    assert links(network) == {
        frozenset({"science", "j am soc inf sci"}): 2,
        frozenset({"science", "scientometrics"}): 2,
        frozenset({"j am soc inf sci", "scientometrics"}): 1,
    }
    assert weights(network) == {"science": 3, "j am soc inf sci": 2, "scientometrics": 2}
    assert network.nodes[0].label == "Science"  # the spelling of most cited works (w4, w5) over w2's
    # association N c / (s_i s_j) with N = 3 documents: science-scientometrics 3 * 2 / (3 * 2) = 1
    strong = build_network(cited_store, MapUnit.SOURCES, NetworkFilters(min_count=2, measure=Measure.ASSOCIATION))
    assert {frozenset((e.source, e.target)): e.strength for e in strong.edges} == {
        frozenset({"science", "j am soc inf sci"}): pytest.approx(1.0),
        frozenset({"science", "scientometrics"}): pytest.approx(1.0),
    }


def test_filters_of_author_maps(cited_store: GraphStore) -> None:
    top = build_network(cited_store, MapUnit.SOURCES, NetworkFilters(min_count=1, top=2))
    assert [n.id for n in top.nodes] == ["science", "j am soc inf sci"] and top.truncated
    seeded = build_network(cited_store, MapUnit.SOURCES, NetworkFilters(min_count=2, seed="scientometrics"))
    assert [n.id for n in seeded.nodes] == ["scientometrics", "science"]
    with pytest.raises(ConfigError, match="no clusters"):
        build_network(cited_store, MapUnit.AUTHORS, NetworkFilters(cluster=0))
    with pytest.raises(ConfigError, match="'NOBODY X'"):
        build_network(cited_store, MapUnit.AUTHORS, NetworkFilters(seed="NOBODY X"))


def test_stub_first_author_reads_the_head_of_a_label() -> None:
    assert stub_first_author("Goos F, 1947, Ann Phys-Berlin 1:333") == "Goos F"
    assert stub_first_author("1999, Science") is None  # no author: the label starts with the year
    assert stub_first_author("R Core Team, R: A Language") is None  # no year after the head
    assert stub_first_author(None) is None


def brute_force(store: GraphStore, unit: MapUnit, *, all_authors: bool = False) -> tuple[Counter, Counter]:
    """Pair counts and weights from the store's tables, one citing document at a time (no matrices)."""
    papers = pd.concat(list(store.iter_nodes("Paper", 10_000))).set_index("id")
    units: dict[str, set[str]] = {}
    if unit is MapUnit.AUTHORS:
        names = pd.concat(list(store.iter_nodes("Author", 10_000))).set_index("id")["name"]
        wrote = store.read_edges("WROTE").sort_values(["target", "position"], na_position="last")
        for work, rows in wrote.groupby("target"):
            labels = [author_label(names[a]) for a in rows["source"]]
            labels = [x for x in labels if x]
            units[work] = {author_id(x) for x in (labels if all_authors else labels[:1])}
        for work, label in papers["label"].items():
            if work not in units and stub_first_author(label):
                units[work] = {author_id(stub_first_author(label))}
    else:  # a record's abbreviation (venue_abbrev) names its full title wherever a work gives it
        full: dict[str, set[str]] = {}
        if "venue_abbrev" in papers.columns:
            for venue, abbrev in zip(papers["venue"], papers["venue_abbrev"]):
                if isinstance(venue, str) and isinstance(abbrev, str) and source_id(abbrev) != source_id(venue):
                    full.setdefault(str(source_id(abbrev)), set()).add(str(source_id(venue)))
        for work, venue in papers["venue"].items():
            key = source_id(venue)
            if key:
                titles = full.get(key, set())
                units[work] = {next(iter(titles))} if len(titles) == 1 else {key}
    cited: dict[str, set[str]] = {}
    for citing, work in zip(*store.read_edges("CITES")[["source", "target"]].to_numpy().T):
        cited.setdefault(citing, set()).update(units.get(work, set()))
    pairs: Counter = Counter()
    weight: Counter = Counter()
    for found in cited.values():
        weight.update(found)
        pairs.update(frozenset(p) for p in itertools.combinations(sorted(found), 2))
    return pairs, weight


def test_fixture_equals_a_brute_force_count(cited_store: GraphStore) -> None:
    for unit, every in ((MapUnit.AUTHORS, False), (MapUnit.AUTHORS, True), (MapUnit.SOURCES, False)):
        network = build_network(cited_store, unit, NetworkFilters(min_count=1, top=MAX_NODES, all_authors=every))
        pairs, weight = brute_force(cited_store, unit, all_authors=every)
        assert links(network) == dict(pairs)
        assert weights(network) == {n: weight[n] for n in weights(network)}


@pytest.mark.slow
def test_wos_sample_equals_an_independent_count(data_dir: Path, tmp_path: Path) -> None:
    from loaders import wos

    export = data_dir / "formats" / "wos" / "savedrecs.txt"
    with open_store(StoreConfig(db_path=tmp_path / "wos.db")) as store:
        ingest(store, wos.load(export))
        for unit, every in ((MapUnit.AUTHORS, False), (MapUnit.AUTHORS, True), (MapUnit.SOURCES, False)):
            network = build_network(store, unit, NetworkFilters(min_count=1, top=MAX_NODES, all_authors=every))
            pairs, weight = brute_force(store, unit, all_authors=every)
            assert not network.truncated and len(network.edges) > 1_000  # 32 records citing 958 references
            assert links(network) == dict(pairs), unit
            assert weights(network) == {n: weight[n] for n in weights(network)}
        top = build_network(store, MapUnit.AUTHORS, NetworkFilters(min_count=1, top=3))
        assert [n.id for n in top.nodes] == ["COSTADEB O", "IMBERT C", "LEVY Y"]  # 21, 21 and 19 citing records


def test_export_network_writes_a_unit_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from api.cli.main import main

    db = tmp_path / "cited.db"
    with open_store(StoreConfig(db_path=db)) as store:
        ingest(store, fixture_batch())
    out = tmp_path / "sources.csv"
    args = ["--db", str(db), "export", "network", str(out), "--unit", "sources", "--measure", "association"]
    assert main([*args, "--min-count", "2", "--year-max", "2010"]) == 0
    assert "2 edges between 3" in capsys.readouterr().out
    edges = pd.read_csv(out)
    assert {frozenset(p) for p in zip(edges["source"], edges["target"])} == {
        frozenset({"science", "j am soc inf sci"}),
        frozenset({"science", "scientometrics"}),
    }
    assert edges["count"].tolist() == [2, 2] and edges["association"].tolist() == pytest.approx([1.0, 1.0])
    nodes = pd.read_csv(tmp_path / "sources_nodes.csv")
    assert dict(zip(nodes["id"], nodes["n_cited"])) == {"science": 3, "j am soc inf sci": 2, "scientometrics": 2}
    vos = tmp_path / "authors.txt"
    assert main(["--db", str(db), "export", "network", str(vos), "--unit", "authors", "--format", "vosviewer"]) == 0
    assert (tmp_path / "authors_network.txt").read_text().split() == [
        "1",
        "2",
        "1",
    ]  # N c/(s s) = 3·2/(2·3); ids sorted

    assert main(["--db", str(db), "export", "network", str(out), "--measure", "sentence_count"]) != 0


def test_source_abbreviations_join_the_records_full_titles(tmp_path: Path) -> None:
    """r1 is a record in "PHYSICAL REVIEW D" whose J9 is "PHYS REV D"; s1, a cited reference, names that
    journal "PHYS REV D"; s2 is in Science. d1 cites r1 and s2, d2 cites s1 and s2: one journal, two documents."""
    papers = pd.DataFrame(
        {
            "id": ["r1", "s1", "s2", "d1", "d2", "x1", "x2"],
            "year": [1990, 1991, 1992, 2001, 2002, 1990, 1990],
            "venue": ["PHYSICAL REVIEW D", "PHYS REV D", "Science", None, None, "J Ambig One", "J Ambig Two"],
            # x1 and x2 give one abbreviation to two titles: ambiguous, joined to neither
            "venue_abbrev": ["PHYS REV D", None, None, None, None, "J AMBIG", "J AMBIG"],
            "stub": [False, True, True, False, False, False, False],
        }
    )
    cites = pd.DataFrame([("d1", "r1"), ("d1", "s2"), ("d2", "s1"), ("d2", "s2")], columns=["source", "target"])
    with open_store(StoreConfig(db_path=tmp_path / "abbrev.db")) as store:
        ingest(store, GraphBatch("abbreviations", nodes={"Paper": papers}, rels={"CITES": cites}))
        network = build_network(store, MapUnit.SOURCES, EVERY)
        assert weights(network) == {"physical review d": 2, "science": 2}
        assert links(network) == {frozenset({"physical review d", "science"}): 2}
        assert network.nodes[0].label == "PHYSICAL REVIEW D"
        pairs, weight = brute_force(store, MapUnit.SOURCES)
        assert links(network) == dict(pairs) and weights(network) == dict(weight)
        assert abbreviation_joins(store.query_arrow("work_sources").to_pandas()) == {
            "phys rev d": ("physical review d", "PHYSICAL REVIEW D")
        }
