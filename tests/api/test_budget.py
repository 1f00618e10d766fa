"""Bounds on what one operation may cost, send and log: the work of scans, the bytes of the answer,
and input no argument takes (huge numbers, non-finite floats, deep variables)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from graphql import parse
from tiny_graph import tiny_batch

from api.app import OfflineGraphQLRouter
from api.budget import DEFAULT_MAX_RESPONSE_BYTES, MAX_STRING_CHARS
from api.cost import DEFAULT_MAX_QUERY_COST, EXPLORE_WORK, SCAN_WORK, query_cost
from api.errors import MAX_JSON_DEPTH, MAX_MESSAGE_CHARS
from api.explore import catalogue
from api.schema import Context, schema
from api.services import GraphService
from api.settings import AppSettings
from graph import StoreConfig, ingest, open_store
from graph.errors import ConfigError
from tests.api.conftest import rich_batch, run

HUGE = "9" * 100_000
TITLE_BYTES = 50_000_000  # the size of the titles an importer once stored


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphService]:
    """The tiny graph with the API's categories, taxonomy and full text (no co-citation: none is asked for)."""
    store = open_store(StoreConfig(db_path=tmp_path_factory.mktemp("budget") / "graph.db"))
    ingest(store, tiny_batch())
    ingest(store, rich_batch())
    yield GraphService(store)
    store.close()


def codes(result: Any) -> list[str]:
    return [e.extensions["code"] for e in result.errors or []]


def cost(query: str, variables: dict[str, Any] | None = None, max_results: int = 200) -> int:
    value = query_cost(schema._schema, parse(query), variables=variables, max_results=max_results)
    assert value is not None
    return value


# huge numbers, non-finite floats, deep variables -------------------------------------------------------


def test_a_100000_digit_literal_is_bad_user_input_with_a_short_message_and_log(
    service: GraphService, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        result = run(service, f'{{ papers(search: "a", first: {HUGE}) {{ totalCount }} }}')
    assert codes(result) == ["BAD_USER_INPUT"]
    message = result.errors[0].message
    assert "line 1, column 30" in message and "100,000 characters" in message and len(message) < 300
    assert all(len(line) <= MAX_MESSAGE_CHARS for r in caplog.records for line in r.getMessage().splitlines())


@pytest.mark.parametrize(
    ("query", "variables", "said"),
    [
        ("{ clusters(first: 1.5e400) { id } }", None, "double"),  # a float literal that parses to inf
        ('{ explore(name: "coauthors", params: {limit: 1e999}) { __typename } }', None, "double"),
        ("query($n: Int!) { clusters(first: $n) { id } }", {"n": 10**100_000}, "more than 40 digits"),
        ("query($n: Int!) { clusters(first: $n) { id } }", {"n": -(10**40)}, "more than 40 digits"),
        (
            'query($p: JSON) { explore(name: "coauthors", params: $p) { __typename } }',
            {"p": {"limit": float("inf")}},
            "finite",
        ),
        ('query($p: JSON) { explore(name: "coauthors", params: $p) { __typename } }', {"p": [float("nan")]}, "finite"),
    ],
)
def test_numbers_no_argument_takes_are_bad_user_input(
    service: GraphService, query: str, variables: dict[str, Any] | None, said: str
) -> None:
    result = run(service, query, variables)
    assert codes(result) == ["BAD_USER_INPUT"], result.errors
    assert said in result.errors[0].message and len(result.errors[0].message) < 300


def test_variables_nested_past_the_json_limit_are_bad_user_input(service: GraphService) -> None:
    deep: Any = "leaf"
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = [deep]
    result = run(service, 'query($p: JSON) { explore(name: "coauthors", params: $p) { __typename } }', {"p": deep})
    assert codes(result) == ["BAD_USER_INPUT"] and "nests deeper" in result.errors[0].message
    shallow = run(service, 'query($p: JSON) { explore(name: "coauthors", params: $p) { __typename } }', {"p": [[1]]})
    assert shallow.errors is None  # a list is InvalidArgument, in the schema


def test_a_huge_integer_in_a_json_body_is_malformed_json_not_a_500() -> None:
    """Python refuses to read an integer of more than 4,300 digits (a ValueError, not a JSONDecodeError):
    the router reports it as the malformed JSON it answers with a 400."""
    router = OfflineGraphQLRouter(schema, context_getter=None, api_key=None)
    body = '{"query": "query($n: Int!) { clusters(first: $n) { id } }", "variables": {"n": ' + HUGE[:5000] + "}}"
    with pytest.raises(json.JSONDecodeError, match="too long"):
        router.decode_json(body)
    assert router.decode_json('{"variables": {"n": ' + HUGE[:4000] + "}}")  # readable; the schema refuses it


def test_error_messages_that_quote_a_literal_are_cut(service: GraphService) -> None:
    """graphql-core's own messages quote the literal whole (`Int cannot represent …: "<100 KB>"`)."""
    result = run(service, '{ clusters(first: "' + "x" * 100_000 + '") { id } }')
    assert codes(result) == ["GRAPHQL_VALIDATION_FAILED"]
    assert len(result.errors[0].message) == MAX_MESSAGE_CHARS and result.errors[0].message.endswith("…")


def test_an_internal_error_is_logged_in_short_lines(
    service: GraphService, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any, **__: Any) -> list[str]:
        raise RuntimeError("the store said " + "z" * 100_000)

    monkeypatch.setattr(service, "search", broken)
    query = '{ papers(search: "' + "q" * 150 + '", first: 2) { edges { node { id } } } } # ' + "c" * 100_000
    with caplog.at_level(logging.ERROR):
        result = run(service, query)
    assert codes(result) == ["INTERNAL_SERVER_ERROR"] and "zzz" not in result.errors[0].message
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert logged and "RuntimeError: the store said zzz" in logged[0] and "papers(search" in logged[0]
    assert max(len(line) for text in logged for line in text.splitlines()) <= MAX_MESSAGE_CHARS


# the bytes of the answer -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def huge_title_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphService]:
    """The tiny graph with a 50 MB title on p4 (and a 50,000-character author name on a1).

    Ingest refuses such fields now (graph.validate.FIELD_LIMITS); a store written before that, or a Neo4j
    graph other tools write, can still hold them, so they are written past ingest, as a write-back does.
    """
    store = open_store(StoreConfig(db_path=tmp_path_factory.mktemp("huge") / "graph.db"))
    batch = tiny_batch()
    ingest(store, batch)
    p4 = batch.nodes["Paper"]["id"].iloc[3]
    a1 = batch.nodes["Author"]["id"].iloc[0]
    store.write_node_properties("Paper", "id", pd.DataFrame({"id": [p4], "title": ["Neural " + "x" * TITLE_BYTES]}))
    store.write_node_properties("Author", "id", pd.DataFrame({"id": [a1], "name": ["Ada " + "y" * 50_000]}))
    yield GraphService(store)
    store.close()


def test_a_50_mb_title_is_served_cut_and_the_response_says_so(huge_title_service: GraphService) -> None:
    result = run(
        huge_title_service, '{ papers(search: "neural", first: 5) { edges { node { id title authors { name } } } } }'
    )
    assert result.errors is None
    node = result.data["papers"]["edges"][0]["node"]
    assert node["id"] == "p4" and node["title"].startswith("Neural xxx")
    assert len(node["title"]) == MAX_STRING_CHARS and node["title"].endswith("…")
    assert len(node["authors"][0]["name"]) == MAX_STRING_CHARS
    assert len(json.dumps(result.data)) < 3 * MAX_STRING_CHARS
    truncated = result.extensions["truncated"]
    assert truncated["maxStringChars"] == MAX_STRING_CHARS and truncated["count"] == 2
    assert truncated["paths"] == ["papers.edges.0.node.title", "papers.edges.0.node.authors.0.name"]


def test_a_response_over_the_byte_budget_is_refused_whole(service: GraphService) -> None:
    query = '{ papers(search: "translation", first: 20) { edges { node { id title abstract year } } } }'
    whole = run(service, query)
    assert whole.errors is None and len(whole.data["papers"]["edges"]) == 3
    size = len(json.dumps(whole.data))
    for budget, refused in ((size * 3, False), (size // 2, True)):
        context = Context.create(service, 50, 10.0, max_response_bytes=budget)
        result = asyncio_run(schema.execute(query, context_value=context))
        if refused:
            assert result.data is None and codes(result) == ["RESPONSE_TOO_LARGE"]
            assert (
                f"{budget:,} bytes" in result.errors[0].message
                and "CITEGRAPH_MAX_RESPONSE_BYTES" in result.errors[0].message
            )
        else:
            assert result.errors is None and result.data == whole.data


def test_strings_inside_explore_rows_are_cut(huge_title_service: GraphService) -> None:
    query = '{ explore(name: "coauthors", params: {author_id: "a2", limit: 5}) { ... on ExploreRows { rows } } }'
    result = run(huge_title_service, query)
    assert result.errors is None
    [row] = result.data["explore"]["rows"]
    assert row["coauthor_id"] == "a1" and row["name"].startswith("Ada yyy")
    assert len(row["name"]) == MAX_STRING_CHARS and row["name"].endswith("…")
    assert result.extensions["truncated"]["paths"] == ["explore.rows"]


def test_response_budget_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert AppSettings.from_env().max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES
    monkeypatch.setenv("CITEGRAPH_MAX_RESPONSE_BYTES", "4096")
    assert AppSettings.from_env().max_response_bytes == 4096
    monkeypatch.setenv("CITEGRAPH_MAX_RESPONSE_BYTES", "0")
    with pytest.raises(ConfigError, match="CITEGRAPH_MAX_RESPONSE_BYTES"):
        AppSettings.from_env()


# the work of a field -----------------------------------------------------------------------------------


def test_a_search_and_its_total_count_cost_a_scan_each() -> None:
    page = '{ papers(search: "translation", first: 10) { edges { node { id } } } }'
    counted = '{ papers(search: "translation", first: 10) { totalCount edges { node { id } } } }'
    assert cost(page) == SCAN_WORK + 1 + 10 + 10  # the scan, the connection, its edges and nodes
    assert cost(counted) == cost(page) + SCAN_WORK
    # a paper's citations are counted from the list their page is cut from: no scan
    assert cost('{ paper(id: "p1") { citations(first: 5) { totalCount } } }') == 2


def test_fifteen_aliased_searches_are_too_complex(service: GraphService) -> None:
    one = 'a0: papers(search: "translation", first: 10) { totalCount edges { node { id title } } }'
    assert run(service, "{ " + one + " }").errors is None
    many = "{ " + " ".join(one.replace("a0:", f"a{i}:") for i in range(15)) + " }"
    result = run(service, many)
    assert codes(result) == ["QUERY_TOO_COMPLEX"] and result.errors[0].extensions["cost"] > DEFAULT_MAX_QUERY_COST


def test_explore_costs_its_recipe_and_its_rows() -> None:
    def explore(name: str, params: str = "") -> int:
        return cost(f'{{ explore(name: "{name}"{params}) {{ __typename }} }}', max_results=200)

    assert explore("cocitation_neighbourhood", ', params: {paper_id: "p1", limit: 7}') == 1 + 7
    assert explore("most_cited_papers", ", params: {limit: 10}") == 1 + SCAN_WORK + 10
    assert explore("most_cited_papers") == 1 + SCAN_WORK + 200  # no limit: the result cap
    assert explore("top_cocited_pairs_in_years", ", params: {limit: 1}") > 5 * SCAN_WORK
    assert explore("no_such_recipe") == 1  # NotFound: nothing runs


def test_every_explore_recipe_has_a_work_estimate() -> None:
    assert set(EXPLORE_WORK) == set(catalogue()), "classify each new cypher/explore/ recipe in api.cost.EXPLORE_WORK"


def asyncio_run(awaitable: Any) -> Any:
    import asyncio

    return asyncio.run(awaitable)
