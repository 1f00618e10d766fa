"""`citegraph ingest … --thesaurus` and `citegraph references report` on tiny exports written here."""

from __future__ import annotations

import json
import re
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


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[list[dict[str, object]], str]:
    assert main(["references", "report", *args, "--format", "json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def _counts(summary: str) -> tuple[int, ...]:
    """(citations, matched, stubbed, by id, by reference, unparsed) of the report's summary line."""
    numbers = re.search(
        r"(\d+) citation\(s\): (\d+) matched to works of the input, (\d+) stubbed \((\d+) by id, (\d+) by "
        r"reference string\), (\d+) unparsed",
        summary,
    )
    assert numbers, summary
    return tuple(int(n) for n in numbers.groups())


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("source", "path", "expected"),
    [
        # the loaders' own logs say the same: WoS 5 to records, 192 to DOI stubs, 55 to reference-key stubs
        ("wos", "wos/wos_sample.txt", (252, 5, 247, 192, 55, 0)),
        ("openalex", "openalex", (1178, 5, 1173, 1173, 0, 0)),
        ("opencitations", "opencitations_coci", (142, 0, 142, 142, 0, 0)),
        ("semanticscholar", "semanticscholar", (1116, 1008, 77, 77, 0, 31)),
        # Crossref matches titles against the Anthology's: a few minutes on a loaded machine
        pytest.param("crossref", "crossref", (1322, 4, 1255, 1048, 207, 63), marks=pytest.mark.slow),
    ],
)
def test_references_report_of_every_source_with_citations(
    source: str, path: str, expected: tuple[int, ...], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows, summary = _report(capsys, source, str(data_dir / "formats" / path))
    assert _counts(summary) == expected
    citations, matched, _stubbed, by_id, by_reference, unparsed = expected
    assert sum(int(row["citations"]) for row in rows) == citations - unparsed  # every edge is a row's citation
    kinds = {
        kind: sum(int(r["citations"]) for r in rows if r["rules"] == kind) for kind in ("record", "id", "reference")
    }
    if source != "wos":  # the WoS rows are its matching's works, with their rules
        assert kinds == {"record": matched, "id": by_id, "reference": by_reference}
    # each count comes with examples of it
    for name, count in (("matched", matched), ("stubbed by id", by_id), ("stubbed by reference", by_reference)):
        assert (f"\n  {name}: " in summary) == (count > 0), name
    assert ("\n  unparsed: " in summary) == (unparsed > 0)


def test_references_report_of_a_json_lines_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        {"type": "paper", "id": "mine", "title": "Mine", "year": 2020},
        {"type": "paper", "id": "P98-1081", "title": "TnT", "year": 2000},
        {"type": "paper", "id": "brants2000", "reference": "Brants, T. (2000). TnT. ANLP, 6, 224-231."},
        {"type": "paper", "id": "doi:10.1/x", "stub": True},
        {"type": "citation", "citing": "mine", "cited": "P98-1081"},
        {"type": "citation", "citing": "mine", "cited": "brants2000"},
        {"type": "citation", "citing": "mine", "cited": "doi:10.1/x"},
        {"type": "citation", "citing": "mine", "cited": "mine"},
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    rows, summary = _report(capsys, "jsonl", str(path))
    assert _counts(summary) == (4, 1, 2, 1, 1, 1)
    assert {row["work"]: row["rules"] for row in rows} == {
        "P98-1081": "record",
        "brants2000": "reference",
        "doi:10.1/x": "id",
    }
    assert "corpus.jsonl:8" in summary  # the self-citation, where it is


@pytest.mark.slow
@pytest.mark.shared_data
def test_references_report_of_unarxive(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, summary = _report(capsys, "unarxive", str(data_dir / "unarxive" / "unarXive_data_sample_2022.tar.gz"))
    citations, _matched, _stubbed, by_id, by_reference, unparsed = _counts(summary)
    assert by_reference > 0 and by_id > 0 and unparsed == 41  # the loader's own count of unresolved entries
    assert sum(int(row["citations"]) for row in rows) == citations - unparsed


def test_a_thesaurus_is_refused_where_works_come_by_id(tmp_path: Path) -> None:
    thesaurus = tmp_path / "thesaurus.txt"
    thesaurus.write_text("label\treplace by\n", encoding="utf-8")
    assert main(["references", "report", "openalex", str(tmp_path), "--thesaurus", str(thesaurus)]) != 0
