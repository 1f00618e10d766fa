"""One work, one node: merge_works moves every edge of a work stored twice onto the survivor, delete_work
removes a withdrawn work with what only it supported (graph.works)."""

from __future__ import annotations

import pandas as pd
import pytest

from graph import GraphBatch, GraphStore, ingest
from graph.aliases import stored_keys
from graph.errors import ConfigError, StoreError
from graph.works import delete_work, merge_works, paper_rels


def _pairs(store: GraphStore, rel_type: str) -> set[tuple[str, str]]:
    frame = store.read_edges(rel_type)
    return set(zip(frame["source"], frame["target"]))


def _twice_stored() -> GraphBatch:
    """``ref:stub`` and ``doi:10.1/w`` are one work: c1 cites both, c2 the stub only, the stub cites x."""
    papers = pd.DataFrame(
        {
            "id": ["doi:10.1/w", "ref:stub", "c1", "c2", "x"],
            "title": ["The work", None, "Citing 1", "Citing 2", "X"],
            "year": [2017, 2017, 2020, 2021, 2000],
            "reference": [None, "Aria M, 2017, J Informetr 11:959", None, None, None],
            "venue": [None, "J INFORMETR", None, None, None],
            "stub": [False, True, False, False, False],
        }
    )
    return GraphBatch(
        "test",
        nodes={
            "Paper": papers,
            "Author": pd.DataFrame({"id": ["aria m"], "name": ["Aria M"]}),
            "Alias": pd.DataFrame({"id": ["ref:ji-v11-p959", "wos:1"], "kind": ["ref", "wos"]}),
            "Keyword": pd.DataFrame({"id": ["author:bibliometrics"], "name": ["bibliometrics"], "kind": ["author"]}),
            "Sentence": pd.DataFrame({"id": ["ref:stub#1"], "paper_id": ["ref:stub"], "sid": [1], "text": ["S."]}),
        },
        rels={
            "CITES": pd.DataFrame(
                {
                    "source": ["c1", "c1", "c2", "ref:stub", "ref:stub"],
                    "target": ["doi:10.1/w", "ref:stub", "ref:stub", "x", "doi:10.1/w"],
                    "n_contexts": [1, 2, 3, 4, 5],
                }
            ),
            "WROTE": pd.DataFrame(
                {"source": ["aria m", "aria m"], "target": ["doi:10.1/w", "ref:stub"], "position": [1, 1]}
            ),
            "ALIAS_OF": pd.DataFrame({"source": ["ref:ji-v11-p959", "wos:1"], "target": ["ref:stub", "doi:10.1/w"]}),
            "HAS_KEYWORD": pd.DataFrame({"source": ["ref:stub"], "target": ["author:bibliometrics"]}),
            "HAS_SENTENCE": pd.DataFrame({"source": ["ref:stub"], "target": ["ref:stub#1"]}),
            "CO_CITED": pd.DataFrame(
                {"source": ["c1", "doi:10.1/w"], "target": ["ref:stub", "ref:stub"], "count": [1, 1]}
            ),
        },
    )


def test_every_paper_relationship_is_moved_without_duplicates(empty_store: GraphStore) -> None:
    ingest(empty_store, _twice_stored())
    merge = merge_works(empty_store, "ref:stub", "doi:10.1/w")
    assert merge.outcome == "merged"
    assert empty_store.count_nodes("Paper") == 4
    # c1 cited both: one CITES, the survivor's (n_contexts 1); c2's moves; the stub's own citation of the
    # survivor would be a self-citation and is dropped
    cites = empty_store.read_edges("CITES")
    assert set(zip(cites["source"], cites["target"], cites["n_contexts"])) == {
        ("c1", "doi:10.1/w", 1),
        ("c2", "doi:10.1/w", 3),
        ("doi:10.1/w", "x", 4),
    }
    assert _pairs(empty_store, "WROTE") == {("aria m", "doi:10.1/w")}
    assert _pairs(empty_store, "HAS_KEYWORD") == {("doi:10.1/w", "author:bibliometrics")}
    assert _pairs(empty_store, "HAS_SENTENCE") == {("doi:10.1/w", "ref:stub#1")}
    sentence = next(empty_store.iter_nodes("Sentence", 10))
    assert sentence["paper_id"].tolist() == ["doi:10.1/w"]
    # CO_CITED of the pair (survivor, stub) is gone (a pair of one work); (c1, stub) became (c1, survivor)
    assert _pairs(empty_store, "CO_CITED") == {("c1", "doi:10.1/w")}
    assert _pairs(empty_store, "ALIAS_OF") == {
        ("ref:ji-v11-p959", "doi:10.1/w"),
        ("wos:1", "doi:10.1/w"),
        ("ref:stub", "doi:10.1/w"),
    }
    assert stored_keys(empty_store, ["ref:stub", "ref:ji-v11-p959"]) == {
        "ref:stub": "doi:10.1/w",
        "ref:ji-v11-p959": "doi:10.1/w",
    }
    # a stub gives nothing to the full record: no `reference` or `venue` parsed from a citation
    row = empty_store.query("paper_by_ids", {"ids": ["doi:10.1/w"]})[0]
    assert row["reference"] is None and row["venue"] is None and row["title"] == "The work"
    assert merge.moved["CITES"] == 2 and merge.kept["CITES"] == 1 and merge.taken == ()
    # merging again changes nothing
    before = empty_store.stats()
    again = merge_works(empty_store, "ref:stub", "doi:10.1/w")
    assert again.outcome == "already merged" and not again.changed
    assert empty_store.stats() == before
    assert merge_works(empty_store, "ref:nothing", "doi:10.1/w").outcome == "absent"


def test_a_full_loser_fills_what_the_survivor_lacks(empty_store: GraphStore) -> None:
    ingest(
        empty_store,
        GraphBatch(
            "test",
            nodes={
                "Paper": pd.DataFrame(
                    {
                        "id": ["openalex:W1", "openalex:W2"],
                        "title": ["Merged away", "Survivor"],
                        "abstract": ["An abstract.", None],
                        "year": [2019, None],
                        "stub": [False, True],
                    }
                )
            },
        ),
    )
    merge = merge_works(empty_store, "openalex:W1", "openalex:W2")
    row = empty_store.query("paper_by_ids", {"ids": ["openalex:W2"]})[0]
    assert row["title"] == "Survivor" and row["abstract"] == "An abstract." and row["year"] == 2019
    assert row["stub"] is False  # a full work merged in: the survivor is no stub any more
    assert set(merge.taken) == {"abstract", "year"}


def test_a_survivor_not_stored_takes_the_losers_node(empty_store: GraphStore) -> None:
    """Keyed by the loser's id, the node is re-keyed; keyed by a third id (its DOI), it gets the survivor's as an
    alias."""
    batch = GraphBatch(
        "test",
        nodes={
            "Paper": pd.DataFrame({"id": ["openalex:W1", "c", "doi:10.1/a"], "title": ["Work", "C", "A"]}),
            "Alias": pd.DataFrame({"id": ["openalex:W2"]}),
        },
        rels={
            "CITES": pd.DataFrame({"source": ["c"], "target": ["openalex:W1"]}),
            "ALIAS_OF": pd.DataFrame({"source": ["openalex:W2"], "target": ["doi:10.1/a"]}),
        },
    )
    ingest(empty_store, batch)
    assert merge_works(empty_store, "openalex:W1", "openalex:W9").outcome == "renamed"
    assert _pairs(empty_store, "CITES") == {("c", "openalex:W9")}
    assert empty_store.query("paper_by_ids", {"ids": ["openalex:W9"]})[0]["title"] == "Work"
    assert stored_keys(empty_store, ["openalex:W1"]) == {"openalex:W1": "openalex:W9"}
    assert merge_works(empty_store, "openalex:W2", "openalex:W8").outcome == "aliased"
    assert stored_keys(empty_store, ["openalex:W8"]) == {"openalex:W8": "doi:10.1/a"}
    assert merge_works(empty_store, "openalex:W2", "openalex:W8").outcome == "already merged"


def test_a_failed_merge_leaves_the_store_as_it_was(empty_store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(empty_store, _twice_stored())
    before = {rel.type: _pairs(empty_store, rel.type) for rel in paper_rels(empty_store.schema)}
    counts = empty_store.stats()
    writes = type(empty_store)._write

    def failing(self, nodes, rels, **kwargs):  # type: ignore[no-untyped-def]
        writes(self, nodes, {})  # the nodes are written, then the edges fail
        raise StoreError("the disk is on fire")

    monkeypatch.setattr(type(empty_store), "_write", failing)
    with pytest.raises(StoreError):
        merge_works(empty_store, "ref:stub", "doi:10.1/w")
    monkeypatch.undo()
    assert empty_store.stats() == counts
    assert {rel.type: _pairs(empty_store, rel.type) for rel in paper_rels(empty_store.schema)} == before


def test_a_deleted_work_takes_what_only_it_supported(empty_store: GraphStore) -> None:
    ingest(empty_store, _twice_stored())
    ingest(
        empty_store,
        GraphBatch(
            "test",
            nodes={"Paper": pd.DataFrame({"id": ["lonely", "x"], "stub": [True, None]})},
            rels={"CITES": pd.DataFrame({"source": ["ref:stub", "c1"], "target": ["lonely", "x"]})},
        ),
    )
    deletion = delete_work(empty_store, "ref:ji-v11-p959")  # by an alias of it
    assert deletion.papers == ("ref:stub", "lonely")  # x is cited by c1 too, and is no stub
    assert deletion.sentences == 1 and deletion.aliases == 1
    assert stored_keys(empty_store, ["ref:stub", "lonely", "ref:ji-v11-p959", "x"]) == {"x": "x"}
    assert ("c1", "ref:stub") not in _pairs(empty_store, "CITES")
    assert empty_store.count_nodes("Sentence") == 0
    assert delete_work(empty_store, "ref:stub").absent


def test_ids_are_checked() -> None:
    with pytest.raises(ConfigError, match="non-empty paper id"):
        merge_works(None, "", "x")  # type: ignore[arg-type]
