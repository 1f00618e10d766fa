"""The reranker's pieces by hand: losses, co-citation knowledge as of a year, features, save/load."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gnn.rerank.examples import QueryExample, ranked_ids
from gnn.rerank.features import (
    FEATURE_GROUPS,
    FEATURE_NAMES,
    FeatureBuilder,
    FeatureSettings,
    QueryInput,
    system_names,
)
from gnn.rerank.knowledge import Knowledge, TaxonomyPlaces
from gnn.rerank.model import (
    RerankerModel,
    RerankerSettings,
    RerankerTrainer,
    hinge,
    load_reranker,
    objective_loss,
    save_reranker,
)
from gnn.retrieval.enricher import Candidate
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex, tokenize
from gnn.retrieval.prefetch import PrefetchQuery
from graph.errors import ConfigError, DataError

INF = math.inf

# --- losses ------------------------------------------------------------------------------------
# One query: a target scored 2.0, a co-cited partner scored 0.5; negatives 1.5 and padding.
POSITIVE = torch.tensor([[2.0, 0.5]])
NEGATIVE = torch.tensor([[1.5, -INF]])
TARGET_ONLY = torch.tensor([[1.0, 0.0]])  # triplet / target-based: the partner is no positive
WITH_PARTNER = torch.tensor([[1.0, 0.5]])  # source-based: the partner counts with partner_weight 0.5
TRIPLE_POS, TRIPLE_NEG = torch.tensor([0.2]), torch.tensor([0.4])  # s_text(t, j), s_text(t, n)


def test_hinge_skips_padding_and_weighs_positives() -> None:
    # (t, n1): [1 - 2 + 1.5]+ = 0.5; padding negative ignored
    assert float(hinge(POSITIVE, NEGATIVE, 1.0, TARGET_ONLY)) == pytest.approx(0.5)
    # no valid pair at all: 0, and still differentiable
    empty = hinge(POSITIVE.clone().requires_grad_(), NEGATIVE, 1.0, torch.zeros(1, 2))
    assert float(empty.detach()) == 0.0
    empty.backward()


@pytest.mark.parametrize(
    ("weight", "triples", "expected"),
    [
        (TARGET_ONLY, False, 0.5),  # triplet
        (TARGET_ONLY, True, 0.5 + 1.2),  # target-based: + [1 - 0.2 + 0.4]+
        (WITH_PARTNER, False, (0.5 * 1.0 + 2.0 * 0.5) / 1.5),  # source-based: partner pair [1 - 0.5 + 1.5]+ = 2
        (WITH_PARTNER, True, 1.0 + 1.2),  # source-target
    ],
    ids=["triplet", "target", "source", "source_target"],
)
def test_each_objective_against_hand_computed_values(weight: torch.Tensor, triples: bool, expected: float) -> None:
    loss = objective_loss(
        POSITIVE, weight, NEGATIVE, TRIPLE_POS if triples else None, TRIPLE_NEG if triples else None, margin=1.0
    )
    assert float(loss) == pytest.approx(expected)


def test_unknown_objective_is_refused() -> None:
    with pytest.raises(ConfigError, match="objective"):
        RerankerSettings(objective="listwise")


# --- knowledge as of a year ----------------------------------------------------------------------

CITATIONS = pd.DataFrame(
    {
        "citing_id": ["p1", "p1", "p4", "p4", "p4", "p5"],
        "citing_year": [2001, 2001, 2004, 2004, 2004, 2005],
        "cited_id": ["p2", "p3", "p2", "p3", "p1", "p4"],
    }
)


def test_knowledge_counts_only_citations_up_to_the_cutoff() -> None:
    early, late = Knowledge.from_citations(CITATIONS, 2003), Knowledge.from_citations(CITATIONS, None)
    assert early.popularity(["p2", "p3", "p1", "p4", "nope"]).tolist() == [1, 1, 0, 0, 0]
    assert late.popularity(["p2", "p3", "p1", "p4"]).tolist() == [2, 2, 1, 1]
    counts, cosines = late.cocitation(["p2"], ["p3", "p1", "p4"])
    # p2 and p3 are cited together by p1 and p4: c = 2, s = 2 and 2 -> cosine 1; p1 with p2 by p4 only: 1/sqrt(2*1)
    assert counts.tolist() == [[2, 1, 0]]
    assert cosines[0].tolist() == pytest.approx([1.0, 1 / math.sqrt(2), 0.0])
    counts, _ = early.cocitation(["p2"], ["p3", "p1"])
    assert counts.tolist() == [[1, 0]]  # p4's citations (2004) are not known in 2003


def test_recent_popularity_counts_the_last_years_up_to_the_cutoff_and_coupling_the_shared_references() -> None:
    late, early = Knowledge.from_citations(CITATIONS, None), Knowledge.from_citations(CITATIONS, 2003)
    # newest known year 2005: the window 2003..2005 holds p4's (2004) and p5's (2005) citations
    assert late.popularity(["p2", "p3", "p1", "p4"], recent=True).tolist() == [1, 1, 1, 1]
    # known in 2003: p1's citations of 2001 only (newest known year 2001: window 1999..2001)
    assert early.popularity(["p2", "p3", "p1", "p4"], recent=True).tolist() == [1, 1, 0, 0]
    # p4 cites p2, p3 and p1; p1 cites p2 and p3; p5 cites p4; p2 cites nothing
    assert late.coupling(["p2", "p3"], ["p4", "p1", "p5", "p2"]).tolist() == [2, 2, 0, 0]
    assert early.coupling(["p2", "p3"], ["p4", "p1"]).tolist() == [0, 2]  # p4's references are not known in 2003


# --- features ------------------------------------------------------------------------------------


def _index() -> RetrievalIndex:
    vectors = np.eye(4, 8, dtype=np.float32)
    return RetrievalIndex(
        ids=np.asarray(["p2", "p3", "p1", "p4"]),
        years=np.asarray([1993, 1999, 2001, 2004]),
        text_hashes=np.asarray(["a", "b", "c", "d"]),
        embedding_hashes=np.asarray(["a", "b", "c", "d"]),
        tokens=[
            tokenize(t) for t in ("Word alignment", "Phrase tables", "Statistical translation", "Neural translation")
        ],
        vectors=vectors,
        settings=IndexSettings(),
    )


def _places() -> TaxonomyPlaces:
    fused = np.eye(2, 8, dtype=np.float32)
    places = TaxonomyPlaces(["cs.CL", "cs.LG"], fused, np.asarray([[0.5, 0.0], [0.0, 0.5]]))
    places.row_of = {"p2": 0, "p3": 1}
    places.vectors = fused
    places.paper_points = places.points.copy()
    return places


def _query(context: str = "phrase tables and alignment") -> QueryInput:
    context_vector = np.zeros(8, dtype=np.float32)
    context_vector[1] = 1.0  # the direction of p3
    return QueryInput(PrefetchQuery(context, year=2005, citing_id="p2"), ("p2",), context_vector, None)


def test_features_by_hand() -> None:
    builder = FeatureBuilder(_index(), Knowledge.from_citations(CITATIONS, None), _places())
    candidates = [
        Candidate("p3", prefetch_rank=1, channel_ranks={"bm25": 2}, channel_scores={"bm25": 7.0}),
        Candidate("p1", references_rank=1, cited_by=["p4", "p5"]),
    ]
    features = builder.features(_query(), candidates)
    row = {name: features[:, k] for k, name in enumerate(FEATURE_NAMES)}
    assert row["dense_context"].tolist() == [1.0, 0.0]
    assert row["score_bm25"].tolist() == [7.0, 7.0]  # not returned by the channel: the channel's lowest score
    assert row["rr_bm25"].tolist() == [0.5, 0.0] and row["prefetch_rr"].tolist() == [1.0, 0.0]
    assert row["references_freq"].tolist() == [0, 2] and row["references_rr"].tolist() == [0.0, 1.0]
    assert row["cocite_max"].tolist() == pytest.approx([1.0, 1 / math.sqrt(2)]) and row["has_cited"].tolist() == [1, 1]
    # citing paper p2 sits at (0.5, 0): p3 at (0, 0.5); p1 has no category
    expected = float(np.arccosh(1 + 2 * 0.5 / (0.75 * 0.75)))
    assert row["hyperbolic"].tolist() == pytest.approx([expected, 0.0], rel=1e-5)
    assert row["has_hyperbolic"].tolist() == [1.0, 0.0] and row["taxonomy"].tolist() == [0.0, 0.0]
    assert row["popularity"].tolist() == pytest.approx([math.log(3), math.log(2)])
    assert row["year_gap"].tolist() == pytest.approx([0.6, 0.4])
    # the query's words phrase, table, alignment each occur in one paper (equal idf): p3 shares two of three
    assert row["overlap_share"].tolist() == pytest.approx([2 / 3, 0.0])
    # pool-relative gaps: the distance to the best candidate of the query (p3 leads on the dense cosine)
    assert row["dense_context_gap"].tolist() == [0.0, -1.0]
    outsider = builder.features(_query(), [Candidate("p4")], pool_max=builder.pool_max(features))
    assert outsider[0, FEATURE_NAMES.index("dense_context_gap")] == -1.0  # compared with the pool, not itself
    assert (row["field_bm25"] == 0).all()  # no field index given
    fielded = builder.with_field_index(LexicalIndex.build(_index().tokens, k1=1.2, b=0.75)).features(
        _query(), candidates
    )
    assert fielded[0, FEATURE_NAMES.index("field_bm25")] > 0 == fielded[1, FEATURE_NAMES.index("field_bm25")]


TEXTS = pd.DataFrame(
    {
        "id": ["p3", "p1", "p9"],  # p9 is not indexed: left out
        "title": ["Phrase tables", "Statistical phrase translation with WordNet", "BLEU"],
        "abstract": ["We extend GIZA++ and report BLEU.", "", "GIZA++"],
    }
)


def test_title_overlap_and_system_names_by_hand() -> None:
    builder = FeatureBuilder(_index(), Knowledge.from_citations(CITATIONS, None), _places()).with_texts(TEXTS)
    assert set(builder.title_words) == {"p3", "p1"}
    query = _query("phrase tables built with GIZA++ and WordNet [CIT]")
    candidates = [Candidate("p3"), Candidate("p1"), Candidate("p4")]  # p4: indexed, no text row
    features = builder.features(query, candidates)
    row = {name: features[:, k] for k, name in enumerate(FEATURE_NAMES)}
    # idf over the four indexed papers: a word of one paper log(1 + 3.5/1.5), "translation" (two) log 2
    one, two = math.log(1 + 3.5 / 1.5), math.log(2.0)
    assert row["title_overlap_idf"].tolist() == pytest.approx([2 * one, one, 0.0])
    # p3's title is all in the context; p1 shares "phrase" of statistical, phrase, translation
    assert row["title_coverage"].tolist() == pytest.approx([1.0, one / (2 * one + two), 0.0])
    assert row["names_in_title"].tolist() == [0, 1, 0]  # WordNet
    assert row["names_in_abstract"].tolist() == [1, 0, 0]  # GIZA++ (BLEU is not in the context)
    plain = FeatureBuilder(_index(), Knowledge.from_citations(CITATIONS, None), _places()).features(query, candidates)
    fields = [FEATURE_NAMES.index(n) for n in FEATURE_GROUPS["fields"]]
    assert (plain[:, fields] == 0).all()  # without texts the per-field features stay 0


def test_system_names_are_case_sensitive_names_and_acronyms() -> None:
    text = "The BLEU score of GIZA++ (IBM-4) and word2vec in WordNet; Table 2, Moses and [CIT]."
    assert system_names(text) == {"BLEU", "GIZA++", "IBM-4", "word2vec", "WordNet"}
    assert system_names("plain words only") == frozenset()


def _names_word_by_word(text: str) -> frozenset[str]:
    """The definition spelled out: each maximal run of letters, digits, "+" and "-" starting with a letter,
    less trailing hyphens, with a capital or digit after its first letter, "CIT" aside."""
    names = set()
    for word in re.findall(r"[A-Za-z][A-Za-z0-9+\-]*", text):
        word = word.rstrip("-")
        if len(word) >= 2 and re.search(r"[A-Z0-9]", word[1:]) and word != "CIT":
            names.add(word)
    return frozenset(names)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="aBcZ09+- .,;()[]\néÉ", max_size=60))
def test_system_names_match_the_word_by_word_definition(text: str) -> None:
    assert system_names(text) == _names_word_by_word(text)


def test_switched_off_groups_are_zero_and_euclidean_replaces_the_distance() -> None:
    builder = FeatureBuilder(_index(), Knowledge.from_citations(CITATIONS, None), _places()).with_texts(TEXTS)
    candidates = [Candidate("p3", prefetch_rank=1), Candidate("p1", references_rank=1, cited_by=["p4"])]
    full = builder.features(_query(), candidates)
    for group, names in FEATURE_GROUPS.items():
        off = builder.with_settings(FeatureSettings(disabled=(group,))).features(_query(), candidates)
        for k, name in enumerate(FEATURE_NAMES):
            assert (off[:, k] == 0).all() if name in names else (off[:, k] == full[:, k]).all()
    euclid = builder.with_settings(FeatureSettings(euclidean=True)).features(_query(), candidates)
    assert euclid[0, FEATURE_NAMES.index("hyperbolic")] == pytest.approx(math.sqrt(0.5))
    with pytest.raises(ConfigError, match="feature groups"):
        FeatureSettings(disabled=("popularity",))


def test_text_queries_get_inferred_taxonomy_places() -> None:
    places = _places()
    vector, point = places.infer(np.eye(1, 8, 1, dtype=np.float32)[0], top_k=1)
    assert vector.tolist() == places.fused[1].tolist() and point.tolist() == pytest.approx([0.0, 0.5])


# --- the model, training and saving ---------------------------------------------------------------


def _examples(rng: np.random.Generator, n: int) -> list[QueryExample]:
    """Queries whose target is the candidate nearest the context: learnable from the text part alone."""
    out = []
    for _ in range(n):
        rows = rng.choice(4, size=4, replace=False)
        context = np.eye(4, 8, dtype=np.float32)[rows[0]] + rng.normal(0, 0.1, 8).astype(np.float32)
        ids = [f"p{r}" for r in rows]
        features = rng.normal(size=(4, len(FEATURE_NAMES))).astype(np.float32)
        out.append(QueryExample(context, np.zeros(8, np.float32), rows, features, ids, {ids[0]}))
    return out


def test_training_learns_a_learnable_ranking_and_save_load_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    train, validation = _examples(rng, 64), _examples(rng, 16)
    settings = RerankerSettings(objective="triplet", epochs=15, patience=15, batch_queries=16, seed=0)
    trainer = RerankerTrainer(np.eye(4, 8, dtype=np.float32), settings)
    model, report = trainer.fit(train, validation)
    assert report.validation_mrr > 0.9 and report.history[report.best_epoch - 1] == report.validation_mrr
    folder = save_reranker(model, tmp_path / "reranker", settings=settings, info={"data_hash": "x"})
    loaded, config = load_reranker(folder)
    assert config["settings"]["objective"] == "triplet" and config["data_hash"] == "x"
    for ex in validation[:4]:
        assert trainer.score(loaded, ex).tolist() == pytest.approx(trainer.score(model, ex).tolist())
    assert ranked_ids(np.asarray([0.5, 0.9, 0.5]), ["b", "c", "a"]) == ["c", "a", "b"]


def test_scoring_many_pools_at_once_is_scoring_each() -> None:
    """score_many pads pools of different sizes into one pass; each pool's scores are those of score alone."""
    rng = np.random.default_rng(3)
    pools = _examples(rng, 5)
    pools[2] = QueryExample(
        pools[2].context,
        pools[2].global_,
        pools[2].rows[:2],
        pools[2].features[:2],
        pools[2].ids[:2],
        {pools[2].ids[0]},
    )
    trainer = RerankerTrainer(np.eye(4, 8, dtype=np.float32), RerankerSettings(objective="triplet", seed=0))
    model = RerankerModel(8, len(FEATURE_NAMES), RerankerSettings(seed=0))
    batched = trainer.score_many(model, pools, batch=3)
    assert [len(b) for b in batched] == [4, 4, 2, 4, 4]
    for scores, ex in zip(batched, pools, strict=True):
        assert scores.tolist() == pytest.approx(trainer.score(model, ex).tolist(), abs=1e-5)


def _pool_of_four(targets: set[str], features: np.ndarray | None = None, **extras: np.ndarray) -> QueryExample:
    """A query whose pool holds p0..p3 at index rows 0..3 (features: one value per candidate, all columns)."""
    values = np.zeros((4, 1), np.float32) if features is None else features[:, None].astype(np.float32)
    return QueryExample(
        np.ones(8, np.float32),
        np.zeros(8, np.float32),
        np.asarray([0, 1, 2, 3]),
        values * np.ones((1, len(FEATURE_NAMES)), np.float32),
        ["p0", "p1", "p2", "p3"],
        targets,
        **extras,
    )


@pytest.mark.parametrize("objective", ["single_positive", "triplet", "target", "source", "source_target"])
def test_co_cited_partners_in_the_pool_are_no_negatives_of_the_multi_positive_objectives(objective: str) -> None:
    # target p0; row 2 was drawn as a co-cited partner, row 5 (outside the pool) as noise
    ex = _pool_of_four(
        {"p0"},
        extra_rows=np.asarray([2, 5]),
        extra_features=np.zeros((2, len(FEATURE_NAMES)), np.float32),
        extra_positive=np.asarray([True, False]),
    )
    trainer = RerankerTrainer(np.eye(6, 8, dtype=np.float32), RerankerSettings(objective=objective))
    negatives = sorted(trainer.pool_negatives(ex, np.random.default_rng(0)).tolist())
    assert negatives == ([1, 2, 3] if objective in ("single_positive", "triplet") else [1, 3])
    capped = RerankerTrainer(np.eye(6, 8, dtype=np.float32), RerankerSettings(objective=objective, pool_negatives=1))
    assert len(capped.pool_negatives(ex, np.random.default_rng(0))) == 1


def test_single_positive_instances_know_only_their_own_target() -> None:
    ex = _pool_of_four({"p0", "p2"})  # the context cites p0 and p2, both prefetched
    vectors = np.eye(4, 8, dtype=np.float32)
    single = RerankerTrainer(vectors, RerankerSettings(objective="single_positive"))
    instances = single._instances([ex], np.random.default_rng(0))
    # one instance per target; the other target is among its negatives
    assert [(p.tolist(), sorted(n.tolist())) for _, p, n in instances] == [([0], [1, 2, 3]), ([2], [0, 1, 3])]
    joint = RerankerTrainer(vectors, RerankerSettings(objective="triplet"))
    [(_, positives, negatives)] = joint._instances([ex], np.random.default_rng(0))
    assert positives.tolist() == [0, 2] and sorted(negatives.tolist()) == [1, 3]


def test_single_positive_loss_by_hand() -> None:
    # text and feature parts switched off but for one scalar: s(q, d) = 1.0 for p0, 0.0 for p2, 0.5 elsewhere
    ex = _pool_of_four({"p0", "p2"}, features=np.asarray([1.0, 0.5, 0.0, 0.5]))
    model = RerankerModel(8, len(FEATURE_NAMES), RerankerSettings(dropout=0.0))
    with torch.no_grad():
        for part in (model.text, model.features):
            for layer in part:
                if isinstance(layer, torch.nn.Linear):
                    layer.weight.zero_()
                    layer.bias.zero_()
        model.features[0].weight[0, 0] = 1.0  # GELU(x) then the output unit reads it back
        model.features[3].weight[0, 0] = 1.0
    gelu = torch.nn.functional.gelu
    s = {p: float(gelu(torch.tensor(v))) for p, v in (("p0", 1.0), ("p1", 0.5), ("p2", 0.0), ("p3", 0.5))}
    m = 1.0
    # instance p0: negatives p1, p2, p3; instance p2: negatives p0, p1, p3 — the mean over all six pairs
    pairs = [("p0", n) for n in ("p1", "p2", "p3")] + [("p2", n) for n in ("p0", "p1", "p3")]
    expected = np.mean([max(0.0, m - s[p] + s[n]) for p, n in pairs])
    trainer = RerankerTrainer(np.eye(4, 8, dtype=np.float32), RerankerSettings(objective="single_positive"))
    model.train()
    loss = trainer._loss(model, [ex], np.random.default_rng(0))
    assert float(loss.detach()) == pytest.approx(expected, rel=1e-5)
    joint = RerankerTrainer(np.eye(4, 8, dtype=np.float32), RerankerSettings(objective="triplet"))
    joint_expected = np.mean([max(0.0, m - s[p] + s[n]) for p in ("p0", "p2") for n in ("p1", "p3")])
    assert float(joint._loss(model, [ex], np.random.default_rng(0)).detach()) == pytest.approx(joint_expected, rel=1e-5)


def test_loading_refuses_other_features(tmp_path: Path) -> None:
    model = RerankerModel(8, len(FEATURE_NAMES))
    folder = save_reranker(model, tmp_path / "r", settings=RerankerSettings(), info={})
    config = (folder / "config.json").read_text(encoding="utf-8").replace('"popularity"', '"fame"')
    (folder / "config.json").write_text(config, encoding="utf-8")
    with pytest.raises(DataError, match="other features"):
        load_reranker(folder)
    with pytest.raises(DataError, match="train reranker"):
        load_reranker(tmp_path / "missing")


def test_author_features_self_citation_and_history_up_to_the_cutoff() -> None:
    authorships = pd.DataFrame({"author_id": ["a1", "a1", "a2", "a1"], "paper_id": ["p5", "p4", "p1", "p3"]})
    query = QueryInput(PrefetchQuery("phrase tables", year=2005, citing_id="p5"), (), np.zeros(8, np.float32), None)
    candidates = [Candidate("p3"), Candidate("p1"), Candidate("p2")]
    column = {name: FEATURE_NAMES.index(name) for name in ("shared_authors", "author_cited_before")}
    late = FeatureBuilder(_index(), Knowledge.from_citations(CITATIONS, None), _places()).with_authorships(authorships)
    features = late.features(query, candidates)
    # p5's author a1 also wrote p3 (shared) and p4, which cites p2, p3 and p1 (known without a cutoff)
    assert features[:, column["shared_authors"]].tolist() == [1.0, 0.0, 0.0]
    assert features[:, column["author_cited_before"]].tolist() == pytest.approx([math.log(2)] * 3)
    early = late.with_knowledge(Knowledge.from_citations(CITATIONS, 2003))  # p4 (2004) has not cited yet
    assert (early.features(query, candidates)[:, column["author_cited_before"]] == 0).all()
    anonymous = QueryInput(PrefetchQuery("phrase tables"), (), np.zeros(8, np.float32), None)
    assert (late.features(anonymous, candidates)[:, list(column.values())] == 0).all()


def test_author_level_history_and_coauthors_stay_behind_the_cutoff() -> None:
    # a1 wrote the citing paper p5, and p4 and p3; a3 wrote p4 with a1, and p2; a2 wrote p1
    authorships = pd.DataFrame(
        {"author_id": ["a1", "a1", "a1", "a3", "a3", "a2"], "paper_id": ["p5", "p4", "p3", "p4", "p2", "p1"]}
    )
    query = QueryInput(PrefetchQuery("phrase tables", year=2005, citing_id="p5"), (), np.zeros(8, np.float32), None)
    candidates = [Candidate("p3"), Candidate("p1"), Candidate("p2")]
    column = {name: FEATURE_NAMES.index(name) for name in ("author_cited_authors", "coauthors")}
    late = FeatureBuilder(_index(), Knowledge.from_citations(CITATIONS, None), _places()).with_authorships(authorships)
    features = late.features(query, candidates)
    # a1's earlier paper p4 cites p2 (by a3), p3 (by a1, a3 is not on it) and p1 (by a2): once each author
    assert features[:, column["author_cited_authors"]].tolist() == pytest.approx([math.log(2)] * 3)
    # a3 co-wrote p4 (2004) with a1, and wrote the candidate p2; a1 itself is no co-author of itself
    assert features[:, column["coauthors"]].tolist() == [0.0, 0.0, 1.0]
    early = late.with_knowledge(Knowledge.from_citations(CITATIONS, 2003))  # p4 (2004) is in the future
    assert (early.features(query, candidates)[:, list(column.values())] == 0).all()
