"""Light store calls beside heavy ones on a store that runs several statements at once.

A read-only embedded store holds ``CITEGRAPH_READ_CONNECTIONS`` connections (graph/embedded.py) and the
API's store lock admits that many calls (api/scheduling.py), heavy calls all but one: a light call is
answered while a heavy statement runs. Checked by events and ordering, not by timing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from api.scheduling import HEAVY, LIGHT, Budget, StoreLock, current_budget
from api.services import GraphService
from graph import GraphStore, StoreConfig, open_store
from graph.embedded import EmbeddedStore


@pytest.fixture
def read_only_store(store: GraphStore, store_path: Path) -> Iterator[GraphStore]:
    store.close()  # the server opens the file read-only
    opened = open_store(StoreConfig(db_path=store_path, read_only=True))
    yield opened
    opened.close()


def _in_thread(kind: str, work: Callable[[], Any], done: list[str], name: str) -> threading.Thread:
    def run() -> None:
        current_budget.set(Budget(time.monotonic() + 60, 60, kind=kind))
        work()
        done.append(name)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_read_only_store_runs_as_many_statements_as_it_has_connections(store: GraphStore, store_path: Path) -> None:
    assert store.read_concurrency == 1  # a read-write open: one connection, its transactions are its own
    store.close()
    for connections in (1, 3):
        with open_store(StoreConfig(db_path=store_path, read_only=True, read_connections=connections)) as opened:
            assert opened.read_concurrency == connections
            assert GraphService(opened).lock.capacity == connections  # type: ignore[attr-defined]


def test_a_light_call_is_answered_while_a_heavy_statement_holds_a_connection(read_only_store: GraphStore) -> None:
    """The heavy call is inside the store, on a connection, until the test lets it go; the light call
    (a paper by id) is answered meanwhile, on the other connection. With one lock around one connection
    the light call waited for the heavy one to end."""
    assert isinstance(read_only_store, EmbeddedStore) and read_only_store.read_concurrency == 2
    service = GraphService(read_only_store)
    expected = service.count_search("translation", year_min=None, year_max=None, category=None)
    inside, release = threading.Event(), threading.Event()
    original = read_only_store.query

    def query(name: str, params: Any = None, identifiers: Any = None) -> list[dict[str, Any]]:
        if name == "count_papers_by_title":  # the heavy request's statement: runs until released
            with read_only_store._lease():
                inside.set()
                release.wait(30)
                return original(name, params, identifiers)
        return original(name, params, identifiers)

    read_only_store.query = query  # type: ignore[method-assign]
    done: list[str] = []
    counted: list[int] = []
    found: list[Any] = []
    heavy = _in_thread(
        HEAVY,
        lambda: counted.append(service.count_search("translation", year_min=None, year_max=None, category=None)),
        done,
        "heavy",
    )
    assert inside.wait(30)
    light = _in_thread(LIGHT, lambda: found.extend(service.papers(["p1"])), done, "light")
    light.join(30)
    release.set()
    heavy.join(30)
    assert done == ["light", "heavy"]
    assert found[0] is not None and found[0].id == "p1" and counted == [expected] and expected > 0


def test_heavy_calls_leave_one_place_to_light_ones() -> None:
    """Capacity 2: a heavy call holds one place; a second heavy call waits (the other place is the light
    calls'), a light call that comes after it enters at once; the second heavy call enters once the first
    has left."""
    lock, order = StoreLock(2), list[str]()
    first_in, first_out = threading.Event(), threading.Event()

    def first() -> None:
        with lock:
            first_in.set()
            first_out.wait(30)

    first_heavy = _in_thread(HEAVY, first, order, "first heavy")
    assert first_in.wait(30)
    second_heavy = _in_thread(HEAVY, lambda: lock.acquire() and lock.release(), order, "second heavy")
    while not lock._waiting:  # the second heavy call is queued
        time.sleep(0.01)
    light = _in_thread(LIGHT, lambda: lock.acquire() and lock.release(), order, "light")
    light.join(30)
    assert order == ["light"]  # the second heavy call still waits: only the light place was free
    first_out.set()
    for thread in (first_heavy, second_heavy):
        thread.join(30)
    assert order == ["light", "first heavy", "second heavy"] or order == ["light", "second heavy", "first heavy"]
    assert not lock.locked() and lock._holders == 0


def test_unbudgeted_calls_count_as_heavy_and_a_capacity_of_one_is_one_lock() -> None:
    lock = StoreLock(2)
    assert lock.acquire()  # outside any request (a service's first load): heavy
    assert not lock.acquire(blocking=False)  # the last place is the light calls'
    lock.release()
    single = StoreLock()
    assert single.acquire() and not single.acquire(blocking=False) and single.locked()
    single.release()
    with pytest.raises(ValueError, match="at least 1"):
        StoreLock(0)
