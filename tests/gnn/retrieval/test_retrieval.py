"""Retrieval: metrics by hand, the paper index (time order, persistence, incremental rebuild),
prefetch channels and fusion, profiles, and the enricher on the tiny fixture graph."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gnn.metrics import (
    average_precision_at_k,
    evaluate_rankings,
    f1_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from gnn.retrieval.enricher import CitationLists, Enricher, EnricherSettings, EnrichQuery
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex, s_stem, tokenize
from gnn.retrieval.prefetch import (
    ChannelList,
    Prefetched,
    Prefetcher,
    PrefetchQuery,
    PrefetchSettings,
    fuse,
)
from gnn.retrieval.profiles import ProfileIndex, ProfileSettings
from gnn.text.embeddings import compute_embeddings, paper_texts
from gnn.text.encoder import TextEncoder
from graph import GraphBatch, GraphStore, ingest
from graph.files import StoreFiles

# --- metrics --------------------------------------------------------------------------------------


def test_metrics_against_hand_computed_values() -> None:
    ranked, relevant = ["a", "b", "c", "d"], {"b", "d"}
    assert recall_at_k(ranked, relevant, 1) == 0.0
    assert recall_at_k(ranked, relevant, 2) == 0.5
    assert recall_at_k(ranked, relevant, 4) == 1.0
    assert reciprocal_rank(ranked, relevant) == 0.5
    assert average_precision_at_k(ranked, relevant, 10) == pytest.approx((1 / 2 + 2 / 4) / 2)
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at_k(ranked, relevant, 10) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert ndcg_at_k(["b", "d"], relevant, 10) == pytest.approx(1.0)
    assert f1_at_k(ranked, relevant, 20) == pytest.approx(2 * 0.1 * 1.0 / 1.1)
    # MAP@k normalises by min(|G|, k): three relevant papers, all in a top 2 of k = 2 is perfect
    assert average_precision_at_k(["x", "y"], {"x", "y", "z"}, 2) == 1.0
    assert reciprocal_rank(["x"], {"y"}) == 0.0


def test_evaluate_rankings_macro_averages_and_counts_misses_as_zero() -> None:
    metrics = evaluate_rankings([["a", "b"], ["c"], []], [{"a"}, {"z"}, {"q"}], cutoffs=(1,))
    assert metrics.queries == 3
    assert metrics.recall[1] == pytest.approx(1 / 3)
    assert metrics.mrr == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        evaluate_rankings([["a"]], [])


# --- tokens -------------------------------------------------------------------------------------


def test_tokenize_drops_stopwords_and_the_mask_and_folds_plurals() -> None:
    assert tokenize("The taggers of ([CIT]) use phrase tables") == ["tagger", "use", "phrase", "table"]
    assert s_stem("analysis") == "analysis" and s_stem("studies") == "study"


# --- the index ----------------------------------------------------------------------------------


@pytest.fixture
def embedded(store: GraphStore, encoder: TextEncoder) -> GraphStore:
    compute_embeddings(store, encoder)
    return store


def test_index_rows_are_year_ordered_and_cut_by_year(embedded: GraphStore, tmp_path: Path) -> None:
    index, report = RetrievalIndex.open(embedded, path=tmp_path / "idx")
    assert report.rebuilt and report.rows == 5 and report.with_vector == 5
    assert list(index.years) == sorted(index.years)
    assert index.ids.tolist() == ["p2", "p3", "p1", "p4", "p5"]  # 1993, 1999, 2001, 2004, 2005
    assert index.cut(2001) == 3 and index.cut(1900) == 0 and index.cut(None) == 5
    # exact inner product over unit vectors: a paper's own vector finds itself first
    scores, rows = index.dense.search(index.vectors[[3]], 2, limit=5)
    assert rows[0][0] == 3 and scores[0][0] == pytest.approx(1.0, abs=1e-5)
    # restricted to papers up to 2001, the 2004 paper is never returned
    _, rows = index.dense.search(index.vectors[[3]], 5, limit=index.cut(2001))
    assert set(rows[0].tolist()) <= {0, 1, 2}


def test_index_reloads_unchanged_and_rebuilds_incrementally(
    embedded: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    folder = tmp_path / "idx"
    RetrievalIndex.open(embedded, path=folder)
    again, report = RetrievalIndex.open(embedded, path=folder)
    assert not report.rebuilt and report.reused == 5 and len(again) == 5

    new = pd.DataFrame(
        {"id": ["p6"], "title": ["Phrase tables for neural translation"], "abstract": ["Tables."], "year": [2006]}
    )
    ingest(embedded, GraphBatch("more", nodes={"Paper": new}, rels={}))
    compute_embeddings(embedded, encoder)
    updated, report = RetrievalIndex.open(embedded, path=folder)
    assert report.rebuilt and report.rows == 6 and report.reused == 5 and report.updated == 1 and report.removed == 0
    assert updated.ids[-1] == "p6"
    top = Prefetcher(updated, encoder).bm25([PrefetchQuery("neural phrase tables")], 1)
    assert top[0].ids == ["p6"]
    # other BM25 parameters are a different index: rebuilt, not reloaded
    _, report = RetrievalIndex.open(embedded, IndexSettings(bm25_k1=0.9), path=folder)
    assert report.rebuilt and report.reused == 6


def test_a_rebuild_killed_while_it_swaps_folders_leaves_a_whole_index(
    embedded: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill half-way through deleting the old index folder (one file gone) never leaves that half-deleted
    folder where the index is read: the old one is renamed away first."""
    folder = tmp_path / "idx"
    RetrievalIndex.open(embedded, path=folder)
    real = shutil.rmtree

    def killed_half_way(path: str | Path, ignore_errors: bool = False) -> None:
        path = Path(path)
        if path.is_dir() and (path / "vectors.npy").exists():
            (path / "vectors.npy").unlink()
            raise KeyboardInterrupt  # the process dies here
        real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(shutil, "rmtree", killed_half_way)
    with pytest.raises(KeyboardInterrupt):
        RetrievalIndex.open(embedded, IndexSettings(bm25_k1=0.9), path=folder)  # other settings: rebuilt
    monkeypatch.setattr(shutil, "rmtree", real)
    index = RetrievalIndex.load(folder, IndexSettings(bm25_k1=0.9))  # the new index, whole
    assert len(index) == 5 and index.vectors.shape == (5, index.dim)
    again, report = RetrievalIndex.open(embedded, IndexSettings(bm25_k1=0.9), path=folder)
    assert not report.rebuilt and len(again) == 5


def test_a_stub_known_by_its_reference_string_is_indexed_and_found(
    store: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    """A cited work with neither title nor abstract is its reference string; one without any text stays out."""
    stubs = pd.DataFrame(
        {
            "id": ["doi:10.1/ref", "doi:10.1/bare"],
            "stub": [True, True],
            "reference": ["K. Quillfeather. Zeolite lattice spectroscopy of comets. Icarus 12, 2020.", None],
        }
    )
    ingest(store, GraphBatch("stubs", nodes={"Paper": stubs}, rels={}))
    # a reference string on a paper with a title changes nothing: the title and abstract describe it better
    p3 = pd.DataFrame({"id": ["p3"], "reference": ["A. Nother. Phrase tables. Proc. X, 1999, pp. 1-9."]})
    ingest(store, GraphBatch("p3", nodes={"Paper": p3}, rels={}))
    texts = paper_texts(store).set_index("id")["text"]
    assert texts["doi:10.1/ref"] == stubs["reference"][0] and texts["doi:10.1/bare"] == ""
    assert texts["p3"] == "Phrase tables. Tables of phrases."
    reports = compute_embeddings(store, encoder)
    assert reports[0].with_text == 6  # the tiny graph's five papers and the stub with a reference
    index, report = RetrievalIndex.open(store, path=tmp_path / "idx")
    assert report.rows == 6 and report.with_vector == 6
    assert "doi:10.1/ref" in index.row_of and "doi:10.1/bare" not in index.row_of
    prefetcher = Prefetcher(index, encoder)
    query = PrefetchQuery("spectroscopy of zeolite lattices in comets")
    assert prefetcher.bm25([query], 1)[0].ids == ["doi:10.1/ref"]
    assert prefetcher.dense([query], 1)[0].ids == ["doi:10.1/ref"]
    # still a stub without a title: the reference is not promoted to one
    row = store.query("paper_by_ids", {"ids": ["doi:10.1/ref"]})[0]
    assert row["stub"] is True and row["title"] is None and row["reference"].startswith("K. Quillfeather")


def test_bm25_and_dense_channels_respect_year_and_exclusions(
    embedded: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    index, _ = RetrievalIndex.open(embedded, path=tmp_path / "idx")
    prefetcher = Prefetcher(index, encoder)
    query = PrefetchQuery("machine translation", year=2004, exclude=("p4",))
    for lists in (prefetcher.bm25([query], 10), prefetcher.dense([query], 10)):
        assert "p4" not in lists[0].ids and "p5" not in lists[0].ids  # p4 excluded, p5 (2005) too new
    assert prefetcher.bm25([query], 10)[0].ids[0] == "p1"  # "Statistical machine translation"
    # without year and exclusion the shorter "Neural machine translation" (p4) wins on length normalisation
    assert prefetcher.bm25([PrefetchQuery("machine translation")], 10)[0].ids[:2] == ["p4", "p1"]


# --- fusion -------------------------------------------------------------------------------------


def test_rrf_and_weighted_fusion_by_hand() -> None:
    lists = {"dense": ChannelList(["a", "b"], [0.9, 0.5]), "bm25": ChannelList(["b", "c"], [10.0, 2.0])}
    rrf = fuse(lists, PrefetchSettings(channels=("dense", "bm25"), rrf_k=1, n=3))
    # a: 1/2; b: 1/3 + 1/2; c: 1/3
    assert rrf.ids == ["b", "a", "c"]
    assert rrf.scores == pytest.approx([1 / 3 + 1 / 2, 1 / 2, 1 / 3])
    assert rrf.channel_ranks["bm25"] == {"b": 1, "c": 2}
    weighted = fuse(
        lists, PrefetchSettings(channels=("dense", "bm25"), fusion="weighted", weights={"dense": 0.25, "bm25": 0.75})
    )
    # min-max per list: dense a=1, b=0; bm25 b=1, c=0 -> a 0.25, b 0.75, c 0
    assert weighted.ids == ["b", "a", "c"] and weighted.scores == pytest.approx([0.75, 0.25, 0.0])


# --- profiles -----------------------------------------------------------------------------------


def _citances() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sentence_id": ["p4#1", "p5#1", "p5#2"],
            "cited_id": ["p3", "p3", "p2"],
            "citing_year": [2004, 2005, 2005],
            "text": ["phrase extraction heuristics ([CIT])", "grow-diag alignment ([CIT])", "IBM model 4 ([CIT])"],
        }
    )


def test_profiles_only_hold_sentences_up_to_the_cutoff(
    embedded: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    index, _ = RetrievalIndex.open(embedded, path=tmp_path / "idx")
    early = ProfileIndex.build(index, _citances(), encoder, ProfileSettings(until=2004))
    assert early.papers == 1 and early.citances["sentence_id"].tolist() == ["p4#1"]
    full = ProfileIndex.build(index, _citances(), encoder, ProfileSettings(), folder=tmp_path / "prof")
    assert full.papers == 2
    scores = full.bm25_scores(tokenize("alignment"))
    assert scores[index.row_of["p3"]] > 0 and scores[index.row_of["p1"]] == 0
    dense = full.dense_scores(encoder.encode(["IBM model 4 alignment"])[0])
    assert np.isneginf(dense[index.row_of["p1"]]) and dense[index.row_of["p2"]] > dense[index.row_of["p3"]]
    prefetcher = Prefetcher(index, encoder, full)
    assert prefetcher.profile_bm25([PrefetchQuery("phrase extraction")], 5)[0].ids == ["p3"]


# --- enricher -----------------------------------------------------------------------------------


def _prefetched(ids: list[str]) -> Prefetched:
    return Prefetched(ids, [1.0 / (i + 1) for i in range(len(ids))], {"dense": {p: i + 1 for i, p in enumerate(ids)}})


def test_enricher_adds_references_of_the_top_papers_ranked_by_frequency(store: GraphStore) -> None:
    enricher = Enricher(store, EnricherSettings(top_m=2))
    # top 2 = p4 (cites p2, p3, p1) and p1 (cites p2, p3): p2 and p3 cited twice, p1 once
    [candidates] = enricher.enrich([_prefetched(["p4", "p1", "p5"])], [EnrichQuery()])
    by_id = {c.paper_id: c for c in candidates}
    assert by_id["p2"].references_rank in (1, 2) and by_id["p3"].references_rank in (1, 2)
    assert sorted(by_id["p2"].cited_by) == ["p1", "p4"] and by_id["p1"].references_rank == 3
    assert by_id["p1"].prefetch_rank == 2 and by_id["p1"].stages == ["prefetch", "references"]
    assert by_id["p2"].prefetch_rank is None and by_id["p2"].stages == ["references"]
    assert by_id["p5"].references_rank is None
    assert enricher.round_trips == 2  # one read for the references, one for the years of the additions


def test_enricher_respects_known_until_and_the_query_year(store: GraphStore) -> None:
    enricher = Enricher(store, EnricherSettings(top_m=2, known_until=2003))  # p4 (2004) has not cited yet
    [candidates] = enricher.enrich([_prefetched(["p4", "p1"])], [EnrichQuery(year=1998)])
    added = {c.paper_id for c in candidates if c.references_rank is not None}
    assert added == {"p2"}  # p1's references, p3 (1999) is newer than the query


def test_enricher_cocitation_partners_of_cited_papers(store: GraphStore) -> None:
    # co-cited with p2 through CITES: p1 cites p2, p3; p4 cites p2, p3, p1 -> p3: 2, p1: 1
    [candidates] = Enricher(store, EnricherSettings(known_until=2010)).enrich(
        [_prefetched([])], [EnrichQuery(cited_ids=("p2",))]
    )
    assert [(c.paper_id, c.cocitation_count, c.cocited_rank) for c in candidates] == [("p3", 2, 1), ("p1", 1, 2)]
    [early] = Enricher(store, EnricherSettings(known_until=2003)).enrich(
        [_prefetched([])], [EnrichQuery(cited_ids=("p2",))]
    )
    assert [(c.paper_id, c.cocitation_count) for c in early] == [("p3", 1)]
    # without a cutoff the stored CO_CITED edges are read (none before compute cocitation)
    from gnn.cocitation.compute import compute_cocitation

    compute_cocitation(store)
    [stored] = Enricher(store).enrich([_prefetched([])], [EnrichQuery(cited_ids=("p2",))])
    assert [(c.paper_id, c.cocitation_count) for c in stored] == [("p3", 2), ("p1", 1)]


@pytest.mark.parametrize("known_until", [None, 2003, 2004, 2010])
def test_enricher_in_memory_gives_what_the_store_reads_give(store: GraphStore, known_until: int | None) -> None:
    from gnn.cocitation.compute import compute_cocitation

    compute_cocitation(store)  # the stored CO_CITED edges the store path reads without a cutoff
    settings = EnricherSettings(top_m=3, known_until=known_until)
    fetched = [_prefetched(["p4", "p1", "p5"]), _prefetched(["p5"])]
    queries = [EnrichQuery(cited_ids=("p2",), year=2005), EnrichQuery(cited_ids=("p3", "p1"), year=2001)]
    from_store = Enricher(store, settings)
    in_memory = Enricher(store, settings, CitationLists.from_store(store))
    expected = from_store.enrich(fetched, queries)
    assert in_memory.enrich(fetched, queries) == expected and any(expected)
    assert in_memory.round_trips == 0 and from_store.round_trips == 3


def test_index_takes_vectors_from_the_encoder_cache_before_they_are_written(
    store: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    new = pd.DataFrame({"id": ["c1", "c2"], "title": ["Cached lattice parsing 7d1f", "Uncached lattice parsing 9e2a"]})
    ingest(store, GraphBatch("cache", nodes={"Paper": new}, rels={}))
    texts = paper_texts(store).set_index("id")["text"]
    encoder.encode([texts["c1"]])  # c1's text is in the cache, c2's is not; no vector is in the store
    index, _ = RetrievalIndex.open(store, path=tmp_path / "idx", cache=encoder)
    assert index.embedding_hashes[index.row_of["c1"]] == encoder.text_hash(texts["c1"])
    np.testing.assert_allclose(index.vectors[index.row_of["c1"]], encoder.encode([texts["c1"]])[0], atol=1e-6)
    assert index.embedding_hashes[index.row_of["c2"]] == "" and not index.vectors[index.row_of["c2"]].any()
    # reopened with the same cache: nothing changed, loaded as it was (vectors kept)
    again, report = RetrievalIndex.open(store, path=tmp_path / "idx", cache=encoder)
    assert not report.rebuilt and again.embedding_hashes[again.row_of["c1"]] != ""
    without = RetrievalIndex.open(store, path=tmp_path / "other")[0]
    assert without.embedding_hashes[without.row_of["c1"]] == ""
    # c2's text reaches the cache after the index was built (another step encoded it): a server's start takes
    # the index as built; the next index step takes the new vector
    encoder.encode([texts["c2"]])
    served, report = RetrievalIndex.open(store, path=tmp_path / "idx", cache=encoder, reread_for_cache=False)
    assert StoreFiles.of(store).stamp() is not None  # an embedded store: its files say it is unchanged
    assert not report.rebuilt and served.embedding_hashes[served.row_of["c2"]] == ""
    # the same when the store's files changed but not its papers (a store closed after the index step)
    manifest = tmp_path / "idx" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "store_stamp": "an older stamp"}))
    served, report = RetrievalIndex.open(store, path=tmp_path / "idx", cache=encoder, reread_for_cache=False)
    assert not report.rebuilt and served.embedding_hashes[served.row_of["c2"]] == ""
    assert served.embedding_hashes[served.row_of["c1"]] == encoder.text_hash(texts["c1"])  # as built: from the cache
    rebuilt, report = RetrievalIndex.open(store, path=tmp_path / "idx", cache=encoder)
    assert report.rebuilt and rebuilt.embedding_hashes[rebuilt.row_of["c2"]] == encoder.text_hash(texts["c2"])


def test_a_store_without_citing_sentences_has_empty_profiles(
    embedded: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    """An imported export (Web of Science, Scopus) has citations but no citing sentences."""
    index, _ = RetrievalIndex.open(embedded, path=tmp_path / "idx")
    none = pd.DataFrame({column: pd.Series([], dtype=float) for column in _citances().columns})
    profiles = ProfileIndex.build(index, none, encoder, ProfileSettings())
    assert profiles.papers == 0
    assert not np.isfinite(profiles.dense_scores(encoder.encode(["anything"])[0])).any()


def test_lexical_scores_are_bm25s_scores() -> None:
    """LexicalIndex.scores sums the tokens' postings itself; the figures are bm25s's own, a repeated query
    token counted twice, an unknown one not at all."""
    rows = [
        tokenize(t)
        for t in (
            "phrase based statistical machine translation",
            "minimum error rate training for statistical machine translation",
            "a maximum entropy model for part of speech tagging",
            "phrase tables and word alignment",
            "",
        )
    ]
    lexical = LexicalIndex.build(rows, k1=1.2, b=0.75)
    for query in ("statistical machine translation", "phrase phrase alignment", "unknownword tagging", "unknownword"):
        tokens = tokenize(query)
        ids = [lexical.vocab[t] for t in tokens if t in lexical.vocab]
        expected = lexical.model.get_scores_from_ids(ids) if ids else np.zeros(len(rows))
        np.testing.assert_allclose(lexical.scores(tokens), expected, rtol=1e-6, atol=1e-7)
    assert lexical.scores(tokenize("phrase phrase"))[0] == pytest.approx(2 * lexical.scores(tokenize("phrase"))[0])
