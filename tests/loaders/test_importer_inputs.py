"""What every importer of a user's export does with the same odd input: an empty file, an overlong field.

One rule for all of them (docs/data.md): an empty input loads nothing and is no reject (the CLI warns,
exit 0); a title, abstract, reference, venue or author name past :data:`graph.validate.FIELD_LIMITS` is a
reject naming the file and line or record, the field, its length and the limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.schema import build_schema
from graph.validate import FIELD_LIMITS, validate_nodes
from loaders import SOURCES

IMPORTERS = ["openalex", "semanticscholar", "crossref", "jsonl", "wos", "scopus"]
SUFFIXES = {
    "openalex": ".json",
    "semanticscholar": ".json",
    "crossref": ".json",
    "jsonl": ".jsonl",
    "wos": ".txt",
    "scopus": ".csv",
    "opencitations": ".csv",
}


def one_work(folder: Path, source: str, *, title: str, author: str) -> Path:
    """A file of ``source``'s format holding one work with ``title`` by ``author`` (the line that holds the
    title is line 1, except in a Web of Science export, where it is the record starting on line 3)."""
    path = folder / f"work{SUFFIXES[source]}"
    if source == "openalex":
        authorship = {"author": {"id": "https://openalex.org/A1", "display_name": author}}
        text = json.dumps({"id": "https://openalex.org/W1", "title": title, "authorships": [authorship]})
    elif source == "semanticscholar":
        text = json.dumps({"paperId": "a" * 40, "title": title, "authors": [{"authorId": "1", "name": author}]})
    elif source == "crossref":
        text = json.dumps({"DOI": "10.1000/x", "title": [title], "author": [{"given": "A", "family": author}]})
    elif source == "jsonl":
        text = json.dumps({"type": "paper", "id": "p1", "title": title, "authors": [author]})
    elif source == "wos":
        text = (
            f"FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU {author}\nTI {title}\nSO J\nPY 2020\n"
            "DI 10.1000/w\nUT WOS:000000000000001\nER\nEF"
        )
    else:
        text = f'"Authors","Title","Year","Source title","DOI","EID"\n"{author}","{title}","2020","J","10.1000/s","2-s2.0-1"'
    path.write_text(text + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("source", [*IMPORTERS, "opencitations"])
@pytest.mark.parametrize("content", [b"", b"  \n\n"], ids=["empty", "blank lines"])
def test_an_empty_input_loads_nothing_and_rejects_nothing(source: str, content: bytes, tmp_path: Path) -> None:
    """A Semantic Scholar file was a reject ("not complete JSON", exit 65) where OpenAlex loaded nothing (exit 0);
    a Web of Science file of blank lines was "not a Web of Science export"."""
    path = tmp_path / f"empty{SUFFIXES[source]}"
    path.write_bytes(content)
    batch = SOURCES[source].load(path)
    assert batch.rejects == []
    assert all(frame.empty for frame in [*batch.nodes.values(), *batch.rels.values()])


@pytest.mark.parametrize("source", IMPORTERS)
def test_the_sample_work_loads_whole(source: str, tmp_path: Path) -> None:
    """The inputs below are well-formed: at the limit, the title and the name are stored as they are."""
    title, name = "T" * FIELD_LIMITS["Paper"]["title"], "N" * 40
    batch = SOURCES[source].load(one_work(tmp_path, source, title=title, author=name))
    schema = build_schema()
    papers, rejects = validate_nodes(batch.nodes["Paper"], schema.node("Paper"))
    assert rejects == [] and title in papers["title"].tolist()
    authors, rejects = validate_nodes(batch.nodes["Author"], schema.node("Author"))
    assert rejects == [] and any(name in str(n) for n in authors["name"])


@pytest.mark.parametrize("source", IMPORTERS)
def test_an_overlong_title_is_a_located_reject(source: str, tmp_path: Path) -> None:
    limit = FIELD_LIMITS["Paper"]["title"]
    path = one_work(tmp_path, source, title="T" * (limit + 1), author="Smith, J")
    batch = SOURCES[source].load(path)
    clean, rejects = validate_nodes(batch.nodes["Paper"], build_schema().node("Paper"))
    assert clean.empty and len(rejects) == 1
    [reject] = rejects
    assert reject.origin.startswith(f"{path.name}:") and reject.table == "Paper"
    assert f"`title` is {limit + 1:,} characters long" in reject.reason
    assert f"over the limit of {limit:,} for Paper.title" in reject.reason
    assert "--on-error skip" in reject.reason and len(reject.reason) < 400  # the value is shown cut


@pytest.mark.parametrize("source", IMPORTERS)
def test_an_overlong_author_name_is_a_located_reject(source: str, tmp_path: Path) -> None:
    limit = FIELD_LIMITS["Author"]["name"]
    path = one_work(tmp_path, source, title="A title", author="N" * (limit + 10))
    batch = SOURCES[source].load(path)
    _, rejects = validate_nodes(batch.nodes["Author"], build_schema().node("Author"))
    assert [r.origin.startswith(f"{path.name}:") for r in rejects] == [True]
    assert f"over the limit of {limit:,} for Author.name" in rejects[0].reason
