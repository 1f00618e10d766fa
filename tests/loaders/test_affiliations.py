"""Institutions and countries from authors' addresses (loaders/affiliations.py), stored by the WoS and Scopus
loaders and mapped by co-authorship (gnn/mapping/coauthorship.py); the samples' maps are checked against
counts made in the test straight from the export text."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

import gnn.mapping  # noqa: F401  (registers the builders)
from gnn.mapping.networks import MAX_NODES, MapUnit, NetworkFilters, build_network
from graph import StoreConfig, ingest, open_store
from loaders import wos
from loaders.affiliations import (
    Affiliation,
    affiliation_tables,
    country_code,
    institution_id,
    scopus_affiliations,
    split_wos_addresses,
    wos_addresses,
)

# The last parts of the samples' addresses, named by hand (ISO 3166-1 alpha-2; YU: ISO 3166-3).
SAMPLE_COUNTRIES = {
    "BOSNIA & HERCEG": "BA",
    "CO 80309": "US",
    "FRANCE": "FR",
    "ISRAEL": "IL",
    "JAPAN": "JP",
    "NORWAY": "NO",
    "NY 14627": "US",
    "PEOPLES R CHINA": "CN",
    "TN 37830": "US",
    "YUGOSLAVIA": "YU",
    "BRAZIL": "BR",
    "ENGLAND": "GB",
    "GERMANY": "DE",
    "INDIA": "IN",
    "ITALY": "IT",
    "MALAYSIA": "MY",
    "SPAIN": "ES",
    "TURKEY": "TR",
}


def test_country_names_become_iso_codes() -> None:
    assert country_code("Peoples R China") == "CN"
    assert country_code("England") == country_code("Scotland") == country_code("UK") == "GB"
    assert country_code("NY 14627 USA") == country_code("TN 37830") == country_code("USA") == "US"
    assert country_code("U Arab Emirates") == "AE"
    assert country_code("Türkiye") == "TR"  # accents dropped
    assert country_code("Karlsruhe") is None  # a city closing a Scopus address: no country
    assert country_code("") is None


def test_wos_addresses_take_the_institution_and_the_country() -> None:
    cell = (
        "[Aria, Massimo; Cuccurullo, C] Univ Napoli Federico II, Dept Econ & Stat, I-80126 Naples, Italy.; "
        "[Zhao, Ziqi] Zhejiang Chinese Med Univ, Sch Basic Med, Hangzhou 310053, Zhejiang, Peoples R China."
    )
    addresses = split_wos_addresses(cell)
    assert len(addresses) == 2  # the "; " inside the bracket of authors does not split
    assert wos_addresses(addresses) == [
        Affiliation("Univ Napoli Federico II", "IT"),
        Affiliation("Zhejiang Chinese Med Univ", "CN"),
    ]
    assert wos_addresses(["UNIV ROCHESTER,DEPT PHYS & ASTRON,ROCHESTER,NY 14627."]) == [
        Affiliation("UNIV ROCHESTER", "US")
    ]


def test_scopus_affiliations_pick_the_part_naming_the_institution() -> None:
    found = scopus_affiliations(
        "Department of Clinical Medicine, Hunan Normal University Health Science Center, Hunan, Changsha, China; "
        "Sophia University, Tokyo, Japan"
    )
    assert found == [
        Affiliation("Hunan Normal University Health Science Center", "CN"),
        Affiliation("Sophia University", "JP"),
    ]


def test_affiliation_tables_key_institutions_and_count_each_once_per_paper() -> None:
    bologna = Affiliation("Univ Bologna", "IT")
    nodes, rels = affiliation_tables(
        {
            "p1": ([bologna, Affiliation("UNIV BOLOGNA", "IT"), Affiliation(None, "FR")], "f:1"),
            "p2": ([Affiliation("Uni X", None, institution_id="openalex:I1")], "f:9"),
        }
    )
    assert institution_id(bologna) == "inst:univbologna|IT"
    assert nodes["Institution"]["id"].tolist() == ["inst:univbologna|IT", "openalex:I1"]
    assert rels["AFFILIATION"][["source", "target"]].values.tolist() == [
        ["p1", "inst:univbologna|IT"],
        ["p2", "openalex:I1"],
    ]
    assert rels["IN_COUNTRY"][["source", "target"]].values.tolist() == [["p1", "IT"], ["p1", "FR"]]
    assert nodes["Country"].set_index("code")["name"].to_dict() == {"IT": "Italy", "FR": "France"}


def _records(export: Path) -> list[list[str]]:
    """The C1 addresses of each record, read straight from a WoS plain-text export."""
    records: list[list[str]] = []
    tag = None
    for line in export.read_text(encoding="utf-8-sig").splitlines():
        head = line[:2].strip()
        if head:
            tag = head
        if head == "PT":
            records.append([])
        elif tag == "C1" and line[3:].strip():
            records[-1].append(line[3:].strip())
    return records


def _count(units: list[set[str]]) -> tuple[Counter, Counter]:
    pairs: Counter = Counter()
    weight: Counter = Counter()
    for found in units:
        weight.update(found)
        pairs.update(frozenset(p) for p in itertools.combinations(sorted(found), 2))
    return pairs, weight


@pytest.mark.slow  # loads two exports (several seconds each on a shared machine)
@pytest.mark.parametrize("name", ["savedrecs.txt", "wos_sample.txt"])
def test_wos_sample_institution_and_country_maps_equal_counts_from_the_text(
    data_dir: Path, tmp_path: Path, name: str
) -> None:
    export = data_dir / "formats" / "wos" / name
    institutions, countries = [], []
    for addresses in _records(export):
        parts = [re.sub(r"^\[[^\]]*\]\s*", "", a).rstrip(".").split(",") for a in addresses]
        country = [SAMPLE_COUNTRIES[p[-1].strip().upper()] for p in parts]
        countries.append(set(country))
        names = [re.sub(r"[^a-z0-9]", "", p[0].lower()) for p in parts]
        institutions.append({f"inst:{n}|{c}" for n, c in zip(names, country)})
    with open_store(StoreConfig(db_path=tmp_path / "wos.db")) as store:
        ingest(store, wos.load(export))
        for unit, units in ((MapUnit.INSTITUTIONS, institutions), (MapUnit.COUNTRIES, countries)):
            network = build_network(store, unit, NetworkFilters(min_count=1, top=MAX_NODES))
            pairs, weight = _count(units)
            assert {frozenset((e.source, e.target)): e.count for e in network.edges} == dict(pairs), unit
            assert {n.id: n.weight for n in network.nodes} == {n.id: weight[n.id] for n in network.nodes}
            assert len(network.nodes) == len({u for found in units if len(found) > 1 for u in found})
    if name == "wos_sample.txt":  # Aria (Naples) and Cuccurullo (Capua) wrote one record: Italy alone, two institutions
        assert max(len(found) for found in institutions) >= 2


@pytest.mark.slow  # loads an export of 49 works
def test_openalex_sample_institution_and_country_maps_equal_counts_from_the_json(
    data_dir: Path, tmp_path: Path
) -> None:
    import json

    from loaders import openalex

    export = data_dir / "formats" / "openalex" / "json_chunk_1_results_page_1.json"
    institutions, countries = [], []
    for work in json.loads(export.read_text(encoding="utf-8"))["results"]:
        ids, codes = set(), set()
        for authorship in work.get("authorships") or []:
            for institution in authorship.get("institutions") or []:
                ids.add("openalex:" + institution["id"].rsplit("/", 1)[-1])
                if institution.get("country_code"):
                    codes.add(institution["country_code"].upper())
            codes.update(c.upper() for c in authorship.get("countries") or [])
        institutions.append(ids)
        countries.append(codes)
    with open_store(StoreConfig(db_path=tmp_path / "openalex.db")) as store:
        ingest(store, openalex.load(export))
        for unit, units in ((MapUnit.INSTITUTIONS, institutions), (MapUnit.COUNTRIES, countries)):
            network = build_network(store, unit, NetworkFilters(min_count=1, top=MAX_NODES))
            pairs, weight = _count(units)
            assert len(pairs) > 10, unit  # the sample has international, multi-institution works
            assert {frozenset((e.source, e.target)): e.count for e in network.edges} == dict(pairs), unit
            assert {n.id: n.weight for n in network.nodes} == {n.id: weight[n.id] for n in network.nodes}
