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
from loaders import jsonl, wos
from loaders.contexts import context_id


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
    assert set(papers["dataset"]) == {"jsonl"} and papers["stub"].tolist() == [False, False]

    sentences = batch.nodes["Sentence"].set_index("id")
    tag = context_id("my-paper-7", "We tag with TnT (Brants, 2000).")
    fast = context_id("my-paper-7", "TnT (Brants, 2000) is fast.")
    assert sorted(sentences.index) == sorted(["my-paper-7#1", tag, fast])
    assert sentences.loc[fast, "text"] == "TnT (Brants, 2000) is fast."
    assert pd.isna(sentences.loc[tag, "sid"]) and sentences.loc["my-paper-7#1", "sid"] == 1

    cites = batch.rels["CITES"]
    assert cites[["source", "target", "n_contexts", "dataset"]].values.tolist() == [
        ["my-paper-7", "P98-1081", 2, "jsonl"]
    ]
    assert batch.rels["MENTIONS"][["source", "target"]].values.tolist() == [[tag, "P98-1081"], [fast, "P98-1081"]]
    assert sorted(batch.rels["HAS_SENTENCE"]["target"]) == sorted(["my-paper-7#1", tag, fast])
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
    both, only_b, d_only_b = (
        context_id("a", "Both (B, 2001; C, 2002)."),
        context_id("a", "Only B."),
        context_id("d", "Only B."),
    )
    assert batch.nodes["Sentence"]["id"].tolist() == [both, only_b, d_only_b]
    assert batch.rels["MENTIONS"][["source", "target"]].values.tolist() == [
        [both, "b"],
        [only_b, "b"],
        [both, "c"],
        [d_only_b, "c"],
    ]
    assert batch.rels["CITES"]["n_contexts"].tolist() == [2, 1, 1]


def test_a_papers_contexts_from_two_files_loaded_in_two_runs_add_up(tmp_path: Path, empty_store: GraphStore) -> None:
    """Context ids hash the text: a second run's contexts of the same citing paper are added beside the first's
    (numbered per run, its second context took the first run's second id and overwrote that sentence)."""
    papers = [_line(type="paper", id=p, title=f"Paper {p}", year=2001) for p in ("a", "b", "c")]
    first = [*papers, _line(type="citation", citing="a", cited="b", contexts=["Both (B; C).", "Only B."])]
    second = [_line(type="citation", citing="a", cited="c", contexts=["Both (B; C).", "Only C."])]
    ingest(empty_store, jsonl.load(_write(tmp_path / "one.jsonl", first)))
    ingest(empty_store, jsonl.load(_write(tmp_path / "two.jsonl", second)))
    sentences = pd.concat(list(empty_store.iter_nodes("Sentence", 100)))
    text_of = dict(zip(sentences["id"], sentences["text"]))
    mentions = empty_store.read_edges("MENTIONS")
    rows = sorted((sid, text_of[sid], cited) for sid, cited in zip(mentions["source"], mentions["target"]))
    assert sorted((text, cited) for _, text, cited in rows) == [
        ("Both (B; C).", "b"),
        ("Both (B; C).", "c"),  # one sentence citing both papers, named in two runs
        ("Only B.", "b"),
        ("Only C.", "c"),
    ]
    assert {sid for sid, _, _ in rows} == {context_id("a", t) for t in ("Both (B; C).", "Only B.", "Only C.")}


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
    _line(type="paper", id="untitled", title="  "),  # 11: blank title = none: a stub
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
    ("Paper", "broken.jsonl:10"): "paper record has no `id`; a paper needs `id`",
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
    assert batch.nodes["Paper"]["id"].tolist() == ["good-1", "undated", "untitled", "odd"]
    assert batch.nodes["Paper"]["stub"].tolist() == [False, False, True, False]
    assert batch.nodes["Sentence"]["id"].tolist() == [context_id("undated", "fine")]  # the good context of line 18


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
    assert empty_store.count_nodes("Paper") == 3  # good-1, untitled (a stub), odd
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


# --- stubs, other ids, sentences that cite ----------------------------------------------------------


def _papers(store: GraphStore) -> list[tuple[object, ...]]:
    """(id, stub, title) of every stored paper, by id."""
    frame = pd.concat(list(store.iter_nodes("Paper", 1000)), ignore_index=True)[["id", "stub", "title"]]
    return [tuple(None if pd.isna(v) else v for v in row) for row in frame.astype(object).values.tolist()]


def _paper_row(store: GraphStore, paper: str) -> dict[str, object]:
    rows = [row for row in _papers(store) if row[0] == paper]
    assert len(rows) == 1, rows
    return {"stub": rows[0][1], "title": rows[0][2]}


def test_a_paper_without_title_is_a_stub(tmp_path: Path, empty_store: GraphStore) -> None:
    path = _write(
        tmp_path / "stubs.jsonl",
        [
            _line(type="paper", id="full", title="A full paper"),  # 1
            _line(type="paper", id="10.1162/Coli.2000.26.1.1", stub=True),  # 2: a stub, said so
            _line(type="paper", id="no-title"),  # 3: a stub, no title
            _line(type="paper", id="titled-stub", title="Known title", stub=True),  # 4: a stub may have a title
            _line(type="paper", id="said-full", stub=False),  # 5: full without a title: rejected
            _line(type="paper", id="odd-stub", title="T", stub="yes"),  # 6: wrong type: validation
            _line(type="citation", citing="full", cited="10.1162/coli.2000.26.1.1"),  # 7
        ],
    )
    batch = jsonl.load(path)
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "stubs.jsonl:5")]
    assert "`stub` false but no `title`" in batch.rejects[0].reason
    report = ingest(empty_store, batch, on_error="skip")
    assert [(r.table, r.origin, r.reason) for r in report.rejects][1:] == [
        ("Paper", "stubs.jsonl:6", "`stub` is 'yes', expected true or false")
    ]
    assert _papers(empty_store) == [
        ("doi:10.1162/coli.2000.26.1.1", True, None),
        ("full", False, "A full paper"),
        ("no-title", True, None),
        ("titled-stub", True, "Known title"),
    ]
    assert empty_store.count_rels("CITES") == 1


def test_a_later_full_record_fills_in_a_stub(tmp_path: Path, empty_store: GraphStore) -> None:
    stub = _write(tmp_path / "stub.jsonl", [_line(type="paper", id="w1", stub=True)])
    full = _write(tmp_path / "full.jsonl", [_line(type="paper", id="w1", title="The title", year=2001)])
    ingest(empty_store, jsonl.load(stub))
    assert _paper_row(empty_store, "w1") == {"title": None, "stub": True}
    ingest(empty_store, jsonl.load(full))
    assert _paper_row(empty_store, "w1") == {"title": "The title", "stub": False}


def test_a_later_stub_keeps_a_full_paper_full(tmp_path: Path, empty_store: GraphStore) -> None:
    full = _write(tmp_path / "full.jsonl", [_line(type="paper", id="w1", title="The title", year=2001)])
    stub = _write(tmp_path / "stub.jsonl", [_line(type="paper", id="w1", stub=True)])
    ingest(empty_store, jsonl.load(full))
    ingest(empty_store, jsonl.load(stub))
    assert _paper_row(empty_store, "w1") == {"title": "The title", "stub": False}


def test_a_later_stub_keeps_the_title(tmp_path: Path, empty_store: GraphStore) -> None:
    full = _write(tmp_path / "full.jsonl", [_line(type="paper", id="w1", title="The title", year=2001)])
    stub = _write(tmp_path / "stub.jsonl", [_line(type="paper", id="w1")])
    ingest(empty_store, jsonl.load(full))
    ingest(empty_store, jsonl.load(stub))
    assert _paper_row(empty_store, "w1")["title"] == "The title"


IDS: list[bytes] = [
    _line(  # 1
        type="paper",
        id="my-paper-7",
        title="Our tagger",
        doi="10.1234/ABC",
        ids={"arxiv": "arXiv:1101.00001v2", "s2": "55DDF1B6CBE79B963A5A9D4DA6E0A15E0D6761B5", "pmid": 18153422},
    ),
    _line(type="paper", id="P98-1081", title="TnT", ids={"openalex": "https://openalex.org/W2741809807"}),  # 2
    _line(type="citation", citing="doi:10.1234/abc", cited="W2741809807"),  # 3: W-id is no id kind jsonl reads
    _line(type="citation", citing="1101.00001", cited="P98-1081"),  # 4: by its arXiv alias
    _line(type="paper", id="bad-ids", title="B", ids={"dblp": "x", "pmid": "12a", "doi": None}),  # 5
    _line(type="paper", id="thief", title="C", ids={"doi": "10.1234/abc"}),  # 6: another paper's DOI
    _line(type="paper", id="listy", title="D", ids=["10.1/x"]),  # 7
]


def test_ids_become_aliases_and_name_the_paper_in_the_file(tmp_path: Path, empty_store: GraphStore) -> None:
    batch = jsonl.load(_write(tmp_path / "ids.jsonl", IDS))
    aliases = batch.rels["ALIAS_OF"][["source", "target"]].values.tolist()
    assert aliases == [
        ["doi:10.1234/abc", "my-paper-7"],
        ["arxiv:1101.00001", "my-paper-7"],
        ["s2:55ddf1b6cbe79b963a5a9d4da6e0a15e0d6761b5", "my-paper-7"],
        ["pmid:18153422", "my-paper-7"],
        ["openalex:W2741809807", "P98-1081"],
    ]
    assert batch.nodes["Alias"]["kind"].tolist() == ["doi", "arxiv", "s2", "pmid", "openalex"]
    papers = batch.nodes["Paper"].set_index("id")
    assert papers.loc["my-paper-7", ["doi", "arxiv_id"]].tolist() == ["10.1234/abc", "1101.00001"]  # ids.arxiv fills
    # citing/cited resolve through the aliases given in this file; an id no paper here has stays as given
    assert batch.rels["CITES"][["source", "target"]].values.tolist() == [
        ["my-paper-7", "W2741809807"],
        ["my-paper-7", "P98-1081"],
    ]
    assert [(r.table, r.origin, r.reason) for r in batch.rejects] == [
        (
            "Alias",
            "ids.jsonl:5",
            "`ids` has an id of kind 'dblp'; known kinds: doi, arxiv, acl, openalex, s2, s2corpus, pmid, mag, wos, "
            "scopus. The paper 'bad-ids' is loaded without it",
        ),
        (
            "Alias",
            "ids.jsonl:5",
            "`ids.pmid` is '12a', which does not read as a pmid id; the paper 'bad-ids' is loaded without it: "
            "correct it or leave it out",
        ),
        (
            "Alias",
            "ids.jsonl:7",
            '`ids` is [\'10.1/x\'], expected an object such as {"doi": "10.1/x", "s2": "<40 hex digits>"}; '
            "the paper is loaded without them",
        ),
        (
            "Alias",
            "ids.jsonl:6",
            "'doi:10.1234/abc' is given as an id of 'thief', but it already names the paper 'my-paper-7' of this "
            "file; one id names one work: remove it from one of them",
        ),
    ]

    report = ingest(empty_store, batch, on_error="skip")
    stats = empty_store.stats()
    assert stats["nodes"]["Alias"] == 5 and stats["relationships"]["ALIAS_OF"] == 5
    assert [r.origin for r in report.rejects if r.table == "CITES"] == ["ids.jsonl:3"]  # W27... defined nowhere
    ingest(empty_store, jsonl.load(_write(tmp_path / "ids.jsonl", IDS)), on_error="skip")
    assert empty_store.stats() == stats


CITING_SENTENCES: list[bytes] = [
    _line(type="paper", id="a", title="Citing paper"),  # 1
    _line(type="paper", id="b", title="Cited B"),  # 2
    _line(type="paper", id="c", stub=True),  # 3
    _line(type="paper", id="d", title="Cited D"),  # 4
    # 5: a context before the sentence it repeats (whitespace differs), and one that is no sentence
    _line(type="citation", citing="a", cited="b", contexts=["We  follow B [1].", "Only a context of B."]),
    _line(  # 6
        type="sentence",
        paper="a",
        sid=1,
        text="We follow B [1].",
        cites=[{"paper": "b", "marker": "[1]"}, "c", {"paper": "b", "marker": "again"}],
    ),
    _line(type="sentence", paper="a", sid=2, text="Unlike C [2] and D.", cites=[{"paper": "c", "marker": "[2]"}]),  # 7
    # 8: D's context is sentence 2, which does not name D: the sentence gets the MENTIONS, no copy is made
    _line(type="citation", citing="a", cited="d", contexts=["Unlike C [2] and D."]),
    _line(type="sentence", paper="a", sid=3, text="Me [3].", cites=["a", 5, {"marker": "[4]"}]),  # 9
    _line(type="sentence", paper="a", sid=4, text="Nowhere [5].", cites="nowhere"),  # 10
]


def test_sentences_that_cite_make_mentions_and_contexts_are_not_copied(tmp_path: Path) -> None:
    batch = jsonl.load(_write(tmp_path / "cite.jsonl", CITING_SENTENCES))
    context = context_id("a", "Only a context of B.")
    assert sorted(batch.nodes["Sentence"]["id"]) == sorted(["a#1", "a#2", "a#3", "a#4", context])
    assert batch.nodes["Sentence"].set_index("id").loc[context, "text"] == "Only a context of B."
    mentions = batch.rels["MENTIONS"][["source", "target", "marker"]].astype(object)
    assert sorted(mentions.where(mentions.notna(), None).values.tolist(), key=str) == sorted(
        [
            ["a#1", "b", "[1]"],
            ["a#1", "c", None],
            ["a#2", "c", "[2]"],
            [context, "b", None],
            ["a#2", "d", None],
        ],
        key=str,
    )
    cites = batch.rels["CITES"].set_index(["source", "target"])
    assert cites["n_contexts"].to_dict() == {("a", "b"): 2, ("a", "d"): 1, ("a", "c"): 2}
    assert cites.loc[("a", "c"), "_origin"] == "cite.jsonl:6"  # made from the sentences: no citation record
    expected = 'a paper id or {"paper": "<id>", "marker": "[3]"}'
    assert [(r.table, r.origin, r.reason) for r in batch.rejects] == [
        ("MENTIONS", "cite.jsonl:9", f"cited paper 2 is 5, expected {expected}"),
        ("MENTIONS", "cite.jsonl:9", f"cited paper 3 is {{'marker': '[4]'}}, expected {expected}"),
        (
            "MENTIONS",
            "cite.jsonl:10",
            f"`cites` is 'nowhere', expected a list of cited papers ({expected}); the sentence is loaded without them",
        ),
        (
            "MENTIONS",
            "cite.jsonl:9",
            "sentence 3 of 'a' cites 'a' itself; a paper cannot cite itself, drop it from `cites`",
        ),
    ]


def test_sentences_that_cite_load_twice_to_the_same_graph(tmp_path: Path, empty_store: GraphStore) -> None:
    path = _write(tmp_path / "cite.jsonl", CITING_SENTENCES)
    first = ingest(empty_store, jsonl.load(path), on_error="skip")
    stats = empty_store.stats()
    second = ingest(empty_store, jsonl.load(path), on_error="skip")
    assert empty_store.stats() == stats and first.rejected == second.rejected == 4
    assert stats["nodes"]["Sentence"] == 5 and stats["relationships"]["MENTIONS"] == 5
    assert stats["relationships"]["CITES"] == 3 and stats["relationships"]["HAS_SENTENCE"] == 5
    mentions = empty_store.read_edges("MENTIONS").astype(object)
    to_c = mentions[mentions["target"] == "c"].sort_values("source")
    assert [(s, None if pd.isna(m) else m) for s, m in zip(to_c["source"], to_c["marker"])] == [
        ("a#1", None),
        ("a#2", "[2]"),
    ]


def test_a_sentence_citing_a_paper_defined_nowhere_is_dangling(tmp_path: Path, empty_store: GraphStore) -> None:
    path = _write(
        tmp_path / "dangle.jsonl",
        [_line(type="paper", id="a", title="A"), _line(type="sentence", paper="a", sid=1, text="X [1].", cites=["zz"])],
    )
    report = ingest(empty_store, jsonl.load(path), on_error="skip")
    assert sorted((r.table, r.origin, r.reason) for r in report.rejects) == [
        ("CITES", "dangle.jsonl:2", "`target` Paper 'zz' is neither in this load nor in the store"),
        ("MENTIONS", "dangle.jsonl:2", "`target` Paper 'zz' is neither in this load nor in the store"),
    ]


def test_a_bibliography_only_work_is_a_stub_with_its_reference_string(tmp_path: Path, empty_store: GraphStore) -> None:
    """There was no `reference` field: a user put the entry in `title` and got a full paper named by it."""
    entry = "Brants, T. (2000). TnT: a statistical part-of-speech tagger. In ANLP 2000."
    path = _write(
        tmp_path / "refs.jsonl",
        [
            _line(type="paper", id="mine", title="Our tagger"),
            _line(type="paper", id="brants-2000", reference=f"  {entry} "),
            _line(type="citation", citing="mine", cited="brants-2000"),
        ],
    )
    batch = jsonl.load(path)
    assert batch.rejects == []
    ingest(empty_store, batch)
    [papers] = list(empty_store.iter_nodes("Paper", 10))
    stored = papers.set_index("id")
    assert stored.loc["brants-2000", "reference"] == entry and bool(stored.loc["brants-2000", "stub"])
    assert pd.isna(stored.loc["brants-2000", "title"])
    assert not bool(stored.loc["mine", "stub"]) and pd.isna(stored.loc["mine", "reference"])
    # a later record with the title fills the work in and keeps the reference string
    ingest(
        empty_store, jsonl.load(_write(tmp_path / "more.jsonl", [_line(type="paper", id="brants-2000", title="TnT")]))
    )
    [papers] = list(empty_store.iter_nodes("Paper", 10))
    filled = papers.set_index("id").loc["brants-2000"]
    assert filled["title"] == "TnT" and not bool(filled["stub"]) and filled["reference"] == entry


def test_a_reference_string_is_read_as_fields_that_a_later_load_meets(tmp_path: Path, empty_store: GraphStore) -> None:
    """A work known by its `reference` gets a label, volume and first page read from the string, and its reference
    and field keys as aliases: a Web of Science export citing the same work later joins it, not a second node."""
    entry = "Hamanaka, M. and Toda, K. (2003). Towards noncommutative integrable systems. Phys. Lett. A 316, 77–80."
    path = _write(
        tmp_path / "refs.jsonl",
        [
            _line(type="paper", id="mine", title="Our paper"),
            _line(type="paper", id="hamanaka-2003", reference=entry),
            _line(type="citation", citing="mine", cited="hamanaka-2003"),
        ],
    )
    batch = jsonl.load(path)
    row = batch.nodes["Paper"].set_index("id").loc["hamanaka-2003"]
    assert (row["label"], row["volume"], row["first_page"]) == ("Hamanaka M, 2003, Phys. Lett. A 316:77", "316", "77")
    aliases = dict(zip(batch.rels["ALIAS_OF"]["source"], batch.rels["ALIAS_OF"]["target"]))
    assert aliases == {"ref:hamanakam2003physletta": "hamanaka-2003", "ref:pla-v316-p77": "hamanaka-2003"}
    ingest(empty_store, batch)
    export = tmp_path / "savedrecs.txt"
    export.write_text(
        "FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU Lee, A\nTI Later\nPY 2010\n"
        "CR HAMANAKA M, 2003, PHYS LETT A, V316, P77\nUT WOS:000000000000009\nER\nEF\n",
        encoding="utf-8",
    )
    ingest(empty_store, wos.load(export))
    [papers] = list(empty_store.iter_nodes("Paper", 10))
    assert sorted(papers["id"]) == ["hamanaka-2003", "mine", "wos:000000000000009"]
    cited = {r["target"] for r in empty_store.read_edges("CITES").to_dict("records")}
    assert cited == {"hamanaka-2003"}


def test_a_paper_whose_ids_name_another_papers_key_is_joined_into_it(tmp_path: Path, empty_store: GraphStore) -> None:
    """`"ids": {"mag": "2123"}` beside a paper keyed `mag:2123` was rejected ("one id names one work"); it is one work."""
    path = _write(
        tmp_path / "mag.jsonl",
        [
            _line(type="citation", citing="p2", cited="other"),
            _line(
                type="paper",
                id="p2",
                abstract="Its abstract.",
                ids={"mag": "2123", "doi": "10.1234/J"},
                authors=["Ann Lee", "Bo Chen"],
            ),
            _line(type="paper", id="mag:2123", title="Joined work", year=2011, authors=["Ann Lee"]),
            _line(type="paper", id="other", stub=True),
        ],
    )
    batch = jsonl.load(path)
    assert batch.rejects == []
    papers = batch.nodes["Paper"].set_index("id")
    assert sorted(papers.index) == ["mag:2123", "other"]
    work = papers.loc["mag:2123"]
    assert (work["title"], work["abstract"], work["year"], work["doi"], bool(work["stub"])) == (
        "Joined work",
        "Its abstract.",
        2011,
        "10.1234/j",
        False,
    )
    assert work[ORIGIN_COLUMN] == "mag.jsonl:3"  # the record keyed by the id
    aliases = batch.rels["ALIAS_OF"]
    assert sorted(zip(aliases["source"], aliases["target"])) == [("doi:10.1234/j", "mag:2123"), ("p2", "mag:2123")]
    assert list(zip(batch.rels["CITES"]["source"], batch.rels["CITES"]["target"])) == [("mag:2123", "other")]
    wrote = batch.rels["WROTE"]
    assert sorted(zip(wrote["source"], wrote["target"])) == [
        ("author:ann lee", "mag:2123"),
        ("author:bo chen", "mag:2123"),
    ]
    report = ingest(empty_store, batch)  # on_error="fail": nothing rejected
    assert report.rejects == [] and empty_store.stats()["nodes"]["Paper"] == 2
