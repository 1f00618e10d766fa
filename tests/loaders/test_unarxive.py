"""The unarXive loader: a tiny tar.gz built inline, then the real 49-paper sample."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import time
from pathlib import Path

import pandas as pd
import pytest

from graph.errors import IngestError
from graph.ingest import GraphBatch, ingest
from graph.schema import ORIGIN_COLUMN
from graph.store import GraphStore
from loaders import anthology, taxonomy, unarxive
from loaders.resolve import TitleIndex
from loaders.unarxive import split_sentences

MEMBER = "sample/arXiv_src_test.jsonl"


def _paragraph(section: str, text: str) -> dict[str, object]:
    """A body_text paragraph whose cite_spans are found from the ``{{cite:<key>}}`` placeholders in ``text``."""
    spans = []
    start = text.find("{{cite:")
    while start >= 0:
        end = text.index("}}", start) + 2
        spans.append({"start": start, "end": end, "text": text[start:end], "ref_id": text[start + 7 : end - 2]})
        start = text.find("{{cite:", end)
    return {"section": section, "sec_type": "section", "content_type": "paragraph", "text": text, "cite_spans": spans}


def _ids(arxiv: str = "", doi: str = "", openalex: str = "") -> dict[str, str]:
    return {
        "open_alex_id": openalex,
        "sem_open_alex_id": "",
        "pubmed_id": "",
        "pmc_id": "",
        "doi": doi,
        "arxiv_id": arxiv,
    }


def _entry(raw: str, ids: dict[str, str] | None = None, **extra: object) -> dict[str, object]:
    entry: dict[str, object] = {"bib_entry_raw": raw, "contained_arXiv_ids": [], "contained_links": [], **extra}
    if ids is not None:
        entry["ids"] = ids
    return entry


FIRST = {
    "paper_id": "2212.00001v2",
    "metadata": {
        "id": "2212.00001",
        "title": "A test\n  paper",
        "abstract": "  We test\nthings.\n",
        "categories": "cs.CL cs.XX",
        "doi": "10.1000/ABC",
        "versions": [{"version": "v1", "created": "Mon, 5 Dec 2022 10:00:00 GMT"}],
        "update_date": "2023-01-02",
        "authors_parsed": [["Lovelace", "Ada", ""], ["Turing", "Alan", "Jr."], ["LOVELACE", "Ada", ""]],
    },
    "body_text": [
        _paragraph(
            "Introduction",
            "We follow Smith et al. {{cite:b1}} and e.g. Fig. 2 shows 3.5 units. "
            "Prior work {{cite:b2}}{{cite:b3}} differs.  Then {{cite:b1}} again.\n",
        ),
        _paragraph("", "A final sentence without citations."),
    ],
    "bib_entries": {
        "b1": _entry(
            "A. Author. Some arXiv paper. 2021.", _ids(arxiv="2101.00001v1", openalex="https://openalex.org/W1")
        ),
        "b2": _entry("B. Author. A DOI paper. J. X, 2020.", _ids(doi="10.5555/XYZ")),
        "b3": _entry("J. Doe. Statistical phrase-based translation. In NAACL, 2003."),  # no ids: by title
        "b4": _entry(  # the DOI of b2 in a link with its prefix twice: one work, one CITES edge
            "B. Author, J. X (2020), doi: 10.5555/xyz",
            contained_links=[{"url": "https://doi.org/https://doi.org/10.5555/xyz", "text": "x", "start": 0, "end": 1}],
        ),
        "b5": _entry("C. Nobody. Unpublished notes on nothing. 1999.", _ids()),  # empty ids: by its fields
        "b6": _entry("D. Author. Paired later. 2021.", _ids(doi="10.7777/Q", openalex="https://openalex.org/W6")),
        "b7": _entry("E. Author. OpenAlex only. 2019.", _ids(openalex="https://openalex.org/W7")),
    },
}
SECOND = {
    "paper_id": "2212.00002",
    "metadata": {
        "title": "Second",
        "categories": "cs.CL",
        "versions": [{"version": "v1", "created": "Tue, 6 Dec 2022 10:00:00 GMT"}],
        "authors": "Grace Hopper and Ada Lovelace",
    },
    "body_text": [_paragraph("Related Work", "We extend {{cite:c1}}. We cite ourselves {{cite:c2}}.")],
    "bib_entries": {
        "c1": _entry("Lovelace and Turing. A test paper. 2022.", _ids(arxiv="2212.00001")),  # in this input
        "c2": _entry(
            "Ourselves. 2022. arXiv:2212.00002",
            contained_arXiv_ids=[{"id": "2212.00002", "text": "arXiv:2212.00002", "start": 0, "end": 1}],
        ),
        "c3": _entry("F. Author. Paired. 2021.", _ids(arxiv="2102.00002", doi="10.7777/q")),  # gives b6 its arXiv id
    },
}
LINES: list[bytes] = [
    json.dumps(FIRST).encode(),  # 1
    b'{"paper_id": "2212.00003", ',  # 2: not JSON
    json.dumps(SECOND).encode(),  # 3
    b"",  # 4: blank
    b"[1, 2]",  # 5: not an object
    json.dumps({"paper_id": "P98-1081", "metadata": {}}).encode(),  # 6: not an arXiv id
    json.dumps(SECOND).encode(),  # 7: the same paper again
]


def _origin(line: int) -> str:
    return f"{MEMBER}:{line}"


@pytest.fixture
def sample_tar(tmp_path: Path) -> Path:
    path = tmp_path / "unarXive_test.tar.gz"
    data = b"\n".join(LINES) + b"\n"
    with tarfile.open(path, "w:gz") as archive:
        for name, content in ((MEMBER, data), ("sample/README", b"not JSON lines, not read")):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return path


@pytest.fixture(scope="module")
def small_index() -> TitleIndex:
    return TitleIndex([("N03-1017", "Statistical Phrase-Based Translation"), ("P02-1040", "BLEU: a method for MT")])


# --- sentences ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("As Smith et al. showed, it works. Next.", ["As Smith et al. showed, it works.", "Next."]),
        ("As Smith et al. (2020) showed. Next.", ["As Smith et al. (2020) showed.", "Next."]),
        ("Some, e.g. Many, i.e. Few. Next.", ["Some, e.g. Many, i.e. Few.", "Next."]),
        ("See Fig. 3 and Eq. (2) in Sec. 4. Next.", ["See Fig. 3 and Eq. (2) in Sec. 4.", "Next."]),
        ("It is 3.5 or 0.25. The end.", ["It is 3.5 or 0.25.", "The end."]),
        ("By J. R. Smith. Next.", ["By J. R. Smith.", "Next."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("Not split. lower case follows.", ["Not split. lower case follows."]),
        ("Cite {{cite:ab12}}. {{formula:x-y}} holds.", ["Cite {{cite:ab12}}.", "{{formula:x-y}} holds."]),
        ("  \n", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert [text[a:b] for a, b in split_sentences(text)] == expected


# --- parsing --------------------------------------------------------------------------------------
def test_parse_rejects_carry_member_line_and_reason(sample_tar: Path) -> None:
    batch = unarxive.load(sample_tar)
    rejects = {(r.table, r.origin): r.reason for r in batch.rejects}
    assert set(rejects) == {
        ("Paper", _origin(2)),
        ("Paper", _origin(5)),
        ("Paper", _origin(6)),
        ("Paper", _origin(7)),
        ("CITES", _origin(3)),
    }
    assert "not JSON" in rejects[("Paper", _origin(2))]
    assert "JSON list, expected an object" in rejects[("Paper", _origin(5))]
    assert "'P98-1081' is not an arXiv id" in rejects[("Paper", _origin(6))]
    assert f"already read at {_origin(3)}" in rejects[("Paper", _origin(7))]
    assert "c2 of arxiv:2212.00002 resolves to the citing paper itself" in rejects[("CITES", _origin(3))]


def test_papers_and_stubs(sample_tar: Path) -> None:
    papers = unarxive.load(sample_tar).nodes["Paper"].set_index("id")
    full = papers[papers["stub"] == False]  # noqa: E712 - an object column of True/False/None
    assert full.index.tolist() == ["arxiv:2212.00001", "arxiv:2212.00002"]
    first = papers.loc["arxiv:2212.00001"]
    assert (first["title"], first["abstract"], first["year"]) == ("A test paper", "We test things.", 2022)
    assert (first["doi"], first["arxiv_id"], first["dataset"]) == ("10.1000/abc", "2212.00001", "unarxive")
    stubs = papers[papers["stub"] == True]  # noqa: E712
    assert sorted(stubs.index) == [
        "arxiv:2101.00001",
        "arxiv:2102.00002",
        "doi:10.5555/xyz",
        "openalex:W7",
        "ref:doej2003",  # b3 and b5 have no id (and no title index is given): works by author and year
        "ref:nobodyc1999",
    ]
    assert stubs.loc["arxiv:2102.00002", ["arxiv_id", "doi"]].tolist() == ["2102.00002", "10.7777/q"]
    assert stubs["title"].isna().all() and set(stubs["dataset"]) == {"unarxive"}
    assert stubs.loc["ref:doej2003", ["label", "reference"]].tolist() == [
        "Doe J, 2003",
        "J. Doe. Statistical phrase-based translation. In NAACL, 2003.",
    ]


def test_stubs_keep_the_longest_reference_string_naming_them(sample_tar: Path) -> None:
    papers = unarxive.load(sample_tar).nodes["Paper"].set_index("id")
    reference = papers["reference"]
    # b2 and b4 name one work (a DOI, and the same DOI in a link): b4's string is the longer
    assert reference["doi:10.5555/xyz"] == "B. Author, J. X (2020), doi: 10.5555/xyz"
    # b6 (DOI + OpenAlex) and c3 (arXiv + the same DOI) of two papers: b6's is the longer
    assert reference["arxiv:2102.00002"] == "D. Author. Paired later. 2021."
    assert reference["arxiv:2101.00001"] == "A. Author. Some arXiv paper. 2021."
    assert reference["openalex:W7"] == "E. Author. OpenAlex only. 2019."
    full = papers["stub"] == False  # noqa: E712
    assert reference[full].isna().all()  # a paper's own record is described by its title and abstract
    assert unarxive.load(sample_tar).nodes["Paper"].equals(unarxive.load(sample_tar).nodes["Paper"])


def test_authors_and_categories(sample_tar: Path) -> None:
    batch = unarxive.load(sample_tar)
    wrote = batch.rels["WROTE"]
    assert wrote[["source", "target", "position"]].values.tolist() == [
        ["author:ada lovelace", "arxiv:2212.00001", 1],
        ["author:alan turing jr", "arxiv:2212.00001", 2],
        ["author:grace hopper", "arxiv:2212.00002", 1],
        ["author:ada lovelace", "arxiv:2212.00002", 2],
    ]
    assert batch.nodes["Author"].set_index("id").loc["author:alan turing jr", "name"] == "Alan Turing Jr."
    category = batch.rels["IN_CATEGORY"]
    assert category[["source", "target", "score", "inferred"]].values.tolist() == [
        ["arxiv:2212.00001", "cs.CL", 1.0, False],
        ["arxiv:2212.00001", "cs.XX", 1.0, False],
        ["arxiv:2212.00002", "cs.CL", 1.0, False],
    ]


def test_known_categories_are_checked_when_given(sample_tar: Path) -> None:
    batch, _ = unarxive.load_with_report(sample_tar, categories={"cs.CL"})
    rejects = [r for r in batch.rejects if r.table == "IN_CATEGORY"]
    assert [(r.origin, "'cs.XX'" in r.reason and "arxiv:2212.00001" in r.reason) for r in rejects] == [
        (_origin(1), True)
    ]
    assert batch.rels["IN_CATEGORY"]["target"].tolist() == ["cs.CL", "cs.CL"]


def test_sentences(sample_tar: Path) -> None:
    batch = unarxive.load(sample_tar)
    sentences = batch.nodes["Sentence"]
    shown = sentences.fillna({"section": "-"})  # null section shown as "-"
    assert shown[["id", "sid", "section", "text"]].values.tolist()[:5] == [
        [
            "arxiv:2212.00001#1",
            1,
            "Introduction",
            "We follow Smith et al. {{cite:b1}} and e.g. Fig. 2 shows 3.5 units.",
        ],
        ["arxiv:2212.00001#2", 2, "Introduction", "Prior work {{cite:b2}}{{cite:b3}} differs."],
        ["arxiv:2212.00001#3", 3, "Introduction", "Then {{cite:b1}} again."],
        ["arxiv:2212.00001#4", 4, "-", "A final sentence without citations."],
        ["arxiv:2212.00002#1", 1, "Related Work", "We extend {{cite:c1}}."],
    ]
    assert (sentences["paper_id"] == sentences["id"].str.split("#").str[0]).all()
    has = batch.rels["HAS_SENTENCE"]
    assert has["target"].tolist() == sentences["id"].tolist()
    assert has["source"].tolist() == sentences["paper_id"].tolist()


def test_citations_without_a_title_index(sample_tar: Path) -> None:
    batch, report = unarxive.load_with_report(sample_tar)
    cites = batch.rels["CITES"]
    assert {(s, t): n for s, t, n in cites[["source", "target", "n_contexts"]].values.tolist()} == {
        ("arxiv:2212.00001", "arxiv:2101.00001"): 2,  # b1, cited in sentences 1 and 3
        ("arxiv:2212.00001", "doi:10.5555/xyz"): 1,  # b2 and b4: one work
        ("arxiv:2212.00001", "arxiv:2102.00002"): 0,  # b6: its DOI is paired with an arXiv id in c3
        ("arxiv:2212.00001", "openalex:W7"): 0,
        ("arxiv:2212.00002", "arxiv:2212.00001"): 1,  # a paper of this input: no stub
        ("arxiv:2212.00002", "arxiv:2102.00002"): 0,
        ("arxiv:2212.00001", "ref:doej2003"): 1,  # b3, no id: keyed by its first author and year
        ("arxiv:2212.00001", "ref:nobodyc1999"): 0,
    }
    assert set(cites["dataset"]) == {"unarxive"}
    mentions = batch.rels["MENTIONS"]
    assert mentions[["source", "target", "marker"]].values.tolist() == [
        ["arxiv:2212.00001#1", "arxiv:2101.00001", "{{cite:b1}}"],
        ["arxiv:2212.00001#3", "arxiv:2101.00001", "{{cite:b1}}"],
        ["arxiv:2212.00001#2", "doi:10.5555/xyz", "{{cite:b2}}"],
        ["arxiv:2212.00001#2", "ref:doej2003", "{{cite:b3}}"],
        ["arxiv:2212.00002#1", "arxiv:2212.00001", "{{cite:c1}}"],
    ]
    assert report.total == 10
    assert report.by_id == {"arxiv": 3, "arxiv_in_text": 1, "doi": 2, "doi_link": 1, "openalex": 1}
    assert (report.by_title, report.by_fields, report.unresolved) == (0, 2, 0)
    assert sum(report.by_id.values()) + report.by_title + report.by_fields + report.unresolved == report.total
    assert (report.spans, report.spans_to_unresolved, report.spans_without_entry) == (6, 0, 0)
    assert (report.merged_ids, report.malformed_ids) == (1, 0)
    entries = report.entries.set_index(["paper_id", "bib_key"])
    assert entries.loc[("arxiv:2212.00001", "b6"), ["resolved_by", "target"]].tolist() == ["doi", "arxiv:2102.00002"]
    assert entries.loc[("arxiv:2212.00001", "b3"), ["resolved_by", "target"]].tolist() == ["fields", "ref:doej2003"]
    assert "10 bibliography entries: 8 by id" in report.summary()


def test_citations_with_a_title_index(sample_tar: Path, small_index: TitleIndex) -> None:
    batch, report = unarxive.load_with_report(sample_tar, small_index)
    assert (report.by_title, report.by_fields, report.unresolved) == (1, 1, 0)
    row = report.entries.set_index("bib_key").loc["b3"]
    assert (row["resolved_by"], row["target"], row["score"]) == ("title", "N03-1017", 1.0)
    papers = batch.nodes["Paper"].set_index("id")
    assert papers.loc["N03-1017"].drop(ORIGIN_COLUMN).isna().all()  # id only: nothing to overwrite
    assert ["arxiv:2212.00001#2", "N03-1017", "{{cite:b3}}"] in batch.rels["MENTIONS"][
        ["source", "target", "marker"]
    ].values.tolist()
    assert unarxive.load(sample_tar, small_index).rels["CITES"].equals(batch.rels["CITES"])


def test_every_row_has_an_origin(sample_tar: Path) -> None:
    batch = unarxive.load(sample_tar)
    for name, frame in {**batch.nodes, **batch.rels}.items():
        assert frame[ORIGIN_COLUMN].str.fullmatch(rf"{MEMBER}:[13]").all(), name


def test_plain_and_gzipped_jsonl_and_folders_read_the_same(sample_tar: Path, tmp_path: Path) -> None:
    data = b"\n".join(LINES) + b"\n"
    folder = tmp_path / "folder"
    (folder / "sample").mkdir(parents=True)
    (folder / MEMBER).write_bytes(data)
    gzipped = tmp_path / "one.jsonl.gz"
    gzipped.write_bytes(gzip.compress(data))
    reference = unarxive.load(sample_tar)
    for other in (unarxive.load(folder), unarxive.load(gzipped)):
        for name in reference.nodes:
            pd.testing.assert_frame_equal(
                reference.nodes[name].drop(columns=ORIGIN_COLUMN), other.nodes[name].drop(columns=ORIGIN_COLUMN)
            )
        assert [(r.table, r.origin.rsplit(":")[-1]) for r in other.rejects] == [
            (r.table, r.origin.rsplit(":")[-1]) for r in reference.rejects
        ]
    assert unarxive.load(gzipped).rejects[0].origin == "one.jsonl.gz:2"


def test_missing_or_damaged_input_is_an_ingest_error(sample_tar: Path, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="CITEGRAPH_DATA"):
        unarxive.load(tmp_path / "nope.tar.gz")
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(sample_tar.read_bytes()[:-40])
    with pytest.raises(IngestError, match="damaged or truncated"):
        unarxive.load(broken)


def _categories(*codes: str) -> GraphBatch:
    return GraphBatch("categories", nodes={"ArxivCategory": pd.DataFrame({"code": list(codes)})})


def test_ingest_validation_names_the_unknown_category(sample_tar: Path, empty_store: GraphStore) -> None:
    ingest(empty_store, _categories("cs.CL"))
    batch = unarxive.load(sample_tar)
    report = ingest(empty_store, batch, on_error="skip")
    found = [r for r in report.rejects if r not in batch.rejects]
    assert [(r.table, r.origin) for r in found] == [("IN_CATEGORY", _origin(1))]
    assert "'cs.XX' is neither in this load nor in the store" in found[0].reason
    assert report.records == report.stored + report.rejected
    stats = empty_store.stats()
    assert stats["nodes"]["Paper"] == 2 + 4 + 2  # full papers, stubs by id, stubs by their fields
    assert stats["relationships"]["MENTIONS"] == 5
    ingest(empty_store, batch, on_error="skip")
    assert empty_store.stats() == stats


# --- the real sample ------------------------------------------------------------------------------
def _sample(data_dir: Path) -> Path:
    return data_dir / "unarxive" / "unarXive_data_sample_2022.tar.gz"


@pytest.mark.shared_data
def test_real_unarxive(data_dir: Path, empty_store: GraphStore) -> None:
    started = time.perf_counter()
    batch, report = unarxive.load_with_report(_sample(data_dir))
    seconds = time.perf_counter() - started
    papers = batch.nodes["Paper"]
    assert int((papers["stub"] == False).sum()) == 49  # noqa: E712
    assert batch.rejects == []
    assert report.total == 1786
    assert sum(report.by_id.values()) + report.by_title + report.by_fields + report.unresolved == 1786
    assert report.by_title == 0  # no title index given
    assert report.by_id == {"arxiv": 146, "arxiv_in_text": 108, "doi": 375, "doi_link": 416, "openalex": 111}
    assert report.by_fields + report.unresolved == 630  # no id: keyed by their fields where these say enough
    assert report.by_fields > 500
    # Hand-checked: "M. Hamanaka and K. Toda, Phys. Lett. A 316, 77 (2003) [hep-th/0211148]." has no id
    entries = report.entries.set_index("target")
    assert entries.loc["ref:hamanakam2003physletta", "resolved_by"] == "fields"
    aliases = batch.rels["ALIAS_OF"].set_index("source")["target"]
    assert aliases["ref:pla-v316-p77"] == "ref:hamanakam2003physletta"  # what a later load meets
    assert report.spans == 3042 and report.spans_without_entry == 0
    assert len(batch.nodes["Sentence"]) > 10_000
    print(f"\nunarXive sample: {seconds:.2f}s; {report.summary()}")

    ingest(empty_store, taxonomy.load(data_dir / "taxonomy"))
    first = ingest(empty_store, batch)  # on_error="fail": any validation reject would raise
    assert first.rejected == 0
    stats = empty_store.stats()
    assert stats["relationships"]["CITES"] == len(batch.rels["CITES"])
    assert stats["relationships"]["IN_CATEGORY"] == len(batch.rels["IN_CATEGORY"])
    second = ingest(empty_store, batch)
    assert empty_store.stats() == stats
    assert sum(c.created for c in second.tables.values()) == 0

    # Every stub keeps its reference string: every one of the 1,786 entries has a non-empty `bib_entry_raw`.
    # Hand-checked: the one entry naming arXiv 2104.06921 (or its OpenAlex id W4225968159), read here
    # with plain json, is bibliography entry 274b09... of 2212.11867 (member arXiv_src_2212_086.jsonl, line 1).
    entries = []
    with tarfile.open(_sample(data_dir)) as archive:
        for member in archive:
            if member.name.endswith(".jsonl"):
                handle = archive.extractfile(member)
                assert handle is not None
                entries += [e for line in handle for e in json.loads(line)["bib_entries"].values()]
    assert len(entries) == 1786 and all(str(e.get("bib_entry_raw") or "").strip() for e in entries)
    naming = [e for e in entries if "2104.06921" in json.dumps(e) or "W4225968159" in json.dumps(e)]
    assert [e["bib_entry_raw"] for e in naming] == [
        "T. Alazard, O. Lazar, and Q. H. Nguyen. On the dynamics of the roots of polynomials under "
        "differentiation. Journal de Mathématiques Pures et Appliquées, 162:1–22, 2022."
    ]
    row = empty_store.query("paper_by_ids", {"ids": ["arxiv:2104.06921"]})[0]
    assert row["stub"] is True and row["title"] is None and row["reference"] == naming[0]["bib_entry_raw"]
    stored = pd.concat(empty_store.iter_nodes("Paper", 5_000))
    stubs = stored[stored["stub"] == True]  # noqa: E712
    assert len(stubs) == int((papers["stub"] == True).sum()) and stubs["reference"].notna().all()  # noqa: E712


@pytest.mark.shared_data
@pytest.mark.slow
def test_real_unarxive_with_anthology_titles(data_dir: Path) -> None:
    index = TitleIndex.from_papers(anthology.load(data_dir / "anthology" / "papers.jsonl.gz").nodes["Paper"])
    batch, report = unarxive.load_with_report(_sample(data_dir), index)
    assert sum(report.by_id.values()) == 1156
    assert report.by_title + report.by_fields + report.unresolved == 630
    assert report.by_title >= 1
    by_title = report.entries[report.entries["resolved_by"] == "title"]
    assert (by_title["score"] >= 0.9).all()
    assert set(by_title["target"]) <= set(batch.nodes["Paper"]["id"])
    print(f"\nwith the Anthology title index: {report.summary()}")
