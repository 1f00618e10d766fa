"""A paper's display label (graph/labels.py): the Python rule and the Cypher expression of the statements agree."""

from __future__ import annotations

import pandas as pd
import pytest

from graph import GraphBatch, GraphStore, ingest
from graph.labels import label_of, paper_label, short_label, source_label

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
