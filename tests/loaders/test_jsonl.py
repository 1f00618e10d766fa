"""The "your own corpus" JSON Lines loader: a small valid file, then every kind of broken line."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from graph.errors import IngestError, ValidationError
from graph.ingest import GraphBatch, ingest
from graph.schema import ORIGIN_COLUMN
from graph.store import GraphStore
from loaders import jsonl


def _line(**record: object) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


VALID: list[bytes] = [
    _line(  # 1
        type="paper",
        id="p98-1081",  # an ACL id: canonicalised
        title="Trigrams'n'Tags",
        abstract="A tagger.",
        year=2000,
        venue="ANLP",
        doi="https://doi.org/10.3115/974147.974178",
        authors=["Thorsten Brants"],
    ),
    _line(  # 2
        type="paper",
        id="my-paper-7",  # not an ACL/arXiv/DOI id: kept as given
        title="Our tagger",
        year="2011",
        arxiv_id="arXiv:1101.00001v2",
        authors=["Ann Lee", "Bo Chen"],
    ),
    _line(  # 3
        type="citation",
        citing="my-paper-7",
        cited="P98-1081",
        contexts=["We tag with TnT (Brants, 2000).", "TnT (Brants, 2000) is fast."],
    ),
    _line(type="sentence", paper="my-paper-7", sid=1, text="We present a tagger.", section="Introduction"),  # 4
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return _write(tmp_path / "corpus.jsonl", VALID)


def test_valid_file_tables(corpus: Path) -> None:
    batch = jsonl.load(corpus)
    assert batch.source == "jsonl:corpus.jsonl"
    assert batch.rejects == []

    papers = batch.nodes["Paper"].set_index("id")
    assert papers.index.tolist() == ["P98-1081", "my-paper-7"]
    assert papers.loc["P98-1081", "doi"] == "10.3115/974147.974178"
    assert papers.loc["my-paper-7", "arxiv_id"] == "1101.00001"
    assert papers.loc["my-paper-7", "year"] == 2011  # digits in a string read as the integer
    assert set(papers["dataset"]) == {"jsonl"}

    sentences = batch.nodes["Sentence"].set_index("id")
    assert sentences.index.tolist() == ["my-paper-7#ctx1", "my-paper-7#ctx2", "my-paper-7#1"]
    assert sentences.loc["my-paper-7#ctx2", "text"] == "TnT (Brants, 2000) is fast."
    assert pd.isna(sentences.loc["my-paper-7#ctx1", "sid"]) and sentences.loc["my-paper-7#1", "sid"] == 1

    cites = batch.rels["CITES"]
    assert cites[["source", "target", "n_contexts", "dataset"]].values.tolist() == [
        ["my-paper-7", "P98-1081", 2, "jsonl"]
    ]
    assert batch.rels["MENTIONS"][["source", "target"]].values.tolist() == [
        ["my-paper-7#ctx1", "P98-1081"],
        ["my-paper-7#ctx2", "P98-1081"],
    ]
    assert sorted(batch.rels["HAS_SENTENCE"]["target"]) == ["my-paper-7#1", "my-paper-7#ctx1", "my-paper-7#ctx2"]
    assert batch.rels["WROTE"][["source", "target", "position"]].values.tolist() == [
        ["author:thorsten brants", "P98-1081", 1],
        ["author:ann lee", "my-paper-7", 1],
        ["author:bo chen", "my-paper-7", 2],
    ]
    for name, frame in {**batch.nodes, **batch.rels}.items():
        assert frame[ORIGIN_COLUMN].str.fullmatch(r"corpus\.jsonl:[1-4]").all(), name


def test_ingesting_twice_gives_the_same_graph(corpus: Path, empty_store: GraphStore) -> None:
    first = ingest(empty_store, jsonl.load(corpus))
    stats = empty_store.stats()
    second = ingest(empty_store, jsonl.load(corpus))

    assert empty_store.stats() == stats
    assert stats["nodes"]["Paper"] == 2 and stats["nodes"]["Sentence"] == 3 and stats["nodes"]["Author"] == 3
    assert stats["relationships"]["CITES"] == 1 and stats["relationships"]["MENTIONS"] == 2
    assert stats["relationships"]["HAS_SENTENCE"] == 3 and stats["relationships"]["WROTE"] == 3
    assert first.rejected == second.rejected == 0
    assert second.stored == first.stored and all(c.created == 0 for c in second.tables.values())


def test_a_sentence_citing_two_papers_is_one_node(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "two.jsonl",
        [
            _line(type="citation", citing="a", cited="b", contexts=["Both (B, 2001; C, 2002).", "Only B."]),
            _line(type="citation", citing="a", cited="c", contexts=["Both (B, 2001; C, 2002).", "Only B."][:1]),
            _line(type="citation", citing="d", cited="c", contexts=["Only B."]),  # another citing paper: its own
        ],
    )
    batch = jsonl.load(path)
    assert batch.nodes["Sentence"]["id"].tolist() == ["a#ctx1", "a#ctx2", "d#ctx1"]
    assert batch.rels["MENTIONS"][["source", "target"]].values.tolist() == [
        ["a#ctx1", "b"],
        ["a#ctx2", "b"],
        ["a#ctx1", "c"],
        ["d#ctx1", "c"],
    ]
    assert batch.rels["CITES"]["n_contexts"].tolist() == [2, 1, 1]


def test_categories_point_at_the_taxonomy(tmp_path: Path, empty_store: GraphStore) -> None:
    ingest(empty_store, GraphBatch("taxonomy", nodes={"ArxivCategory": pd.DataFrame({"code": ["cs.CL"]})}))
    path = _write(
        tmp_path / "cats.jsonl", [_line(type="paper", id="x1", title="T", categories=["cs.CL", "cs.XX", "cs.CL"])]
    )
    report = ingest(empty_store, jsonl.load(path), on_error="skip")
    assert [(r.table, r.origin, r.reason) for r in report.rejects] == [
        ("IN_CATEGORY", "cats.jsonl:1", "`target` ArxivCategory 'cs.XX' is neither in this load nor in the store")
    ]
    edges = empty_store.read_edges("IN_CATEGORY")
    assert edges[["source", "target", "score", "inferred"]].values.tolist() == [["x1", "cs.CL", 1.0, False]]


# --- broken input ---------------------------------------------------------------------------------

BROKEN: list[bytes] = [
    _line(type="paper", id="good-1", title="A good paper", year=2001),  # 1
    b'{"type": "paper", "id": "good-2", "title": "Cut',  # 2: truncated JSON
    b'{"type": "paper", "id": "caf\xe9", "title": "x"}',  # 3: not UTF-8 (latin-1 e-acute)
    _line(type="author", name="Ann Lee"),  # 4: unknown type
    _line(type="citation", citing="good-1", cited="nowhere-9"),  # 5: dangling: defined nowhere
    _line(type="paper", id="undated", title="No date", year="n.d."),  # 6: wrong type, left to validation
    b"",  # 7: blank, not a record
    _line(id="x", title="no type"),  # 8
    b"[1, 2]",  # 9
    _line(type="paper", title="No id"),  # 10
    _line(type="paper", id="untitled", title="  "),  # 11: blank title = missing
    _line(type="citation", citing="good-1", cited="good-1"),  # 12: self-citation
    _line(type="sentence", paper="good-1", sid="three", text="x"),  # 13
    _line(type="sentence", paper="good-1", sid=2),  # 14: no text
    _line(type="citation", citing=7, cited="good-1"),  # 15: id not a string
    _line(type="paper", id="odd", title="Odd lists", authors="Ann Lee", categories=[5]),  # 16
    _line(type="citation", citing="odd", cited="good-1", contexts="one text"),  # 17
    _line(type="citation", citing="undated", cited="good-1", contexts=["fine", 3]),  # 18
]

PARSE_REJECTS = {
    ("line", "broken.jsonl:2"): "line is not JSON (Unterminated string starting at: column 44) "
    '\'{"type": "paper", "id": "good-2", "title": "Cut\'; each line must be one complete JSON object',
    ("line", "broken.jsonl:3"): "line is not UTF-8 (byte 0xe9 at column 29); save the file as UTF-8",
    ("line", "broken.jsonl:4"): "record has `type` 'author'; expected one of paper, citation, sentence",
    ("line", "broken.jsonl:8"): "record has no `type`; expected one of paper, citation, sentence",
    ("line", "broken.jsonl:9"): "line is a JSON list, expected an object with a `type` (paper, citation, sentence)",
    ("Paper", "broken.jsonl:10"): "paper record has no `id`; a paper needs `id` and `title`",
    ("Paper", "broken.jsonl:11"): "paper record has no `title`; a paper needs `id` and `title`",
    ("CITES", "broken.jsonl:12"): "citation from 'good-1' to itself; a paper cannot cite itself, drop the record",
    ("Sentence", "broken.jsonl:13"): "`sid` is 'three', expected an integer (the sentence's position)",
    ("Sentence", "broken.jsonl:14"): "sentence record has no `text`; a sentence needs `paper`, `sid` and `text`",
    ("CITES", "broken.jsonl:15"): "`citing` is 7, expected a paper id (a string)",
    ("WROTE", "broken.jsonl:16"): "`authors` is 'Ann Lee', expected a list of names; loaded without authors",
    ("IN_CATEGORY", "broken.jsonl:16"): "category 5 is not an arXiv code such as 'cs.CL'",
    ("MENTIONS", "broken.jsonl:17"): "`contexts` is 'one text', expected a list of sentence texts; "
    "the citation is loaded without them",
    ("Sentence", "broken.jsonl:18"): "context 2 is 3, expected a sentence text",
}


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    return _write(tmp_path / "broken.jsonl", BROKEN)


def test_parse_rejects_name_file_line_and_what_to_do(broken: Path) -> None:
    batch = jsonl.load(broken)
    assert {(r.table, r.origin): r.reason for r in batch.rejects} == PARSE_REJECTS
    assert len(batch.rejects) == len(PARSE_REJECTS)
    assert batch.nodes["Paper"]["id"].tolist() == ["good-1", "undated", "odd"]
    assert batch.nodes["Sentence"]["id"].tolist() == ["undated#ctx1"]  # the good context of line 18


def test_fail_mode_writes_nothing(broken: Path, empty_store: GraphStore) -> None:
    before = empty_store.stats()
    with pytest.raises(ValidationError) as caught:
        ingest(empty_store, jsonl.load(broken))
    assert empty_store.stats() == before
    assert "nothing was written" in str(caught.value) and "--on-error skip" in str(caught.value)
    origins = {(r.table, r.origin) for r in caught.value.rejects}
    assert set(PARSE_REJECTS) <= origins and ("Paper", "broken.jsonl:6") in origins


def test_skip_mode_loads_the_rest_and_validation_keeps_the_origin(
    broken: Path, empty_store: GraphStore, tmp_path: Path
) -> None:
    report = ingest(empty_store, jsonl.load(broken), on_error="skip", rejects_dir=tmp_path / "rejects")
    validation = {(r.table, r.origin): r.reason for r in report.rejects}.items() - PARSE_REJECTS.items()
    assert dict(validation) == {
        ("Paper", "broken.jsonl:6"): "`year` is 'n.d.', expected an integer",
        ("CITES", "broken.jsonl:5"): "`target` Paper 'nowhere-9' is neither in this load nor in the store",
        # the paper of line 6 was rejected, so its citation and context go too
        ("CITES", "broken.jsonl:18"): "`source` Paper 'undated' is neither in this load nor in the store",
        ("HAS_SENTENCE", "broken.jsonl:18"): "`source` Paper 'undated' is neither in this load nor in the store",
    }
    assert report.records == report.stored + report.rejected
    assert empty_store.count_nodes("Paper") == 2  # good-1, odd
    assert empty_store.count_rels("CITES") == 1  # odd -> good-1 (line 17, without contexts)
    assert (tmp_path / "rejects" / "jsonl_broken.jsonl.rejects.jsonl").is_file()


def test_unknown_fields_are_ignored_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _write(tmp_path / "extra.jsonl", [_line(type="paper", id="a", title="T", abstarct="typo")])
    with caplog.at_level(logging.WARNING, logger="loaders.jsonl"):
        batch = jsonl.load(path)
    assert batch.rejects == [] and batch.nodes["Paper"]["id"].tolist() == ["a"]
    assert "field `paper.abstarct` is not part of the format and was ignored (1 records, first at extra.jsonl:1)" in (
        caplog.text
    )


def test_ids_are_canonical_when_they_read_as_known_ids(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "ids.jsonl",
        [
            _line(type="paper", id=" arXiv:2101.00001v2 ", title="A"),
            _line(type="paper", id="10.18653/V1/X", title="B"),
            _line(type="citation", citing="2101.00001", cited="doi:10.18653/v1/x"),
        ],
    )
    batch = jsonl.load(path)
    assert batch.nodes["Paper"]["id"].tolist() == ["arxiv:2101.00001", "doi:10.18653/v1/x"]
    assert batch.rels["CITES"][["source", "target"]].values.tolist() == [["arxiv:2101.00001", "doi:10.18653/v1/x"]]


def test_missing_file_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="is not a file"):
        jsonl.load(tmp_path / "nope.jsonl")
