"""Works cited by reference strings, joined across loads: the same work meets itself, different works sharing a
source, volume and first page stay apart (graph.aliases checks year and first author), whatever the source."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from graph import GraphStore, ingest
from loaders import crossref, wos


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
