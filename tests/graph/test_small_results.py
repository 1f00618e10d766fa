"""EmbeddedStore.query reads a small result as Python values, not through the engine's Arrow export
(milliseconds whatever the size), with the same values and the same checks."""

from __future__ import annotations

from pathlib import Path

import ladybug
import pyarrow as pa
import pytest

from graph import GraphStore
from graph.embedded import SMALL_RESULT_ROWS, EmbeddedStore, _arrow, _small_table, plain_numbers


def test_a_small_result_is_read_without_the_arrow_export(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(store, EmbeddedStore)
    expected = store.query("authors_of_papers", {"ids": ["p1", "p4"]})
    assert expected

    def refuse(*_: object) -> None:
        raise AssertionError("a small result went through get_as_arrow")

    monkeypatch.setattr(ladybug.QueryResult, "get_as_arrow", refuse)
    assert store.query("authors_of_papers", {"ids": ["p1", "p4"]}) == expected
    assert store.query("paper_by_ids", {"ids": ["p1"]})[0]["id"] == "p1"


def test_sums_come_back_as_integers_and_lists_as_lists(store: GraphStore) -> None:
    assert isinstance(store, EmbeddedStore)
    result = store._execute("UNWIND [1, 2, 3] AS x RETURN sum(x) AS total, [1.5, 2.5] AS pair", what="test")
    table = _small_table(result, Path("g.db"), "test")
    assert table is not None
    assert plain_numbers(table).to_pylist() == [{"total": 6, "pair": [1.5, 2.5]}]


def test_an_integer_past_int64_reads_as_the_export_reads_it(store: GraphStore) -> None:
    assert isinstance(store, EmbeddedStore)
    text = "UNWIND [1, 2] AS x RETURN x AS x, CAST(x AS INT128) * 9223372036854775807 * 4 AS big"
    small = _small_table(store._execute(text, what="test"), Path("g.db"), "test")
    assert small is not None
    exported = _arrow(store._execute(text, what="test"), store.path, "test")
    assert plain_numbers(small).to_pylist() == plain_numbers(exported).to_pylist()


def test_a_column_that_does_not_convert_is_read_whole_through_the_export(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(store, EmbeddedStore)
    result = store._execute("UNWIND [1, 2, 3] AS x RETURN x AS x", what="test")

    def unconvertible(*_: object, **__: object) -> None:
        raise pa.ArrowInvalid("a value Arrow cannot hold")

    with monkeypatch.context() as patch:
        patch.setattr(pa, "array", unconvertible)
        assert _small_table(result, Path("g.db"), "test") is None
    assert _arrow(result, store.path, "test").column("x").to_pylist() == [1, 2, 3]  # the rows get_all read, again
    assert SMALL_RESULT_ROWS >= 1_000
