from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from api.schema import Context, schema
from api.services import GraphService
from graph import GraphStore


def run(service: GraphService, query: str, variables: dict[str, Any] | None = None, max_results: int = 50) -> Any:
    return asyncio.run(
        schema.execute(query, variable_values=variables, context_value=Context.create(service, max_results))
    )


@pytest.fixture
def service(store: GraphStore) -> GraphService:
    return GraphService(store)


def test_paper_with_authors_and_citations(service: GraphService) -> None:
    result = run(service, '{ paper(id: "p1") { title year authors { name } citations { id } citedBy { id title } } }')
    assert result.errors is None
    paper = result.data["paper"]
    assert paper["title"] == "Statistical machine translation" and paper["year"] == 2001
    assert [a["name"] for a in paper["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert sorted(c["id"] for c in paper["citations"]) == ["p2", "p3"]
    assert paper["citedBy"] == [{"id": "p4", "title": "Neural machine translation"}]


def test_unknown_paper_is_null(service: GraphService) -> None:
    result = run(service, '{ paper(id: "nope") { id } }')
    assert result.errors is None and result.data == {"paper": None}


def test_search_filters_by_year(service: GraphService) -> None:
    result = run(service, '{ papers(search: "Translation", yearMin: 2002, first: 5) { id } }')
    assert result.errors is None
    assert sorted(p["id"] for p in result.data["papers"]) == ["p4", "p5"]


def test_nested_lists_batch_their_store_round_trips(service: GraphService) -> None:
    """Authors of every cited paper load in one query, not one per paper (no N+1)."""
    result = run(service, '{ paper(id: "p4") { citations { id authors { name } } } }')
    assert result.errors is None and len(result.data["paper"]["citations"]) == 3
    # paper(p4) + its citations + the cited papers (one batch) + their authors (one batch)
    assert service.round_trips == 4


def test_first_is_capped_with_a_client_message(service: GraphService) -> None:
    result = run(service, '{ papers(search: "translation", first: 1000) { id } }', max_results=50)
    assert result.errors and "between 1 and 50" in result.errors[0].message


def test_depth_limit(service: GraphService) -> None:
    deep = '{ paper(id: "p5") { ' + "citations { " * 9 + "id" + " }" * 9 + " } }"
    result = run(service, deep)
    assert result.errors and "exceeds maximum operation depth" in result.errors[0].message


def test_internal_errors_are_masked(service: GraphService, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("Binder exception: MATCH (p:Paper) secret internals")

    monkeypatch.setattr(service, "search", broken)
    result = run(service, '{ papers(search: "x") { id } }')
    assert result.errors and "secret" not in result.errors[0].message and "MATCH" not in result.errors[0].message


def test_http_app_serves_graphql_and_health(store: GraphStore, store_path: Path) -> None:
    from fastapi.testclient import TestClient

    from api.app import create_app
    from api.settings import AppSettings
    from graph import StoreConfig

    store.close()
    app = create_app(StoreConfig(db_path=store_path, read_only=True), AppSettings.from_env())
    with TestClient(app) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz").json()
        assert ready["status"] == "ready" and ready["papers"] == 5
        response = client.post("/graphql", json={"query": '{ paper(id: "p5") { title citations { id } } }'})
        assert response.status_code == 200
        assert response.json()["data"]["paper"] == {"title": "Attention for translation", "citations": [{"id": "p4"}]}


def test_cocited_papers_ranked_by_measure(store: GraphStore) -> None:
    from gnn.cocitation import compute_cocitation

    compute_cocitation(store)
    service = GraphService(store)
    query = '{ paper(id: "p2") { coCited(measure: JACCARD) { paper { id } count jaccard association } } }'
    result = run(service, query)
    assert result.errors is None
    assert result.data["paper"]["coCited"] == [
        {"paper": {"id": "p3"}, "count": 2, "jaccard": 1.0, "association": 1.5},
        {"paper": {"id": "p1"}, "count": 1, "jaccard": 0.5, "association": 1.5},
    ]
    # The co-citations of every listed paper load in one batch: paper(p4), its citations, the cited
    # papers, their co-citations; the partners are those same papers, already in the request's loader.
    service.round_trips = 0
    result = run(service, '{ paper(id: "p4") { citations { id coCited(first: 2) { paper { id } } } } }')
    assert result.errors is None and service.round_trips == 4
