"""The CoRA loader: four tiny JSON files written inline, then the real 34,648-edge graph."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from graph.errors import IngestError, ValidationError
from graph.ingest import ingest
from graph.schema import ORIGIN_COLUMN
from graph.store import GraphStore
from loaders import cora

REFERENCES = [
    [1, 2],  # 0
    [1, 3],  # 1
    [2, 2],  # 2: self-citation
    [1, 2],  # 3: duplicate of 0
    [3, "x"],  # 4: not two paper numbers
    [4, 5],  # 5
    [5, 9],  # 6: 9 is known only as a citation target
]
PAPER_AUTHORS = {
    "1": ["A1", "A2", "A3"],  # A1 and A2 are one name in two spellings: one edge, at place 1
    "2": ["A2"],
    "3": "A1",  # not a list
    "x": ["A1"],  # not a paper number
    "4": ["A4"],  # A4 has no name
}
AUTHOR_NAMES = {"A1": "Forbus, K.", "A2": "K.  Forbus", "A3": "", "A5": "P. Penfield, Jr."}
CLASSES = {
    "AI": [1, 2],
    "AI/ML/Neural_Networks": [1],  # its parent AI/ML is not listed itself
    "Data_Structures__Algorithms_and_Theory": [4],
    "AI//Bad": [5],  # an empty path part
    "Theory": ["abc"],  # a member that is no paper number
}


@pytest.fixture
def cora_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "cora"
    folder.mkdir()
    for name, data in (
        (cora.REFERENCES_FILE, REFERENCES),
        (cora.PAPER_AUTHORS_FILE, PAPER_AUTHORS),
        (cora.AUTHOR_NAMES_FILE, AUTHOR_NAMES),
        (cora.CLASSIFICATION_FILE, CLASSES),
    ):
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_first_last() -> None:
    assert cora.first_last("Forbus, K.") == "K. Forbus"
    assert cora.first_last("Kuipers, B") == "B Kuipers"
    assert cora.first_last("P. Penfield, Jr.") == "P. Penfield, Jr."  # a suffix, not a first name
    assert cora.first_last("O'Toole, James William, Jr.") == "O'Toole, James William, Jr."  # two commas: as is
    assert cora.first_last("J. Kay") == "J. Kay"


def test_topic_names() -> None:
    assert cora.topic_name("Data_Structures__Algorithms_and_Theory") == "Data Structures, Algorithms and Theory"
    assert cora.topic_name("Artificial_Intelligence/Machine_Learning/Case-Based") == "Case-Based"


def test_rejects_carry_file_key_and_reason(cora_dir: Path) -> None:
    rejects = {(r.table, r.origin): r.reason for r in cora.load(cora_dir).rejects}
    assert set(rejects) == {
        ("CITES", "paper_references.json#2"),
        ("CITES", "paper_references.json#3"),
        ("CITES", "paper_references.json#4"),
        ("WROTE", "paper_authors.json#3"),
        ("WROTE", "paper_authors.json#x"),
        ("AcmClass", "classification_papers.json#AI//Bad"),
        ("Paper", "classification_papers.json#Theory"),
    }
    assert "cora:2 cites itself" in rejects[("CITES", "paper_references.json#2")]
    assert "a self-citation is not a citation" in rejects[("CITES", "paper_references.json#2")]
    assert (
        "duplicate CITES cora:1 -> cora:2, already at paper_references.json#0"
        in rejects[("CITES", "paper_references.json#3")]
    )
    assert "not a pair [citing, cited] of paper numbers" in rejects[("CITES", "paper_references.json#4")]
    assert "not a list of author codes" in rejects[("WROTE", "paper_authors.json#3")]
    assert "'abc' of Theory is not a paper number" in rejects[("Paper", "classification_papers.json#Theory")]


def test_papers_and_citations(cora_dir: Path) -> None:
    batch = cora.load(cora_dir)
    papers = batch.nodes["Paper"].set_index("id")
    assert papers.index.tolist() == ["cora:1", "cora:2", "cora:3", "cora:4", "cora:5", "cora:9"]
    assert papers.loc[papers["stub"], :].index.tolist() == ["cora:9"]  # 5 is cited but also cites
    assert set(papers["dataset"]) == {"cora"}
    cites = batch.rels["CITES"]
    assert cites[["source", "target", ORIGIN_COLUMN]].values.tolist() == [
        ["cora:1", "cora:2", "paper_references.json#0"],
        ["cora:1", "cora:3", "paper_references.json#1"],
        ["cora:4", "cora:5", "paper_references.json#5"],
        ["cora:5", "cora:9", "paper_references.json#6"],
    ]
    assert set(cites["dataset"]) == {"cora"} and "n_contexts" not in cites.columns


def test_authors(cora_dir: Path) -> None:
    batch = cora.load(cora_dir)
    authors = batch.nodes["Author"]
    assert authors.fillna({"name": "-"}).values.tolist() == [
        ["author:k forbus", "K. Forbus", "author_names.json#A1"],  # A1 and A2: one key
        ["cora-author:A3", "-", "author_names.json#A3"],  # an empty name keeps its code
        ["author:p penfield jr", "P. Penfield, Jr.", "author_names.json#A5"],  # named, no paper: still an author
        ["cora-author:A4", "-", "paper_authors.json#4"],  # no name at all
    ]
    wrote = batch.rels["WROTE"]
    assert wrote[["source", "target", "position"]].values.tolist() == [
        ["author:k forbus", "cora:1", 1],
        ["cora-author:A3", "cora:1", 3],
        ["author:k forbus", "cora:2", 1],
        ["cora-author:A4", "cora:4", 1],
    ]


def test_topic_hierarchy(cora_dir: Path) -> None:
    batch = cora.load(cora_dir)
    topics = batch.nodes["AcmClass"]
    assert topics[["id", "name", "scheme", "level"]].values.tolist() == [
        ["cora:AI", "AI", "cora", 1],
        ["cora:Data_Structures__Algorithms_and_Theory", "Data Structures, Algorithms and Theory", "cora", 1],
        ["cora:Theory", "Theory", "cora", 1],
        ["cora:AI/ML", "ML", "cora", 2],  # implied by its child
        ["cora:AI/ML/Neural_Networks", "Neural Networks", "cora", 3],
    ]
    assert topics.set_index("id").loc["cora:AI/ML", ORIGIN_COLUMN] == "classification_papers.json#AI/ML/Neural_Networks"
    assert batch.rels["BROADER"][["source", "target"]].values.tolist() == [
        ["cora:AI/ML", "cora:AI"],
        ["cora:AI/ML/Neural_Networks", "cora:AI/ML"],
    ]
    assert "IN_CATEGORY" not in batch.rels  # paper topics are not loaded (no edge type for them)


def test_ingest_fails_on_loader_rejects_then_skips_them(cora_dir: Path, empty_store: GraphStore) -> None:
    batch = cora.load(cora_dir)
    with pytest.raises(ValidationError, match=r"7 record\(s\) rejected, nothing was written"):
        ingest(empty_store, batch)
    assert empty_store.count_nodes("Paper") == 0
    report = ingest(empty_store, batch, on_error="skip")
    assert report.rejects == batch.rejects  # validation found nothing else
    assert report.tables["CITES"].records == 4 + 3
    stats = empty_store.stats()
    assert stats["nodes"] == {**stats["nodes"], "Paper": 6, "Author": 4, "AcmClass": 5}
    assert stats["relationships"] == {**stats["relationships"], "CITES": 4, "WROTE": 4, "BROADER": 2}
    ingest(empty_store, batch, on_error="skip")
    assert empty_store.stats() == stats


def test_missing_and_broken_files_are_ingest_errors(cora_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="is not a folder"):
        cora.load(tmp_path / "nope")
    (cora_dir / cora.CLASSIFICATION_FILE).write_text('{"AI": [1', encoding="utf-8")
    with pytest.raises(IngestError, match=r"classification_papers\.json: not JSON"):
        cora.load(cora_dir)
    (cora_dir / cora.CLASSIFICATION_FILE).write_text("[]", encoding="utf-8")
    with pytest.raises(IngestError, match="expected a dict"):
        cora.load(cora_dir)
    (cora_dir / cora.CLASSIFICATION_FILE).unlink()
    with pytest.raises(IngestError, match="not a file"):
        cora.load(cora_dir)


@pytest.mark.shared_data
def test_real_cora(data_dir: Path, empty_store: GraphStore) -> None:
    batch = cora.load(data_dir / "cora")
    cites = batch.rels["CITES"]
    cite_rejects = [r for r in batch.rejects if r.table == "CITES"]
    assert len(cites) + len(cite_rejects) == 34_648
    assert len(cite_rejects) == 1_934
    assert all("cites itself" in r.reason for r in cite_rejects)
    assert len(batch.rejects) == len(cite_rejects)

    topics = batch.nodes["AcmClass"]
    assert len(topics) == 81
    assert topics["level"].value_counts().sort_index().to_dict() == {1: 10, 2: 64, 3: 7}
    assert len(batch.rels["BROADER"]) == 81 - 10
    papers = batch.nodes["Paper"]
    assert len(papers) == 28_070 and int(papers["stub"].sum()) == 1
    assert batch.nodes["Author"]["id"].is_unique

    report = ingest(empty_store, batch, on_error="skip")
    assert report.rejects == batch.rejects  # no validation rejects beyond the loader's
    assert report.tables["CITES"].records == 34_648
    assert report.tables["CITES"].stored == 34_648 - 1_934
    stats = empty_store.stats()
    ingest(empty_store, batch, on_error="skip")
    assert empty_store.stats() == stats
    assert pd.Series(stats["nodes"])["AcmClass"] == 81
