"""The OpenCitations importer on the real COCI samples (CSV dumps, API JSON), id lists, broken variants.

Expected numbers come from the sample files read with plain ``csv``/``json`` here, or were counted
by hand (the comments say which), not from the loader.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from api.cli.main import main
from graph.errors import ValidationError
from graph.ingest import GraphBatch, ingest
from graph.store import GraphStore
from loaders import SOURCES, opencitations

pytestmark = pytest.mark.shared_data

DUMP = "citations_data.csv"  # oci,citing,cited,creation,timespan,journal_sc,author_sc: 6 rows
NO_OCI = "crossref_citations.csv"  # citing,cited,...: 40 rows
BODIES = [
    "oc_coci_cites_many_dois.yml.response_body_1.json",
    "oc_coci_cites_many_dois.yml.response_body_2.json",
    "oc_coci_refs_many_dois.yml.response_body_1.json",
    "oc_coci_refs_many_dois.yml.response_body_2.json",
]


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> Path:
    folder = data_dir / "formats" / "opencitations_coci"
    if not folder.is_dir():
        pytest.skip(f"no OpenCitations samples at {folder}")
    return folder


def _pairs(path: Path) -> list[tuple[str, str]]:
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as rows:
            return [(r["citing"].lower(), r["cited"].lower()) for r in csv.DictReader(rows)]
    return [(r["citing"].lower(), r["cited"].lower()) for r in json.loads(path.read_text(encoding="utf-8"))]


def _check(batch: GraphBatch, pairs: list[tuple[str, str]]) -> None:
    works = {doi for pair in pairs for doi in pair}
    papers = batch.nodes["Paper"]
    assert sorted(papers["id"]) == sorted(f"doi:{d}" for d in works)
    assert papers["stub"].all() and set(papers["dataset"]) == {"opencitations"}
    assert (papers["id"].str.removeprefix("doi:") == papers["doi"]).all()
    cites = batch.rels["CITES"]
    assert sorted(map(tuple, cites[["source", "target"]].values.tolist())) == sorted(
        {(f"doi:{a}", f"doi:{b}") for a, b in pairs}
    )
    assert set(cites["dataset"]) == {"opencitations"} and batch.rejects == []


@pytest.mark.parametrize("name", [DUMP, NO_OCI, *BODIES])
def test_each_sample(samples: Path, name: str) -> None:
    batch, report = opencitations.load_with_report(samples / name)
    pairs = _pairs(samples / name)
    _check(batch, pairs)
    assert report.citations == len(pairs) and report.repeated == 0


def test_the_samples_by_hand(samples: Path) -> None:
    # citations_data.csv: 6 citations among 11 DOIs (10.1002/jrs.5400 cites twice, the rest once).
    batch = opencitations.load(samples / DUMP)
    assert (len(batch.nodes["Paper"]), len(batch.rels["CITES"])) == (11, 6)
    assert batch.rels["CITES"]["_origin"].tolist() == [f"{DUMP}:{n}" for n in range(2, 8)]
    # The first API body: 20 works citing 10.1108/jd-12-2013-0166.
    batch = opencitations.load(samples / BODIES[0])
    assert set(batch.rels["CITES"]["target"]) == {"doi:10.1108/jd-12-2013-0166"} and len(batch.nodes["Paper"]) == 21
    assert batch.rels["CITES"]["_origin"].iloc[4] == f"{BODIES[0]}:record 5"


def test_a_folder_merges_a_citation_given_twice(samples: Path) -> None:
    batch, report = opencitations.load_with_report(samples)
    pairs = [p for name in (DUMP, NO_OCI, *BODIES) for p in _pairs(samples / name)]
    _check(batch, pairs)
    # 179 records; crossref_citations.csv repeats 37 of the references of 10.1108/jd-12-2013-0166.
    assert (report.files, report.citations, report.repeated, len(set(pairs))) == (6, 179, 37, 142)


def test_twice_identical_stats(samples: Path, empty_store: GraphStore) -> None:
    first = ingest(empty_store, opencitations.load(samples))
    stats = empty_store.stats()
    second = ingest(empty_store, opencitations.load(samples))
    assert empty_store.stats() == stats
    assert stats["nodes"]["Paper"] == 150 and stats["relationships"]["CITES"] == 142
    assert first.rejected == second.rejected == 0 and all(c.created == 0 for c in second.tables.values())


def test_index_id_lists(tmp_path: Path) -> None:
    path = tmp_path / "index.csv"
    path.write_text(
        "id,citing,cited,creation,timespan,journal_sc,author_sc\n"
        'x,"omid:br/06101 doi:10.1108/JD-12-2013-0166 pmid:1234",coci => 10.1002/asi.4630240406,2015,P1Y,no,no\n'
        "y,omid:br/06102 pmid:1234,doi:10.1234/B openalex:W42,2015,P1Y,no,no\n"
        "z,10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-o,doi:10.1234/b,,,,\n",
        encoding="utf-8",
    )
    batch = opencitations.load(path)
    assert sorted(batch.nodes["Paper"]["id"]) == [
        "doi:10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-o",
        "doi:10.1002/asi.4630240406",
        "doi:10.1108/jd-12-2013-0166",
        "doi:10.1234/b",
    ]
    # pmid:1234 is the same work as the DOI on line 2, so line 3 cites from it
    assert ("doi:10.1108/jd-12-2013-0166", "doi:10.1234/b") in set(
        map(tuple, batch.rels["CITES"][["source", "target"]].values.tolist())
    )
    aliases = dict(batch.rels["ALIAS_OF"][["source", "target"]].values.tolist())
    assert aliases == {"pmid:1234": "doi:10.1108/jd-12-2013-0166", "openalex:W42": "doi:10.1234/b"}


# Broken variants, each derived from the real files ---------------------------------------------


def test_a_truncated_csv(samples: Path, tmp_path: Path) -> None:
    text = (samples / DUMP).read_text(encoding="utf-8")
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    (tmp_path / "cut.csv").write_text(text.rstrip("\n")[: -len(last) + 40], encoding="utf-8")
    batch, report = opencitations.load_with_report(tmp_path / "cut.csv")
    assert [(r.table, r.origin) for r in batch.rejects] == [("CITES", "cut.csv:7")]
    assert "too few" in batch.rejects[0].reason or "field(s)" in batch.rejects[0].reason
    assert len(batch.rels["CITES"]) == 5 and report.citations == 6


def test_a_truncated_gzip_csv(samples: Path, tmp_path: Path) -> None:
    data = gzip.compress((samples / NO_OCI).read_bytes())
    (tmp_path / "cut.csv.gz").write_bytes(data[: len(data) * 2 // 3])
    batch = opencitations.load(tmp_path / "cut.csv.gz")
    cut = [r for r in batch.rejects if "gzip stream is cut" in r.reason]
    assert len(cut) == 1 and cut[0].origin.startswith("cut.csv.gz:")
    assert "CITES" not in batch.rels or len(batch.rels["CITES"]) < 40


def test_a_truncated_api_body(samples: Path, tmp_path: Path) -> None:
    text = (samples / BODIES[2]).read_text(encoding="utf-8")
    (tmp_path / "body.json").write_text(text[: len(text) // 2], encoding="utf-8")
    batch = opencitations.load(tmp_path / "body.json")
    assert [r.table for r in batch.rejects] == ["CITES"] and "truncated" in batch.rejects[0].reason
    assert batch.rejects[0].origin.startswith("body.json:")


def test_not_utf8_and_wrong_types(samples: Path, tmp_path: Path) -> None:
    data = (samples / DUMP).read_bytes().replace(b"10.1002/jrs.5302", b"10.1002/jrs.5302\xff", 1)
    (tmp_path / "bad.csv").write_bytes(data)
    batch = opencitations.load(tmp_path / "bad.csv")
    assert [(r.origin, "not UTF-8" in r.reason) for r in batch.rejects] == [("bad.csv:3", True)]
    records = json.loads((samples / BODIES[0]).read_text(encoding="utf-8"))[:3]
    records[1]["citing"] = 5
    records[2] = "10.1/x"
    (tmp_path / "bad.json").write_text(json.dumps(records), encoding="utf-8")
    batch = opencitations.load(tmp_path / "bad.json")
    assert [r.origin for r in batch.rejects] == ["bad.json:record 2", "bad.json:record 3"]
    assert "`citing` is 5, with no DOI" in batch.rejects[0].reason


def test_no_header_and_a_self_citation(samples: Path, tmp_path: Path, empty_store: GraphStore) -> None:
    rows = (samples / NO_OCI).read_text(encoding="utf-8").splitlines()
    (tmp_path / "noheader.csv").write_text("\n".join(rows[1:]) + "\n", encoding="utf-8")
    batch = opencitations.load(tmp_path / "noheader.csv")
    assert [r.origin for r in batch.rejects] == ["noheader.csv:1"] and "add the header line" in batch.rejects[0].reason
    (tmp_path / "self.csv").write_text(f'{rows[0]}\n"10.1234/a","10.1234/A","","","",""\n{rows[1]}\n', encoding="utf-8")
    batch = opencitations.load(tmp_path / "self.csv")
    assert [(r.origin, "cites itself" in r.reason) for r in batch.rejects] == [("self.csv:2", True)]
    with pytest.raises(ValidationError, match=r"self\.csv:2"):
        ingest(empty_store, batch)
    assert ingest(empty_store, opencitations.load(tmp_path / "self.csv"), on_error="skip").stored == 3


def test_registered_outside_ingest_all() -> None:
    assert SOURCES["opencitations"].load is opencitations.load and not SOURCES["opencitations"].bundled


def test_the_cli(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "g.db")
    glob = str(samples / "*.json")  # a quoted glob: the four API bodies
    assert main(["--db", db, "ingest", "opencitations", glob, "--rejects-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("opencitations: ")
    assert main(["--db", db, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    pairs = {p for name in BODIES for p in _pairs(samples / name)}
    assert stats["relationships"]["CITES"] == len(pairs) == 133
    assert stats["nodes"]["Paper"] == len({d for p in pairs for d in p})


def test_a_line_past_the_csv_field_limit_is_a_located_reject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was `internal error: field larger than field limit (131072)` with no file or line."""
    huge = '"' + "10.1000/" + "x" * 200_000 + '"'
    lines = ["citing,cited", "10.1000/a,10.1000/b", f"10.1000/c,{huge}", "10.1000/d,10.1000/e"]
    (tmp_path / "long.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    batch = opencitations.load(tmp_path / "long.csv")
    assert [r.origin for r in batch.rejects] == ["long.csv:3"]
    assert f"line of {len(lines[2]):,} characters is no CSV row" in batch.rejects[0].reason
    assert len(batch.rels["CITES"]) == 2  # the lines around it are read
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "ingest", "opencitations", str(tmp_path / "long.csv")]) == 65
    err = capsys.readouterr().err
    assert f"long.csv:3: line of {len(lines[2]):,} characters" in err and "internal error" not in err
    (tmp_path / "long.csv").write_text(f"{huge},cited\n", encoding="utf-8")  # on the header line: nothing to read
    assert [r.origin for r in opencitations.load(tmp_path / "long.csv").rejects] == ["long.csv:1"]
