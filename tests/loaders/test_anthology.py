"""The ACL Anthology loader: tiny inline files, then the real 103k-line file."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pandas as pd
import pytest

from graph.errors import IngestError, ValidationError
from graph.ingest import GraphBatch, ingest
from graph.schema import ORIGIN_COLUMN
from graph.store import GraphStore
from loaders import anthology


def _line(**record: object) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


# One line per case; the comment is the line number the origins must name.
LINES: list[bytes] = [
    _line(  # 1: good; the same author twice (two spellings, one key) and a third author
        id="P98-1081",
        title="Good paper",
        abstract="",
        year="1998",
        venue="ACL",
        venue_ids=["acl"],
        authors=["José García", "Jose Garcia", "Ann Lee"],
    ),
    b'{"id": "P98-1082", "title": ',  # 2: not JSON
    b'{"id": "P98-1083", "title": "caf\xe9"}',  # 3: not UTF-8 (latin-1 e-acute)
    _line(title="No id here", authors=["Ann Lee"]),  # 4: no id
    _line(  # 5: a year of the wrong type, left for validation
        id="2020.acl-main.1", title="Undated", abstract="An abstract.", year="n.d.", venue="ACL", authors=["Ann Lee"]
    ),
    b"",  # 6: blank, not a record
    b"[1, 2]",  # 7: JSON, but not an object
    _line(id="2101.00001", title="An arXiv id", year="2021", authors=[]),  # 8: not an Anthology id
    _line(id="p99-1001", title="Lower-case old id", year="1999", authors="Ann Lee"),  # 9: authors not a list
    _line(id="P99-1002", title="Odd author", year="1999", authors=[None, "Bo Chen", "--"]),  # 10: entries 1, 3 bad
]


@pytest.fixture
def papers_file(tmp_path: Path) -> Path:
    path = tmp_path / "papers.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write(b"\n".join(LINES) + b"\n")
    return path


def _rejects(batch: GraphBatch) -> dict[str, tuple[str, str]]:
    return {r.origin: (r.table, r.reason) for r in batch.rejects}


def test_parse_rejects_carry_file_line_and_reason(papers_file: Path) -> None:
    rejects = _rejects(anthology.load(papers_file))

    assert set(rejects) == {f"papers.jsonl.gz:{n}" for n in (2, 3, 4, 7, 8, 9, 10)}
    assert rejects["papers.jsonl.gz:2"][0] == "Paper" and "not JSON" in rejects["papers.jsonl.gz:2"][1]
    assert rejects["papers.jsonl.gz:3"][0] == "Paper" and "not UTF-8 (byte 0xe9" in rejects["papers.jsonl.gz:3"][1]
    assert rejects["papers.jsonl.gz:4"][0] == "Paper" and "no `id`" in rejects["papers.jsonl.gz:4"][1]
    assert "line is a JSON list, expected an object" in rejects["papers.jsonl.gz:7"][1]
    assert "'2101.00001' is not an ACL Anthology id" in rejects["papers.jsonl.gz:8"][1]
    assert rejects["papers.jsonl.gz:9"][0] == "WROTE" and "expected a list of names" in rejects["papers.jsonl.gz:9"][1]


def test_bad_author_entries_are_each_rejected(papers_file: Path) -> None:
    batch = anthology.load(papers_file)
    line10 = [r for r in batch.rejects if r.origin == "papers.jsonl.gz:10"]
    assert [(r.table, r.reason.split(" is ")[0].split(" '")[0]) for r in line10] == [
        ("Author", "author 1"),
        ("Author", "author 3"),
    ]
    wrote = batch.rels["WROTE"]
    assert wrote.loc[wrote["target"] == "P99-1002", ["source", "position"]].values.tolist() == [["author:bo chen", 2]]


def test_tables_and_values(papers_file: Path) -> None:
    batch = anthology.load(papers_file)
    papers = batch.nodes["Paper"].set_index("id")
    # lines 1, 5, 9 and 10 give papers; the old-style id is upper-cased
    assert papers.index.tolist() == ["P98-1081", "2020.acl-main.1", "P99-1001", "P99-1002"]
    assert papers.loc["P98-1081", "year"] == 1998
    assert pd.isna(papers.loc["P98-1081", "abstract"])  # empty string -> null
    assert papers.loc["2020.acl-main.1", "year"] == "n.d."  # passed through for validation
    assert set(papers["dataset"]) == {"anthology"}

    authors = batch.nodes["Author"].set_index("id")
    assert authors.loc["author:jose garcia", "name"] == "José García"  # the first spelling met
    assert len(authors) == 3

    wrote = batch.rels["WROTE"]
    first = wrote[wrote["target"] == "P98-1081"]
    assert first[["source", "position"]].values.tolist() == [["author:jose garcia", 1], ["author:ann lee", 3]]


def test_every_row_of_every_table_has_an_origin(papers_file: Path) -> None:
    batch = anthology.load(papers_file)
    for name, frame in {**batch.nodes, **batch.rels}.items():
        assert frame[ORIGIN_COLUMN].str.fullmatch(r"papers\.jsonl\.gz:\d+").all(), name
    assert batch.nodes["Paper"][ORIGIN_COLUMN].tolist() == [f"papers.jsonl.gz:{n}" for n in (1, 5, 9, 10)]


def test_uncompressed_jsonl_reads_the_same(papers_file: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "papers.jsonl.gz"  # same name, so the origins match
    plain.parent.mkdir()
    plain.write_bytes(gzip.decompress(papers_file.read_bytes()))
    a, b = anthology.load(papers_file), anthology.load(plain)
    assert a.rejects == b.rejects
    pd.testing.assert_frame_equal(a.nodes["Paper"], b.nodes["Paper"])


def test_truncated_gzip_is_an_ingest_error(papers_file: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(papers_file.read_bytes()[:-12])
    with pytest.raises(IngestError, match="damaged or truncated"):
        anthology.load(broken)


def test_missing_file_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="CITEGRAPH_DATA"):
        anthology.load(tmp_path / "nope.jsonl.gz")


def test_validation_rejects_keep_the_origin(papers_file: Path, empty_store: GraphStore) -> None:
    batch = anthology.load(papers_file)
    with pytest.raises(ValidationError):
        ingest(empty_store, batch)  # on_error="fail": nothing written
    assert empty_store.count_nodes("Paper") == 0

    report = ingest(empty_store, batch, on_error="skip")
    by_origin = {(r.table, r.origin): r.reason for r in report.rejects}
    assert "`year` is 'n.d.', expected an integer" in by_origin[("Paper", "papers.jsonl.gz:5")]
    assert "neither in this load nor in the store" in by_origin[("WROTE", "papers.jsonl.gz:5")]
    assert empty_store.count_nodes("Paper") == 3
    assert report.records == report.stored + report.rejected


@pytest.mark.shared_data
def test_real_anthology(data_dir: Path) -> None:
    path = data_dir / "anthology" / "papers.jsonl.gz"
    started = time.perf_counter()
    batch = anthology.load(path)
    seconds = time.perf_counter() - started
    papers, authors, wrote = batch.nodes["Paper"], batch.nodes["Author"], batch.rels["WROTE"]
    rejected_lines = {r.origin for r in batch.rejects if r.table == "Paper"}
    print(
        f"\nanthology: {len(papers)} papers + {len(rejected_lines)} rejected lines, {len(authors)} authors, "
        f"{len(wrote)} WROTE, {len(batch.rejects)} rejects in all, {seconds:.1f}s"
    )
    for reject in batch.rejects[:10]:
        print(f"  reject {reject.table} {reject.origin}: {reject.reason}")

    assert len(papers) + len(rejected_lines) == 103_514
    assert papers["id"].is_unique
    assert papers["abstract"].notna().sum() == 58_959  # the README's count of papers with an abstract
    assert pd.api.types.is_integer_dtype(papers["year"])
    assert authors["id"].is_unique
    assert not wrote.duplicated(["source", "target"]).any()
    assert set(wrote["target"]) <= set(papers["id"]) and set(wrote["source"]) == set(authors["id"])
    for frame in (papers, authors, wrote):
        assert frame[ORIGIN_COLUMN].notna().all()


def test_html_escaped_titles_and_abstracts_are_stored_as_text(tmp_path: Path) -> None:
    """The Anthology's file escapes `&` in abstracts (`R&amp;G`); the dashboard showed the entity as it is."""
    record = _line(
        id="2023.bea-1.26",
        title="Repair &amp; Grounding: &quot;R&amp;G&quot;",
        abstract="Patterns of R&amp;G, as in AT&T &lt;2023&gt;.",
        year="2023",
        venue="BEA &amp; friends",
    )
    path = tmp_path / "papers.jsonl"
    path.write_bytes(record + b"\n")
    paper = anthology.load(path).nodes["Paper"].iloc[0]
    assert paper["title"] == 'Repair & Grounding: "R&G"'
    assert paper["abstract"] == "Patterns of R&G, as in AT&T <2023>."
    assert paper["venue"] == "BEA & friends"
