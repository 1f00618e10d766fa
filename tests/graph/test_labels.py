"""A paper's display label (graph/labels.py): the Python rule and the Cypher expression of the statements agree."""

from __future__ import annotations

import pandas as pd
import pytest

from graph import GraphBatch, GraphStore, ingest
from graph.labels import (
    author_label,
    complete_labels,
    complete_result_labels,
    label_of,
    paper_label,
    short_label,
    source_label,
)

# id -> (label, title, reference, venue, volume, first_page), and the display label each must get
CASES = {
    "ref:goosf1947annphysberlin": (
        ("Goos F, 1947, Ann Phys-Berlin 1:333", None, "GOOS F, 1947, ANN PHYS-BERLIN, V1, P333", None, None, None),
        "Goos F, 1947, Ann Phys-Berlin 1:333",
    ),
    "titled": ((None, "Word alignment models", "ignored", "ACL", None, None), "Word alignment models"),
    "ref:only": (
        (None, None, "Smith J, 2001, J Chem Phys, V5, P12", None, None, None),
        "Smith J, 2001, J Chem Phys, V5, P12",
    ),
    "doi:10.1/x": ((None, "", "", "Phys Rev B", "12", "44"), "Phys Rev B 12:44"),
    "doi:10.1/y": ((None, None, None, "Nature", None, None), "Nature"),
    "doi:10.1/bare": (("", None, None, None, "3", "9"), "doi:10.1/bare"),
}
FIELDS = ("label", "title", "reference", "venue", "volume", "first_page")


@pytest.mark.parametrize("paper_id", sorted(CASES))
def test_paper_label_rule(paper_id: str) -> None:
    values, expected = CASES[paper_id]
    assert paper_label(paper_id, **dict(zip(FIELDS, values))) == expected
    assert label_of({"id": paper_id, **dict(zip(FIELDS, values))}) == expected


def test_helpers() -> None:
    assert source_label("Ann Phys", "1", None) == "Ann Phys 1" and source_label(None, "1", "2") is None
    assert paper_label("p", title=float("nan")) == "p"  # a pandas gap is absent
    assert short_label("abcdef", 4) == "abc…" and short_label("abc", 4) == "abc"


def test_statements_give_the_same_label(empty_store: GraphStore) -> None:
    rows = [
        {"id": key, **dict(zip(FIELDS, values)), "_origin": f"t:{n}"}
        for n, (key, (values, _)) in enumerate(CASES.items())
    ]
    ingest(empty_store, GraphBatch("labels", nodes={"Paper": pd.DataFrame(rows)}))
    ids = sorted(CASES)
    for statement in ("paper_by_ids", "cocitation_nodes"):
        got = {row["id"]: row["label"] for row in empty_store.query(statement, {"ids": ids})}
        assert got == {key: CASES[key][1] for key in ids}, statement


def test_author_label() -> None:
    assert author_label("D. Ferrari") == "Ferrari D" and author_label("Ferrari, Domenico") == "Ferrari D"
    assert author_label("Jean-Luc van Gool") == "Gool JLV" and author_label("Verma") == "Verma"
    assert author_label("  ") is None and author_label(None) is None
    assert paper_label("cora:1", first_author="D. Ferrari", year=1994) == "Ferrari D, 1994"
    assert paper_label("cora:1", first_author="D. Ferrari") == "Ferrari D"
    assert paper_label("cora:1", title="T", first_author="D. Ferrari") == "T"  # a title comes first


def test_papers_known_by_their_authors_only_read_as_first_author_and_year(empty_store: GraphStore) -> None:
    papers = pd.DataFrame(
        {"id": ["cora:1", "cora:2", "cora:3"], "year": [1994, None, None], "_origin": ["c:1", "c:2", "c:3"]}
    )
    authors = pd.DataFrame({"id": ["verma", "ferrari"], "name": ["Verma", "D. Ferrari"]})
    wrote = pd.DataFrame(
        {"source": ["verma", "ferrari", "verma"], "target": ["cora:1", "cora:1", "cora:2"], "position": [2, 1, 1]}
    )
    ingest(empty_store, GraphBatch("cora", nodes={"Paper": papers, "Author": authors}, rels={"WROTE": wrote}))
    ids = ["cora:1", "cora:2", "cora:3"]
    calls: list[str] = []

    def query(name: str, params: dict) -> list[dict]:
        calls.append(name)
        return empty_store.query(name, params)

    for statement in ("paper_by_ids", "cocitation_nodes"):
        calls.clear()
        rows = complete_labels(empty_store.query(statement, {"ids": ids}), query)
        assert {row["id"]: row["label"] for row in rows} == {
            "cora:1": "Ferrari D, 1994",  # the lowest position, not the first row
            "cora:2": "Verma",
            "cora:3": "cora:3",  # nothing but its id
        }
        assert calls == ["first_authors"]
    titled = [{"id": "p", "label": "A title", "year": 2001}]
    assert complete_labels(titled, lambda name, params: pytest.fail("no lookup needed")) == titled


def _authors_only_graph(store: GraphStore) -> None:
    papers = pd.DataFrame(
        {
            "id": ["cora:1", "cora:2", "cora:3"],
            "title": [None, "A citing paper", None],
            "year": [1994, 1999, None],
            "_origin": ["c:1", "c:2", "c:3"],
        }
    )
    authors = pd.DataFrame({"id": ["ferrari"], "name": ["D. Ferrari"]})
    wrote = pd.DataFrame({"source": ["ferrari"], "target": ["cora:1"], "position": [1]})
    cites = pd.DataFrame({"source": ["cora:2", "cora:2"], "target": ["cora:1", "cora:3"]})
    ingest(store, GraphBatch("cora", nodes={"Paper": papers, "Author": authors}, rels={"WROTE": wrote, "CITES": cites}))


def test_recipes_label_papers_known_by_their_authors_only(empty_store: GraphStore) -> None:
    """The recipes' label expression stops at the id; their rows (and their lists of labels beside a path) get the
    first author and year (`citegraph cypher` and the service behind GraphQL's `explore` run this completion)."""
    _authors_only_graph(empty_store)
    rows = empty_store.query("explore/citation_paths", {"from_id": "cora:2", "to_id": "cora:1", "limit": 5})
    assert rows and rows[0]["labels"] == ["A citing paper", "cora:1"]  # what the expression gives
    done = complete_result_labels(rows, empty_store.query)
    assert done[0]["labels"] == ["A citing paper", "Ferrari D, 1994"]
    calls: list[str] = []

    def query(name: str, params: dict) -> list[dict]:
        calls.append(name)
        return empty_store.query(name, params)

    rows = empty_store.query("explore/citation_neighbourhood", {"paper_id": "cora:2", "limit": 5})
    rows = complete_result_labels(rows, query)
    assert {row["id"]: row["label"] for row in rows} == {"cora:1": "Ferrari D, 1994", "cora:3": "cora:3"}
    assert calls == ["first_authors", "paper_match_facts"]  # once each, for the papers that need it
    assert complete_result_labels([{"id": "p", "label": "T"}], lambda n, p: pytest.fail("no lookup needed"))
