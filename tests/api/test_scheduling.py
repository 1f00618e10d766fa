"""Fair scheduling (api/scheduling.py): time budgets that stop a request's store calls, light requests
served first at the store lock, the bounded queue of heavy operations, and probes that never wait on
the store."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.app import create_app
from api.scheduling import HEAVY, LIGHT, Budget, Scheduler, StoreLock, classify, current_budget
from api.schema import MAX_TOKENS, Context, schema
from api.services import GraphService
from api.settings import AppSettings
from graph import GraphStore, StoreConfig
from tests.api.live import live_app

KEY = "probe-key"
HEAVY_EXPLORE = '{ explore(name: "most_cited_papers", params: {year_min: 0, year_max: 9999, limit: 5}) { __typename } }'
NESTED = '{ paper(id: "p1") { title citedBy(first: 5) { edges { node { title authors { name } } } } } }'


def _kind(query: str) -> str:
    return classify(schema._schema, query, operation_name=None, variables=None, max_results=200, max_tokens=MAX_TOKENS)[
        0
    ]


def test_heavy_operations_are_told_apart_before_they_run() -> None:
    nested = "papers(first: 200) { edges { node { citedBy(first: 3) { edges { node { citedBy(first: 3) { totalCount } } } } } } }"
    assert _kind("{ " + " ".join(f"a{i}: {nested}" for i in range(15)) + " }") == HEAVY  # by its cost
    assert _kind(HEAVY_EXPLORE) == HEAVY  # a whole-graph query, whatever it returns
    assert _kind('{ egoNetwork(paperId: "p1", depth: 2) { __typename } }') == HEAVY
    assert _kind('{ egoNetwork(paperId: "p1", depth: 1) { __typename } }') == LIGHT
    assert _kind(NESTED) == LIGHT
    assert _kind("{ not graphql") == LIGHT  # fails at once when it runs


def _waiter(lock: StoreLock, budget: Budget | None, order: list[str], name: str) -> threading.Thread:
    def take() -> None:
        current_budget.set(budget)
        with lock:
            order.append(name)

    thread = threading.Thread(target=take)
    thread.start()
    return thread


def test_the_store_lock_serves_a_light_call_before_a_heavy_one_that_came_just_before() -> None:
    lock, order = StoreLock(), list[str]()
    far = time.monotonic() + 60
    lock.acquire()
    heavy = _waiter(lock, Budget(far, 60, kind=HEAVY), order, "heavy")
    time.sleep(0.05)
    light = _waiter(lock, Budget(far, 60, kind=LIGHT), order, "light")
    time.sleep(0.05)
    lock.release()
    heavy.join(5)
    light.join(5)
    assert order == ["light", "heavy"] and not lock.locked()


def test_a_heavy_call_that_waited_past_its_head_start_goes_before_later_light_ones() -> None:
    lock, order = StoreLock(), list[str]()
    far = time.monotonic() + 60
    lock.acquire()
    heavy = _waiter(lock, Budget(far, 60, kind=HEAVY), order, "heavy")
    time.sleep(0.4)  # past HEAVY_PENALTY_S: no starvation of heavy work by a stream of light calls
    light = _waiter(lock, Budget(far, 60, kind=LIGHT), order, "light")
    time.sleep(0.05)
    lock.release()
    heavy.join(5)
    light.join(5)
    assert order == ["heavy", "light"]


def test_a_request_past_its_budget_gets_the_code_and_issues_no_store_call_after(service: GraphService) -> None:
    """The store is busy (its lock held) past the request's budget: the request answers
    TIME_BUDGET_EXCEEDED, and its waiting store call is dropped, not run once the store frees."""
    lock = service.lock
    lock.acquire()
    before = service.round_trips
    try:
        context = Context.create(service, 50, timeout_s=0.3)
        result = asyncio.run(schema.execute(NESTED, context_value=context))
    finally:
        lock.release()
    time.sleep(0.5)  # time for a call that still waited on the lock to run (it must not)
    assert result.errors and (result.errors[0].extensions or {}).get("code") == "TIME_BUDGET_EXCEEDED"
    assert "0.3 s time budget" in result.errors[0].message
    assert service.round_trips == before
    assert not lock.locked()


def test_a_resolver_that_spends_its_budget_stops_between_store_calls(
    service: GraphService, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = service.store
    real = store.query

    def slow(name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        time.sleep(0.4)
        return real(name, params)

    monkeypatch.setattr(store, "query", slow)
    context = Context.create(service, 50, timeout_s=0.2)
    result = asyncio.run(schema.execute(NESTED, context_value=context))
    time.sleep(0.6)  # the first call ends in its thread; the nested level's call must not follow it
    assert result.errors and (result.errors[0].extensions or {}).get("code") == "TIME_BUDGET_EXCEEDED"
    assert service.round_trips == 1  # the paper; not its citing papers
    assert not service.lock.locked()


def test_heavy_operations_beyond_the_queue_are_answered_server_busy_at_once(service: GraphService) -> None:
    scheduler = Scheduler(heavy_slots=1, heavy_queue=1)
    lock = service.lock
    lock.acquire()  # the store is busy: the running heavy operation waits on it, the next one in the queue

    async def three() -> list[Any]:
        def context() -> Context:
            return Context.create(service, 50, timeout_s=20, scheduler=scheduler)

        first = asyncio.ensure_future(schema.execute(HEAVY_EXPLORE, context_value=context()))
        second = asyncio.ensure_future(schema.execute(HEAVY_EXPLORE, context_value=context()))
        while scheduler.admitted < 2:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        third = await schema.execute(HEAVY_EXPLORE, context_value=context())
        refused_in = time.monotonic() - started
        light = await schema.execute("{ exploreQueries { name } }", context_value=context())  # no store call
        lock.release()
        return [await first, await second, third, refused_in, light]

    try:
        first, second, third, refused_in, light = asyncio.run(three())
    finally:
        if lock.locked():
            lock.release()
        scheduler.close()
    assert third.errors and third.errors[0].extensions["code"] == "SERVER_BUSY"
    assert third.errors[0].extensions["retryAfter"] >= 1 and "retry in about" in third.errors[0].message
    assert refused_in < 2  # at once, not after the others
    assert light.errors is None and light.data["exploreQueries"]  # light work runs beside full heavy slots
    assert first.errors is None and second.errors is None
    assert first.data["explore"]["__typename"] == "ExploreRows" and scheduler.admitted == 0


@pytest.fixture
def closed_store(rich_store: GraphStore, store_path: Path) -> Path:
    rich_store.close()  # the server opens the file read-only
    return store_path


def test_healthz_and_readyz_answer_while_the_store_lock_is_held(closed_store: Path) -> None:
    app = create_app(StoreConfig(db_path=closed_store, read_only=True), AppSettings.from_env())
    with live_app(app) as base:
        lock = app.state.server.service.lock
        lock.acquire()  # a heavy query's store call, as long as it likes
        try:
            waits, answers = [], []
            for path in ("/healthz", "/readyz"):
                started = time.monotonic()
                answers.append(httpx.get(f"{base}{path}", timeout=30))
                waits.append(time.monotonic() - started)
        finally:
            lock.release()
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[1].json()["papers"] == 5 and answers[1].json()["status"] == "ready"
    assert max(waits) < 0.5, f"a probe waited {max(waits):.2f} s on the store lock"


def test_readyz_needs_the_key_and_shows_no_path(closed_store: Path) -> None:
    settings = dataclasses.replace(AppSettings.from_env(), api_key=KEY)
    app = create_app(StoreConfig(db_path=closed_store, read_only=True), settings)
    with live_app(app) as base:
        anonymous = httpx.get(f"{base}/readyz")
        wrong = httpx.get(f"{base}/readyz", headers={"x-api-key": "not-it"})
        keyed = httpx.get(f"{base}/readyz", headers={"authorization": f"Bearer {KEY}"})
        health = httpx.get(f"{base}/healthz")
    assert anonymous.status_code == wrong.status_code == 401
    assert anonymous.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert "papers" not in anonymous.text
    assert keyed.status_code == 200 and keyed.json()["papers"] == 5
    assert str(closed_store.parent) not in keyed.text and keyed.json()["index"]["folder"] == "graph.db.index"
    assert health.status_code == 200  # liveness stays open


def test_readyz_says_which_encoder_the_store_serves(closed_store: Path, tmp_path: Path) -> None:
    from gnn.text.encoder import FINETUNE_RECORD

    app = create_app(StoreConfig(db_path=closed_store, read_only=True), AppSettings.from_env())
    with live_app(app) as base:
        plain = httpx.get(f"{base}/readyz").json()["encoder"]
    assert plain["fine_tuned"] is False and plain["model"]
    tuned = tmp_path / "models" / "encoder" / "base-0123"
    tuned.mkdir(parents=True)
    record = {"base": "/x/all-MiniLM-L6-v2", "settings": {"objective": "triplet"}, "steps": 7, "data_hash": "abc"}
    (tuned / FINETUNE_RECORD).write_text(json.dumps(record))
    closed_store.with_name(closed_store.name + ".encoder.json").write_text(json.dumps({"model": str(tuned)}))
    app = create_app(StoreConfig(db_path=closed_store, read_only=True), AppSettings.from_env())
    with live_app(app) as base:
        ready = httpx.get(f"{base}/readyz")
    assert ready.json()["encoder"] == {
        "model": "base-0123",
        "fine_tuned": True,
        "base": "all-MiniLM-L6-v2",
        "objective": "triplet",
        "steps": 7,
        "data_hash": "abc",
    }
    assert str(tmp_path) not in ready.text


def test_a_heavy_operation_stops_resolving_fields_past_its_budget_and_yields_between(service: GraphService) -> None:
    """Its Python work (fields that never await) stops at the deadline too, not only its store calls."""
    from types import SimpleNamespace

    from api.errors import TimeBudgetExceeded
    from api.scheduling import HEAVY_YIELD_EVERY
    from api.schema import BudgetedResolvers

    extension = BudgetedResolvers(execution_context=None)
    heavy = Context.create(service, 50, timeout_s=0.05)
    heavy.budget.kind = HEAVY
    light = Context.create(service, 50, timeout_s=0.05)
    time.sleep(0.1)  # both budgets spent
    calls = []

    def field(root: object, info: object) -> str:
        calls.append(root)
        return "value"

    for _ in range(HEAVY_YIELD_EVERY - 1):
        extension.resolve(field, "heavy", SimpleNamespace(context=heavy))
    with pytest.raises(TimeBudgetExceeded):
        extension.resolve(field, "heavy", SimpleNamespace(context=heavy))
    for _ in range(HEAVY_YIELD_EVERY):  # a light operation's fields are not counted, slowed or stopped here
        extension.resolve(field, "light", SimpleNamespace(context=light))
    assert calls.count("heavy") == HEAVY_YIELD_EVERY - 1 and calls.count("light") == HEAVY_YIELD_EVERY


def test_a_document_that_does_not_parse_is_light_and_left_to_the_operation_to_report(service: GraphService) -> None:
    deep = "{" + "a{" * 600 + "a" + "}" * 601  # within the token limit, nested deeper than the parser allows
    assert classify(
        schema._schema, deep, operation_name=None, variables=None, max_results=200, max_tokens=MAX_TOKENS
    ) == (LIGHT, None)
    scheduler = Scheduler()
    try:
        result = asyncio.run(schema.execute(deep, context_value=Context.create(service, 50, 5, scheduler=scheduler)))
    finally:
        scheduler.close()
    assert result.errors and (result.errors[0].extensions or {}).get("code") == "GRAPHQL_PARSE_FAILED"
