"""The `recommend` field through ``schema.execute`` on the tiny fixture store.

The service is built as tests/gnn/recommend/test_recommend.py builds it: the tiny graph plus two citing
sentences (profiles), embeddings from the session's real encoder, the index in a temporary folder.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from api.lazy import Lazy
from api.schema import Context, schema
from api.services import GraphService
from gnn.recommend.service import RecommendationService, ServiceSettings
from gnn.retrieval.enricher import EnricherSettings
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import GraphStore, ingest
from graph.errors import ConfigError
from tests.gnn.recommend.test_recommend import _citances

RECOMMEND = """
query ($input: RecommendInput!) {
  recommend(input: $input) {
    __typename
    ... on Recommendations {
      query candidates
      items { rank score foundBy stages why features { name value } paper { id title year authors { name } } }
    }
    ... on RecommendUnavailable { reason message }
  }
}
"""


@pytest.fixture
def graph_service(store: GraphStore, encoder: TextEncoder) -> GraphService:
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    return GraphService(store)


@pytest.fixture
def lazy_recommend(graph_service: GraphService, encoder: TextEncoder, tmp_path: Path) -> Lazy[RecommendationService]:
    settings = ServiceSettings(enricher=EnricherSettings(top_m=3))
    return Lazy(
        lambda: RecommendationService.open(
            graph_service.store, settings, encoder=encoder, index_dir=tmp_path / "index", lock=graph_service.lock
        )
    )


def execute(
    service: GraphService,
    recommend: Lazy[RecommendationService] | None,
    variables: dict[str, Any],
    max_results: int = 200,
) -> Any:
    return asyncio.run(
        schema.execute(
            RECOMMEND,
            variable_values=variables,
            context_value=Context.create(service, max_results, 60.0, recommend=recommend),
        )
    )


def data(service: GraphService, recommend: Lazy[RecommendationService] | None, **input: Any) -> dict[str, Any]:
    result = execute(service, recommend, {"input": input})
    assert result.errors is None, result.errors
    return result.data["recommend"]


def test_recommend_returns_ranked_papers_with_stages_and_features(
    graph_service: GraphService, lazy_recommend: Lazy[RecommendationService]
) -> None:
    assert not lazy_recommend.loaded  # built on first use, not before
    out = data(graph_service, lazy_recommend, context="translation with phrase tables [CIT]", citingPaperId="p4", k=3)
    assert out["__typename"] == "Recommendations" and lazy_recommend.loaded
    items = out["items"]
    assert 1 <= len(items) <= 3 and out["candidates"] >= len(items)
    assert [i["rank"] for i in items] == list(range(1, len(items) + 1))
    scores = [i["score"] for i in items]
    assert scores == sorted(scores, reverse=True)
    ids = [i["paper"]["id"] for i in items]
    assert "p4" not in ids and "p5" not in ids  # the citing paper, and p5 (2005) is newer than p4
    for item in items:
        assert item["paper"]["title"] and item["why"]
        assert item["stages"] and set(item["stages"]) <= {"PREFETCH", "REFERENCES", "COCITED"}
        assert item["foundBy"] == ("PREFETCH" if "PREFETCH" in item["stages"] else "ENRICHER")
        features = {f["name"]: f["value"] for f in item["features"]}
        assert "prefetch_rank" in features and "cocitation_count" in features
    assert lazy_recommend.get() is lazy_recommend.get()  # one service per app


def test_recommend_year_max_and_cited_ids(
    graph_service: GraphService, lazy_recommend: Lazy[RecommendationService]
) -> None:
    out = data(graph_service, lazy_recommend, context="phrase tables [CIT]", citedIds=["p2"], yearMax=1999, k=10)
    ids = {i["paper"]["id"] for i in out["items"]}
    assert ids <= {"p3"}  # p2 is already cited; only p2 and p3 are from 1999 or earlier
    assert all(i["paper"]["year"] is None or i["paper"]["year"] <= 1999 for i in out["items"])


@pytest.mark.parametrize(
    ("input", "reason"),
    [
        ({"context": "   "}, "EMPTY_CONTEXT"),
        ({"context": "x [CIT]", "citingPaperId": "nope"}, "UNKNOWN_PAPER"),
        ({"context": "x [CIT]", "citedIds": ["p1", "nope"]}, "UNKNOWN_PAPER"),
    ],
)
def test_recommend_unavailable_is_a_value(
    graph_service: GraphService, lazy_recommend: Lazy[RecommendationService], input: dict[str, Any], reason: str
) -> None:
    out = data(graph_service, lazy_recommend, **input)
    assert out["__typename"] == "RecommendUnavailable" and out["reason"] == reason and out["message"]
    assert not lazy_recommend.loaded  # answered before any model loads


def test_recommend_without_an_index(graph_service: GraphService) -> None:
    def missing() -> RecommendationService:
        raise ConfigError("no paper of /secret/path/graph.db has an embedding")

    for recommend in (None, Lazy(missing)):
        out = data(graph_service, recommend, context="phrase tables [CIT]")
        assert out["__typename"] == "RecommendUnavailable" and out["reason"] == "INDEX_UNAVAILABLE"
        assert "/secret" not in out["message"] and "citegraph compute index" in out["message"]


def test_recommend_while_the_model_loads_says_so(graph_service: GraphService) -> None:
    """A first request that runs into the deadline while the recommender loads is told it is loading
    (and how to avoid the wait), not to ask for less; the load goes on, so a retry finds it ready."""
    release = threading.Event()

    def slow_open() -> RecommendationService:
        release.wait(5)
        raise ConfigError("no index yet")

    lazy = Lazy(slow_open)
    result = asyncio.run(
        schema.execute(
            RECOMMEND,
            variable_values={"input": {"context": "phrase tables [CIT]"}},
            context_value=Context.create(graph_service, 200, 0.2, recommend=lazy),
        )
    )
    release.set()
    assert result.errors and result.errors[0].extensions == {"code": "TIME_BUDGET_EXCEEDED"}
    message = result.errors[0].message
    assert "recommender is still loading" in message and "CITEGRAPH_WARM=1" in message


def test_a_model_load_past_the_first_request_budget_still_reads_the_store(graph_service: GraphService) -> None:
    """The request that started a load gets TIME_BUDGET_EXCEEDED, but the load's own store reads are not
    refused at that request's deadline (the load serves every later request)."""
    read: list[int] = []
    done = threading.Event()

    def slow_open() -> RecommendationService:
        time.sleep(0.4)  # past the request's 0.2 s budget
        with graph_service.lock:
            read.append(graph_service.store.count_nodes("Paper"))
        done.set()
        raise ConfigError("no index yet")

    result = asyncio.run(
        schema.execute(
            RECOMMEND,
            variable_values={"input": {"context": "phrase tables [CIT]"}},
            context_value=Context.create(graph_service, 200, 0.2, recommend=Lazy(slow_open)),
        )
    )
    assert result.errors and result.errors[0].extensions == {"code": "TIME_BUDGET_EXCEEDED"}
    assert done.wait(5) and read and read[0] > 0


@pytest.mark.parametrize(
    "input",
    [
        {"context": "x [CIT]", "k": 0},
        {"context": "x [CIT]", "k": 101},
        {"context": "x [CIT]", "k": 10_000},
        {"context": "word " * 2_000},
        {"context": "x [CIT]", "yearMax": 100_000},
        {"draft": ["a.", "b [CIT]."], "position": 2},
        {"draft": ["a.", "b [CIT]."]},
        {"context": "x [CIT]", "position": 0},
        {"draft": ["word."] * 2_001, "position": 0},
    ],
)
def test_recommend_arguments_out_of_range(
    graph_service: GraphService, lazy_recommend: Lazy[RecommendationService], input: dict[str, Any]
) -> None:
    result = execute(graph_service, lazy_recommend, {"input": input})
    assert result.errors and result.errors[0].extensions == {"code": "BAD_USER_INPUT"}
    assert not lazy_recommend.loaded


def test_recommend_k_is_capped_by_max_results(
    graph_service: GraphService, lazy_recommend: Lazy[RecommendationService]
) -> None:
    result = execute(graph_service, lazy_recommend, {"input": {"context": "x [CIT]", "k": 60}}, max_results=50)
    assert result.errors and result.errors[0].extensions == {"code": "BAD_USER_INPUT"}


def test_recommend_in_manuscript_mode(graph_service: GraphService, lazy_recommend: Lazy[RecommendationService]) -> None:
    """A draft and the citing sentence's position instead of a context: the query the service built
    (the sentence before, the citing one, the one after) comes back in ``query``."""
    draft = ["We study translation.", "Earlier systems used phrase tables [CIT].", "They grow large.", "Unrelated."]
    out = data(graph_service, lazy_recommend, draft=draft, position=1, k=3)
    assert out["__typename"] == "Recommendations" and out["items"]
    assert out["query"].startswith("We study translation. Earlier systems used phrase tables [CIT]. They grow large.")
    assert "Unrelated." not in out["query"]
    blank = data(graph_service, lazy_recommend, draft=["  "], position=0)
    assert blank["__typename"] == "RecommendUnavailable" and blank["reason"] == "EMPTY_CONTEXT"
