"""Fuzzing the API (hypothesis): random strings, huge numbers, deep nesting, unicode.

Whatever arrives: no internal error (no 500 over HTTP), nothing internal leaks into a message
(Cypher, tracebacks, file paths), and the limits hold (result caps, depth).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.services import GraphService
from api.settings import AppSettings
from graph import GraphStore
from tests.api.conftest import run
from tests.api.live import live_server

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LEAKS = ("Traceback", "MATCH", "RETURN", "ladybug", "Binder", "/work/", ".py", "Exception")
CLIENT_CODES = {"BAD_USER_INPUT", "GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED", "QUERY_TOO_COMPLEX"}
CAP = 20

text = st.text(alphabet=st.characters(codec="utf-8"), max_size=300)
int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
huge = st.one_of(int32, st.integers(min_value=-(10**40), max_value=10**40))
json_values = st.recursive(
    st.none() | st.booleans() | huge | st.floats(allow_nan=False) | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)

QUERIES = {
    "paper": (
        "query($s: ID!, $n: Int!) { paper(id: $s) { id citations(first: $n) { totalCount edges { node { id } } } } }",
        "ID",
    ),
    "papers": (
        "query($s: String, $n: Int!) { papers(search: $s, first: $n) { totalCount edges { node { id } } } }",
        "String",
    ),
    "category": ("query($s: String!, $n: Int!) { papers(category: $s, first: $n) { edges { cursor } } }", "String"),
    "ego": (
        "query($s: ID!, $n: Int!) { egoNetwork(paperId: $s, limit: $n, depth: 2) { ... on EgoNetwork { nodes { id } } } }",
        "ID",
    ),
    "cocitations": (
        "query($s: ID!, $n: Int!) { coCitations(paperId: $s, first: $n, minCount: $n) { __typename } }",
        "ID",
    ),
    "taxonomy": (
        "query($s: String!, $n: Int!) { taxonomy(scheme: $s) { ... on Taxonomy { classes(first: $n) { totalCount } } } }",
        "String",
    ),
    "explore": ("query($s: String!, $n: Int!) { explore(name: $s, params: {limit: $n}) { __typename } }", "String"),
    "after": (
        'query($s: String, $n: Int!) { papers(search: "translation", first: $n, after: $s) { totalCount } }',
        "String",
    ),
}


def check(result: Any) -> None:
    """No internal error, no leak; lists within the cap."""
    for error in result.errors or []:
        code = error.extensions["code"]
        assert code in CLIENT_CODES, (code, error.message)
        assert not any(leak in error.message for leak in LEAKS), error.message
    blob = json.dumps(result.data or {})
    assert blob.count('"cursor"') <= CAP and blob.count('"node"') <= CAP + 1


@FUZZ
@given(name=st.sampled_from(sorted(QUERIES)), value=text, number=int32)
def test_random_strings_and_numbers_in_variables(service: GraphService, name: str, value: str, number: int) -> None:
    query, _ = QUERIES[name]
    check(run(service, query, {"s": value, "n": number}, max_results=CAP))


@FUZZ
@given(number=huge)
def test_huge_numbers_inline(service: GraphService, number: int) -> None:
    check(
        run(
            service,
            f'{{ paper(id: "p1") {{ citedBy(first: {number}) {{ totalCount }} }} clusters(first: {number}) {{ id }} }}',
            max_results=CAP,
        )
    )
    check(
        run(
            service,
            f'{{ egoNetwork(paperId: "p1", depth: {number}, limit: {number}) {{ __typename }} }}',
            max_results=CAP,
        )
    )


@FUZZ
@given(document=text.filter(bool))  # an empty body is the HTTP layer's 400 (test_http_never_answers_500)
def test_random_documents(service: GraphService, document: str) -> None:
    check(run(service, document, max_results=CAP))


@FUZZ
@given(levels=st.integers(min_value=1, max_value=60))
def test_deep_nesting_is_cut_by_the_depth_limit(service: GraphService, levels: int) -> None:
    query = '{ paper(id: "p5") { ' + "citations { edges { node { " * levels + "id" + " } } }" * levels + " } }"
    result = run(service, query, max_results=CAP)
    check(result)
    depth = 3 * levels + 1  # the limiter counts from 0 at the root field (paper)
    if depth > 10:
        assert result.errors and result.errors[0].extensions["code"] == "QUERY_TOO_COMPLEX"
    else:
        assert result.errors is None


@FUZZ
@given(
    name=st.sampled_from(["coauthors", "most_cited_papers", "top_cocited_pairs", "acm_subtree"]) | text,
    params=json_values,
)
def test_explore_with_random_params(service: GraphService, name: str, params: Any) -> None:
    result = run(
        service,
        "query($n: String!, $p: JSON) { explore(name: $n, params: $p) { __typename ... on ExploreRows { rowCount } } }",
        {"n": name, "p": params},
        max_results=CAP,
    )
    check(result)
    if result.errors is None and result.data["explore"]["__typename"] == "ExploreRows":
        assert result.data["explore"]["rowCount"] <= CAP


@pytest.fixture
def http_base(rich_store: GraphStore, store_path: Path) -> Any:
    rich_store.close()
    with live_server(store_path, dataclasses.replace(AppSettings.from_env(), max_results=CAP)) as base:
        yield base


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(text.map(str.encode), st.binary(max_size=300), json_values.map(lambda v: json.dumps(v).encode())))
def test_http_never_answers_500(http_base: str, body: bytes) -> None:
    response = httpx.post(f"{http_base}/graphql", content=body, headers={"content-type": "application/json"})
    assert response.status_code < 500, response.text
    assert not any(leak in response.text for leak in LEAKS), response.text
