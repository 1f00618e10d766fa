"""Every id a source gave a paper finds it through GraphQL; an unknown one is a NotFound naming it."""

from __future__ import annotations

import pandas as pd
import pytest
from tiny_graph import tiny_batch

from api.services import GraphService
from graph import GraphBatch, GraphStore, ingest
from tests.api.conftest import run


@pytest.fixture
def service(empty_store: GraphStore) -> GraphService:
    """The tiny graph, whose p1 also has a DOI, an OpenAlex W-id, an arXiv id and a PubMed id."""
    ingest(empty_store, tiny_batch())
    aliases = ["doi:10.1234/p1", "openalex:W2741809807", "arxiv:0708.3686", "pmid:12345"]
    ingest(
        empty_store,
        GraphBatch(
            "aliases",
            nodes={"Alias": pd.DataFrame({"id": aliases, "kind": ["doi", "openalex", "arxiv", "pmid"]})},
            rels={"ALIAS_OF": pd.DataFrame({"source": aliases, "target": ["p1"] * 4})},
        ),
    )
    return GraphService(empty_store)


@pytest.mark.parametrize(
    "given",
    [
        "p1",
        "10.1234/P1",  # DOIs are case-insensitive
        "https://doi.org/10.1234/p1",
        "W2741809807",
        "https://openalex.org/W2741809807",
        "0708.3686v2",  # arXiv id with a version
        "arXiv:0708.3686",
        "12345",  # a bare number: PubMed, S2 corpus or MAG id
    ],
)
def test_paper_by_any_id_its_sources_gave(service: GraphService, given: str) -> None:
    result = run(service, "query($id: ID!) { paper(id: $id) { id } }", {"id": given})
    assert result.errors is None and result.data == {"paper": {"id": "p1"}}


def test_ego_network_and_co_citations_take_aliases_and_name_unknown_ids(service: GraphService) -> None:
    found = run(service, '{ egoNetwork(paperId: "W2741809807") { ... on EgoNetwork { nodes { id } } } }')
    assert found.errors is None and "p1" in {n["id"] for n in found.data["egoNetwork"]["nodes"]}
    missing = run(service, '{ coCitations(paperId: "W999") { ... on NotFound { id message } } }')
    assert missing.data["coCitations"] == {"id": "W999", "message": "no paper has id 'W999'"}
    unknown = run(service, '{ paper(id: "no-such-paper-xyz") { id } }')
    assert unknown.errors is None and unknown.data == {"paper": None}
