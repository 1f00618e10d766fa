"""The Semantic Scholar importer on the real samples (Graph API responses, S2AG datasets) and on broken copies.

Expected numbers are counted from the raw files with plain ``json`` here, never by the loader.
"""

from __future__ import annotations

import gzip
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from api.cli.main import main
from graph.errors import IngestError
from graph.ingest import GraphBatch, ingest
from graph.store import GraphStore
from loaders import SOURCES, semanticscholar
from loaders.contexts import context_id
from loaders.ids import author_key

pytestmark = pytest.mark.shared_data

PREFERENCE = ("arxiv", "acl", "doi", "s2", "s2corpus", "pmid", "mag")  # loaders.ids.ID_PREFERENCE, kinds S2 gives


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> Path:
    folder = data_dir / "formats" / "semanticscholar"
    if not folder.is_dir():
        pytest.skip(f"Semantic Scholar samples not found at {folder}; see ../shared/data/formats/README.md")
    return folder


def _paper_json(samples: Path) -> dict[str, Any]:
    return json.loads((samples / "Paper.json").read_text(encoding="utf-8"))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _raw_ids(record: dict[str, Any]) -> dict[str, str]:
    """The ids of an API or S2AG record by kind, written by hand from the field names."""
    external = record.get("externalIds") or record.get("externalids") or {}
    paper = record.get("paperId") or (record.get("url") or "").rstrip("/").rpartition("/")[2] or None
    corpus = record.get("corpusId", record.get("corpusid"))
    found = {
        "s2": paper and f"s2:{paper.lower()}",
        "s2corpus": corpus is not None and f"s2corpus:{corpus}",
        "doi": external.get("DOI") and f"doi:{external['DOI'].lower()}",
        "arxiv": external.get("ArXiv") and f"arxiv:{external['ArXiv']}",
        "acl": external.get("ACL"),
        "pmid": external.get("PubMed") and f"pmid:{external['PubMed']}",
        "mag": external.get("MAG") and f"mag:{external['MAG']}",
    }
    return {kind: value for kind, value in found.items() if value}


def _key(ids: dict[str, str]) -> str:
    return next(ids[kind] for kind in PREFERENCE if kind in ids)


def _frame(batch: GraphBatch, name: str) -> pd.DataFrame:
    return {**batch.nodes, **batch.rels}.get(name, pd.DataFrame())


def _count(batch: GraphBatch, name: str) -> int:
    return len(_frame(batch, name))


# --- the real samples -----------------------------------------------------------------------------


def test_paper_record_with_nested_citations_and_references(samples: Path) -> None:
    raw = _paper_json(samples)
    turing = _key(_raw_ids(raw))
    citing = [r for r in raw["citations"] if _raw_ids(r)]
    cited = [r for r in raw["references"] if _raw_ids(r)]
    no_id = [i for i, r in enumerate(raw["references"], start=1) if not _raw_ids(r)]
    assert (len(citing), len(cited), len(no_id)) == (1000, 8, 6)  # as the formats README counts them
    works = [raw, *citing, *cited]
    keys = {_key(_raw_ids(r)) for r in works}
    assert len(keys) == len(works)  # no work twice in the file

    batch = semanticscholar.load(samples / "Paper.json")
    papers = batch.nodes["Paper"].set_index("id")
    assert set(papers.index) == keys and turing == "doi:10.1093/mind/lix.236.433"
    assert not papers["stub"].any()  # every nested record has a title
    assert papers.loc[turing, ["title", "year", "venue"]].tolist() == [
        "Computing Machinery and Intelligence",
        1950,
        "The Philosophy of Artificial Intelligence",
    ]
    cites = batch.rels["CITES"]
    assert len(cites) == 1008
    assert set(cites.loc[cites["target"] == turing, "source"]) == {_key(_raw_ids(r)) for r in citing}
    assert set(cites.loc[cites["source"] == turing, "target"]) == {_key(_raw_ids(r)) for r in cited}
    assert cites["n_contexts"].isna().all() and cites["intents"].isna().all()  # nested records carry neither

    aliases = batch.rels["ALIAS_OF"]
    assert len(aliases) == sum(len(_raw_ids(r)) - 1 for r in works) == _count(batch, "Alias")
    assert set(aliases.loc[aliases["target"] == turing, "source"]) == {
        "s2:2d5673caa9e6af3a7b82a43f19ee920992db07ad",
        "s2corpus:14636783",
        "mag:2145482038",
    }
    names = {(author_key(a["name"]), _key(_raw_ids(r))) for r in works for a in r["authors"]}
    assert _count(batch, "WROTE") == len(names) and _count(batch, "Author") == len({a for a, _ in names})

    assert [(r.table, r.origin) for r in batch.rejects] == [
        ("CITES", f"Paper.json:record 1, reference {i}") for i in no_id
    ]
    assert "Semantic Scholar could not match it to a paper, title 'London Math. Soc'" in batch.rejects[0].reason


def test_a_citation_item_without_its_paper_loads_the_citing_paper_only(samples: Path) -> None:
    batch = semanticscholar.load(samples / "Citation.json")
    assert batch.nodes["Paper"]["id"].tolist() == ["doi:10.1109/lra.2022.3229266"]
    assert "CITES" not in batch.rels and "Sentence" not in batch.nodes
    [reject] = batch.rejects
    assert (reject.table, reject.origin) == ("CITES", "Citation.json:record 1")
    assert "name the file <id>.citations.json" in reject.reason and "its 4 contexts are not" in reject.reason


def test_a_citations_item_named_after_its_paper(samples: Path, tmp_path: Path) -> None:
    raw = json.loads((samples / "Citation.json").read_text(encoding="utf-8"))
    # The file name says which paper the item cites (the {id} of /paper/{id}/citations); any id will do.
    path = shutil.copy(samples / "Citation.json", tmp_path / "ARXIV:1903.11239.citations.json")
    batch = semanticscholar.load(Path(path))
    assert batch.rejects == []
    papers = batch.nodes["Paper"].set_index("id")
    assert papers["stub"].to_dict() == {"doi:10.1109/lra.2022.3229266": False, "arxiv:1903.11239": True}
    [cite] = batch.rels["CITES"].to_dict("records")
    assert (cite["source"], cite["target"]) == ("doi:10.1109/lra.2022.3229266", "arxiv:1903.11239")
    assert list(cite["intents"]) == ["result", "background", "methodology"]  # contextsWithIntent adds none new
    assert (cite["influential"], cite["n_contexts"]) == (True, 4)
    sentences = batch.nodes["Sentence"]
    assert sentences["id"].tolist() == [context_id("doi:10.1109/lra.2022.3229266", t) for t in raw["contexts"]]
    assert sentences["text"].tolist() == raw["contexts"]
    assert set(batch.rels["HAS_SENTENCE"]["source"]) == {"doi:10.1109/lra.2022.3229266"}
    assert batch.rels["MENTIONS"]["target"].tolist() == ["arxiv:1903.11239"] * 4


def test_a_references_item_named_after_its_paper(samples: Path, tmp_path: Path) -> None:
    path = shutil.copy(samples / "Reference.json", tmp_path / "CorpusId:4.references.json.gz")
    Path(path).write_bytes(gzip.compress((samples / "Reference.json").read_bytes()))
    batch = semanticscholar.load(Path(path))
    assert batch.rejects == []
    [cite] = batch.rels["CITES"].to_dict("records")
    assert (cite["source"], cite["target"]) == ("s2corpus:4", "arxiv:1402.0030")
    assert (list(cite["intents"]), cite["influential"], cite["n_contexts"]) == (["background"], False, 1)
    [text] = batch.nodes["Sentence"]["text"]
    assert batch.nodes["Sentence"]["id"].tolist() == [context_id("s2corpus:4", text)]
    assert sorted(batch.rels["ALIAS_OF"]["source"]) == [
        "mag:2122262818",
        "s2:331f0fb3b6176c6e463e0401025b04f6ace9ccd3",
        "s2corpus:1981188",
    ]  # DBLP is not kept


def test_s2ag_citations(samples: Path) -> None:
    path = samples / "s2ag_samples" / "citations" / "citations-sample.jsonl.gz"
    raw = _jsonl(path)
    named = [r for r in raw if r["citedcorpusid"] is not None]
    null_lines = [n for n, r in enumerate(raw, start=1) if r["citedcorpusid"] is None]
    ends = {f"s2corpus:{r[k]}" for r in named for k in ("citingcorpusid", "citedcorpusid")}
    texts = {(r["citingcorpusid"], t.strip()) for r in named for t in r["contexts"] or ()}
    mentions = {(r["citingcorpusid"], t.strip(), r["citedcorpusid"]) for r in named for t in r["contexts"] or ()}
    assert (len(raw), len(named), len(ends)) == (100, 77, 154)

    batch = semanticscholar.load(path)
    assert set(batch.nodes["Paper"]["id"]) == ends and batch.nodes["Paper"]["stub"].all()
    cites = batch.rels["CITES"].set_index(["source", "target"])
    assert len(cites) == len(named)
    for record in named:
        row = cites.loc[(f"s2corpus:{record['citingcorpusid']}", f"s2corpus:{record['citedcorpusid']}")]
        contexts = record["contexts"]
        assert (None if pd.isna(row["n_contexts"]) else row["n_contexts"]) == (
            None if contexts is None else len({t.strip() for t in contexts})
        )
        assert (None if row["intents"] is None else list(row["intents"])) == record["intents"]
        assert row["influential"] == record["isinfluential"]
    assert (_count(batch, "Sentence"), _count(batch, "HAS_SENTENCE")) == (len(texts), len(texts))
    assert _count(batch, "MENTIONS") == len(mentions)
    assert "Alias" not in batch.nodes  # corpus ids only
    assert [(r.table, r.origin) for r in batch.rejects] == [
        ("CITES", f"citations-sample.jsonl.gz:{n}") for n in null_lines
    ]
    assert "`citedcorpusid` is null" in batch.rejects[0].reason and "names no paper" in batch.rejects[0].reason


def test_context_sentences_are_keyed_by_citing_paper_and_text_as_jsonl_does(samples: Path) -> None:
    path = samples / "s2ag_samples" / "citations" / "citations-sample.jsonl.gz"
    batch = semanticscholar.load(path)
    expected: dict[str, list[str]] = {}
    for record in _jsonl(path):
        if record["citedcorpusid"] is not None:
            known = expected.setdefault(f"s2corpus:{record['citingcorpusid']}", [])
            known += [t.strip() for t in record["contexts"] or () if t.strip() not in known]
    ids = {context_id(paper, text): text for paper, texts in expected.items() for text in texts}
    assert dict(zip(batch.nodes["Sentence"]["id"], batch.nodes["Sentence"]["text"])) == ids


def test_s2ag_papers(samples: Path) -> None:
    path = samples / "s2ag_samples" / "papers" / "papers-sample.jsonl.gz"
    raw = _jsonl(path)
    batch = semanticscholar.load(path)
    papers = batch.nodes["Paper"].set_index("id")
    assert set(papers.index) == {_key(_raw_ids(r)) for r in raw} and len(papers) == 100
    assert not papers["stub"].any() and papers["doi"].notna().sum() == sum(bool(_raw_ids(r).get("doi")) for r in raw)
    assert _count(batch, "Alias") == sum(len(_raw_ids(r)) - 1 for r in raw) == 218
    names = {(author_key(a["name"]), _key(_raw_ids(r))) for r in raw for a in r["authors"]}
    assert _count(batch, "WROTE") == len(names) and _count(batch, "Author") == len({a for a, _ in names})
    assert batch.rejects == []


def test_the_samples_folder_loads_twice_to_the_same_graph(samples: Path, empty_store: GraphStore) -> None:
    parts = [
        semanticscholar.load(samples / name)
        for name in (
            "Paper.json",
            "Citation.json",
            "Reference.json",
            "s2ag_samples/citations/citations-sample.jsonl.gz",
            "s2ag_samples/papers/papers-sample.jsonl.gz",
        )
    ]
    # The files share no work (checked by id), so the folder is the sum of its files.
    paper_ids = [set(part.nodes["Paper"]["id"]) | set(_frame(part, "Alias").get("id", ())) for part in parts]
    assert sum(map(len, paper_ids)) == len(set().union(*paper_ids))
    batch = semanticscholar.load(samples)
    for name in ("Paper", "Alias", "CITES", "Sentence", "MENTIONS", "WROTE"):
        assert _count(batch, name) == sum(_count(part, name) for part in parts), name
    assert len(batch.rejects) == 6 + 1 + 1 + 23

    first = ingest(empty_store, batch, on_error="skip")
    stats = empty_store.stats()
    second = ingest(empty_store, semanticscholar.load(samples), on_error="skip")
    assert empty_store.stats() == stats
    assert first.records == first.stored + first.rejected and first.rejected == 31
    assert second.stored == first.stored and all(c.created == 0 for c in second.tables.values())
    assert stats["nodes"]["Paper"] == 1009 + 1 + 1 + 154 + 100 and stats["relationships"]["CITES"] == 1008 + 77


def test_cli_ingest(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, rejects = str(tmp_path / "graph.db"), tmp_path / "rejects"
    args = ["--db", db, "ingest", "semanticscholar", str(samples), "--on-error", "skip", "--rejects-dir", str(rejects)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("semanticscholar: ") and " stored + 31 rejected" in out
    assert len((rejects / "semanticscholar.rejects.jsonl").read_text(encoding="utf-8").splitlines()) == 31
    assert main(["--db", db, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == 1265 and stats["relationships"]["MENTIONS"] == 44
    assert main(["--db", db, "ingest", "semanticscholar"]) == 1  # an importer needs its PATH
    assert "needs the PATH of your export" in capsys.readouterr().err


def test_registered_as_an_importer() -> None:
    source = SOURCES["semanticscholar"]
    assert source.load is semanticscholar.load and not source.bundled


# --- broken copies of the samples -----------------------------------------------------------------


def test_a_truncated_json_file_is_one_reject(samples: Path, tmp_path: Path) -> None:
    data = (samples / "Paper.json").read_bytes()
    path = tmp_path / "Paper.json"
    path.write_bytes(data[: len(data) // 2])
    batch = semanticscholar.load(path)
    assert "Paper" not in batch.nodes
    [reject] = batch.rejects
    assert (reject.table, reject.origin) == ("record", "Paper.json:1")
    assert "not complete JSON" in reject.reason and "truncated download" in reject.reason
    assert "save the API response again" in reject.reason


def test_a_truncated_gzip_keeps_the_lines_before(samples: Path, tmp_path: Path) -> None:
    # The sample decompresses in one read; 40 copies (new corpus ids) make a file read in several.
    lines = _jsonl(samples / "s2ag_samples" / "papers" / "papers-sample.jsonl.gz")
    copies = [{**r, "corpusid": r["corpusid"] + k * 10**10, "url": None} for k in range(40) for r in lines]
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in copies).encode("utf-8"))
    path = tmp_path / "papers-copies.jsonl.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    batch = semanticscholar.load(path)
    last = batch.rejects[-1]
    assert last.table == "record" and "the gzip stream ends or breaks here" in last.reason
    assert "download the file again" in last.reason
    read = int(last.origin.rsplit(":", 1)[1]) - 1  # the lines before the break
    assert 0 < read < len(copies) and f"after line {read} " in last.reason
    partial = [r for r in batch.rejects[:-1] if r.origin == f"papers-copies.jsonl.gz:{read}"]
    assert len(batch.nodes["Paper"]) == read - len(partial)  # a cut-off last line is a reject of its own


def test_a_truncated_last_line_is_a_reject(samples: Path, tmp_path: Path) -> None:
    text = gzip.decompress((samples / "s2ag_samples" / "citations" / "citations-sample.jsonl.gz").read_bytes())
    path = tmp_path / "citations.jsonl"
    path.write_bytes(text[: text.rindex(b"\n", 0, len(text) - 1) + 40])  # line 100 cut after 40 bytes
    batch = semanticscholar.load(path)
    cut = [r for r in batch.rejects if r.origin == "citations.jsonl:100"]
    assert [r.table for r in cut] == ["record"] and "truncated file" in cut[0].reason
    assert len(batch.rejects) == 23 + 1 - (json.loads(text.splitlines()[99])["citedcorpusid"] is None)


def test_non_utf8_line_and_file(samples: Path, tmp_path: Path) -> None:
    lines = gzip.decompress((samples / "s2ag_samples" / "papers" / "papers-sample.jsonl.gz").read_bytes()).split(b"\n")
    lines[4] = lines[4].replace(b'"title":"', b'"title":"caf\xe9 ', 1)
    path = tmp_path / "papers.jsonl"
    path.write_bytes(b"\n".join(lines))
    batch = semanticscholar.load(path)
    [reject] = batch.rejects
    assert (reject.table, reject.origin) == ("record", "papers.jsonl:5")
    assert reject.reason.startswith("line is not UTF-8 (byte 0xe9") and "save the file as UTF-8" in reject.reason
    assert len(batch.nodes["Paper"]) == 99

    data = (samples / "Citation.json").read_bytes().replace(b"Learning to Throw", b"Learning to Thr\xf6w")
    (tmp_path / "Citation.json").write_bytes(data)
    [reject] = semanticscholar.load(tmp_path / "Citation.json").rejects
    assert (reject.table, reject.origin) == ("record", "Citation.json:1")
    assert "file is not UTF-8 (byte 0xf6 on line 1)" in reject.reason and "save it as UTF-8" in reject.reason


def test_wrong_types_are_rejected_with_their_record(samples: Path, tmp_path: Path, empty_store: GraphStore) -> None:
    papers = _jsonl(samples / "s2ag_samples" / "papers" / "papers-sample.jsonl.gz")[:3]
    papers[0]["year"] = "n.d."  # left to validation
    papers[1]["authors"] = "R. Thanoon"
    papers[2]["externalids"]["DOI"] = 5
    citations = _jsonl(samples / "s2ag_samples" / "citations" / "citations-sample.jsonl.gz")[:2]
    citations[0]["isinfluential"] = "yes"
    citations[1]["intents"] = "background"
    citations[1]["contexts"] = ["fine", 7]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*papers, *citations]) + "\n", encoding="utf-8")
    batch = semanticscholar.load(path)
    assert [(r.table, r.origin) for r in batch.rejects] == [
        ("WROTE", "mixed.jsonl:2"),
        ("Alias", "mixed.jsonl:3"),
        ("CITES", "mixed.jsonl:4"),
        ("CITES", "mixed.jsonl:5"),
        ("Sentence", "mixed.jsonl:5"),
    ]
    reasons = [r.reason for r in batch.rejects]
    assert reasons[0] == "`authors` is 'R. Thanoon', expected a list of authors; loaded without them"
    assert (
        reasons[1] == "`externalids.DOI` is 5, which does not read as a doi id; the paper is loaded under its other ids"
    )
    assert reasons[2] == "`isInfluential` is 'yes', expected true or false; the citation is loaded without it"
    assert reasons[3].startswith("`intents` is 'background', expected a list such as ['background', 'methodology']")
    assert reasons[4] == "context 2 is 7, expected a sentence text"
    report = ingest(empty_store, batch, on_error="skip")
    validation = report.rejects[len(batch.rejects) :]
    assert (validation[0].table, validation[0].origin, validation[0].reason) == (
        "Paper",
        "mixed.jsonl:1",
        "`year` is 'n.d.', expected an integer",
    )
    assert {(r.table, r.origin) for r in validation[1:]} == {
        ("WROTE", "mixed.jsonl:1"),
        ("ALIAS_OF", "mixed.jsonl:1"),
        ("HAS_KEYWORD", "mixed.jsonl:1"),  # its s2fieldsofstudy
    }
    assert report.records == report.stored + report.rejected


# --- shapes the samples lack ----------------------------------------------------------------------

S2_A = "a" * 40
S2_B = "b" * 40


def _write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_a_page_of_citation_items_named_after_its_paper(tmp_path: Path) -> None:
    page = {
        "offset": 0,
        "next": 2,
        "data": [
            {
                "contexts": None,
                "intents": [],
                "contextsWithIntent": [{"context": "As in [2].", "intents": ["methodology"]}],
                "isInfluential": False,
                "citingPaper": {"paperId": S2_B, "externalIds": {"CorpusId": 2}, "title": "B"},
            },
            {"contexts": [], "intents": None, "isInfluential": None, "citingPaper": {"paperId": None, "title": "?"}},
        ],
    }
    batch = semanticscholar.load(_write_json(tmp_path / f"{S2_A}.citations.0.json", page))
    [cite] = batch.rels["CITES"].to_dict("records")
    assert (cite["source"], cite["target"], list(cite["intents"]), cite["n_contexts"]) == (
        f"s2:{S2_B}",
        f"s2:{S2_A}",
        ["methodology"],  # from contextsWithIntent; an empty `intents` says nothing
        1,
    )
    assert batch.nodes["Sentence"]["text"].tolist() == ["As in [2]."]
    assert [(r.table, r.origin) for r in batch.rejects] == [("CITES", f"{S2_A}.citations.0.json:record 2")]
    assert "`citingPaper` has no id (paperId, corpusId and externalIds are null" in batch.rejects[0].reason


def test_the_same_citation_from_two_records_is_one_edge(tmp_path: Path) -> None:
    paper = {
        "paperId": S2_A,
        "title": "A",
        "citations": [{"paperId": S2_B, "title": "B"}],  # nested: no contexts, no intents
    }
    item = {
        "contexts": ["Like A [1].", "Like A [1]."],
        "intents": ["background"],
        "isInfluential": True,
        "citingPaper": {"paperId": S2_B, "externalIds": {"DOI": "10.1234/B"}, "title": "B", "year": 2020},
    }
    _write_json(tmp_path / "a.json", paper)
    _write_json(tmp_path / "CorpusId:1.citations.json", {"data": [item]})
    _write_json(tmp_path / "more.json", {"paperId": S2_A, "corpusId": 1, "title": "A"})
    batch = semanticscholar.load(tmp_path)
    papers = batch.nodes["Paper"].set_index("id")
    assert sorted(papers.index) == ["doi:10.1234/b", f"s2:{S2_A}"]  # CorpusId:1 is A (more.json says so)
    assert papers.loc["doi:10.1234/b", "year"] == 2020
    [cite] = batch.rels["CITES"].to_dict("records")
    assert (cite["source"], cite["target"], list(cite["intents"]), cite["influential"], cite["n_contexts"]) == (
        "doi:10.1234/b",
        f"s2:{S2_A}",
        ["background"],
        True,
        1,
    )
    [text] = batch.nodes["Sentence"]["text"]
    assert batch.nodes["Sentence"]["id"].tolist() == [context_id("doi:10.1234/b", text)]
    assert batch.rejects == []


def test_s2ag_abstracts_fill_papers_or_make_stubs(tmp_path: Path) -> None:
    path = tmp_path / "abstracts.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"corpusid": 7, "externalids": {"DOI": "10.1234/x"}, "title": "Seven", "abstract": None},
                {"corpusid": 7, "abstract": "About seven.", "openaccessinfo": None},
                {"corpusid": 8, "abstract": "About eight."},
                {"corpusid": "x", "abstract": "Bad id."},
            ]
        ),
        encoding="utf-8",
    )
    batch = semanticscholar.load(path)
    papers = batch.nodes["Paper"].set_index("id")
    assert papers[["abstract", "stub"]].to_dict("index") == {
        "doi:10.1234/x": {"abstract": "About seven.", "stub": False},
        "s2corpus:8": {"abstract": "About eight.", "stub": True},
    }
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "abstracts.jsonl:4")]


def test_odd_records_and_anchors(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    batch_response = [
        {"paperId": S2_A, "externalIds": {"DOI": "10.1234/same"}, "title": "A"},
        None,
        {"paperId": S2_B, "externalIds": {"DOI": "10.1234/same"}, "title": "B, claiming A's DOI"},
        {"foo": 1},
        {"paperId": S2_A, "title": "A", "references": [{"paperId": S2_A, "title": "A"}], "citations": {"x": 1}},
    ]
    with caplog.at_level(logging.WARNING, logger="loaders.semanticscholar"):
        batch = semanticscholar.load(_write_json(tmp_path / "batch.json", batch_response))
    assert sorted(batch.nodes["Paper"]["id"]) == ["doi:10.1234/same", f"s2:{S2_B}"]  # kept apart
    assert "1 times two works claimed one id of a kind" in caplog.text
    assert [(r.table, r.origin) for r in batch.rejects] == [
        ("record", "batch.json:record 2"),
        ("record", "batch.json:record 4"),
        ("CITES", "batch.json:record 5"),
        ("CITES", "batch.json:record 5, reference 1"),
    ]
    assert "a paper does not cite itself" in batch.rejects[3].reason
    assert batch.rejects[2].reason.startswith("`citations` is {'x': 1}, expected a list of papers")

    item = {"citedPaper": {"paperId": S2_B, "title": "B"}, "contexts": ["x"]}
    [reject] = semanticscholar.load(_write_json(tmp_path / "not-an-id.references.json", item)).rejects
    assert "the file name gives 'not-an-id' as the paper, which is no paper id" in reject.reason


def test_a_json_file_of_lines_is_read_as_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "papers.json"
    path.write_text(json.dumps({"corpusid": 1, "title": "One"}) + "\n" + json.dumps({"corpusid": 2}) + "\n")
    batch = semanticscholar.load(path)
    assert batch.nodes["Paper"][["id", "stub"]].values.tolist() == [["s2corpus:1", False], ["s2corpus:2", True]]


def test_a_missing_path_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="does not exist"):
        semanticscholar.load(tmp_path / "nope.json")
