"""`citegraph ingest … --thesaurus` and `citegraph references report` on tiny exports written here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from api.cli.main import main
from graph import GraphBatch, StoreConfig, ingest, open_store

# Two records citing one work in two spellings (RICARD J / RICHARD J, same source, volume and page).
WOS_EXPORT = """FN Clarivate Analytics Web of Science
VR 1.0
PT J
AU Aria, M
TI First citing paper
SO J INFORMETR
PY 2019
VL 13
BP 10
CR RICARD J, 1970, NOUV REV OPT, V1, P275
   GOOS F, 1947, ANN PHYS-BERLIN, V1, P333
UT WOS:000000000000001
ER

PT J
AU Cuccurullo, C
TI Second citing paper
SO J INFORMETR
PY 2020
VL 14
BP 20
CR RICHARD J, 1970, NOUV REV OPT, V1, P275
   GOOS F, 1947, ANN PHYS-BERLIN, V1, P333
UT WOS:000000000000002
ER

EF
"""
SPLIT = "label\treplace by\nrichardj1970nouvrevopt\trichardj1970nouvrevopt\n"


def _labels(db: Path) -> list[str]:
    store = open_store(StoreConfig(db_path=db, read_only=True))
    try:
        papers = pd.concat(store.iter_nodes("Paper", 1_000), ignore_index=True)
    finally:
        store.close()
    return sorted(str(label) for label in papers.loc[papers["stub"].eq(True), "label"])


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "savedrecs.txt"
    path.write_text(WOS_EXPORT, encoding="utf-8")
    return path


def test_ingest_thesaurus_flag_splits_a_join(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEGRAPH_REFERENCE_THESAURUS", raising=False)
    thesaurus = tmp_path / "thesaurus.txt"
    thesaurus.write_text(SPLIT, encoding="utf-8")
    assert main(["--db", str(tmp_path / "joined.db"), "ingest", "wos", str(export)]) == 0
    assert main(["--db", str(tmp_path / "split.db"), "ingest", "wos", str(export), "--thesaurus", str(thesaurus)]) == 0
    capsys.readouterr()
    assert _labels(tmp_path / "joined.db") == [
        "Goos F, 1947, Ann Phys-Berlin 1:333",
        "Ricard J, 1970, Nouv Rev Opt 1:275",
    ]
    assert _labels(tmp_path / "split.db") == [
        "Goos F, 1947, Ann Phys-Berlin 1:333",
        "Ricard J, 1970, Nouv Rev Opt 1:275",
        "Richard J, 1970, Nouv Rev Opt 1:275",
    ]


def test_ingest_thesaurus_flag_refused_where_nothing_is_matched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thesaurus = tmp_path / "thesaurus.txt"
    thesaurus.write_text(SPLIT, encoding="utf-8")
    works = tmp_path / "works.json"
    works.write_text("[]", encoding="utf-8")
    code = main(["--db", str(tmp_path / "g.db"), "ingest", "openalex", str(works), "--thesaurus", str(thesaurus)])
    assert code != 0
    err = capsys.readouterr().err
    assert "--thesaurus: openalex gives its cited works by id" in err and "wos" in err


def test_ingest_thesaurus_flag_names_a_bad_file(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thesaurus = tmp_path / "thesaurus.txt"
    thesaurus.write_text("richardj1970nouvrevopt richardj1970nouvrevopt\n", encoding="utf-8")  # a space, no tab
    assert main(["--db", str(tmp_path / "g.db"), "ingest", "wos", str(export), "--thesaurus", str(thesaurus)]) != 0
    assert f"reference thesaurus {thesaurus}, line 1" in capsys.readouterr().err


def test_references_report_of_a_tiny_export(export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["references", "report", "wos", str(export), "--format", "json", "--joined-only"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["label"] for row in rows] == ["Ricard J, 1970, Nouv Rev Opt 1:275"]
    assert rows[0]["rules"] == "source+volume+page" and rows[0]["citations"] == 2


def test_a_recipe_labels_a_paper_known_by_its_authors_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`citegraph cypher --recipe`: a CoRA-style paper (authors, no title) reads "Ferrari D, 1994", not its id."""
    db = tmp_path / "g.db"
    store = open_store(StoreConfig(db_path=db))
    try:
        papers = pd.DataFrame(
            {
                "id": ["cora:1", "cora:2"],
                "title": [None, "A citing paper"],
                "year": [1994, 1999],
                "_origin": ["c:1", "c:2"],
            }
        )
        batch = GraphBatch(
            "cora",
            nodes={"Paper": papers, "Author": pd.DataFrame({"id": ["ferrari"], "name": ["D. Ferrari"]})},
            rels={
                "WROTE": pd.DataFrame({"source": ["ferrari"], "target": ["cora:1"], "position": [1]}),
                "CITES": pd.DataFrame({"source": ["cora:2"], "target": ["cora:1"]}),
            },
        )
        ingest(store, batch)
    finally:
        store.close()
    args = [
        "--db",
        str(db),
        "cypher",
        "--recipe",
        "citation_neighbourhood",
        "--param",
        "paper_id=cora:2",
        "--format",
        "json",
    ]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(row["id"], row["label"]) for row in rows] == [("cora:1", "Ferrari D, 1994")]
