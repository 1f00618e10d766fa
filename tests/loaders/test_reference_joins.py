"""Works cited by reference strings, joined across loads: the same work meets itself, different works sharing a
source, volume and first page stay apart (graph.aliases checks year and first author), whatever the source."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from graph import GraphStore, StoreConfig, ingest, open_store
from loaders import crossref, scopus, wos


def _export(path: Path, ut: str, *references: str) -> Path:
    lines = "\n   ".join(references)
    path.write_text(
        f"FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU Lee, A\nTI Citing {ut}\nPY 2010\n"
        f"CR {lines}\nUT WOS:{ut}\nER\nEF\n",
        encoding="utf-8",
    )
    return path


def _stubs(store: GraphStore) -> dict[str, str]:
    papers = pd.concat(store.iter_nodes("Paper", 1_000), ignore_index=True)
    stubs = papers[papers["stub"].eq(True)]
    return dict(zip(stubs["id"], stubs["label"]))


def test_two_works_on_one_page_of_a_volume_in_different_years_stay_apart(
    tmp_path: Path, empty_store: GraphStore
) -> None:
    """GOOS F 1947 and ARTMANN K 1960 share ANN PHYS-BERLIN V1 P333 (the field key ref:apb-v1-p333): two works."""
    ingest(
        empty_store, wos.load(_export(tmp_path / "a.txt", "000000000000001", "GOOS F, 1947, ANN PHYS-BERLIN, V1, P333"))
    )
    ingest(
        empty_store,
        wos.load(_export(tmp_path / "b.txt", "000000000000002", "ARTMANN K, 1960, ANN PHYS-BERLIN, V1, P333")),
    )
    assert sorted(_stubs(empty_store).values()) == [
        "Artmann K, 1960, Ann Phys-Berlin 1:333",
        "Goos F, 1947, Ann Phys-Berlin 1:333",
    ]
    cites = empty_store.read_edges("CITES")
    assert len(set(cites["target"])) == 2


def test_one_work_with_its_year_misprinted_by_one_joins(tmp_path: Path, empty_store: GraphStore) -> None:
    ingest(
        empty_store, wos.load(_export(tmp_path / "a.txt", "000000000000001", "GOOS F, 1947, ANN PHYS-BERLIN, V1, P333"))
    )
    ingest(
        empty_store, wos.load(_export(tmp_path / "b.txt", "000000000000002", "GOOS F, 1948, ANN PHYS-BERLIN, V1, P333"))
    )
    assert len(_stubs(empty_store)) == 1  # one work (the later stub row's values fill it in)
    cites = empty_store.read_edges("CITES")
    assert len(cites) == 2 and cites["target"].nunique() == 1


def test_a_crossref_reference_meets_the_web_of_science_stub(tmp_path: Path, empty_store: GraphStore) -> None:
    """One work cited by a Web of Science export and by a Crossref work without a DOI: one node, through the
    field key that both loads give it."""
    ingest(
        empty_store,
        wos.load(_export(tmp_path / "a.txt", "000000000000001", "HAMANAKA M, 2003, PHYS LETT A, V316, P77")),
    )
    work = {
        "DOI": "10.1000/citing",
        "title": ["A citing work"],
        "reference": [
            {
                "key": "r1",
                "author": "Hamanaka",
                "year": "2003",
                "journal-title": "Phys. Lett. A",
                "volume": "316",
                "first-page": "77",
            }
        ],
    }
    path = tmp_path / "works.json"
    path.write_text(json.dumps(work), encoding="utf-8")
    ingest(empty_store, crossref.load(path))
    stubs = _stubs(empty_store)
    assert len(stubs) == 1, stubs
    cites = empty_store.read_edges("CITES")
    assert cites["target"].nunique() == 1 and len(cites) == 2


ARIA_DOI = "doi:10.1016/j.joi.2017.08.007"  # Aria & Cuccurullo 2017, bibliometrix: a record of the WoS sample


def _wos_record(formats: Path, doi: str) -> str:
    """The one record of the WoS sample with DOI ``doi``, as the export writes it (PT ... ER)."""
    text = (formats / "wos" / "wos_sample.txt").read_text(encoding="utf-8-sig")
    records = re.findall(r"^PT .*?^ER$", text, flags=re.DOTALL | re.MULTILINE)
    return next(record for record in records if f"\nDI {doi.removeprefix('doi:')}\n" in record) + "\n"


def _scopus_citers(formats: Path, tmp_path: Path, phrase: str) -> Path:
    """The rows of the Scopus sample with a reference containing ``phrase``, as a Scopus CSV of their own."""
    source = formats / "scopus" / "scopus_sample.csv"
    with source.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = [row for row in reader if phrase in row["References"]]
        columns = reader.fieldnames
    assert rows and columns
    path = tmp_path / "scopus_citers.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerow(rows[0])
    return path


def _graph(store: GraphStore) -> dict[str, set[tuple[str, ...]]]:
    """Every node key per label and every edge (source, target) per type: the shape of the graph."""
    shape: dict[str, set[tuple[str, ...]]] = {}
    for label, node in store.schema.nodes.items():
        shape[label] = {
            (row["key"],) for row in store.query("every_key", identifiers={"LABEL": label, "KEY": node.key})
        }
    for rel_type in store.schema.rels:
        edges = store.read_edges(rel_type)
        shape[rel_type] = set(zip(edges["source"], edges["target"]))
    return shape


def _aria(store: GraphStore) -> tuple[dict[str, object], int, set[str]]:
    """The Aria 2017 node's properties, how many papers cite it, and its aliases."""
    row = store.query("paper_by_ids", {"ids": [ARIA_DOI]})[0]
    cites = store.read_edges("CITES")
    aliases = store.read_edges("ALIAS_OF")
    return row, int((cites["target"] == ARIA_DOI).sum()), set(aliases.loc[aliases["target"] == ARIA_DOI, "source"])


@pytest.mark.shared_data
def test_a_record_loaded_after_its_stub_keeps_its_own_key(tmp_path: Path, data_dir: Path, store_path: Path) -> None:
    """A Scopus record cites Aria & Cuccurullo 2017 without a DOI (a ref: stub); the WoS record of that work
    (doi:10.1016/j.joi.2017.08.007) comes before or after it: the same graph either way, the work under its DOI
    with the stub's keys as aliases and its one citation."""
    formats = data_dir / "formats"
    record = tmp_path / "aria.txt"
    record.write_text(
        "FN Clarivate Analytics Web of Science\nVR 1.0\n" + _wos_record(formats, ARIA_DOI) + "EF\n", encoding="utf-8"
    )
    citer = _scopus_citers(formats, tmp_path, "Bibliometrix: an R-tool for comprehensive science mapping")
    shapes, arias = [], []
    for n, order in enumerate(((citer, record), (record, citer))):
        store = open_store(StoreConfig(db_path=store_path.with_name(f"order{n}.db")))
        try:
            for path in order:
                ingest(store, wos.load(path) if path.suffix == ".txt" else scopus.load(path))
            shapes.append(_graph(store))
            arias.append(_aria(store))
        finally:
            store.close()
    assert shapes[0] == shapes[1]
    (first, cited_first, aliases_first), (second, cited_second, aliases_second) = arias
    assert first == second and first["stub"] is False and first["title"].startswith("bibliometrix")
    assert cited_first == cited_second == 1
    assert aliases_first == aliases_second
    # the record's own id, the field key, and the stub's key (the reference string the Scopus record printed)
    assert {"wos:000418020600003", "ref:ji-v11-p959"} < aliases_first
    assert any(alias.startswith("ref:ariamcuccurullocbibliometrix") for alias in aliases_first)
    assert not any(key.startswith("ref:ariam") for (key,) in shapes[0]["Paper"])


@pytest.mark.slow
@pytest.mark.shared_data
def test_the_wos_and_scopus_samples_give_one_graph_in_either_order(data_dir: Path, store_path: Path) -> None:
    """The whole samples: 5 works cited by one export and recorded or DOI-cited by the other meet as one node
    whichever is loaded first (a stub of a reference string never keeps the work's key)."""
    formats = data_dir / "formats"
    loads = {
        "wos": lambda: wos.load(formats / "wos" / "wos_sample.txt"),
        "scopus": lambda: scopus.load(formats / "scopus" / "scopus_sample.csv"),
    }
    shapes = []
    for n, order in enumerate((("scopus", "wos"), ("wos", "scopus"))):
        store = open_store(StoreConfig(db_path=store_path.with_name(f"order{n}.db")))
        try:
            for name in order:
                ingest(store, loads[name]())
            shapes.append(_graph(store))
        finally:
            store.close()
    assert shapes[0] == shapes[1]
    assert (ARIA_DOI,) in shapes[0]["Paper"]
