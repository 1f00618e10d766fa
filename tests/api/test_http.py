"""The HTTP app through httpx against a live uvicorn on loopback: GraphQL, pages, key, CORS."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.settings import AppSettings
from api.web import graphiql_assets, missing_assets
from graph import GraphStore
from tests.api.live import live_server

KEY = "s3cret-key"


@pytest.fixture
def served(rich_store: GraphStore, store_path: Path) -> Iterator[str]:
    rich_store.close()  # the server opens the file read-only
    settings = dataclasses.replace(AppSettings.from_env(), cors_origins=("http://dashboards.example",))
    with live_server(store_path, settings) as base:
        yield base


@pytest.fixture
def served_with_key(rich_store: GraphStore, store_path: Path) -> Iterator[str]:
    rich_store.close()
    with live_server(store_path, dataclasses.replace(AppSettings.from_env(), api_key=KEY)) as base:
        yield base


def test_graphql_health_and_readiness(served: str) -> None:
    assert httpx.get(f"{served}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{served}/readyz").json()
    assert ready["status"] == "ready" and ready["papers"] == 5
    assert ready["models"] == {"recommend": "loads on first use", "linkage": "loads on first use"}
    # no index was built beside this store, and the read-only server does not build one: it says how to
    assert ready["index"]["state"] == "missing" and ready["index"]["command"] == "citegraph compute index"
    # compute cocitation left its basis: `citegraph update` brings the counts up to date by delta
    assert ready["cocitation"]["state"] == "basis" and ready["cocitation"]["updates_since_clusters"] == 0
    assert ready["cocitation"]["counts_at"] == ready["cocitation"]["clusters_at"] is not None
    response = httpx.post(
        f"{served}/graphql", json={"query": '{ paper(id: "p5") { title citations { edges { node { id } } } } }'}
    )
    assert response.status_code == 200
    assert response.json()["data"]["paper"] == {
        "title": "Attention for translation",
        "citations": {"edges": [{"node": {"id": "p4"}}]},
    }
    ego = httpx.post(
        f"{served}/graphql", json={"query": '{ egoNetwork(paperId: "p1") { ... on EgoNetwork { nodes { id } } } }'}
    )
    assert len(ego.json()["data"]["egoNetwork"]["nodes"]) == 4


def test_warm_start_loads_models_in_the_background_and_readyz_says_how_it_went(
    rich_store: GraphStore, store_path: Path
) -> None:
    import time

    rich_store.close()
    with live_server(store_path, dataclasses.replace(AppSettings.from_env(), warm=True)) as base:
        models: dict[str, str] = {}
        for _ in range(200):
            models = httpx.get(f"{base}/readyz").json()["models"]
            if "loading" not in models.values():
                break
            time.sleep(0.1)
        # loaded, or the reason (no embeddings, no trained linker) — never stuck, never a crashed server
        for state in models.values():
            assert state == "loaded" or (state.startswith("unavailable: ") and len(state) > 20), state
        assert httpx.get(f"{base}/healthz").json() == {"status": "ok"}


def test_errors_over_http_carry_codes(served: str) -> None:
    body = httpx.post(
        f"{served}/graphql", json={"query": '{ papers(search: "x", first: 100000) { totalCount } }'}
    ).json()
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    bad = httpx.post(f"{served}/graphql", json={"query": "{ nope }"})
    assert bad.status_code == 200 and bad.json()["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert "Traceback" not in bad.text


def test_graphiql_page_loads_local_assets(served: str) -> None:
    assert not missing_assets(), missing_assets()
    page = httpx.get(f"{served}/graphql", headers={"accept": "text/html"})
    assert page.status_code == 200 and "unpkg.com" not in page.text and "/assets/graphiql/graphiql.min.js" in page.text
    for asset in graphiql_assets():
        response = httpx.get(f"{served}{asset.local_url}")
        assert response.status_code == 200 and response.content == asset.file.read_bytes()


def test_dashboard_is_served_without_a_cdn(served: str) -> None:
    page = httpx.get(f"{served}/")
    assert page.status_code == 200 and "egoNetwork" not in page.text  # the query lives in the script
    assert "https://" not in page.text
    script = httpx.get(f"{served}/dashboard/dashboard.js")
    assert script.status_code == 200 and "egoNetwork(" in script.text and "https://" not in script.text
    scripts = re.findall(r'<script src="(/assets/[^"]+)"', page.text)
    assert {s.split("/")[2] for s in scripts} == {"graphology", "graphology-library", "sigma"}, scripts
    for src in scripts:  # every library the page loads comes from the local npm packages
        response = httpx.get(f"{served}{src}")
        assert response.status_code == 200 and len(response.content) > 10_000, src


def test_cors_allows_only_configured_origins(served: str) -> None:
    preflight = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}
    allowed = httpx.options(f"{served}/graphql", headers={"origin": "http://dashboards.example", **preflight})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://dashboards.example"
    refused = httpx.options(f"{served}/graphql", headers={"origin": "http://evil.example", **preflight})
    assert "access-control-allow-origin" not in refused.headers


def test_api_key_is_required_when_set(served_with_key: str) -> None:
    query = {"query": "{ stats { label count } }"}
    missing = httpx.post(f"{served_with_key}/graphql", json=query)
    assert missing.status_code == 401 and missing.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    wrong = httpx.post(f"{served_with_key}/graphql", json=query, headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401
    get_query = httpx.get(f"{served_with_key}/graphql", params={"query": "{ stats { label } }"})
    assert get_query.status_code == 401
    assert (
        httpx.post(f"{served_with_key}/graphql", json=query, headers={"authorization": f"Bearer {KEY}"}).status_code
        == 200
    )
    assert httpx.post(f"{served_with_key}/graphql", json=query, headers={"x-api-key": KEY}).status_code == 200
    # pages and health checks stay open
    assert httpx.get(f"{served_with_key}/graphql", headers={"accept": "text/html"}).status_code == 200
    assert httpx.get(f"{served_with_key}/healthz").status_code == 200
