"""Keywords of works: normalisation, the thesaurus, and the counts on the real WoS and Scopus samples, checked
against the files read without the loaders."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest

from api.cli.main import main
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from loaders import jsonl, scopus, wos
from loaders.keywords import KeywordRows, KeywordThesaurus, normalise_keyword, split_keywords


@pytest.mark.parametrize(
    ("given", "form"),
    [
        ("Citation Networks", "citation network"),
        ("  HOUSING-MARKET ", "housing market"),
        ("Co‐citation", "co citation"),  # U+2010 hyphen
        ("bibliometrics", "bibliometrics"),  # -ics stays
        ("Meta-analysis", "meta analysis"),  # -is stays
        ("technologies", "technology"),
        ("search engines;", "search engine"),
        ("GIS", "gis"),  # three letters: no plural read into it
        ("approaches", "approach"),  # -ches: "es" dropped
        ("---", None),
    ],
)
def test_normalise_keyword(given: str, form: str | None) -> None:
    assert normalise_keyword(given) == form


def test_split_keywords_joins_wrapped_lines() -> None:
    assert split_keywords("Bibliographic coupling; R package;") == ["Bibliographic coupling", "R package"]
    assert split_keywords(None) == []


def test_one_edge_per_work_and_term_with_the_best_score() -> None:
    rows = KeywordRows()
    rows.add("p1", "author", "Networks", "f:1", 0.2)
    rows.add("p1", "author", "network", "f:1", 0.7)
    rows.add("p2", "author", "NETWORKS", "f:2")
    rows.add("p2", "author", 5, "f:2")  # not a term: skipped
    tables = rows.tables()
    nodes, edges = tables["Keyword"], tables["HAS_KEYWORD"]
    assert nodes["id"].tolist() == ["author:network"]
    assert nodes["name"].tolist() == ["Networks"]  # ties: the first spelling seen
    assert edges[["source", "target"]].values.tolist() == [["p1", "author:network"], ["p2", "author:network"]]
    assert edges["score"].iloc[0] == 0.7 and pd.isna(edges["score"].iloc[1])


def _batch() -> GraphBatch:
    rows = KeywordRows()
    for paper, terms in {
        "p1": ["science mapping", "co-word analysis", "R"],
        "p2": ["Science maps", "bibliometrix"],
    }.items():
        rows.add_all(paper, "author", terms, f"x:{paper}")
    tables = rows.tables()
    return GraphBatch("x", nodes={"Keyword": tables["Keyword"]}, rels={"HAS_KEYWORD": tables["HAS_KEYWORD"]})


def test_the_thesaurus_joins_and_drops_terms(tmp_path: Path) -> None:
    path = tmp_path / "thesaurus.txt"
    path.write_text("label\treplace by\nScience maps\tscience mapping\nR\t\n# a comment\n", encoding="utf-8")
    out = KeywordThesaurus.read(path).apply(_batch())
    nodes, edges = out.nodes["Keyword"], out.rels["HAS_KEYWORD"]
    assert sorted(nodes["id"]) == ["author:bibliometrix", "author:co word analysis", "author:science mapping"]
    assert nodes.set_index("id").loc["author:science mapping", "name"] == "science mapping"
    assert sorted(map(tuple, edges[["source", "target"]].values.tolist())) == [
        ("p1", "author:co word analysis"),
        ("p1", "author:science mapping"),
        ("p2", "author:bibliometrix"),
        ("p2", "author:science mapping"),
    ]


def test_a_malformed_thesaurus_line_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "thesaurus.txt"
    path.write_text("label\treplace by\nno tab here\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"thesaurus.txt, line 2: 'no tab here'"):
        KeywordThesaurus.read(path)


def test_jsonl_keywords(tmp_path: Path) -> None:
    path = tmp_path / "k.jsonl"
    path.write_text(
        '{"type": "paper", "id": "a", "title": "A", "keywords": ["Topic models", "topic model", 3]}\n'
        '{"type": "paper", "id": "b", "title": "B", "keywords": "topic models"}\n',
        encoding="utf-8",
    )
    batch = jsonl.load(path)
    assert batch.rels["HAS_KEYWORD"][["source", "target"]].values.tolist() == [["a", "author:topic model"]]
    assert [(r.table, r.origin) for r in batch.rejects] == [("Keyword", "k.jsonl:1"), ("HAS_KEYWORD", "k.jsonl:2")]


# --- the real samples, counted without the loaders -----------------------------------------------------------


def _tagged_terms(path: Path, tag: str) -> list[set[str]]:
    """Per record of a plain-text WoS export, the normalised terms of ``tag`` (continuation lines joined)."""
    records: list[set[str]] = []
    value: list[str] | None = None
    current = ""
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("PT "):
            records.append(set())
        if re.match(r"^[A-Z][A-Z0-9]( |$)", line):
            current = line[:2]
            value = [line[3:]] if current == tag else None
        elif line.startswith("   ") and value is not None:
            value.append(line.strip())
        if value is not None and current == tag:
            text = " ".join(value)
            records[-1] = {t for t in (normalise_keyword(p) for p in text.split(";")) if t}
    return records


@pytest.mark.shared_data
def test_wos_plain_text_de_and_id(data_dir: Path) -> None:
    path = data_dir / "formats" / "wos" / "wos_sample.txt"
    batch = wos.load(path)
    edges = batch.rels["HAS_KEYWORD"]
    kinds = edges["target"].str.split(":", n=1).str[0]
    for tag, kind in (("DE", "author"), ("ID", "plus")):
        expected = _tagged_terms(path, tag)
        assert (kinds == kind).sum() == sum(len(terms) for terms in expected)
        assert batch.nodes["Keyword"]["id"].str.startswith(kind + ":").sum() == len(set().union(*expected))
    # the README's counts: DE in 8 records, ID in 5
    assert edges[kinds == "author"]["source"].nunique() == 8
    assert edges[kinds == "plus"]["source"].nunique() == 5
    # record 3 of the file: DE wrapped over two lines
    aria = set(edges[edges["source"] == "doi:10.1016/j.joi.2017.08.007"]["target"])
    assert {"author:bibliographic coupling", "author:science mapping", "author:co citation"} <= aria
    assert "plus:author cocitation" in aria


@pytest.mark.shared_data
@pytest.mark.slow  # the whole export's cited references are matched too
def test_wos_tab_delimited_de_and_id(data_dir: Path) -> None:
    path = data_dir / "formats" / "wos" / "wos.txt"
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    batch = wos.load(path)
    kinds = batch.rels["HAS_KEYWORD"]["target"].str.split(":", n=1).str[0]
    for tag, kind, with_tag in (("DE", "author", 106), ("ID", "plus", 88)):  # README: DE 106, ID 88
        terms = [{t for t in map(normalise_keyword, (row.get(tag) or "").split(";")) if t} for row in rows]
        assert sum(1 for t in terms if t) == with_tag
        assert (kinds == kind).sum() == sum(len(t) for t in terms)


@pytest.mark.shared_data
@pytest.mark.slow  # the whole export's cited references are matched too
def test_scopus_author_and_index_keywords(data_dir: Path) -> None:
    path = data_dir / "formats" / "scopus" / "scopus_testing.csv.scopus"
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    batch = scopus.load(path)
    kinds = batch.rels["HAS_KEYWORD"]["target"].str.split(":", n=1).str[0]
    for column, kind, with_column in (("Author Keywords", "author", 55), ("Index Keywords", "index", 192)):
        terms = [{t for t in map(normalise_keyword, row[column].split(";")) if t} for row in rows]
        assert sum(1 for t in terms if t) == with_column  # the README's counts
        assert (kinds == kind).sum() == sum(len(t) for t in terms)


@pytest.mark.shared_data
@pytest.mark.slow  # the whole export's cited references are matched too
def test_ingest_with_a_keyword_thesaurus_and_twice_to_the_same_graph(data_dir: Path, tmp_path: Path) -> None:
    sample = data_dir / "formats" / "wos" / "wos_sample.txt"
    thesaurus = tmp_path / "thesaurus.txt"
    thesaurus.write_text("bibliometric analysis\tbibliometrics\n", encoding="utf-8")
    db = str(tmp_path / "k.db")
    for _ in range(2):
        assert main(["--db", db, "ingest", "wos", str(sample), "--keyword-thesaurus", str(thesaurus)]) == 0
    with open_store(StoreConfig(db_path=Path(db), read_only=True)) as store:
        ids = {row["key"] for row in store.query("every_key", {}, identifiers={"LABEL": "Keyword", "KEY": "id"})}
        n_edges = store.count_rels("HAS_KEYWORD")
    assert "author:bibliometrics" in ids and "author:bibliometric analysis" not in ids
    plain = wos.load(sample)
    assert len(ids) == len(plain.nodes["Keyword"]) - 1
    joined = plain.rels["HAS_KEYWORD"]["target"].replace("author:bibliometric analysis", "author:bibliometrics")
    assert n_edges == len(set(zip(plain.rels["HAS_KEYWORD"]["source"], joined)))


def test_keyword_nodes_merge_across_loads(empty_store: GraphStore, tmp_path: Path) -> None:
    for n, term in enumerate(["Topic Models", "topic model"]):
        path = tmp_path / f"{n}.jsonl"
        path.write_text(f'{{"type": "paper", "id": "p{n}", "title": "T", "keywords": ["{term}"]}}\n', encoding="utf-8")
        ingest(empty_store, jsonl.load(path))
    assert empty_store.count_nodes("Keyword") == 1
    assert empty_store.count_rels("HAS_KEYWORD") == 2


@pytest.mark.shared_data
def test_openalex_keywords_topics_and_fields(data_dir: Path) -> None:
    import json

    from loaders import openalex

    path = data_dir / "formats" / "openalex" / "W2741809807.json"
    work = json.loads(path.read_text(encoding="utf-8"))
    edges = openalex.load(path).rels["HAS_KEYWORD"].set_index("target")["score"]
    for entry in work["keywords"]:
        assert edges[f"openalex_keyword:{normalise_keyword(entry['display_name'])}"] == pytest.approx(entry["score"])
    topics = [*work["topics"], work["primary_topic"]]
    assert {k for k in edges.index if k.startswith("topic:")} == {
        f"topic:{normalise_keyword(t['display_name'])}" for t in topics
    }
    assert {k for k in edges.index if k.startswith("field_of_study:")} == {
        f"field_of_study:{normalise_keyword(t['field']['display_name'])}" for t in topics
    }


@pytest.mark.shared_data
def test_semantic_scholar_fields_of_study(data_dir: Path, tmp_path: Path) -> None:
    import json

    from loaders import semanticscholar

    paper = json.loads((data_dir / "formats" / "semanticscholar" / "Paper.json").read_text(encoding="utf-8"))
    single = tmp_path / "Paper.json"
    single.write_text(json.dumps({k: v for k, v in paper.items() if k not in ("citations", "references")}))
    batch = semanticscholar.load(single)
    names = {*paper["fieldsOfStudy"], *(f["category"] for f in paper["s2FieldsOfStudy"])}
    assert sorted(batch.rels["HAS_KEYWORD"]["target"]) == sorted(
        f"field_of_study:{normalise_keyword(n)}" for n in names
    )
