"""The `linkage` and `citanceLinks` fields through ``schema.execute`` on the tiny fixture store.

The rich store (tests/api/conftest.py) gives p1 three sentences (p1#1 cites p2 and p3); here p2
gets a full text too, and LINKS_TO edges from p1's citance to p2's sentences (gold, silver, model).
The linker is the cosine baseline (``fixed_scorer``) over the session's real encoder.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from api.lazy import Lazy
from api.schema import Context, schema
from api.services import GraphService
from gnn.linkage import fixed_scorer
from gnn.linkage.service import LinkageService
from graph import GraphStore, ingest
from graph.errors import ConfigError
from tests.api.conftest import P2_SENTENCES, linked_batch, run

LINKAGE = """
query ($s: String!, $id: ID!, $k: Int!) {
  linkage(citingSentence: $s, paperId: $id, k: $k) {
    __typename
    ... on Linkage { paperId citingSentence sentences { id sid section text score linked } }
    ... on LinkageUnavailable { paperId reason message }
  }
}
"""
CITANCE_LINKS = """
query ($id: ID!, $first: Int! = 50) {
  citanceLinks(paperId: $id, first: $first) {
    __typename
    ... on CitanceLinks {
      paperId totalCount truncated
      links { citingSentenceId citingPaperId citingText citedSentenceId citedSid citedText method score annotator }
    }
    ... on NotFound { kind id }
  }
}
"""


@pytest.fixture
def linked_service(rich_store: GraphStore) -> GraphService:
    ingest(rich_store, linked_batch())
    return GraphService(rich_store)


@pytest.fixture
def lazy_linkage(linked_service: GraphService, encoder) -> Lazy[LinkageService]:  # type: ignore[no-untyped-def]
    return Lazy(
        lambda: LinkageService(linked_service.store, encoder, fixed_scorer("cosine", 1), lock=linked_service.lock)
    )


def execute(
    service: GraphService, linkage: Lazy[LinkageService] | None, query: str, variables: dict[str, Any]
) -> dict[str, Any]:
    """``schema.execute`` with a context that carries ``linkage``; asserts there were no errors."""
    result = asyncio.run(
        schema.execute(query, variable_values=variables, context_value=Context.create(service, 50, 30.0, linkage))
    )
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


def test_linkage_returns_k_sentences_best_first(
    linked_service: GraphService, lazy_linkage: Lazy[LinkageService]
) -> None:
    assert not lazy_linkage.loaded  # built on first use, not before
    text = "Word alignment   models were trained with expectation maximisation (Brown, 1993)."
    data = execute(linked_service, lazy_linkage, LINKAGE, {"s": text, "id": "p2", "k": 3})["linkage"]
    assert data["__typename"] == "Linkage" and lazy_linkage.loaded
    assert data["paperId"] == "p2" and data["citingSentence"] == " ".join(text.split())
    sentences = data["sentences"]
    assert len(sentences) == 3
    scores = [s["score"] for s in sentences]
    assert scores == sorted(scores, reverse=True)
    assert all(s["id"] == f"p2#{s['sid']}" and s["text"] == P2_SENTENCES[s["sid"]] for s in sentences)
    assert sentences[0]["linked"] and sentences[0]["sid"] != 5  # the acknowledgement is no match
    service = lazy_linkage.get()
    assert lazy_linkage.get() is service  # one service per app
    # k up to the paper's length; more asks than it has returns what it has
    data = execute(linked_service, lazy_linkage, LINKAGE, {"s": text, "id": "p2", "k": 10})["linkage"]
    assert len(data["sentences"]) == len(P2_SENTENCES)


@pytest.mark.parametrize(
    ("sentence", "paper", "reason"),
    [
        ("Alignment models help.", "nope", "UNKNOWN_PAPER"),
        ("Alignment models help.", "p3", "NO_FULL_TEXT"),  # p3 exists, without sentences
        ("   ", "p2", "EMPTY_CITING_SENTENCE"),
    ],
)
def test_linkage_unavailable_is_a_value(
    linked_service: GraphService, lazy_linkage: Lazy[LinkageService], sentence: str, paper: str, reason: str
) -> None:
    data = execute(linked_service, lazy_linkage, LINKAGE, {"s": sentence, "id": paper, "k": 5})["linkage"]
    assert data["__typename"] == "LinkageUnavailable"
    assert data["reason"] == reason and data["paperId"] == paper and data["message"]


def test_linkage_without_a_linker_model(linked_service: GraphService) -> None:
    def missing() -> LinkageService:
        raise ConfigError("no linker model at /secret/path/linker.json")

    for linkage in (None, Lazy(missing)):
        data = execute(linked_service, linkage, LINKAGE, {"s": "x", "id": "p2", "k": 5})["linkage"]
        assert data["__typename"] == "LinkageUnavailable" and data["reason"] == "LINKER_UNAVAILABLE"
        assert "/secret" not in data["message"] and "citegraph linkage train" in data["message"]


@pytest.mark.parametrize("k", [0, 51, 10_000])
def test_linkage_k_is_capped(linked_service: GraphService, lazy_linkage: Lazy[LinkageService], k: int) -> None:
    result = asyncio.run(
        schema.execute(
            LINKAGE,
            variable_values={"s": "x", "id": "p2", "k": k},
            context_value=Context.create(linked_service, 200, 30.0, lazy_linkage),
        )
    )
    assert result.errors and result.errors[0].extensions == {"code": "BAD_USER_INPUT"}
    assert not lazy_linkage.loaded  # rejected before any model loads


def test_linkage_rejects_a_huge_sentence(linked_service: GraphService, lazy_linkage: Lazy[LinkageService]) -> None:
    result = run(linked_service, LINKAGE, {"s": "word " * 2_000, "id": "p2", "k": 5})
    assert result.errors and result.errors[0].extensions == {"code": "BAD_USER_INPUT"}


def test_citance_links_returns_stored_links_with_methods(linked_service: GraphService) -> None:
    data = execute(linked_service, None, CITANCE_LINKS, {"id": "p2"})["citanceLinks"]
    assert data["__typename"] == "CitanceLinks"
    assert (data["paperId"], data["totalCount"], data["truncated"]) == ("p2", 3, False)
    citance = "Alignment (Brown, 1993) and phrases (Koehn, 1999) help."
    assert data["links"] == [
        {
            "citingSentenceId": "p1#1",
            "citingPaperId": "p1",
            "citingText": citance,
            "citedSentenceId": cited,
            "citedSid": sid,
            "citedText": P2_SENTENCES[sid],
            "method": method,
            "score": score,
            "annotator": annotator,
        }
        for cited, sid, method, score, annotator in [
            ("p2#1", 1, "GOLD", None, "Ann"),
            ("p2#1", 1, "SILVER", 0.7, None),
            ("p2#3", 3, "MODEL", 0.4, None),
        ]
    ]
    page = execute(linked_service, None, CITANCE_LINKS, {"id": "p2", "first": 2})["citanceLinks"]
    assert [x["method"] for x in page["links"]] == ["GOLD", "SILVER"] and page["truncated"]


def test_citance_links_of_a_paper_without_links_and_unknown(linked_service: GraphService) -> None:
    assert execute(linked_service, None, CITANCE_LINKS, {"id": "p1"})["citanceLinks"]["links"] == []  # it cites
    assert execute(linked_service, None, CITANCE_LINKS, {"id": "nope"})["citanceLinks"] == {
        "__typename": "NotFound",
        "kind": "Paper",
        "id": "nope",
    }
