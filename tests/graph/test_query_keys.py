"""GraphStore.query_keys: the rows of a list statement, read per key where the embedded store looks keys up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graph import GraphStore, StoreConfig, open_store
from graph.embedded import KEYED_LOOKUP_MAX, EmbeddedStore

PAIRS = [
    ("authors_of_papers", "authors_of_paper"),
    ("citing_papers", "citing_papers_of_paper"),
    ("cited_papers", "cited_papers_of_paper"),
]


@pytest.fixture
def read_only_store(store: GraphStore, store_path: Path) -> Iterator[GraphStore]:
    store.close()
    opened = open_store(StoreConfig(db_path=store_path, read_only=True))
    yield opened
    opened.close()


@pytest.mark.parametrize(("name", "each"), PAIRS)
def test_per_key_rows_are_the_list_statements_rows(read_only_store: GraphStore, name: str, each: str) -> None:
    ids = ["p3", "p1", "nope", "p2", "p1", "p4", "p5"]  # unordered, a repeat, an unknown key
    expected = read_only_store.query(name, {"ids": sorted(set(ids))})
    assert expected  # the tiny graph has rows for these
    assert read_only_store.query_keys(name, each, ids) == expected


def test_the_one_key_statements_look_the_key_up_and_the_list_ones_scan(read_only_store: GraphStore) -> None:
    """Why the embedded store reads per key: its plan for ``= $id`` is a lookup in the key's hash index,
    for ``IN $ids`` a scan of the whole label."""
    assert isinstance(read_only_store, EmbeddedStore)
    for name, each in PAIRS:
        assert "PRIMARY_KEY_SCAN" in _plan(read_only_store, each, {"id": "p1"}), each
        assert "PRIMARY_KEY_SCAN" not in _plan(read_only_store, name, {"ids": ["p1"]}), name


def test_many_keys_are_read_by_the_list_statement(read_only_store: GraphStore) -> None:
    ran: list[str] = []
    original = read_only_store.query

    def query(name: str, params: object = None, identifiers: object = None) -> list[dict[str, object]]:
        ran.append(name)
        return original(name, params, identifiers)  # type: ignore[arg-type]

    read_only_store.query = query  # type: ignore[method-assign]
    many = [f"p{i}" for i in range(KEYED_LOOKUP_MAX + 1)]
    rows = read_only_store.query_keys("authors_of_papers", "authors_of_paper", many)
    assert ran == ["authors_of_papers"] and rows == original("authors_of_papers", {"ids": sorted(many)})
    ran.clear()
    read_only_store.query_keys("authors_of_papers", "authors_of_paper", ["p1", "p2"])
    assert ran == ["authors_of_paper", "authors_of_paper"]


def _plan(store: EmbeddedStore, name: str, params: dict[str, object]) -> str:
    from graph.statements import statement_text

    return store._plan(statement_text(name, store.dialect), params)
