"""The error tree: where each class sits, what ValidationError carries, and the LadybugDB translation."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph import open_store
from graph.config import StoreConfig
from graph.embedded import OPENING, translate_ladybug_error
from graph.errors import (
    CitegraphError,
    ConfigError,
    DataError,
    IngestError,
    QueryError,
    Reject,
    SchemaError,
    StoreError,
    StoreUnavailableError,
    TransientStoreError,
    ValidationError,
)


def test_the_tree_has_one_root_and_keeps_bad_data_apart_from_bad_settings() -> None:
    for error in (ConfigError, DataError, QueryError, StoreError):
        assert error.__bases__ == (CitegraphError,)
    for error in (SchemaError, IngestError, ValidationError):
        assert issubclass(error, DataError) and not issubclass(error, ConfigError)
    assert issubclass(StoreUnavailableError, StoreError) and issubclass(TransientStoreError, StoreError)
    assert not issubclass(DataError, ConfigError) and not issubclass(ConfigError, DataError)


def test_a_validation_error_carries_every_reject() -> None:
    rejects = [Reject("Paper", "papers.jsonl:2", "`year` is 'n.d.', expected an integer")] * 3
    error = ValidationError("3 records rejected", rejects)
    assert error.rejects == rejects and str(error) == "3 records rejected"


def test_ladybug_errors_become_the_projects_with_their_first_line(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    cannot_open = translate_ladybug_error(RuntimeError("IO exception: lock held"), path=path, what=OPENING)
    assert isinstance(cannot_open, StoreUnavailableError)
    assert str(cannot_open).startswith(f"cannot open the store at {path}: IO exception: lock held; ")
    failed = translate_ladybug_error(RuntimeError("Binder exception: no table\ndetail"), path=path, what="count_nodes")
    assert type(failed) is StoreError
    assert str(failed) == f"embedded store {path}: `count_nodes` failed: Binder exception: no table"
    refused = RuntimeError("Connection exception: Cannot execute write operations in a read-only database!")
    assert isinstance(translate_ladybug_error(refused, path=path, what="query", read_only=True), QueryError)
    full = RuntimeError("Buffer manager exception: Unable to allocate memory! The buffer pool is full and no memory")
    advice = str(translate_ladybug_error(full, path=path, what="copy_columns"))
    assert "`copy_columns` needs more page cache" in advice and "raise CITEGRAPH_BUFFER_POOL_MIB" in advice


def test_a_failing_query_of_the_embedded_store_names_the_store_and_what_failed(tmp_path: Path) -> None:
    open_store(StoreConfig(db_path=tmp_path / "g.db")).close()
    with open_store(StoreConfig(db_path=tmp_path / "g.db", read_only=True)) as store:
        with pytest.raises(StoreError, match=r"embedded store .*g\.db: `query` failed: Parser exception") as caught:
            store.read_only_query("MATC (n) RETURN n")
        assert isinstance(caught.value.__cause__, RuntimeError)


def test_the_engine_running_out_of_memory_names_the_store_and_the_check(tmp_path: Path) -> None:
    """A damaged length field makes the engine ask for terabytes (std::bad_alloc, 1 of 25 random damages in
    benchmarks/corruption_probe.py): a StoreError saying what to run, not a MemoryError traceback."""
    from unittest.mock import MagicMock

    open_store(StoreConfig(db_path=tmp_path / "g.db")).close()
    # one connection: the store's own, so the stand-in below is the one every statement runs on
    with open_store(StoreConfig(db_path=tmp_path / "g.db", read_only=True, read_connections=1)) as store:
        real, engine = store._conn, MagicMock()  # type: ignore[attr-defined]
        engine.execute.side_effect = MemoryError("std::bad_alloc")
        store._conn = engine  # type: ignore[attr-defined]
        try:
            with pytest.raises(
                StoreError, match=r"g\.db: `paper_years` ran out of memory \(std::bad_alloc\)"
            ) as caught:
                store.query("paper_years")
            # or once the statement ran, while the engine reads the result's pages: through the Arrow export (a
            # large result) or as values (a small one)
            engine.execute.side_effect = None
            result = engine.execute.return_value
            result.get_column_names.return_value = ["id", "year"]
            result.get_as_arrow.side_effect = MemoryError("std::bad_alloc")
            result.get_all.side_effect = MemoryError("std::bad_alloc")
            for rows in (100_000, 10):
                result.get_num_tuples.return_value = rows
                for read in (lambda: store.query("paper_years"), lambda: store.read_edges("CITES")):
                    with pytest.raises(StoreError, match="ran out of memory"):
                        read()
        finally:
            store._conn = real  # type: ignore[attr-defined]
        assert "citegraph --db" in str(caught.value) and "check" in str(caught.value)
