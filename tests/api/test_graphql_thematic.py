"""``thematicMap`` over GraphQL: the themes of the stored keywords, and its arguments' errors.

The corpus (tests/gnn/mapping/test_mapping_keywords.py works it by hand): clusters {a, b, c} (basic) and {d, e} (motor).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_graphql import error, ok

from api.services import GraphService
from graph import GraphStore, ingest
from loaders import jsonl

DOCS = {
    "d1": (2000, ["a", "b", "c"]),
    "d2": (2001, ["a", "b"]),
    "d3": (2002, ["a", "c"]),
    "d4": (2003, ["d", "e"]),
    "d5": (2004, ["d", "e", "a"]),
    "d6": (None, ["d", "e"]),
}
QUERY = """query($ymin: Int, $ymax: Int, $min: Int! = 1, $top: Int! = 250) {
  thematicMap(yearMin: $ymin, yearMax: $ymax, minCount: $min, top: $top) {
    kinds documents keywords
    themes { cluster label keywords keywordIds centrality density quadrant documents occurrences }
  }
}"""


@pytest.fixture
def keyword_service(store: GraphStore, tmp_path: Path) -> GraphService:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"type": "paper", "id": d, "title": d, "year": y, "keywords": t}) for d, (y, t) in DOCS.items()
        )
        + "\n",
        encoding="utf-8",
    )
    ingest(store, jsonl.load(path))
    return GraphService(store)


def test_thematic_map(keyword_service: GraphService) -> None:
    data = ok(keyword_service, QUERY)["thematicMap"]
    assert (data["kinds"], data["documents"], data["keywords"]) == (["author"], 6, 5)
    first, second = data["themes"]
    assert (first["label"], first["keywords"], first["quadrant"], first["documents"]) == (
        "a",
        ["a", "b", "c"],
        "BASIC",
        4,
    )
    assert first["density"] == pytest.approx(125 / 3) and first["centrality"] == pytest.approx(10 * 2 / 12)
    assert (second["label"], second["quadrant"], second["keywordIds"]) == ("d", "MOTOR", ["author:d", "author:e"])
    assert second["occurrences"] == 6


def test_a_window_and_the_errors(keyword_service: GraphService) -> None:
    late = ok(keyword_service, QUERY, {"ymin": 2003})["thematicMap"]
    assert late["documents"] == 2 and [t["label"] for t in late["themes"]] == ["d"]
    message, code = error(keyword_service, QUERY, {"ymin": 2005, "ymax": 2001})
    assert code == "BAD_USER_INPUT" and "yearMin" in message
    message, code = error(keyword_service, QUERY, {"top": 0})
    assert code == "BAD_USER_INPUT" and "top must be between 1" in message


def test_the_cost_counts_the_scan_and_fits_the_default() -> None:
    from graphql import parse

    from api.cost import DEFAULT_MAX_QUERY_COST, SCAN_WORK, query_cost
    from api.schema import schema

    cost = query_cost(schema._schema, parse(QUERY), max_results=200)
    assert cost is not None and SCAN_WORK <= cost <= DEFAULT_MAX_QUERY_COST
