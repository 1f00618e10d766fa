"""Task 1A CSVs as the CL-SciSumm editions publish them: read by column name, written back in the input's layout.

Each variant below is a header that occurs in published CL-SciSumm files (WING-NUS/scisumm-corpus):
the 2018 test-set inputs (one of them, W99-0623, ends with ``Reference Citation`` instead of
``Discourse Facet``), the 2018 gold files (CRLF, a run of unnamed trailing columns, ``NA`` cells),
runs written by pandas (columns in alphabetical order), runs without ``Citation Marker`` and
``Citation Text Clean``, and the ``Citation Number`` misspelling of the annotation files. The
linker itself is replaced by a fixed predictor: these tests are about the files.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from graph.errors import DataError
from loaders.task1a import Reference, link_folder, read_run, read_task1a_table

RP = "W99-0623"
RP_XML = """<PAPER>
<S sid="0" ssid="0">Exploiting Diversity in Natural Language Processing: Combining Parsers</S>
<ABSTRACT>
<S sid="1" ssid="1">Three state-of-the-art statistical parsers are combined to produce more accurate parses.</S>
<S sid="2" ssid="2">Two general approaches are presented and two combination techniques are described.</S>
</ABSTRACT>
</PAPER>
"""
CITANCE = "Henderson and Brill (1999) showed that independent parsers can be combined, for a boost"
CITANCE_2 = 'constituent voting of "Henderson and Brill (1999)",\nover three parsers'

# The header of the CL-SciSumm 2018 test-set input Test-Set-2018/W99-0623/annotation/W99-0623.csv
HEADER_2018_TEST_W99 = (
    "Citance Number,Reference Article,Citing Article,Citation Marker Offset,Citation Marker,Citation Offset,"
    "Citation Text,Citation Text Clean,Reference Offset,Reference Text,Reference Citation"
)


def predict(texts: list[str], reference: Reference) -> list[list[int]]:
    """Sentences 1 and 2 for every citance with text."""
    assert reference.paper_id == RP
    return [[1, 2] if text else [] for text in texts]


def csv_text(header: list[str], rows: list[dict[str, str]], *, end: str = "\n") -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=end)
    writer.writerow(header)
    for row in rows:
        writer.writerow([row.get(column, "") for column in header])
    return buffer.getvalue()


def rows_for(header: list[str]) -> list[dict[str, str]]:
    """Two citances in whatever columns ``header`` has (the 2018 test set: offsets '0', plain-text citances)."""
    common = {"Reference Article": RP, "Citation Marker Offset": "0", "Citation Offset": "0", "Citation Marker": "1999"}
    return [
        {**common, "Citance Number": "1", "Citing Article": "A00-2005", "Citation Text": CITANCE},
        {**common, "Citance Number": "2", "Citing Article": "N10-1091", "Citation Text": CITANCE_2},
    ]


def task_folder(root: Path, content: bytes) -> Path:
    folder = root / "inputs" / RP
    (folder / "Reference_XML").mkdir(parents=True)
    (folder / "Reference_XML" / f"{RP}.xml").write_text(RP_XML, encoding="utf-8")
    (folder / "annotation").mkdir()
    (folder / "annotation" / f"{RP}.csv").write_bytes(content)
    return root / "inputs"


def read_back(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    return header, [dict(zip(header, row)) for row in rows]


OFFSETS = "'1','2'"
ELEMENTS = (
    '<S sid="1" ssid="1">Three state-of-the-art statistical parsers are combined to produce more accurate parses.</S>'
    '<S sid="2" ssid="2">Two general approaches are presented and two combination techniques are described.</S>'
)


def test_2018_test_set_header_with_reference_citation_bom_and_crlf(tmp_path: Path) -> None:
    """The W99-0623 input of the 2018 test set, saved with a BOM and CRLF line ends, links and keeps its layout."""
    header = HEADER_2018_TEST_W99.split(",")
    content = "\ufeff" + csv_text(header, rows_for(header), end="\r\n")
    inputs = task_folder(tmp_path, content.encode("utf-8"))

    report = link_folder(inputs, tmp_path / "run", predict)

    assert (report.papers, report.citances, report.linked, report.warnings) == (1, 2, 2, 0)
    written = (tmp_path / "run" / f"{RP}.csv").read_bytes()
    assert not written.startswith(b"\xef\xbb\xbf")  # no BOM: the shared task's scorer reads the header as Latin-1
    assert written.split(b"\n", 1)[0] == HEADER_2018_TEST_W99.encode() + b"\r"  # same columns, same line ends
    out_header, out = read_back(tmp_path / "run" / f"{RP}.csv")
    assert out_header == header and "Discourse Facet" not in out_header
    assert [row["Reference Offset"] for row in out] == [OFFSETS, OFFSETS]
    assert [row["Reference Text"] for row in out] == [ELEMENTS, ELEMENTS]
    assert [row["Citation Text"] for row in out] == [CITANCE, CITANCE_2]  # quoted comma and newline survive
    assert [row["Reference Citation"] for row in out] == ["", ""]


def test_pandas_written_run_in_alphabetical_column_order(tmp_path: Path) -> None:
    """Runs written from a pandas frame (2018/2020 submissions) have the columns sorted; the run keeps that order."""
    header = sorted(HEADER_2018_TEST_W99.replace("Reference Citation", "Discourse Facet").split(","))
    assert header[:3] == ["Citance Number", "Citation Marker", "Citation Marker Offset"]
    inputs = task_folder(tmp_path, csv_text(header, rows_for(header)).encode("utf-8"))

    link_folder(inputs, tmp_path / "run", predict)

    out_header, out = read_back(tmp_path / "run" / f"{RP}.csv")
    assert out_header == header
    assert [row["Reference Offset"] for row in out] == [OFFSETS, OFFSETS]
    assert [row["Citing Article"] for row in out] == ["A00-2005", "N10-1091"]


def test_run_without_citation_marker_and_text_clean(tmp_path: Path) -> None:
    """Nine columns (no Citation Marker, no Citation Text Clean), as some 2020 runs have them: nothing is added."""
    header = [
        "Citance Number",
        "Reference Article",
        "Citing Article",
        "Citation Marker Offset",
        "Citation Offset",
        "Citation Text",
        "Reference Offset",
        "Reference Text",
        "Discourse Facet",
    ]
    inputs = task_folder(tmp_path, csv_text(header, rows_for(header)).encode("utf-8"))

    link_folder(inputs, tmp_path / "run", predict)

    out_header, out = read_back(tmp_path / "run" / f"{RP}.csv")
    assert out_header == header
    assert [row["Reference Text"] for row in out] == [ELEMENTS, ELEMENTS]


def test_gold_layout_with_unnamed_trailing_columns_na_cells_and_blank_rows(tmp_path: Path) -> None:
    """The 2018 gold files: CRLF, a run of empty header cells after Discourse Facet, ``NA`` where nothing was linked."""
    header = [*HEADER_2018_TEST_W99.replace("Reference Citation", "Discourse Facet").split(","), "", "", ""]
    rows = rows_for(header)
    rows[1].update({"Reference Offset": "NA", "Reference Text": "NA", "Discourse Facet": "NA"})
    content = csv_text(header, rows, end="\r\n") + ",,,,,,,,,,,,,\r\n" + "\r\n"  # a blank row Excel leaves
    inputs = task_folder(tmp_path, content.encode("utf-8"))

    report = link_folder(inputs, tmp_path / "run", predict)

    assert report.citances == 2  # the blank rows are no citances
    out_header, out = read_back(tmp_path / "run" / f"{RP}.csv")
    assert out_header == header and len(out) == 2
    assert [row["Reference Offset"] for row in out] == [OFFSETS, OFFSETS]
    assert out[1]["Discourse Facet"] == "NA"  # not ours to change


def test_citation_number_spelling_and_padded_header_names(tmp_path: Path) -> None:
    """``Citation Number`` (the annotation files' misspelling of Citance Number) and spaces around names are read;
    the run names the columns as the shared task does."""
    header = ["Citation Number", " Reference Article", "Citing Article ", "  Citation Text  ", "Reference Offset"]
    canonical = ["Citance Number", "Reference Article", "Citing Article", "Citation Text", "Reference Offset"]
    rows = [{name: row[canon] for name, canon in zip(header, canonical) if canon in row} for row in rows_for(canonical)]
    inputs = task_folder(tmp_path, csv_text(header, rows).encode("utf-8"))

    link_folder(inputs, tmp_path / "run", predict)

    out_header, out = read_back(tmp_path / "run" / f"{RP}.csv")
    assert out_header == [*canonical, "Reference Text"]
    assert [row["Citance Number"] for row in out] == ["1", "2"]
    assert [row["Reference Offset"] for row in out] == [OFFSETS, OFFSETS]


def test_minimal_input_gets_the_two_columns_a_run_must_carry(tmp_path: Path) -> None:
    """Only the columns the linker reads: Reference Offset and Reference Text are added at the end, nothing else."""
    header = ["Citance Number", "Reference Article", "Citing Article", "Citation Text"]
    inputs = task_folder(tmp_path, csv_text(header, rows_for(header)).encode("utf-8"))

    link_folder(inputs, tmp_path / "run", predict)

    out_header, out = read_back(tmp_path / "run" / f"{RP}.csv")
    assert out_header == [*header, "Reference Offset", "Reference Text"]
    assert [(row["Reference Offset"], row["Reference Text"]) for row in out] == [(OFFSETS, ELEMENTS)] * 2


def test_missing_required_column_names_file_missing_found_and_fix(tmp_path: Path) -> None:
    header = ["Citance_Number", "Reference Article", "Citing Article", "Citation Marker", "Reference Offset"]
    inputs = task_folder(tmp_path, csv_text(header, rows_for(header)).encode("utf-8"))
    source = inputs / RP / "annotation" / f"{RP}.csv"

    with pytest.raises(DataError) as caught:
        link_folder(inputs, tmp_path / "run", predict)

    message = str(caught.value)
    assert str(source) in message
    assert "missing column(s) Citance Number, Citation Text" in message
    assert "found: Citance_Number, Reference Article, Citing Article, Citation Marker, Reference Offset" in message
    assert "rename 'Citance_Number' to 'Citance Number'" in message  # the near miss is pointed out
    assert "add the missing column(s) to the header" in message
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_a_bad_file_is_refused_before_any_run_file_is_written(tmp_path: Path) -> None:
    header = HEADER_2018_TEST_W99.replace("Reference Citation", "Discourse Facet").split(",")
    inputs = task_folder(tmp_path, csv_text(header, rows_for(header)).encode("utf-8"))
    other = inputs / "X00-0000" / "annotation"
    other.mkdir(parents=True)
    (other / "X00-0000.csv").write_text("Citance Number,Citing Article\n1,A\n", encoding="utf-8")

    with pytest.raises(DataError, match=r"X00-0000\.csv: not a Task 1A file, missing column"):
        link_folder(inputs, tmp_path / "run", predict)
    assert not (tmp_path / "run").exists()


def test_row_with_more_fields_than_the_header(tmp_path: Path) -> None:
    header = ["Citance Number", "Reference Article", "Citing Article", "Citation Text"]
    content = ",".join(header) + "\n1,W99-0623,A00-2005,Parsers, combined (Henderson and Brill 1999)\n"
    inputs = task_folder(tmp_path, content.encode("utf-8"))

    with pytest.raises(DataError, match=r"W99-0623.csv line 2: 5 fields, the header has 4; quote the fields"):
        link_folder(inputs, tmp_path / "run", predict)


def test_read_table_keeps_the_layout_and_reads_by_name(tmp_path: Path) -> None:
    header = ["Citing Article", "Citation Text", "Citance Number", "Reference Article", ""]
    path = tmp_path / "t.csv"
    path.write_bytes(("\ufeff" + csv_text(header, rows_for(header), end="\r\n")).encode("utf-8"))

    table = read_task1a_table(path)

    assert table.header == header and table.line_end == "\r\n" and len(table.rows) == 2
    assert table.column("Citation Text") == [CITANCE, CITANCE_2]
    assert table.column("Reference Offset") == ["", ""]  # a column the file lacks reads as empty


def test_a_column_named_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("Citation Number,Citance Number,Reference Article,Citing Article,Citation Text\n", encoding="utf-8")

    with pytest.raises(DataError, match=r"column\(s\) Citance Number appear more than once .*; keep one of each"):
        read_task1a_table(path)


def test_score_reads_a_run_in_the_2018_test_set_layout(tmp_path: Path) -> None:
    """``linkage score`` reads runs by column name too: a run without Discourse Facet is scored."""
    header = HEADER_2018_TEST_W99.split(",")
    rows = rows_for(header)
    rows[0].update({"Citation Offset": "['5']", "Reference Offset": OFFSETS})
    run = tmp_path / "run"
    run.mkdir()
    (run / f"{RP}.csv").write_text(csv_text(header, rows), encoding="utf-8")

    predictions = read_run(run)

    assert predictions[(RP, "a00-2005", (5,))] == [1, 2]
    assert predictions[(RP, "n10-1091", (0,))] == []


def test_link_cli_on_the_2018_test_set_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``citegraph link`` on a folder holding the W99-0623 header exits 0 and writes the run in that layout."""
    from api.cli.main import main
    from gnn.linkage import fixed_scorer

    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "bm25.json"
    fixed_scorer("bm25", 1).save(model)
    header = HEADER_2018_TEST_W99.split(",")
    inputs = task_folder(tmp_path, ("\ufeff" + csv_text(header, rows_for(header), end="\r\n")).encode("utf-8"))

    code = main(["-q", "link", "--scisumm-dir", str(inputs), "--out", str(tmp_path / "run"), "--model", str(model)])

    assert code == 0
    out_header, out = read_back(tmp_path / "run" / f"{RP}.csv")
    assert out_header == header
    assert out[0]["Reference Offset"] == "'1'"  # BM25: "parsers", "combined"
