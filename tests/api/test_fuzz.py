"""Fuzzing the API (hypothesis): random strings, huge numbers, deep nesting, unicode, and operations
generated from the schema itself (hypothesis-graphql) over every root field and argument.

Whatever arrives: no internal error (no 500 over HTTP), nothing internal leaks into a message
(Cypher, tracebacks, file paths), no ``TIME_BUDGET_EXCEEDED``, and the limits hold (result caps, depth, bytes).
The schema-driven fuzzer runs a few cases per root field by default and 3,000 in all under
``-m slow`` (its last run: docs/results/graphql_fuzz.json).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import graphql
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import Mode, from_schema, nodes
from tiny_graph import tiny_batch

from api.explore import catalogue
from api.schema import schema
from api.services import GraphService
from api.settings import AppSettings
from graph import GraphStore, StoreConfig, ingest, open_store
from tests.api.conftest import rich_batch, run
from tests.api.live import live_server

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LEAKS = ("Traceback", "MATCH", "RETURN", "ladybug", "Binder", "/work/", ".py", "Exception")
CLIENT_CODES = {
    "BAD_USER_INPUT",
    "GRAPHQL_PARSE_FAILED",
    "GRAPHQL_VALIDATION_FAILED",
    "QUERY_TOO_COMPLEX",
    "RESPONSE_TOO_LARGE",
}
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


def check_errors(result: Any, sent: str = "") -> None:
    """Only client error codes; no message shows something internal the request did not itself send."""
    for error in result.errors or []:
        code = error.extensions["code"]
        assert code in CLIENT_CODES, (code, error.message)
        assert not any(leak in error.message and leak not in sent for leak in LEAKS), error.message


def check(result: Any) -> None:
    """No internal error, no leak; lists within the cap."""
    check_errors(result)
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


# schema-driven: every root field and argument (hypothesis-graphql) ------------------------------------

ROOT_FIELDS = sorted(schema._schema.query_type.fields)  # type: ignore[union-attr]
# invalid operations violate an argument: only fields that take one (the others have nothing to break)
ARGUMENT_FIELDS = sorted(name for name, f in schema._schema.query_type.fields.items() if f.args)  # type: ignore[union-attr]
SCHEMA_CASES = 5  # per root field and mode in the default run: ~250 cases, a few seconds
SLOW_SCHEMA_CASES = 3_000  # in all, under -m slow


def _json_object(fields: dict[str, graphql.ValueNode]) -> graphql.ObjectValueNode:
    return nodes.Object([graphql.ObjectFieldNode(name=graphql.NameNode(value=k), value=v) for k, v in fields.items()])


# JSON literals (explore's `params`): the parameter names the recipes take, and others, with any value
_json_leaf = st.one_of(
    huge.map(nodes.Int),
    st.floats(allow_nan=False, allow_infinity=False).map(nodes.Float),
    text.map(nodes.String),
    st.booleans().map(nodes.Boolean),
    st.sampled_from(["p1", "p2", "p4", "a1", "a2", "cs.CL", "1998:I.2"]).map(nodes.String),
)
_param_names = st.sampled_from(
    ["limit", "paper_id", "author_id", "class_id", "code", "paper_a", "paper_b", "year_min", "year_max", "min_count"]
) | st.from_regex(r"[_A-Za-z][_0-9A-Za-z]{0,10}", fullmatch=True)
JSON_NODES = st.recursive(
    _json_leaf,
    lambda children: (
        st.lists(children, max_size=3).map(nodes.List)
        | st.dictionaries(_param_names, children, max_size=4).map(_json_object)
    ),
    max_leaves=8,
)


@pytest.fixture(scope="module")
def shared_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphService]:
    """The API fixture graph (tiny graph, taxonomy, full text, co-citation), shared: fuzzed operations only read."""
    from gnn.cocitation.compute import compute_cocitation

    store = open_store(StoreConfig(db_path=tmp_path_factory.mktemp("fuzz") / "graph.db"))
    ingest(store, tiny_batch())
    ingest(store, rich_batch())
    compute_cocitation(store)
    yield GraphService(store)
    store.close()


# IDs, strings and ints: often ones the fixture graph knows or the caps allow (so resolvers past the lookup
# run), else any value of the type
KNOWN_IDS = st.sampled_from(["p1", "p2", "p3", "p4", "p5", "a1", "a2", "p1#1", "author:ada lovelace"])
KNOWN_STRINGS = st.sampled_from(
    [
        "translation",
        "machine",
        "cs.CL",
        "cs",
        "1998",
        "2012",
        "arxiv",
        "cora",
        "ACM",
        "[CIT]",
        "We translate [CIT].",
        *sorted(catalogue()),
    ]
)
SCALARS = {
    "JSON": JSON_NODES,
    "ID": (KNOWN_IDS | text).map(nodes.String),
    "String": (KNOWN_STRINGS | text).map(nodes.String),
    "Int": (st.integers(min_value=1, max_value=5) | int32).map(nodes.Int),  # often in range, so resolvers run
}


def operations(fields: list[str], mode: Mode) -> st.SearchStrategy[str]:
    return from_schema(schema._schema, fields=fields, custom_scalars=SCALARS, mode=mode)


def check_operation(service: GraphService, query: str, outcomes: Counter[str] | None = None) -> None:
    """A generated operation gets data or client errors only: no internal error, no leak, no TIME_BUDGET_EXCEEDED."""
    result = run(service, query, max_results=CAP)
    check_errors(result, sent=query)
    json.dumps({"data": result.data, "extensions": result.extensions})  # what the server would send
    if outcomes is not None:
        outcomes[result.errors[0].extensions["code"] if result.errors else "data"] += 1


@pytest.mark.parametrize(
    ("field", "mode"),
    [pytest.param(f, Mode.POSITIVE, id=f"{f}-valid") for f in ROOT_FIELDS]
    + [pytest.param(f, Mode.NEGATIVE, id=f"{f}-invalid") for f in ARGUMENT_FIELDS],
)
def test_schema_driven_operations(shared_service: GraphService, field: str, mode: Mode) -> None:
    """Operations on one root field, valid (every argument of the right type, any value) and invalid
    (one violation of the schema)."""

    @settings(max_examples=SCHEMA_CASES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(query=operations([field], mode))
    def fuzz(query: str) -> None:
        check_operation(shared_service, query)

    fuzz()


@pytest.mark.slow
@pytest.mark.parametrize("mode", [Mode.POSITIVE, Mode.NEGATIVE], ids=["valid", "invalid"])
def test_schema_driven_operations_long(shared_service: GraphService, mode: Mode) -> None:
    """The long run: operations over any mix of root fields, SLOW_SCHEMA_CASES // 2 per mode."""

    @settings(
        max_examples=SLOW_SCHEMA_CASES // 2, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    @given(query=operations(ROOT_FIELDS if mode is Mode.POSITIVE else ARGUMENT_FIELDS, mode))
    def fuzz(query: str) -> None:
        check_operation(shared_service, query, outcomes)

    outcomes: Counter[str] = Counter()
    fuzz()
    print(f"{mode.name}: {sum(outcomes.values())} operations, outcomes {dict(outcomes.most_common())}")
    if mode is Mode.POSITIVE:  # valid operations often run whole (one bad argument of several refuses them)
        assert outcomes["data"] > sum(outcomes.values()) / 5, outcomes
