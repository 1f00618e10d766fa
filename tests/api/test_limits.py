"""The API's guards: the key that cannot be walked around, the cost and time limits, body and JSON
limits, and the smaller promises (one operation chosen, ids echoed short, coded outcomes).

HTTP tests run a live uvicorn on loopback (tests/api/live.py); the rest run ``schema.execute``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from graphql import parse
from tiny_graph import tiny_batch

from api.app import _recommendation_service, json_too_deep
from api.cost import DEFAULT_MAX_QUERY_COST, query_cost
from api.lazy import Lazy
from api.schema import Context, schema
from api.services import GraphService
from api.settings import AppSettings
from gnn.mapping.networks import MAX_NODES
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError
from tests.api.conftest import rich_batch, run
from tests.api.live import live_server

KEY = "s3cret-key"
STALL = (
    '{ paper(id: "p1") { coCited(first: 200) { paper { coCited(first: 200) { paper { coCited(first: 200) '
    "{ paper { coCited(first: 200) { paper { id } } } } } } } } } }"
)
STATS = "{stats{count}}"
DASHBOARD = Path(__file__).resolve().parents[2] / "api" / "static" / "dashboard" / "dashboard.js"


@pytest.fixture(scope="module")
def module_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The API fixture graph (tiny graph, taxonomy, full text, co-citation) in a file, closed."""
    from gnn.cocitation.compute import compute_cocitation

    path = tmp_path_factory.mktemp("limits") / "graph.db"
    store = open_store(StoreConfig(db_path=path))
    ingest(store, tiny_batch())
    ingest(store, rich_batch())
    compute_cocitation(store)
    store.close()
    return path


@pytest.fixture(scope="module")
def keyed(module_store: Path) -> Iterator[str]:
    """A live server that needs KEY, with a small body limit (10,000 bytes) to test against."""
    settings = dataclasses.replace(AppSettings.from_env(), api_key=KEY, max_body_bytes=10_000)
    with live_server(module_store, settings) as base:
        yield base


def ran(response: httpx.Response) -> bool:
    """Whether the response carries the result of an operation (data), whatever its status."""
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("data") is not None


# item 1: the API key ---------------------------------------------------------------------------------

# Query strings that strawberry reads as `query=<a document>`: every one must need the key.
EXECUTING = [
    "%71uery=%7Bstats%7Bcount%7D%7D",  # the bypass: %71 is q
    "q%75ery=%7Bstats%7Bcount%7D%7D",  # %75 is u
    "%51uery=x&%71%75%65%72%79=%7Bstats%7Bcount%7D%7D",  # all escaped, after an unrelated parameter
    "query=%7B+stats+%7B+count+%7D+%7D",  # + for spaces
    "query=%7B%20stats%20%7Bcount%7D%7D",  # %20 for spaces
    "query=&%71uery=%7Bstats%7Bcount%7D%7D",  # duplicate: the last one counts
    "%71uery=%7Bstats%7Bcount%7D%7D&query=%7Bstats%7Bcount%7D%7D",
    "x=query%3D&%71uery=%7Bstats%7Bcount%7D%7D",  # the bytes `query=` only inside a value
    "query=%7Bstats%7Bcount%7D%7D&variables=%7B%7D",
]
# Query strings that are no document; without the key they may show nothing but never run anything.
NOT_EXECUTING = ["+query=%7Bstats%7Bcount%7D%7D", "query+=%7Bstats%7Bcount%7D%7D", "QUERY=%7Bstats%7Bcount%7D%7D"]


@pytest.mark.parametrize("query_string", EXECUTING)
@pytest.mark.parametrize("accept", ["application/json", "text/html"])
def test_every_spelling_of_a_get_query_needs_the_key(keyed: str, query_string: str, accept: str) -> None:
    response = httpx.get(f"{keyed}/graphql?{query_string}", headers={"accept": accept})
    assert response.status_code == 401, (query_string, response.status_code, response.text[:200])
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    with_key = httpx.get(f"{keyed}/graphql?{query_string}", headers={"accept": accept, "x-api-key": KEY})
    assert with_key.status_code == 200 and ran(with_key), with_key.text[:200]


@pytest.mark.parametrize("query_string", NOT_EXECUTING)
def test_get_without_a_query_runs_nothing_without_the_key(keyed: str, query_string: str) -> None:
    for accept in ("application/json", "text/html"):
        response = httpx.get(f"{keyed}/graphql?{query_string}", headers={"accept": accept})
        assert not ran(response) and '"count"' not in response.text, response.text[:200]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", json.dumps({"query": STATS}).encode()),
        ("application/json; charset=utf-8", json.dumps({"query": STATS}).encode()),
        ("application/x-www-form-urlencoded", b"query=%7Bstats%7Bcount%7D%7D"),
        (
            "multipart/form-data; boundary=b",
            b'--b\r\nContent-Disposition: form-data; name="query"\r\n\r\n{stats{count}}\r\n--b--\r\n',
        ),
        ("application/graphql", STATS.encode()),
        ("text/plain", json.dumps({"query": STATS}).encode()),
    ],
)
@pytest.mark.parametrize("accept", ["application/json", "text/html"])
def test_every_post_needs_the_key(keyed: str, content_type: str, body: bytes, accept: str) -> None:
    headers = {"content-type": content_type, "accept": accept}
    response = httpx.post(f"{keyed}/graphql", content=body, headers=headers)
    assert response.status_code == 401 and not ran(response), response.text[:200]
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


def test_the_graphiql_page_stays_open_and_runs_nothing(keyed: str) -> None:
    """A browser's GET without `query` gets the page, even with a document in its body: nothing runs."""
    page = httpx.request(
        "GET", f"{keyed}/graphql", headers={"accept": "text/html"}, content=json.dumps({"query": STATS}).encode()
    )
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html") and not ran(page)
    assert '"count"' not in page.text


@pytest.mark.parametrize(
    "headers",
    [
        {"X-API-KEY": KEY},
        {"x-api-key": KEY},
        {"AUTHORIZATION": f"BEARER {KEY}"},
        {"authorization": f"bearer {KEY}"},
        {"Authorization": f"Bearer   {KEY}"},
    ],
)
def test_header_names_and_the_scheme_in_any_case(keyed: str, headers: dict[str, str]) -> None:
    response = httpx.post(f"{keyed}/graphql", json={"query": STATS}, headers=headers)
    assert response.status_code == 200 and ran(response), response.text[:200]


@pytest.mark.parametrize(
    "headers",
    [
        {"x-api-key": ""},
        {"authorization": "Bearer"},
        {"authorization": KEY},  # no scheme
        {"authorization": f"Basic {KEY}"},
        {"x-api-key": KEY[:-1]},
        {"x-api-key": KEY + "x"},
        {"x-api-key": KEY.upper()},
        {"authorization": f"Bearer {KEY[:-1]}"},
    ],
)
def test_empty_and_wrong_keys_are_refused(keyed: str, headers: dict[str, str]) -> None:
    response = httpx.post(f"{keyed}/graphql", json={"query": STATS}, headers=headers)
    assert response.status_code == 401 and not ran(response)


def test_websocket_transports_run_nothing(module_store: Path) -> None:
    """GraphQL over WebSocket would run queries outside the HTTP checks; the app offers none."""
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from api.app import create_app

    settings = dataclasses.replace(AppSettings.from_env(), api_key=KEY)
    app = create_app(StoreConfig(db_path=module_store, read_only=True), settings)
    runs = {
        "graphql-transport-ws": {"id": "1", "type": "subscribe", "payload": {"query": STATS}},
        "graphql-ws": {"id": "1", "type": "start", "payload": {"query": STATS}},
    }
    with TestClient(app) as client:
        for protocol, message in runs.items():
            received: list[Any] = []
            with (
                pytest.raises(WebSocketDisconnect),
                client.websocket_connect("/graphql", subprotocols=[protocol]) as ws,
            ):
                ws.send_json({"type": "connection_init"})
                ws.send_json(message)
                for _ in range(3):
                    received.append(ws.receive_json())
                    assert "count" not in json.dumps(received[-1]), (protocol, received)


def test_a_blank_configured_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_API_KEY", "   ")
    with pytest.raises(ConfigError, match="CITEGRAPH_API_KEY"):
        AppSettings.from_env()
    monkeypatch.setenv("CITEGRAPH_API_KEY", "")
    assert AppSettings.from_env().api_key is None  # empty is unset: no key


# item 2: the cost limit and the time limit ------------------------------------------------------------


def test_the_stall_query_is_refused_before_touching_the_store(
    service: GraphService, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_store(*_: object, **__: object) -> None:
        raise AssertionError("the store was queried")

    monkeypatch.setattr(service.store, "query", no_store)
    result = run(service, STALL, max_results=200)
    assert result.data is None and len(result.errors) == 1
    error = result.errors[0]
    assert error.extensions["code"] == "QUERY_TOO_COMPLEX"
    assert error.extensions["cost"] > 200**4 and error.extensions["maxCost"] == DEFAULT_MAX_QUERY_COST
    assert f"{error.extensions['cost']:,}" in error.message and "CITEGRAPH_MAX_QUERY_COST" in error.message
    assert service.round_trips == 0


def test_the_cost_follows_variables_fragments_and_connections(service: GraphService) -> None:
    nested = """
    query ($n: Int!) { paper(id: "p1") { ...Partners } }
    fragment Partners on Paper { coCited(first: $n) { paper { ...More } } }
    fragment More on Paper { coCited(first: $n) { paper { citations(first: $n) { edges { node { id } } } } } }
    """
    small = run(service, nested, {"n": 5}, max_results=200)
    assert small.errors is None and small.data["paper"] is not None
    big = run(service, nested, {"n": 200}, max_results=200)
    assert big.errors and big.errors[0].extensions["code"] == "QUERY_TOO_COMPLEX"
    # paper 1; coCited 200, paper 200; coCited 40k, paper 40k; citations 40k, edges 8M, node 8M
    assert big.errors[0].extensions["cost"] == 1 + 2 * 200 + 3 * 200**2 + 2 * 200**3
    # a lower server limit refuses what the default allows
    context = Context.create(service, 200, 10.0, max_query_cost=100)
    lower = asyncio.run(schema.execute(nested, variable_values={"n": 5}, context_value=context))
    assert lower.errors and lower.errors[0].extensions["code"] == "QUERY_TOO_COMPLEX"


def test_the_dashboard_and_readme_queries_fit_the_default_cost(service: GraphService) -> None:
    """Every query of the dashboard at its largest settings (lists at the 200 cap), and the README's."""
    gql = schema._schema
    queries = re.findall(r"const [A-Z_]+ = `(query[^`]*)`", DASHBOARD.read_text(encoding="utf-8"))
    assert len(queries) >= 5
    variables = {
        **{"first": 200, "limit": 200, "depth": 2, "direction": "BOTH", "co": True},
        **{"id": "p1", "text": "x", "context": "x", "yearMax": None, "sentence": "x"},
        **{"unit": "REFERENCES", "top": MAX_NODES, "minCount": 1, "measure": "COUNT"},  # the largest map
        **{"source": "p1", "target": "p2", "format": "GRAPHML", "nodes": [], "edges": []},
    }
    for query in queries:
        cost = query_cost(gql, parse(query), variables=variables, max_results=200)
        assert cost is not None and cost <= DEFAULT_MAX_QUERY_COST, (cost, query[:60])
    readme = (DASHBOARD.parents[3] / "README.md").read_text(encoding="utf-8")
    documents = [m.replace('\\"', '"') for m in re.findall(r'"query":\s*"(.*?)"}\'', readme, flags=re.S)]
    assert documents
    for document in documents:
        cost = query_cost(gql, parse(document), max_results=200)
        assert cost is not None and cost <= DEFAULT_MAX_QUERY_COST, (cost, document[:60])


@pytest.fixture
def slow_paper(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """`paper` spends 3 s of CPU-bound (non-awaiting) work per paper; set the event to end it early."""
    import api.types.papers as papers

    done = threading.Event()
    real = papers.paper_from

    def slow(record: Any) -> Any:
        done.wait(3)
        return real(record)

    monkeypatch.setattr(papers, "paper_from", slow)
    return done


def test_healthz_answers_while_a_slow_resolver_runs(module_store: Path, slow_paper: threading.Event) -> None:
    with live_server(module_store, AppSettings.from_env()) as base:
        answers: list[httpx.Response] = []
        worker = threading.Thread(
            target=lambda: answers.append(
                httpx.post(f"{base}/graphql", json={"query": '{ paper(id: "p1") { title } }'}, timeout=30)
            )
        )
        worker.start()
        time.sleep(0.5)  # the query is inside the slow resolver now
        started = time.monotonic()
        health = httpx.get(f"{base}/healthz", timeout=30)
        waited = time.monotonic() - started
        still_running = worker.is_alive()
        slow_paper.set()
        worker.join(30)
    assert health.status_code == 200 and still_running
    assert waited < 0.5, f"/healthz took {waited:.2f} s while a query ran"
    assert answers and answers[0].json()["data"]["paper"]["title"] == "Statistical machine translation"


def test_a_request_past_its_limit_answers_timeout_on_time(module_store: Path, slow_paper: threading.Event) -> None:
    settings = dataclasses.replace(AppSettings.from_env(), request_timeout_s=0.5)
    with live_server(module_store, settings) as base:
        started = time.monotonic()
        response = httpx.post(f"{base}/graphql", json={"query": '{ paper(id: "p1") { title } }'}, timeout=30)
        elapsed = time.monotonic() - started
        slow_paper.set()
    body = response.json()
    assert body["errors"][0]["extensions"]["code"] == "TIME_BUDGET_EXCEEDED" and body.get("data") is None
    assert "0.5 s time budget" in body["errors"][0]["message"]
    assert elapsed < 2.0, f"TIME_BUDGET_EXCEEDED came after {elapsed:.2f} s (limit 0.5 s, the resolver runs 3 s)"


def test_query_cost_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_MAX_QUERY_COST", "1234")
    monkeypatch.setenv("CITEGRAPH_MAX_BODY_BYTES", "5000")
    settings = AppSettings.from_env()
    assert settings.max_query_cost == 1234 and settings.max_body_bytes == 5000
    monkeypatch.setenv("CITEGRAPH_MAX_QUERY_COST", "lots")
    with pytest.raises(ConfigError, match="CITEGRAPH_MAX_QUERY_COST"):
        AppSettings.from_env()


# item 9: body size and JSON depth ---------------------------------------------------------------------


def _coded(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text[:200])
    body = response.json()
    assert body["errors"][0]["extensions"]["code"] == code, body
    assert "Traceback" not in response.text
    return body


def test_a_body_over_the_limit_is_refused(keyed: str) -> None:
    padding = " " * 20_000
    document = json.dumps({"query": STATS + padding}).encode()
    headers = {"x-api-key": KEY, "content-type": "application/json"}
    body = _coded(httpx.post(f"{keyed}/graphql", content=document, headers=headers), 413, "PAYLOAD_TOO_LARGE")
    assert "10,000 bytes" in body["errors"][0]["message"] and "CITEGRAPH_MAX_BODY_BYTES" in body["errors"][0]["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer encoding
        for start in range(0, len(document), 1000):
            yield document[start : start + 1000]

    _coded(httpx.post(f"{keyed}/graphql", content=chunks(), headers=headers), 413, "PAYLOAD_TOO_LARGE")
    # under the limit, chunked or not, the request runs
    small = json.dumps({"query": STATS}).encode()
    assert ran(httpx.post(f"{keyed}/graphql", content=small, headers=headers))
    assert ran(httpx.post(f"{keyed}/graphql", content=iter([small[:5], small[5:]]), headers=headers))


def test_json_nested_too_deep_is_a_coded_400(keyed: str, caplog: pytest.LogCaptureFixture) -> None:
    headers = {"x-api-key": KEY, "content-type": "application/json"}
    caplog.set_level(logging.DEBUG)
    for depth in (150, 4_000):  # 4,000: past the JSON decoder's own recursion guard
        variables = "[" * depth + "]" * depth
        document = f'{{"query": "{{stats{{count}}}}", "variables": {{"v": {variables}}}}}'.encode()
        body = _coded(httpx.post(f"{keyed}/graphql", content=document, headers=headers), 400, "JSON_TOO_DEEP")
        assert "100 levels" in body["errors"][0]["message"]
    as_get = httpx.get(
        f"{keyed}/graphql",
        params={"query": STATS, "variables": '{"v": ' + "[" * 1500 + "]" * 1500 + "}"},
        headers=headers,
    )
    _coded(as_get, 400, "JSON_TOO_DEEP")
    assert not [r for r in caplog.records if r.exc_info or "RecursionError" in r.getMessage()]
    fine = '{"query": "query($v: JSON) { explore(name: \\"x\\", params: $v) { __typename } }", "variables": {"v": '
    assert ran(httpx.post(f"{keyed}/graphql", content=(fine + "[" * 50 + "]" * 50 + "}}").encode(), headers=headers))


def test_json_too_deep_counts_nesting() -> None:
    assert not json_too_deep({"a": [[1]]}, limit=3)
    assert json_too_deep({"a": [[[]]]}, limit=3)
    assert not json_too_deep([[]] * 10_000, limit=2)


def test_malformed_requests_are_coded(keyed: str) -> None:
    headers = {"x-api-key": KEY, "content-type": "application/json"}
    for document in (b"", b"{", b"null", b"[1]", b'{"query": 3}', b"\xff\xfe"):
        body = _coded(httpx.post(f"{keyed}/graphql", content=document, headers=headers), 400, "BAD_REQUEST")
        assert "application/json" in body["errors"][0]["message"]
    _coded(httpx.put(f"{keyed}/graphql", json={"query": STATS}, headers=headers), 405, "METHOD_NOT_ALLOWED")
    _coded(httpx.get(f"{keyed}/nowhere"), 404, "NOT_FOUND")


def test_the_server_freezes_what_it_holds_out_of_the_garbage_collectors_reach(module_store: Path) -> None:
    """A full collection holds the GIL: what the server holds for its lifetime is frozen at start-up.

    Before, every full collection traversed the modules, the store's service and loaded models:
    pauses of 0.4-1.4 s under 64 clients, with /healthz waiting on them.
    """
    from starlette.testclient import TestClient

    from api.app import create_app

    gc.unfreeze()
    app = create_app(StoreConfig(db_path=module_store, read_only=True), AppSettings.from_env())
    try:
        with TestClient(app) as client:
            assert client.get("/healthz").status_code == 200
            assert gc.get_freeze_count() > 10_000  # the imported modules alone are far more objects
    finally:
        gc.unfreeze()


def test_a_long_graphql_comment_does_not_block_healthz(module_store: Path) -> None:
    """A document that takes the parser seconds (a long comment, within the body limit) runs off the loop."""
    settings = dataclasses.replace(AppSettings.from_env(), max_body_bytes=40_000_000)
    document = json.dumps({"query": "#" + "x" * 15_000_000 + "\n{ stats { count } }"}).encode()
    with live_server(module_store, settings) as base:
        answers: list[httpx.Response] = []
        worker = threading.Thread(
            target=lambda: answers.append(
                httpx.post(
                    f"{base}/graphql", content=document, headers={"content-type": "application/json"}, timeout=60
                )
            )
        )
        worker.start()
        waits = []
        while worker.is_alive() and len(waits) < 200:
            started = time.monotonic()
            httpx.get(f"{base}/healthz", timeout=30)
            waits.append(time.monotonic() - started)
            time.sleep(0.02)
        worker.join(60)
    assert answers and ran(answers[0]), answers[0].text[:200] if answers else "no answer"
    assert len(waits) >= 3 and max(waits) < 0.5, f"/healthz waited up to {max(waits):.2f} s during the parse"


# item 10: the smaller promises ------------------------------------------------------------------------


def test_several_operations_need_an_operation_name(service: GraphService) -> None:
    document = 'query A { stats { count } } query B { paper(id: "p1") { title } }'
    result = run(service, document)
    assert result.data is None and result.errors[0].extensions["code"] == "OPERATION_NAME_REQUIRED"
    assert "operationName" in result.errors[0].message and "A, B" in result.errors[0].message
    named = asyncio.run(schema.execute(document, operation_name="B", context_value=Context.create(service, 50)))
    assert named.errors is None and named.data == {"paper": {"title": "Statistical machine translation"}}


def test_several_operations_over_http_need_an_operation_name(keyed: str) -> None:
    document = 'query A { stats { count } } query B { paper(id: "p1") { title } }'
    response = httpx.post(f"{keyed}/graphql", json={"query": document}, headers={"x-api-key": KEY})
    assert response.json()["errors"][0]["extensions"]["code"] == "OPERATION_NAME_REQUIRED" and not ran(response)


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("query($s: ID!) { egoNetwork(paperId: $s) { ... on NotFound { id message } } }", "egoNetwork"),
        ("query($s: ID!) { coCitations(paperId: $s) { ... on NotFound { id message } } }", "coCitations"),
        ("query($s: ID!) { citanceLinks(paperId: $s) { ... on NotFound { id message } } }", "citanceLinks"),
        ("query($s: String!) { explore(name: $s) { ... on NotFound { id message } } }", "explore"),
        ("query($s: String!) { taxonomy(scheme: $s) { ... on NotFound { id message } } }", "taxonomy"),
        (
            'query($s: ID!) { recommend(input: {context: "x [CIT]", citedIds: [$s]}) '
            "{ ... on RecommendUnavailable { message } } }",
            "recommend",
        ),
    ],
)
def test_an_unknown_id_is_echoed_cut(service: GraphService, query: str, path: str) -> None:
    long_id = "x" * 1_000_000
    result = run(service, query, {"s": long_id})
    assert result.errors is None, result.errors
    found = result.data[path]
    assert len(found["message"]) < 1000 and "x" * 100 + "…" in found["message"]
    if "id" in found:
        assert found["id"] == "x" * 100 + "…"
    short = run(service, query, {"s": "nope"}).data[path]
    assert "'nope'" in short["message"]  # a short id is shown whole


def _no_text_store(tmp_path: Path, encoder: Any) -> GraphStore:
    from gnn.text.embeddings import compute_embeddings

    store = open_store(StoreConfig(db_path=tmp_path / "untitled.db"))
    papers = pd.DataFrame(
        {"id": ["u1", "u2", "u3"], "title": [None] * 3, "abstract": [None] * 3, "year": [2000, 2001, 2002]}
    )
    cites = pd.DataFrame({"source": ["u3", "u3"], "target": ["u1", "u2"], "n_contexts": [1, 1]})
    ingest(store, GraphBatch("untitled", nodes={"Paper": papers}, rels={"CITES": cites}))
    compute_embeddings(store, encoder)
    return store


def test_recommend_on_papers_without_text_is_unavailable(tmp_path: Path, encoder: Any) -> None:
    store = _no_text_store(tmp_path, encoder)
    service = GraphService(store)
    lazy = Lazy(lambda: _recommendation_service(service))
    query = (
        '{ recommend(input: {context: "we tag [CIT]"}) { __typename ... on RecommendUnavailable { reason message } } }'
    )
    result = asyncio.run(schema.execute(query, context_value=Context.create(service, 200, 120.0, recommend=lazy)))
    assert result.errors is None, result.errors
    out = result.data["recommend"]
    assert out == {"__typename": "RecommendUnavailable", "reason": "INDEX_UNAVAILABLE", "message": out["message"]}
    lazy.close()
    store.close()


def test_linkage_k_states_one_bound(service: GraphService) -> None:
    from gnn.linkage.service import MAX_K

    messages = set()
    for k in (0, MAX_K + 1, 100, 300):
        result = run(
            service, f'{{ linkage(citingSentence: "x", paperId: "p1", k: {k}) {{ __typename }} }}', max_results=200
        )
        assert result.errors and result.errors[0].extensions["code"] == "BAD_USER_INPUT"
        messages.add(re.sub(r"got -?\d+", "got k", result.errors[0].message))
    assert messages == {f"`k` must be between 1 and {MAX_K}, got k"}
    description = next(f for f in schema._schema.query_type.fields.items() if f[0] == "linkage")[1].description
    assert f"`k`: 1 to {MAX_K}." in description
