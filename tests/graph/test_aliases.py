"""A batch's ids that name stored papers under other keys are merged into those papers (graph.aliases)."""

from __future__ import annotations

import pandas as pd

from graph import GraphBatch, GraphStore, ingest, ingest_stream
from graph.aliases import stored_keys


def _papers(**columns: list[object]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def _acl_paper_with_doi() -> GraphBatch:
    return GraphBatch(
        "anthology-like",
        nodes={
            "Paper": _papers(
                id=["P98-1081", "my-paper"], title=["Tagging", "Mine"], doi=["10.3115/980845.980860", None]
            )
        },
    )


def _alias_rows(store: GraphStore) -> set[tuple[str, str]]:
    frame = store.read_edges("ALIAS_OF")
    return set(zip(frame["source"], frame["target"]))


def test_a_doi_key_merges_into_the_stored_paper_with_that_doi(empty_store: GraphStore) -> None:
    ingest(empty_store, _acl_paper_with_doi())
    crossref_like = GraphBatch(
        "crossref-like",
        nodes={
            "Paper": _papers(id=["doi:10.3115/980845.980860"], year=[1998], stub=[False]),
            "Sentence": pd.DataFrame(
                {
                    "id": ["doi:10.3115/980845.980860#ctx1"],
                    "paper_id": ["doi:10.3115/980845.980860"],
                    "text": ["As in [1]."],
                }
            ),
        },
        rels={
            "CITES": pd.DataFrame({"source": ["doi:10.3115/980845.980860"], "target": ["my-paper"]}),
            "HAS_SENTENCE": pd.DataFrame(
                {"source": ["doi:10.3115/980845.980860"], "target": ["doi:10.3115/980845.980860#ctx1"]}
            ),
        },
    )
    report = ingest(empty_store, crossref_like)
    assert report.merged_ids == 1 and "merged into them" in report.summary()
    assert report.tables["Paper"].created == 0 and report.tables["Paper"].matched == 1
    assert empty_store.count_nodes("Paper") == 2
    row = empty_store.query("paper_by_ids", {"ids": ["P98-1081"]})[0]
    assert row["year"] == 1998 and row["title"] == "Tagging"
    assert set(zip(empty_store.read_edges("CITES")["source"], empty_store.read_edges("CITES")["target"])) == {
        ("P98-1081", "my-paper")
    }
    assert set(empty_store.read_edges("HAS_SENTENCE")["target"]) == {"P98-1081#ctx1"}
    # The DOI the second source keyed the work by still finds it.
    assert ("doi:10.3115/980845.980860", "P98-1081") in _alias_rows(empty_store)
    assert stored_keys(empty_store, ["doi:10.3115/980845.980860", "P98-1081", "nope"]) == {
        "doi:10.3115/980845.980860": "P98-1081",
        "P98-1081": "P98-1081",
    }


def test_a_stub_known_by_an_alias_is_filled_in_by_the_full_record(empty_store: GraphStore) -> None:
    citing = GraphBatch(
        "openalex-like",
        nodes={"Paper": _papers(id=["doi:10.1/a", "openalex:W2"], title=["A", None], stub=[False, True])},
        rels={"CITES": pd.DataFrame({"source": ["doi:10.1/a"], "target": ["openalex:W2"]})},
    )
    ingest(empty_store, citing)
    full = GraphBatch(
        "openalex-like",
        nodes={
            "Paper": _papers(id=["doi:10.1/b"], title=["B"], stub=[False]),
            "Alias": pd.DataFrame({"id": ["openalex:W2"], "kind": ["openalex"]}),
        },
        rels={"ALIAS_OF": pd.DataFrame({"source": ["openalex:W2"], "target": ["doi:10.1/b"]})},
    )
    ingest(empty_store, full)
    assert empty_store.count_nodes("Paper") == 2  # no second node for the same work
    row = empty_store.query("paper_by_ids", {"ids": ["openalex:W2"]})[0]
    assert row["title"] == "B" and row["stub"] is False
    assert ("doi:10.1/b", "openalex:W2") in _alias_rows(empty_store)
    assert stored_keys(empty_store, ["doi:10.1/b"]) == {"doi:10.1/b": "openalex:W2"}


def test_a_stub_record_never_turns_a_full_paper_back_into_a_stub(empty_store: GraphStore) -> None:
    ingest(empty_store, _acl_paper_with_doi())
    stub = GraphBatch(
        "citing-source",
        nodes={"Paper": _papers(id=["P98-1081"], title=["TAGGING (parsed from a reference)"], stub=[True])},
    )
    report = ingest(empty_store, stub)
    assert report.tables["Paper"].matched == 1
    row = empty_store.query("paper_by_ids", {"ids": ["P98-1081"]})[0]
    assert row["stub"] is not True and row["title"] == "Tagging"
    # A stub of a stub stays one.
    ingest(empty_store, GraphBatch("x", nodes={"Paper": _papers(id=["ref:smith 2001"], stub=[True])}))
    ingest(empty_store, GraphBatch("x", nodes={"Paper": _papers(id=["ref:smith 2001"], stub=[True])}))
    assert empty_store.query("paper_by_ids", {"ids": ["ref:smith 2001"]})[0]["stub"] is True


def test_re_keyed_loads_are_idempotent(empty_store: GraphStore) -> None:
    ingest(empty_store, _acl_paper_with_doi())
    batch = GraphBatch(
        "crossref-like",
        nodes={"Paper": _papers(id=["doi:10.3115/980845.980860", "doi:10.9/new"], title=[None, "New"])},
        rels={"CITES": pd.DataFrame({"source": ["doi:10.9/new"], "target": ["doi:10.3115/980845.980860"]})},
    )
    ingest(empty_store, batch)
    first = empty_store.stats()
    report = ingest(empty_store, batch)
    assert empty_store.stats() == first
    assert report.tables["Paper"].created == 0
    assert set(zip(empty_store.read_edges("CITES")["source"], empty_store.read_edges("CITES")["target"])) == {
        ("doi:10.9/new", "P98-1081")
    }


def _stub_citation() -> GraphBatch:
    """A paper citing a work known only by its reference string: the stub ``ref:ariam2017jinformetr``."""
    return GraphBatch(
        "citing",
        nodes={
            "Paper": _papers(
                id=["citing", "ref:ariam2017jinformetr"],
                title=["Citing", None],
                year=[2020, 2017],
                label=[None, "Aria M, 2017, J Informetr 11:959"],
                reference=[None, "Aria M, 2017, J INFORMETR, V11, P959"],
                stub=[False, True],
            ),
            "Alias": pd.DataFrame({"id": ["ref:ji-v11-p959"], "kind": ["ref"]}),
        },
        rels={
            "CITES": pd.DataFrame({"source": ["citing"], "target": ["ref:ariam2017jinformetr"]}),
            "ALIAS_OF": pd.DataFrame({"source": ["ref:ji-v11-p959"], "target": ["ref:ariam2017jinformetr"]}),
        },
    )


def _record() -> GraphBatch:
    """The record of that work, keyed by its DOI, with the field key a later reference would meet it by."""
    return GraphBatch(
        "record",
        nodes={
            "Paper": _papers(
                id=["doi:10.1016/j.joi.2017.08.007"],
                title=["bibliometrix"],
                year=[2017],
                label=["Aria M, 2017, J Informetr 11:959"],
                stub=[False],
            ),
            "Alias": pd.DataFrame({"id": ["ref:ji-v11-p959", "wos:000418020600003"], "kind": ["ref", "wos"]}),
        },
        rels={
            "ALIAS_OF": pd.DataFrame(
                {
                    "source": ["ref:ji-v11-p959", "wos:000418020600003"],
                    "target": ["doi:10.1016/j.joi.2017.08.007", "doi:10.1016/j.joi.2017.08.007"],
                }
            )
        },
    )


def test_a_record_loaded_after_its_stub_keeps_its_own_key_and_takes_the_stubs_citations(
    empty_store: GraphStore,
) -> None:
    ingest(empty_store, _stub_citation())
    report = ingest(empty_store, _record())
    assert report.merged_stubs == 1 and "merged into" in report.summary()
    assert empty_store.count_nodes("Paper") == 2
    assert set(zip(empty_store.read_edges("CITES")["source"], empty_store.read_edges("CITES")["target"])) == {
        ("citing", "doi:10.1016/j.joi.2017.08.007")
    }
    assert stored_keys(empty_store, ["ref:ariam2017jinformetr", "ref:ji-v11-p959"]) == {
        "ref:ariam2017jinformetr": "doi:10.1016/j.joi.2017.08.007",
        "ref:ji-v11-p959": "doi:10.1016/j.joi.2017.08.007",
    }
    row = empty_store.query("paper_by_ids", {"ids": ["doi:10.1016/j.joi.2017.08.007"]})[0]
    assert row["stub"] is False and row["title"] == "bibliometrix" and row["reference"] is None
    # the record loaded again: nothing changes
    before = empty_store.stats()
    assert ingest(empty_store, _record()).merged_stubs == 0
    assert empty_store.stats() == before


def test_a_stub_of_a_stored_record_leaves_the_same_graph(empty_store: GraphStore) -> None:
    """The other order (record, then the citation) gives the same nodes and edges."""
    ingest(empty_store, _record())
    ingest(empty_store, _stub_citation())
    assert empty_store.count_nodes("Paper") == 2
    assert set(zip(empty_store.read_edges("CITES")["source"], empty_store.read_edges("CITES")["target"])) == {
        ("citing", "doi:10.1016/j.joi.2017.08.007")
    }
    row = empty_store.query("paper_by_ids", {"ids": ["doi:10.1016/j.joi.2017.08.007"]})[0]
    assert row["stub"] is False and row["title"] == "bibliometrix" and row["reference"] is None


def test_a_streamed_load_merges_the_stub_inside_its_copy(empty_store: GraphStore) -> None:
    ingest(empty_store, _stub_citation())
    report = ingest_stream(empty_store, "record", [_record()])
    assert report.merged_stubs == 1
    assert set(empty_store.read_edges("CITES")["target"]) == {"doi:10.1016/j.joi.2017.08.007"}
    assert stored_keys(empty_store, ["ref:ariam2017jinformetr"]) == {
        "ref:ariam2017jinformetr": "doi:10.1016/j.joi.2017.08.007"
    }
