"""The recommendation service, its masking, the time filter, the reranker hook and the batch CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from api.cli.main import main
from gnn.recommend import citances
from gnn.recommend.citances import (
    author_lists,
    build_queries,
    cached_profile_citances,
    mask_citance,
    profile_citances,
)
from gnn.recommend.examples import Fold, TrainSettings, split_frames
from gnn.recommend.service import RecommendationService, RecommendRequest, ServiceSettings, read_batch
from gnn.retrieval.enricher import Candidate, EnricherSettings
from gnn.retrieval.prefetch import PrefetchQuery
from gnn.text.embeddings import compute_embeddings, paper_texts
from gnn.text.encoder import TextEncoder
from graph import GraphBatch, GraphStore, ingest
from graph.errors import ConfigError, DataError

CITANCE = "Attention builds on neural translation (Lovelace, 2004) and phrase tables (Smith, 1999)."


def _citances() -> GraphBatch:
    """Two ScisummNet-style citing sentences (ids <citing>#c<12 hex>), one citing two papers."""
    sentences = pd.DataFrame(
        {
            "id": ["p5#c0123456789ab", "p4#c00000000000a"],
            "paper_id": ["p5", "p4"],
            "text": [CITANCE, "We extract phrase tables as Smith (1999) did."],
        }
    )
    return GraphBatch(
        "citances",
        nodes={"Sentence": sentences, "Author": pd.DataFrame({"id": ["a3"], "name": ["John Smith"]})},
        rels={
            "HAS_SENTENCE": pd.DataFrame({"source": ["p5", "p4"], "target": sentences["id"]}),
            "MENTIONS": pd.DataFrame(
                {"source": ["p5#c0123456789ab", "p5#c0123456789ab", "p4#c00000000000a"], "target": ["p4", "p3", "p3"]}
            ),
            "WROTE": pd.DataFrame({"source": ["a3"], "target": ["p3"], "position": [1]}),
        },
    )


@pytest.fixture
def graph(store: GraphStore, encoder: TextEncoder) -> GraphStore:
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    return store


@pytest.fixture
def service(graph: GraphStore, encoder: TextEncoder, tmp_path: Path) -> RecommendationService:
    settings = ServiceSettings(enricher=EnricherSettings(top_m=3))
    return RecommendationService.open(graph, settings, encoder=encoder, index_dir=tmp_path / "index")


# --- masking --------------------------------------------------------------------------------------


def test_mask_citance_marker_author_year_and_scrub() -> None:
    assert mask_citance("as in [12] we", "[12]", [], None) == ("as in [CIT] we", "marker_text")
    text, how = mask_citance(CITANCE, None, ["Ada Lovelace", "Alan Turing"], 2004)
    assert how == "first_author" and "Lovelace" not in text and "(Smith, 1999)" in text  # other markers stay
    text, how = mask_citance("Lovelace's tagger of 2004 is fast.", None, ["Ada Lovelace"], 2004)
    assert how == "scrubbed" and text == "[CIT]'s tagger of [CIT] is fast."
    assert mask_citance("see {{cite:abc}} and {{formula:x}}", None, [], None) == ("see [CIT] and", "none")


def test_mask_citance_tries_every_spelling_of_the_authors() -> None:
    text = "the tagger (Toutanova and Manning, 2000) and (Brants, 2000)"
    right = ["Kristina Toutanova", "Christopher D. Manning"]
    leak = ("the tagger (Toutanova and Manning, [CIT]) and (Brants, [CIT])", "scrubbed")
    # two spellings of the first author read as one author list: three authors, so no marker matches
    assert mask_citance(text, None, ["Kristina Tutanowa", *right], 2000) == leak
    assert mask_citance(text, None, ["Kristina Tutanowa", "Christopher D. Manning"], 2000) == leak
    masked, how = mask_citance(text, None, ["Kristina Tutanowa", "Christopher D. Manning"], 2000, spellings=[right])
    assert masked == "the tagger ([CIT]) and (Brants, 2000)" and how == "marker"
    # nothing matches as a marker: every spelling of the first surname is scrubbed
    text = "Tutanowa's tagger and Toutanova's tagger of 2000"
    scrubbed, how = mask_citance(text, None, ["Kristina Tutanowa"], 2000, spellings=[right])
    assert how == "scrubbed" and scrubbed == "[CIT]'s tagger and [CIT]'s tagger of [CIT]"


def test_author_lists_give_one_list_per_spelling_in_a_fixed_order(store: GraphStore) -> None:
    papers = pd.DataFrame({"id": ["w1", "w2"], "title": ["Tagging", "Parsing"], "year": [2000, 2001]})
    authors = pd.DataFrame(
        {"id": ["k2", "k1", "c1", "x1"], "name": ["Kristina Toutanvoa", "Kristina Toutanova", "Chris Manning", "X Y"]}
    )
    # w1: two spellings of its first author (two sources), then Manning, then X Y; w2: X Y alone
    wrote = pd.DataFrame(
        {
            "source": ["k2", "c1", "k1", "x1", "x1"],
            "target": ["w1", "w1", "w1", "w1", "w2"],
            "position": [1, 2, 1, 3, 1],
        }
    )
    ingest(store, GraphBatch("spellings", nodes={"Paper": papers, "Author": authors}, rels={"WROTE": wrote}))
    lists = author_lists(store, ["w2", "w1", "w1", "none"])
    assert lists == {
        "w1": [["Kristina Toutanova", "Chris Manning", "X Y"], ["Kristina Toutanvoa", "Chris Manning", "X Y"]],
        "w2": [["X Y"]],
    }


def test_every_evaluation_query_is_masked(graph: GraphStore) -> None:
    queries = build_queries(graph)
    assert len(queries) == 2
    for row in queries.itertuples():
        assert "[CIT]" in row.context
        assert "Lovelace" not in row.context and "Smith" not in row.context  # every target's marker masked
    two = queries.set_index("sentence_id").loc["p5#c0123456789ab"]
    assert two["targets"] == ("p3", "p4") and two["context"].count("[CIT]") == 2
    # p4 cites p1, p2, p3 elsewhere: p3 is this sentence's target, so only p1 and p2 are "already cited"
    assert queries.set_index("sentence_id").loc["p4#c00000000000a"]["cited_elsewhere"] == ("p1", "p2")


def test_profile_citances_are_kept_beside_the_index_while_the_store_is_unchanged(
    graph: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "index.citances.parquet"
    first = cached_profile_citances(graph, path)
    pd.testing.assert_frame_equal(first, profile_citances(graph))
    assert path.is_file() and set(first.columns) >= {"sentence_id", "cited_id", "raw", "text", "how"}
    assert all("[CIT]" in text for text in first["text"])  # each sentence with its cited paper masked

    def no_read(store: GraphStore) -> pd.DataFrame:
        raise AssertionError("an unchanged store's citances are read from the file")

    monkeypatch.setattr(citances, "citing_sentences", no_read)
    pd.testing.assert_frame_equal(cached_profile_citances(graph, path), first)


def test_training_splits_follow_the_time_split(graph: GraphStore) -> None:
    settings = TrainSettings(
        folds=(Fold(2003, (2004, 2004)),), known_until=2004, validation=(2005, 2005), test=(2005, 2005)
    )
    splits = split_frames(graph, settings)
    assert list(splits) == ["train 2004-2004", "validation", "test"]
    (train, until, extras), (validation, known, no_extras) = splits["train 2004-2004"], splits["validation"]
    assert (until, extras, known, no_extras) == (2003, True, 2004, False)  # only training draws extras
    assert set(train["citing_year"]) <= {2004} and set(validation["citing_year"]) <= {2005}


# --- the service ----------------------------------------------------------------------------------


def test_time_filter_and_the_citing_paper_are_never_recommended(service: RecommendationService) -> None:
    response = service.recommend(RecommendRequest("translation with phrase tables [CIT]", citing_paper_id="p4", k=10))
    ids = [item.paper_id for item in response.items]
    assert ids and "p4" not in ids and "p5" not in ids  # itself, and p5 (2005) is newer than p4 (2004)
    assert all(item.year is None or item.year <= 2004 for item in response.items)
    assert [item.score for item in response.items] == sorted((item.score for item in response.items), reverse=True)
    early = service.recommend(RecommendRequest("translation with phrase tables [CIT]", year=1999, k=10))
    assert {item.paper_id for item in early.items} <= {"p2", "p3"}


def test_recommendations_carry_features_and_why(service: RecommendationService) -> None:
    response = service.recommend(RecommendRequest("phrase tables [CIT]", cited_ids=("p2",), k=5))
    assert "p2" not in [i.paper_id for i in response.items]  # already cited
    top = response.items[0]
    assert top.title and top.why and top.stages[0] in ("prefetch", "references", "cocited")
    assert "prefetch_rank" in top.features
    # profiles were built from the MENTIONS sentences: p3 has two citing sentences
    assert service.profiles is not None and service.profiles.papers == 2


class _Reverse:
    """A reranker that prefers what the fusion likes least: the service must follow it, and explain with it."""

    def score(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> list[float]:
        return [float(c.prefetch_rank or 0) for c in candidates]

    def why(
        self, query: PrefetchQuery, candidates: Sequence[Candidate], shown: Sequence[int], *, top_m: int
    ) -> list[str]:
        return [f"reversed prefetch #{candidates[i].prefetch_rank}" for i in shown]


def test_reranker_hook_replaces_the_fusion(graph: GraphStore, encoder: TextEncoder, tmp_path: Path) -> None:
    settings = ServiceSettings(use_profiles=False, enricher=EnricherSettings(top_m=0, max_cocited=0))
    plain = RecommendationService.open(graph, settings, encoder=encoder, index_dir=tmp_path / "i")
    reranked = RecommendationService(graph, plain.index, encoder, settings=settings, reranker=_Reverse())
    request = RecommendRequest("machine translation [CIT]", k=5)
    forward = [i.paper_id for i in plain.recommend(request).items]
    items = reranked.recommend(request).items
    backward = [i.paper_id for i in items]
    assert len(forward) == 5 and backward == forward[::-1]
    # the explanation is the scorer's that ranked, never the fusion's
    assert [i.why for i in items] == [f"reversed prefetch #{rank}" for rank in range(5, 0, -1)]


def test_requests_are_validated() -> None:
    with pytest.raises(ConfigError, match="context"):
        RecommendRequest("  ")
    with pytest.raises(ConfigError, match="k is 0"):
        RecommendRequest("x [CIT]", k=0)


# --- batch files and the CLI --------------------------------------------------------------------


def _as_given(ids: Sequence[str]) -> dict[str, str | None]:
    """A resolver for batch tests whose ids are all stored keys."""
    return {i: i for i in ids}


def test_read_batch_reports_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "context": "x [CIT]"}\n\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"q.jsonl:3"):
        read_batch(path, k=5, resolve=_as_given)
    path.write_text('{"id": "a", "context": "x [CIT]"}\n{"id": "c", "context": "   "}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"q.jsonl:2: a recommendation needs a context"):
        read_batch(path, k=5, resolve=_as_given)  # the request's own checks name the line too


def test_batch_cli_round_trip(
    graph: GraphStore,
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    graph.close()
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"id": "q1", "context": "phrase tables for translation [CIT]", "citing_paper_id": "p4"},
        {"id": "q2", "context": "attention [CIT]", "title": "Attention", "abstract": "We attend.", "cited_ids": ["p4"]},
    ]
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "ranked.jsonl"
    args = ["--db", str(store_path), "-q", "recommend", "--batch", str(queries), "--out", str(out)]
    assert main([*args, "--index-dir", str(tmp_path / "index")]) == 0
    ranked = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in ranked] == ["q1", "q2"]
    q1 = [r["paper_id"] for r in ranked[0]["ranked"]]
    assert q1 and "p4" not in q1 and "p5" not in q1  # the citing paper (2004) and the newer p5 excluded
    assert "p4" not in [r["paper_id"] for r in ranked[1]["ranked"]]  # already cited
    scores = [r["score"] for r in ranked[0]["ranked"]]
    assert scores == sorted(scores, reverse=True)
    assert "2 queries ranked" in capsys.readouterr().out

    assert (
        main(
            [
                "--db",
                str(store_path),
                "-q",
                "recommend",
                "phrase tables [CIT]",
                "-k",
                "3",
                "--index-dir",
                str(tmp_path / "index"),
            ]
        )
        == 0
    )
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:6] == ["#", "id", "title", "year", "score", "why"] and len(table) == 5


def test_batch_on_error_skip_ranks_without_unknown_ids_and_lists_them(
    graph: GraphStore,
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    graph.close()
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"id": "q1", "context": "phrase tables for translation [CIT]", "citing_paper_id": "no-such-paper"},
        {"id": "q2", "context": "attention [CIT]", "cited_ids": ["p4", "10.9999/nothing"]},
    ]
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "ranked.jsonl"
    args = ["--db", str(store_path), "-q", "recommend", "--batch", str(queries), "--out", str(out)]
    assert main([*args, "--index-dir", str(tmp_path / "index"), "--on-error", "skip"]) == 0
    captured = capsys.readouterr()
    assert "queries.jsonl:1: `citing_paper_id` 'no-such-paper' names no stored paper" in captured.err
    assert "queries.jsonl:2: `cited_ids` '10.9999/nothing' names no stored paper" in captured.err
    assert "2 queries ranked" in captured.out and "2 paper id(s) of 2 queries named no stored paper" in captured.out
    rejects = [json.loads(line) for line in (tmp_path / "ranked.rejects.jsonl").read_text().splitlines()]
    assert rejects == [
        {"origin": "queries.jsonl:1", "query_id": "q1", "field": "citing_paper_id", "id": "no-such-paper"},
        {"origin": "queries.jsonl:2", "query_id": "q2", "field": "cited_ids", "id": "10.9999/nothing"},
    ]
    ranked = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in ranked] == ["q1", "q2"] and all(r["ranked"] for r in ranked)
    assert "p4" not in [r["paper_id"] for r in ranked[1]["ranked"]]  # the id that resolved still counts


def test_read_batch_manuscript_lines(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    draft = ["We translate.", "Phrase tables help [CIT].", "They are large."]
    path.write_text(json.dumps({"id": "m", "draft": draft, "position": 1}) + "\n", encoding="utf-8")
    (request,) = read_batch(path, k=5, resolve=_as_given).requests
    assert request.draft == tuple(draft) and request.position == 1 and request.context == ""
    for bad, message in (
        ({"draft": draft, "position": 3}, "`position` must be the index"),
        ({"draft": draft}, "`position` must be the index"),
        ({"draft": "We translate.", "position": 0}, "`draft` must be a non-empty list"),
    ):
        path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=rf"q.jsonl:1: {message}"):
            read_batch(path, k=5, resolve=_as_given)


def test_manuscript_mode_searches_body_sampled_candidates(
    graph: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    """With ``candidate_sentences``, a manuscript-mode request's dense channel searches vectors in which
    the full-text papers (p4, p5: each has a sentence) are title + abstract + sampled body sentences;
    a plain request still searches the stored vectors."""
    settings = ServiceSettings(enricher=EnricherSettings(top_m=3), candidate_sentences=2)
    service = RecommendationService.open(graph, settings, encoder=encoder, index_dir=tmp_path / "index")
    body = service.body_dense_index()
    index = service.index
    changed = [
        str(index.ids[r]) for r in range(len(index)) if not np.allclose(index.vectors[r], body.index.reconstruct(r))
    ]
    assert sorted(changed) == ["p4", "p5"]
    own = paper_texts(graph).set_index("id")["text"]["p4"]
    expected = encoder.encode([f"{own} We extract phrase tables as Smith (1999) did."])[0]
    assert np.allclose(body.index.reconstruct(index.row_of["p4"]), expected, atol=1e-5)

    draft = ("Machine translation needs data.", "Phrase tables [CIT] are used.", "They are large.")
    manuscript = RecommendRequest(draft=draft, position=1, k=3)
    plain = RecommendRequest("Machine translation needs data. Phrase tables [CIT] are used. They are large.", k=3)
    (m_query, _), (p_query, _) = service.candidates([manuscript, plain])
    assert m_query.context == p_query.context  # the same text; only the candidate side differs
    m_dense, p_dense = (
        service.prefetcher.dense([q], 5, dense_index=d)[0] for q, d in ((m_query, body), (p_query, None))
    )
    assert m_dense.scores != p_dense.scores
    assert service.recommend(manuscript).items


def test_cli_manuscript_mode(
    graph: GraphStore,
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    graph.close()
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    draft = tmp_path / "draft.txt"
    draft.write_text("We translate.\n\nPhrase tables [CIT] help.\nThey are large.\n", encoding="utf-8")
    base = ["--db", str(store_path), "-q", "recommend", "--index-dir", str(tmp_path / "index"), "-k", "2"]
    assert main([*base, "--draft", str(draft), "--position", "1", "--candidate-sentences", "1"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:2] == ["#", "id"] and len(table) == 4
    assert main([*base, "--draft", str(draft), "--position", "3"]) == 1
    assert "--position must be the (0-based) line" in capsys.readouterr().err
    assert main([*base, "context [CIT]", "--draft", str(draft), "--position", "0"]) == 1
    assert "one of the three" in capsys.readouterr().err


def test_the_store_lock_is_free_while_candidates_are_scored(
    graph: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    """Other API queries use the store while a recommendation computes: the shared lock guards store reads only."""
    import threading

    store_lock = threading.Lock()
    seen: list[bool] = []

    class _Probe:
        def score(self, query: PrefetchQuery, candidates: Sequence[Candidate]) -> list[float]:
            seen.append(store_lock.locked())
            return [0.0 for _ in candidates]

        def why(
            self, query: PrefetchQuery, candidates: Sequence[Candidate], shown: Sequence[int], *, top_m: int
        ) -> list[str]:
            seen.append(store_lock.locked())
            return ["probe" for _ in shown]

    service = RecommendationService.open(graph, encoder=encoder, index_dir=tmp_path / "i", lock=store_lock)
    service.reranker = _Probe()
    assert service.recommend(RecommendRequest("phrase tables [CIT]", k=2)).items
    assert seen == [False, False] and not store_lock.locked()
