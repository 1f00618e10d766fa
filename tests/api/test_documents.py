"""The per-text document cache (api/documents.py): a repeated text is parsed, checked and validated once,
and what depends on the request (variables, limits) is still checked each time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from graphql import GraphQLError

from api.documents import DocumentCache, documents
from api.schema import schema


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    documents.clear()


def run(query: str, variables: dict[str, Any] | None = None) -> Any:
    return asyncio.run(schema.execute(query, variable_values=variables))


def test_a_repeated_text_is_parsed_and_validated_once() -> None:
    for _ in range(3):
        assert run("{ __typename }").data == {"__typename": "Query"}
    stats = documents.stats()
    assert stats.misses["parse"] == 1 and stats.hits["parse"] == 2
    assert stats.misses["validation"] == 1 and stats.hits["validation"] == 2


def test_a_kept_validation_error_is_reported_every_time() -> None:
    messages = [[e.message for e in run("{ noSuchField }").errors or []] for _ in range(2)]
    assert messages[0] == messages[1] and "noSuchField" in messages[0][0]
    assert documents.stats().hits["validation"] == 1


def test_variables_are_checked_per_request_on_a_kept_text() -> None:
    """The literals are kept per text, the variables are not: a huge integer variable is refused on a text
    that ran before, and a text's cost is counted again for other variables."""
    query = 'query Q($n: Int!) { papers(search: "x", first: $n) { totalCount } }'
    huge = run(query, {"n": 10**50})
    assert huge.errors and huge.errors[0].extensions["code"] == "BAD_USER_INPUT"
    run(query, {"n": 5})
    run(query, {"n": 6})
    assert documents.stats().misses["cost"] == 2  # two spellings of the variables, two costs


def test_a_literal_problem_is_kept_and_reported_again() -> None:
    query = '{ papers(search: "x", first: %s) { totalCount } }' % ("9" * 100)
    codes = [run(query).errors[0].extensions["code"] for _ in range(2)]
    assert codes == ["BAD_USER_INPUT", "BAD_USER_INPUT"]
    assert documents.stats().hits["literals"] == 1


def test_long_texts_are_never_kept_and_the_oldest_entries_leave_first() -> None:
    cache = DocumentCache(max_entries=2, max_chars=30)
    long = "{ __typename " + " " * 40 + "}"
    cache.parse(long, max_tokens=None)
    cache.parse(long, max_tokens=None)
    assert cache.stats().misses["parse"] == 2 and "parse" not in cache.stats().hits
    for text in ("{ a }", "{ b }", "{ c }", "{ a }"):
        cache.parse(text, max_tokens=None)
    assert cache.stats().hits.get("parse", 0) == 0  # "{ a }" had left when "{ c }" came in


def test_a_text_that_does_not_parse_raises_each_time() -> None:
    cache = DocumentCache()
    for _ in range(2):
        with pytest.raises(GraphQLError):
            cache.parse("{ unclosed", max_tokens=None)
    assert cache.stats().hits == {}


def test_the_cost_counted_to_classify_is_the_one_checked() -> None:
    """The scheduler parses and costs a request to classify it; the operation then finds both kept."""
    from api.scheduling import classify

    query = '{ papers(search: "x", first: 5) { totalCount } }'
    classify(schema._schema, query, operation_name=None, variables=None, max_results=200, max_tokens=2_000)
    run(query)
    stats = documents.stats()
    assert stats.misses["cost"] == 1 and stats.hits["cost"] == 1
    assert stats.misses["parse"] == 1 and stats.hits["parse"] == 1
