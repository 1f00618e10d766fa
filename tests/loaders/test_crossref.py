"""The Crossref importer on the real sample works, fixtures derived from them, and broken variants.

Expected numbers come from the sample files read with plain ``json`` here, or were counted by
hand (the comments say which), not from the loader.
"""

from __future__ import annotations

import copy
import gzip
import json
import logging
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from api.cli.main import main
from graph.errors import ValidationError
from graph.ingest import ingest
from graph.schema import ORIGIN_COLUMN
from graph.store import GraphStore
from loaders import SOURCES, crossref

pytestmark = pytest.mark.shared_data

SINGLE = "crossref.json"  # a /works/{doi} message, pretty-printed
DUMP = "crossref_dump.json"  # {"items": [5 works]}, pretty-printed with tabs
LIST = "cr_works_email_works.yml.response_body_1.json"  # a /works?query= response of 20 works, one line


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> Path:
    folder = data_dir / "formats" / "crossref"
    if not folder.is_dir():
        pytest.skip(f"no Crossref samples at {folder}")
    return folder


def _works(path: Path) -> list[dict[str, Any]]:
    value = json.loads(path.read_text(encoding="utf-8"))
    value = value.get("message", value)
    return value.get("items", [value])


# A DOI written into a reference's text, as the samples write it: "https://doi.org/10..." or "doi:10...".
_WRITTEN_DOI = re.compile(r"(?:doi\.org/|doi:)(10\.[^\s]+?)[.,]?$")


def _expected(works: list[dict[str, Any]]) -> dict[str, int]:
    keys = {w["DOI"].lower() for w in works}
    cited: set[tuple[str, str]] = set()
    no_doi = 0
    for work in works:
        for reference in work.get("reference", []):
            doi = reference.get("DOI")
            if doi is None and (match := _WRITTEN_DOI.search(reference.get("unstructured", ""))):
                doi = match.group(1)
            if doi is None:
                no_doi += 1
            else:
                cited.add((work["DOI"].lower(), doi.lower()))
    names = [
        {(a["given"] + " " + a["family"]).lower() if "family" in a else a["name"].lower() for a in w.get("author", [])}
        for w in works
    ]
    stubs = {t for _, t in cited} - keys
    return {
        "Paper": len(works) + len(stubs),
        "stubs": len(stubs),
        "CITES": len(cited),
        "Author": len(set().union(*names)),
        "WROTE": sum(map(len, names)),
        "no_doi": no_doi,
    }


def _sizes(batch: Any) -> dict[str, int]:
    sizes = {name: len(frame) for name, frame in {**batch.nodes, **batch.rels}.items()}
    sizes["stubs"] = int(batch.nodes["Paper"]["stub"].fillna(False).astype(bool).sum())
    return sizes


@pytest.mark.parametrize("name", [SINGLE, DUMP, LIST])
def test_each_sample(samples: Path, name: str) -> None:
    batch, report = crossref.load_with_report(samples / name)
    expected = _expected(_works(samples / name))
    sizes = _sizes(batch)
    # References without a DOI that their fields key as works are ref:… stubs (none is a work of the input).
    keyed = int(batch.nodes["Paper"]["id"].str.startswith("ref:").sum())
    keyed_cites = int(batch.rels["CITES"]["target"].str.startswith("ref:").sum())
    assert {k: sizes.get(k, 0) for k in ("Paper", "stubs", "CITES", "Author", "WROTE")} == {
        "Paper": expected["Paper"] + keyed,
        "stubs": expected["stubs"] + keyed,
        "CITES": expected["CITES"] + keyed_cites,
        "Author": expected["Author"],
        "WROTE": expected["WROTE"],
    }
    assert report.by_doi == expected["CITES"] and report.by_title == 0  # no sample reference matches a title
    assert report.unresolved + report.by_fields == expected["no_doi"] and batch.rejects == []
    assert keyed_cites == report.by_fields - report.repeated


def test_the_samples_by_hand(samples: Path) -> None:
    # crossref.json: 27 references, all with a DOI, none to itself; 5 authors.
    batch, report = crossref.load_with_report(samples / SINGLE)
    assert (report.references, report.by_doi, len(batch.nodes["Paper"]), len(batch.rels["WROTE"])) == (27, 27, 28, 5)
    # The dump: 43 references, 40 with a DOI, 1 with "doi:10.1045/june2004-harnad." in its text, 1 unstructured
    # without a DOI (Pathema), 1 with only a volume title (Willinsky); 2 of the DOIs are works of the dump.
    batch, report = crossref.load_with_report(samples / DUMP)
    assert (report.references, report.by_doi, report.by_title, report.by_fields, report.unresolved) == (43, 41, 0, 2, 0)
    papers = batch.nodes["Paper"].set_index("id")
    assert len(papers) == 5 + 41 - 2 + 2
    # Pathema by its unstructured string, Willinsky's book by its structured fields
    pathema = papers.loc["ref:brinkaclm2009nucleicacidsresearch"]
    assert (pathema["label"], pathema["volume"], pathema["first_page"], pathema["stub"]) == (
        "Brinkac LM, 2009, Nucleic Acids Research 38:D408",
        "38",
        "D408",
        True,
    )
    assert pathema["reference"].startswith("Brinkac, L.M. , Davidsen, T.")
    book = "ref:willinsky2009theaccessprinciplethecaseforopenaccesstoresearchandscholarship"
    assert papers.loc[book, "label"] == (
        "Willinsky, 2009, The access principle: the case for open access to research and scholarship"
    )
    aliases = batch.rels["ALIAS_OF"].set_index("source")["target"]
    assert aliases["ref:nar-v38-pd408"] == "ref:brinkaclm2009nucleicacidsresearch"  # met by a later load
    assert ("doi:10.1108/jd-12-2013-0166", "doi:10.1045/june2004-harnad") in set(
        map(tuple, batch.rels["CITES"][["source", "target"]].values.tolist())
    )


def test_work_fields(samples: Path) -> None:
    papers = crossref.load(samples / SINGLE).nodes["Paper"].set_index("id")
    work = papers.loc["doi:10.7554/elife.01567"]
    assert work["title"].startswith("Automated quantitative histology reveals vascular morphodynamics")
    assert (work["year"], work["venue"], work["doi"], work["dataset"]) == (
        2014,
        "eLife",
        "10.7554/elife.01567",
        "crossref",
    )
    assert work["abstract"].startswith("Among various advantages, their small size makes model organisms")
    assert "<" not in work["abstract"] and not work["stub"]
    stub = papers.loc["doi:10.1038/nature02100"]
    assert stub["stub"] and stub["doi"] == "10.1038/nature02100" and pd.isna(stub["title"])
    venues = crossref.load(samples / LIST).nodes["Paper"].set_index("id")["venue"]
    assert venues["doi:10.1038/s41377-019-0123-4"] == "Light: Science & Applications"  # "&amp;" decoded


def test_a_folder_and_twice_identical_stats(samples: Path, empty_store: GraphStore) -> None:
    works = [w for name in (SINGLE, DUMP, LIST) for w in _works(samples / name)]
    batch = crossref.load(samples)
    first = ingest(empty_store, batch)
    stats = empty_store.stats()
    second = ingest(empty_store, crossref.load(samples))
    assert empty_store.stats() == stats
    expected = _expected(works)
    keyed = int(batch.nodes["Paper"]["id"].str.startswith("ref:").sum())  # works keyed by their fields
    keyed_cites = int(batch.rels["CITES"]["target"].str.startswith("ref:").sum())
    assert stats["nodes"]["Paper"] == expected["Paper"] + keyed
    assert stats["relationships"]["CITES"] == expected["CITES"] + keyed_cites
    assert stats["nodes"]["Author"] == expected["Author"] and stats["relationships"]["WROTE"] == expected["WROTE"]
    assert first.rejected == second.rejected == 0 and all(c.created == 0 for c in second.tables.values())


def _title_fixture(samples: Path, tmp_path: Path) -> Path:
    """The dump with two references of jd-12-2013-0166 to works of the dump stripped of their DOI."""
    dump = json.loads((samples / DUMP).read_text(encoding="utf-8"))
    work = next(w for w in dump["items"] if w["DOI"] == "10.1108/jd-12-2013-0166")
    for reference in work["reference"]:
        if reference.get("DOI") == "10.1016/j.websem.2012.08.001":
            del reference["DOI"]
            reference["unstructured"] = (
                "Peroni, S. and Shotton, D. (2012), “FaBiO and CiTO: ontologies for describing bibliographic "
                "resources and citations”, Journal of Web Semantics, Vol. 17, pp. 33-43."
            )
        elif reference.get("DOI") == "10.1016/j.websem.2013.05.001":
            del reference["DOI"]
            reference["article-title"] = "Key choices in the design of Simple Knowledge Organization System (SKOS)"
    # an earlier version of the work itself, by title: a guess, so unresolved rather than a self-citation
    work["reference"].append({"key": "self", "article-title": "Setting our bibliographic references free"})
    work["reference"].append(
        {"key": "self2", "article-title": "Setting our bibliographic references free: towards open citation data."}
    )
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump), encoding="utf-8")
    return path


def test_references_without_doi_resolve_by_title(samples: Path, tmp_path: Path) -> None:
    batch, report = crossref.load_with_report(_title_fixture(samples, tmp_path))
    assert (report.references, report.by_doi, report.by_title, report.by_fields, report.unresolved) == (45, 39, 2, 2, 2)
    cites = set(map(tuple, batch.rels["CITES"][["source", "target"]].values.tolist()))
    assert ("doi:10.1108/jd-12-2013-0166", "doi:10.1016/j.websem.2012.08.001") in cites
    assert ("doi:10.1108/jd-12-2013-0166", "doi:10.1016/j.websem.2013.05.001") in cites
    assert len(batch.nodes["Paper"]) == 5 + 41 - 2 + 2 and batch.rejects == []  # + Pathema and Willinsky; the two
    # titles of the work's own earlier version say nothing else, and stay unresolved


def test_references_resolve_to_the_anthology_of_the_data_folder(
    samples: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    anthology = data_dir / "anthology" / "papers.jsonl.gz"
    if not anthology.exists():
        pytest.skip(f"no Anthology at {anthology}")
    small = tmp_path / "data" / "anthology" / "papers.jsonl.gz"
    small.parent.mkdir(parents=True)
    with gzip.open(anthology, "rt", encoding="utf-8") as lines:
        head = [next(lines) for _ in range(300)]
    assert json.loads(head[1])["title"] == "Present interest in mechanical translation"  # 1952.earlymt-1.2
    small.write_bytes(gzip.compress("".join(head).encode("utf-8")))
    monkeypatch.setenv("CITEGRAPH_DATA", str(tmp_path / "data"))
    work = copy.deepcopy(_works(samples / SINGLE)[0])
    work["reference"] = [
        {"key": "r1", "unstructured": "Loomis, W. F. 1952. Present interest in mechanical translation. In Proc. MT."},
        {"key": "r2", "unstructured": "Nobody, A. 2001. A title that no paper has, anywhere at all."},
    ]
    (tmp_path / "w.json").write_text(json.dumps(work), encoding="utf-8")
    batch = SOURCES["crossref"].load(tmp_path / "w.json")
    assert batch.rels["CITES"][["source", "target"]].values.tolist() == [
        ["doi:10.7554/elife.01567", "1952.earlymt-1.2"],
        ["doi:10.7554/elife.01567", "ref:nobodya2001"],  # no title matches: a work by its author and year
    ]
    row = batch.nodes["Paper"].set_index("id").loc["1952.earlymt-1.2"]
    assert row[["title", "dataset", "stub"]].isna().all()  # an id only: a store holding the paper keeps its own


def test_a_work_read_twice_keeps_the_latest_copy(samples: Path, tmp_path: Path) -> None:
    work = _works(samples / SINGLE)[0]
    older = {**work, "title": ["An older title"], "indexed": {"date-time": "2001-01-01T00:00:00Z"}}
    (tmp_path / "works.jsonl").write_text(json.dumps(work) + "\n" + json.dumps(older) + "\n", encoding="utf-8")
    batch, report = crossref.load_with_report(tmp_path / "works.jsonl")
    full = batch.nodes["Paper"][~batch.nodes["Paper"]["stub"].astype(bool)]
    assert full["title"].tolist() == [work["title"][0]] and full[ORIGIN_COLUMN].tolist() == ["works.jsonl:1"]
    assert report.superseded == 1 and report.references == 27


# Broken variants, each derived from the real files ---------------------------------------------


def test_a_truncated_dump_is_one_reject_naming_the_line(samples: Path, tmp_path: Path) -> None:
    text = (samples / DUMP).read_text(encoding="utf-8")
    cut = text[: len(text) // 2]
    (tmp_path / "dump.json").write_text(cut, encoding="utf-8")
    batch = crossref.load(tmp_path / "dump.json")
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", f"dump.json:{cut.count(chr(10)) + 1}")]
    assert "truncated" in batch.rejects[0].reason and "download or copy it again" in batch.rejects[0].reason


def test_a_truncated_jsonl_keeps_the_complete_lines(samples: Path, tmp_path: Path) -> None:
    lines = [json.dumps(w) for w in _works(samples / LIST)]
    text = "\n".join(lines)
    (tmp_path / "works.jsonl.gz").write_bytes(gzip.compress(text[: len(text) - len(lines[-1]) // 2].encode()))
    batch, report = crossref.load_with_report(tmp_path / "works.jsonl.gz")
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "works.jsonl.gz:20")]
    assert report.works == 19


def test_not_utf8(samples: Path, tmp_path: Path) -> None:
    data = (samples / DUMP).read_bytes().replace(b"Interfacing fast-fashion", b"Interfacing \xff fast-fashion", 1)
    (tmp_path / "dump.json").write_bytes(data)
    line = data[: data.index(b"\xff")].count(b"\n") + 1
    batch = crossref.load(tmp_path / "dump.json")
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", f"dump.json:{line}")]
    assert "not UTF-8 (byte 0xff" in batch.rejects[0].reason and "save it as UTF-8" in batch.rejects[0].reason
    lines = [json.dumps(w).encode() for w in _works(samples / LIST)[:3]]
    lines[1] = lines[1].replace(b'"title": ["', b'"title": ["\xfe', 1)
    (tmp_path / "works.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    batch = crossref.load(tmp_path / "works.jsonl")
    assert [(r.origin, "line is not UTF-8" in r.reason) for r in batch.rejects] == [("works.jsonl:2", True)]


def test_values_of_the_wrong_type(samples: Path, tmp_path: Path, empty_store: GraphStore) -> None:
    works = copy.deepcopy(_works(samples / DUMP))
    works[0]["title"] = [5]  # validation: Paper
    works[1]["reference"] = "none"  # loader: CITES, the work loads
    works[2]["author"] = [{"affiliation": []}]  # loader: Author, the work loads
    del works[3]["DOI"]  # loader: Paper
    (tmp_path / "dump.json").write_text(json.dumps({"items": works}), encoding="utf-8")
    batch = crossref.load(tmp_path / "dump.json")
    found = {(r.table, r.origin): r.reason for r in batch.rejects}
    assert "`reference` is 'none', expected a list" in found[("CITES", "dump.json:record 2")]
    assert "author 1 has no name" in found[("Author", "dump.json:record 3")]
    assert "work `DOI` is None" in found[("Paper", "dump.json:record 4")]
    with pytest.raises(ValidationError, match=r"dump\.json:record"):
        ingest(empty_store, batch)
    report = ingest(empty_store, crossref.load(tmp_path / "dump.json"), on_error="skip")
    title = [r for r in report.rejects if (r.table, r.origin) == ("Paper", "dump.json:record 1")]
    assert title and "`title` is 5, expected a string" in title[0].reason


def test_registered_outside_ingest_all() -> None:
    assert not SOURCES["crossref"].bundled


def test_the_cli(
    samples: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("CITEGRAPH_DATA", str(tmp_path / "no-data"))  # no Anthology: a fast title index
    db = str(tmp_path / "g.db")
    with caplog.at_level(logging.INFO, logger="loaders.crossref"):
        assert main(["--db", db, "ingest", "crossref", str(samples / DUMP), "--rejects-dir", str(tmp_path)]) == 0
    assert "43 references: 41 by DOI, 0 by title, 2 by fields, 0 unresolved" in caplog.text
    out = capsys.readouterr().out
    assert out.startswith("crossref: ") and "0 rejected" in out
    assert main(["--db", db, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == 46 and stats["relationships"]["CITES"] == 43  # + Pathema and Willinsky
