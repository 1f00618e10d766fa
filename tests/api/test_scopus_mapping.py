"""Every science-mapping analysis on the Scopus sample (scopus_sample.csv), from the command line and GraphQL,
with the keyword and co-authorship counts checked against the CSV read without the loader."""

from __future__ import annotations

import csv
import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_graphql import ok

from api.cli.main import main
from api.services import GraphService
from graph import StoreConfig, open_store
from loaders.keywords import normalise_keyword

UNITS = ("references", "authors", "sources", "coauthors", "institutions", "countries", "keywords", "coupling")
MAP = """query($unit: MapUnit!) {
  mapNetwork(unit: $unit, minCount: 1, top: 5000) { unit truncated nodes { id weight } edges { source target count } }
}"""
OTHERS = """{
  clusters { id size label }
  clusterQuality { modularity }
  clusterTimeline { cluster }
  thematicMap(minCount: 1) { themes { label quadrant } }
}"""


def file_records(sample: Path) -> list[dict[str, str]]:
    with sample.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
@pytest.mark.shared_data
def test_every_analysis_on_the_scopus_sample(data_dir: Path, tmp_path: Path) -> None:
    sample = data_dir / "formats" / "scopus" / "scopus_sample.csv"
    db = str(tmp_path / "scopus.db")
    assert main(["--db", db, "ingest", "scopus", str(sample)]) == 0
    for step in (
        ["compute", "cocitation", "--device", "cpu"],
        ["compute", "mapping"],
        ["compute", "coupling"],
        ["compute", "thematic-map", "--keyword-min-count", "1"],
    ):
        assert main(["--db", db, *step]) == 0, step
    for unit in UNITS:
        out = tmp_path / f"{unit}.csv"
        assert main(["--db", db, "export", "network", str(out), "--unit", unit, "--min-count", "1"]) == 0, unit
    assert main(["--db", db, "export", "historiograph", str(tmp_path / "history.csv"), "--top", "5"]) == 0
    slices = ["export", "slices", str(tmp_path / "slices"), "--unit", "references", "--from", "2020", "--to", "2025"]
    assert main(["--db", db, *slices]) == 0
    assert main(["--db", db, "export", "thematic-map", str(tmp_path / "map.csv"), "--keyword-min-count", "1"]) == 0

    records = file_records(sample)
    keywords = [{t for t in (normalise_keyword(k) for k in r["Author Keywords"].split(";")) if t} for r in records]
    pairs = Counter(frozenset(p) for terms in keywords for p in itertools.combinations(sorted(terms), 2))
    # co-authorship: the Author(s) ID column names each record's authors by their Scopus ids
    with open_store(StoreConfig(db_path=Path(db), read_only=True)) as store:
        service = GraphService(store)
        maps: dict[str, Any] = {u: ok(service, MAP, {"unit": u.upper()})["mapNetwork"] for u in UNITS}
        others = ok(service, OTHERS)
    for unit in ("references", "authors", "sources", "coauthors", "institutions", "keywords"):
        assert maps[unit]["nodes"] and maps[unit]["edges"], unit
    # each record's addresses lie in one country (TR, CN, GH, SA): no two countries share a document
    assert maps["countries"] == {"unit": "COUNTRIES", "truncated": False, "nodes": [], "edges": []}
    got = {
        frozenset(k.removeprefix("author:") for k in (e["source"], e["target"])): e["count"]
        for e in maps["keywords"]["edges"]
    }
    assert got == dict(pairs)
    weights = {n["id"].removeprefix("author:"): n["weight"] for n in maps["keywords"]["nodes"]}
    assert weights == Counter(t for terms in keywords for t in terms)
    authors_per_record = [len([a for a in r["Author(s) ID"].split(";") if a.strip()]) for r in records]
    coauthored = sum(n * (n - 1) // 2 for n in authors_per_record)  # every record's author pairs, distinct here
    assert sum(e["count"] for e in maps["coauthors"]["edges"]) == coauthored
    assert others["clusters"] and others["clusterQuality"]["modularity"] is not None
    assert others["thematicMap"]["themes"]
