"""The importers' toolkit (loaders/toolkit.py): one line reader, one JSON-line parser, one load context."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from api.cli.main import main
from graph import StoreConfig, open_store
from graph.errors import IngestError, Reject
from loaders import SOURCES, LoadContext
from loaders._common import iter_raw_lines
from loaders.toolkit import JsonProblem, JsonValue, iter_lines, json_records, parse_json_line

ANTHOLOGY_PAPER = {"id": "1952.earlymt-1.2", "title": "Present interest in mechanical translation"}


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id": "W1", "n": [1, 2.5, null, true], "s": "caf\xc3\xa9"}',
        b'{"a": NaN, "b": Infinity}',  # the standard library's JSON, which orjson refuses
        b'"\\ud800"',  # a lone surrogate escape
        b"123456789012345678901234567890",  # past 64 bits: an int, as json reads it
    ],
)
def test_a_line_parses_to_what_the_standard_library_reads(raw: bytes) -> None:
    parsed = parse_json_line(raw, 7)
    assert isinstance(parsed, JsonValue) and parsed.line == 7
    expected = json.loads(raw.decode("utf-8"))
    assert json.dumps(parsed.value) == json.dumps(expected) and type(parsed.value) is type(expected)


def test_a_bad_line_is_a_located_problem_with_the_reason_and_what_to_do() -> None:
    cut = parse_json_line(b'{"id": "W1", "title": "Cut', 3)
    assert isinstance(cut, JsonProblem) and cut.line == 3
    assert cut.reason.startswith("line is not JSON (Unterminated string starting at: column 23)")
    assert cut.reason.endswith(
        "each line must be one complete JSON value (a truncated last line means the file "
        "was cut: download or copy it again)"
    )
    latin = parse_json_line(b'{"title": "caf\xe9"}', 4)
    assert isinstance(latin, JsonProblem)
    assert latin.reason == "line is not UTF-8 (byte 0xe9 at column 15); save the file as UTF-8"
    plain = parse_json_line(b"[1,", 1, expected="JSON object", advice="")
    assert isinstance(plain, JsonProblem) and plain.reason.endswith("each line must be one complete JSON object")


def test_json_records_name_file_and_line_of_every_value_and_reject(tmp_path: Path) -> None:
    folder = tmp_path / "works"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "part_000.gz").write_bytes(gzip.compress(b'{"id": 1}\n\n{"id": \n{"id": 3}\n'))
    (folder / "b.json").write_text('{"results": [{"id": 4}]}', encoding="utf-8")
    from loaders.toolkit import input_files

    found = list(json_records(input_files(folder, (".gz", ".json")), "Paper"))
    values = [item for item in found if not isinstance(item, Reject)]
    rejects = [item for item in found if isinstance(item, Reject)]
    assert values == [
        ({"id": 1}, "a/part_000.gz", 1, False),
        ({"id": 3}, "a/part_000.gz", 4, False),
        ({"results": [{"id": 4}]}, "b.json", 1, True),
    ]
    assert [(r.table, r.origin) for r in rejects] == [("Paper", "a/part_000.gz:3")]


def test_one_gzip_reader_keeps_the_lines_before_a_cut(tmp_path: Path) -> None:
    whole = gzip.compress(b"".join(b'{"n": %d}\n' % n for n in range(2000)))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    read: list[bytes] = []
    with pytest.raises(IngestError, match="ends early"):
        read.extend(iter_lines(cut))
    assert read and read[0] == b'{"n": 0}'
    again: list[bytes] = []
    with pytest.raises(IngestError, match=r"cut.jsonl.gz: the gzip stream is damaged or truncated"):
        again.extend(iter_raw_lines(cut))
    assert again == read  # the same reader under both names


def _crossref_work_citing_by_title(data_dir: Path, folder: Path) -> Path:
    samples = data_dir / "formats" / "crossref" / "crossref.json"
    if not samples.exists():
        pytest.skip(f"no Crossref sample at {samples}")
    work = json.loads(samples.read_text(encoding="utf-8"))
    work = work.get("message", work)
    work["reference"] = [
        {"key": "r1", "unstructured": "Loomis, W. F. 1952. Present interest in mechanical translation. In Proc. MT."}
    ]
    path = folder / "w.json"
    path.write_text(json.dumps(work), encoding="utf-8")
    return path


def _data_folder_with_one_anthology_paper(folder: Path) -> Path:
    papers = folder / "anthology" / "papers.jsonl.gz"
    papers.parent.mkdir(parents=True)
    papers.write_bytes(gzip.compress((json.dumps(ANTHOLOGY_PAPER) + "\n").encode("utf-8")))
    return folder


def test_the_load_context_gives_crossref_the_anthology_of_its_data_folder(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_DATA", str(tmp_path / "elsewhere"))  # no Anthology there
    work = _crossref_work_citing_by_title(data_dir, tmp_path)
    data = _data_folder_with_one_anthology_paper(tmp_path / "data")
    batch = SOURCES["crossref"].read(work, LoadContext(data))
    assert batch.rels["CITES"]["target"].tolist() == [ANTHOLOGY_PAPER["id"]]
    elsewhere = SOURCES["crossref"].read(work, LoadContext(tmp_path / "elsewhere")).rels.get("CITES")
    # without that Anthology the reference is keyed by its own fields (a ref: stub), never the Anthology paper
    assert elsewhere is None or ANTHOLOGY_PAPER["id"] not in elsewhere["target"].tolist()


def test_ingest_data_flag_reaches_every_source(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--data` was honoured by `ingest all` only: Crossref looked for the Anthology under CITEGRAPH_DATA."""
    monkeypatch.setenv("CITEGRAPH_DATA", str(tmp_path / "elsewhere"))
    work = _crossref_work_citing_by_title(data_dir, tmp_path)
    data = _data_folder_with_one_anthology_paper(tmp_path / "data")
    db = tmp_path / "g.db"
    assert main(["-q", "--db", str(db), "ingest", "crossref", str(work), "--data", str(data)]) == 0
    with open_store(StoreConfig(db_path=db, read_only=True)) as store:
        cited = store.read_edges("CITES")["target"].tolist()
    assert cited == [ANTHOLOGY_PAPER["id"]]
