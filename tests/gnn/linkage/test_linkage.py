"""Sentence linkage: each signal, the scorer, selection fitting, the linker, the silver corpus.

Everything here runs on hand-made vectors (no encoder): a paper's sentences get one-hot or seeded
random unit vectors, so cosines are known exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gnn.linkage import (
    FEATURES,
    CitedPaper,
    Counts,
    Example,
    Linker,
    LinkerSettings,
    Selection,
    choose_selection,
    features,
    fixed_scorer,
    score_task1a,
    train_linker,
)
from gnn.linkage.features import cue_vector, section_kind, strip_citation_years
from gnn.linkage.silver import balance, binary_metrics, choose_cutoff, cohen_kappa, gold_pairs, select_papers

TEXTS = [
    "TnT: a statistical part-of-speech tagger",
    "We present a tagger based on second order Markov models.",
    "Unknown words are handled by suffix analysis.",
    "The tagger reaches 96.7% accuracy on the Penn Treebank.",
    "Future work will address smoothing.",
]
SECTIONS = [None, "Abstract", "3 Unknown words", "4 Evaluation", "5 Conclusion"]


def column(name: str) -> int:
    return FEATURES.index(name)


@pytest.fixture
def paper() -> CitedPaper:
    vectors = np.eye(len(TEXTS), 8, dtype=np.float32)  # sentence i = basis vector i
    return CitedPaper.build("A00-1031", [0, 1, 2, 3, 4], TEXTS, SECTIONS, vectors)


def unit(i: int, j: int | None = None, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, np.float32)
    v[i] = 1.0
    if j is not None:
        v[j] = 1.0
    return v / np.linalg.norm(v)


def test_cosine_signals(paper: CitedPaper) -> None:
    x = features("any text", unit(3, 2), paper)
    assert x[:, column("cosine")] == pytest.approx([0, 0, 2**-0.5, 2**-0.5, 0], abs=1e-6)
    assert x[3, column("cosine_rrank")] == pytest.approx(0.5)  # tie with sentence 2, stable order
    assert x[2, column("cosine_rrank")] == pytest.approx(1.0)
    # neighbour: the best cosine of the sentences either side
    assert x[:, column("cosine_neighbour")] == pytest.approx([0, 2**-0.5, 2**-0.5, 2**-0.5, 2**-0.5], abs=1e-6)
    z = x[:, column("cosine_z")]
    assert z.mean() == pytest.approx(0.0, abs=1e-9) and z[2] > 0 > z[0]


def test_bm25_signals(paper: CitedPaper) -> None:
    x = features("suffix analysis of unknown words", unit(0), paper)
    bm25 = x[:, column("bm25")]
    assert bm25.argmax() == 2 and bm25[2] == pytest.approx(1.0)
    assert bm25[[0, 1, 3, 4]] == pytest.approx(0.0)
    assert x[2, column("overlap")] == pytest.approx(1.0)  # every content word of the citance is there
    nothing = features("zebra giraffe", unit(0), paper)
    assert not nothing[:, [column("bm25"), column("bm25_z"), column("bm25_rrank"), column("overlap")]].any()


def test_citation_years_are_stripped_for_the_noyear_bm25(paper: CitedPaper) -> None:
    assert strip_citation_years("as in Och et al. (2003a) and (Brants, 2000)") == "as in Och  () and (Brants, )"
    # "96" is no year; 1999 and 2000 are: without them the query is "unknown words"
    x = features("unknown words (Smith 1999; Lee et al., 2000)", unit(0), paper)
    assert x[:, column("bm25_noyear")].argmax() == 2 and x[2, column("bm25_noyear")] == pytest.approx(1.0)
    # content words without the years and "et al.": unknown, words, smith, lee; sentence 2 holds two
    assert x[2, column("overlap_noyear")] == pytest.approx(2 / 4)
    assert x[2, column("overlap")] == pytest.approx(2 / 8)  # with them: + 1999, et, al, 2000
    assert x[:, column("bm25_neighbour")] == pytest.approx([0, 1, 0, 1, 0])


def test_tfidf_idf_and_bigram_overlap_by_hand(paper: CitedPaper) -> None:
    # n = 5 sentences; "tagger" is in sentences 0, 1, 3 (df 3), "suffix" in 2 (df 1), "zebra" nowhere (df 0)
    idf_tagger, idf_suffix, idf_zebra = np.log(6 / 3.5), np.log(6 / 1.5), np.log(6 / 0.5)
    assert paper.idf_of("tagger") == pytest.approx(idf_tagger) and paper.idf_of("zebra") == pytest.approx(idf_zebra)
    x = features("tagger suffix zebra", unit(0), paper)
    query = np.array([idf_tagger, idf_suffix, idf_zebra])
    # sentence 2, "Unknown words are handled by suffix analysis.": unknown, words, handled, suffix, analysis
    words = ["unknown", "words", "handled", "suffix", "analysis"]
    row = np.array([paper.idf_of(w) for w in words])  # each once: weight 1 * idf
    expected = idf_suffix**2 / (np.linalg.norm(query) * np.linalg.norm(row))
    assert x[2, column("tfidf")] == pytest.approx(expected)
    assert x[2, column("idf_overlap")] == pytest.approx(idf_suffix / query.sum())
    assert x[1, column("idf_overlap")] == pytest.approx(idf_tagger / query.sum())
    assert x[4, column("tfidf")] == 0.0 and x[4, column("idf_overlap")] == 0.0
    assert x[:, column("tfidf_z")].mean() == pytest.approx(0.0, abs=1e-9)
    # bigrams of content words: citance (unknown, words), (words, suffix); sentence 2 holds the first
    y = features("unknown words suffix", unit(0), paper)
    assert y[:, column("bigram_overlap")] == pytest.approx([0, 0, 0.5, 0, 0])


def test_window_cosine_and_cosine_gap(paper: CitedPaper) -> None:
    x = features("any text", unit(2), paper)  # the citance is sentence 2's basis vector
    # windows: sentence 0 = e0 + e1, sentence 1..3 = three basis vectors, sentence 4 = e3 + e4
    assert x[:, column("window_cosine")] == pytest.approx([0, 3**-0.5, 3**-0.5, 3**-0.5, 0], abs=1e-6)
    assert x[:, column("cosine_gap")] == pytest.approx([-1, -1, 0, -1, -1], abs=1e-6)
    assert x[:, column("window_cosine_z")].mean() == pytest.approx(0.0, abs=1e-6)


def test_section_position_and_cue_signals(paper: CitedPaper) -> None:
    x = features("They report 96.7% accuracy with TnT.", unit(0), paper)
    assert x[:, column("position")] == pytest.approx([0, 0.25, 0.5, 0.75, 1.0])
    assert x[:, column("is_title")].tolist() == [1, 0, 0, 0, 0]
    assert x[:, column("sec_abstract")].tolist() == [0, 1, 0, 0, 0]
    assert x[:, column("sec_result")].tolist() == [0, 0, 0, 1, 0]
    assert x[:, column("sec_conclusion")].tolist() == [0, 0, 0, 0, 1]
    assert x[:, column("cue_result")].tolist() == [1] * 5
    assert x[:, column("result_x_result")].tolist() == [0, 0, 0, 1, 0]
    assert x[:, column("result_x_number")].tolist() == [0, 0, 0, 1, 0]  # only sentence 3 has a number
    assert section_kind("2 Related Work") == "related" and section_kind("Acknowledgments") is None
    cues = dict(zip(["method", "result", "aim", "contrast"], cue_vector("Unlike Smith, we propose to use CRFs")))
    assert cues == {"method": 1.0, "result": 0.0, "aim": 1.0, "contrast": 1.0}


def test_empty_paper_and_one_sentence_paper() -> None:
    empty = CitedPaper.build("x", [], [], [], np.zeros((0, 8), np.float32))
    assert features("text", unit(0), empty).shape == (0, len(FEATURES))
    single = CitedPaper.build("y", [4], ["Only one sentence."], [None], unit(1)[None, :])
    x = features("one sentence", unit(1), single)
    assert x[0, column("cosine")] == pytest.approx(1.0) and x[0, column("cosine_neighbour")] == pytest.approx(1.0)
    assert fixed_scorer("cosine", 2).link("text", unit(0), empty) == []


def test_scorer_matches_hand_counts() -> None:
    gold = {
        ("R1", "ann"): {"c1": {1, 2}, "c2": {5}},
        ("R2", "ann"): {"c3": {7, 8, 9}},
    }
    predictions = {"c1": [2, 3], "c3": [7]}  # c2 unanswered
    score = score_task1a(predictions, gold)
    # c1: tp 1 (2), fp 1 (3), fn 1 (1); c2: fn 1; c3: tp 1, fn 2
    assert score.micro == Counts(tp=2, fp=1, fn=4)
    assert score.micro.precision == pytest.approx(2 / 3) and score.micro.recall == pytest.approx(2 / 6)
    assert score.micro.f1 == pytest.approx(2 * (2 / 3) * (1 / 3) / (2 / 3 + 1 / 3))
    f1_r1 = Counts(1, 1, 2).f1  # file R1: tp 1, fp 1, fn 2
    f1_r2 = Counts(1, 0, 2).f1
    assert score.macro_f1 == pytest.approx((f1_r1 + f1_r2) / 2)
    assert (score.files, score.citances) == (2, 3)


def test_selection_rule() -> None:
    scores = np.array([0.1, 0.9, 0.5, 0.45, 0.8])
    assert Selection(1, 3, 0.6).select(scores).tolist() == [1, 4]
    assert Selection(1, 3, 0.95).select(scores).tolist() == [1]  # the top one always
    assert Selection(2, 2, 1.0).select(scores).tolist() == [1, 4]
    with pytest.raises(ValueError):
        Selection(3, 2, 0.5)


def test_threshold_selection_on_a_toy_fold() -> None:
    """Citances whose second sentence is linked only when its score is high: the fit finds that threshold."""
    sids = np.arange(5)
    scored = []
    for _ in range(10):  # two gold sentences, the second scored 0.7
        scored.append((np.array([0.9, 0.7, 0.2, 0.1, 0.05]), sids, frozenset({0, 1})))
    for _ in range(10):  # one gold sentence; the runner-up scores only 0.4
        scored.append((np.array([0.8, 0.4, 0.3, 0.1, 0.05]), sids, frozenset({0})))
    selection, f1 = choose_selection(scored, thresholds=[0.3, 0.5, 0.6, 0.75])
    assert selection.k_max >= 2 and 0.4 < selection.threshold <= 0.7
    assert f1 == pytest.approx(1.0)
    # If the runner-up is never right, linking one is best.
    wrong = [(np.array([0.9, 0.7, 0.2, 0.1, 0.05]), sids, frozenset({0}))] * 5
    selection, f1 = choose_selection(wrong, thresholds=[0.3, 0.5, 0.6])
    assert selection.k_max == 1 and f1 == pytest.approx(1.0)


def synthetic_examples(n_papers: int = 6, per_paper: int = 12, seed: int = 0) -> list[Example]:
    """Papers of 20 random unit sentences; each citance is a noisy copy of its gold sentence."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(n_papers):
        vectors = rng.normal(size=(20, 16)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = [f"sentence {p} {i} words here" for i in range(20)]
        paper = CitedPaper.build(f"P{p}", list(range(20)), texts, [None] * 20, vectors)
        for _ in range(per_paper):
            gold = int(rng.integers(20))
            v = vectors[gold] + 0.15 * rng.normal(size=16).astype(np.float32)
            out.append(Example(f"P{p}", "a citance", v / np.linalg.norm(v), paper, frozenset({gold})))
    return out


def test_linker_learns_cosine_and_round_trips(tmp_path: Path) -> None:
    examples = synthetic_examples()
    linker = train_linker(examples, LinkerSettings(inner_folds=3))
    assert linker.weights[column("cosine")] > 0
    hits = [linker.link(e.citance, e.vector, e.paper)[0][0] in e.positives for e in examples]
    baseline = [fixed_scorer("cosine", 1).link(e.citance, e.vector, e.paper)[0][0] in e.positives for e in examples]
    assert np.mean(hits) > 0.9 and np.mean(hits) >= np.mean(baseline) - 0.05
    path = tmp_path / "linker.json"
    linker.save(path)
    again = Linker.load(path)
    e = examples[0]
    assert again.score(e.citance, e.vector, e.paper) == pytest.approx(linker.score(e.citance, e.vector, e.paper))
    assert again.selection == linker.selection


def test_linker_load_rejects_other_files(tmp_path: Path) -> None:
    from graph.errors import DataError

    path = tmp_path / "bad.json"
    path.write_text('{"format": "something else"}')
    with pytest.raises(DataError, match="retrain"):
        Linker.load(path)
    with pytest.raises(DataError, match="citegraph linkage train"):
        Linker.load(tmp_path / "missing.json")
    # a model saved before the lexical signals were added (its first 29 features): retrain, not a crash
    old = tmp_path / "old.json"
    old.write_text(f'{{"format": "citegraph-linker/1", "features": {list(FEATURES[:29])!r}}}'.replace("'", '"'))
    with pytest.raises(DataError, match="features changed"):
        Linker.load(old)


def test_baseline_links_top_k(paper: CitedPaper) -> None:
    links = fixed_scorer("cosine", 2).link("x", unit(3), paper)
    assert next(sid for sid, _ in links) == 3 and len(links) == 2


# ---------------------------------------------------------------------------------------------
# silver


def test_cohen_kappa_and_binary_metrics_by_hand() -> None:
    a = np.array([1, 1, 0, 0, 1, 0, 0, 0], bool)
    b = np.array([1, 0, 0, 0, 1, 1, 0, 0], bool)
    # p_o = 6/8; p_a = 3/8, p_b = 3/8 -> p_e = 9/64 + 25/64 = 34/64
    assert cohen_kappa(a, b) == pytest.approx((6 / 8 - 34 / 64) / (1 - 34 / 64))
    m = binary_metrics(a, b)  # tp 2, fp 1, fn 1, tn 4
    assert m.f1 == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    assert m.balanced_accuracy == pytest.approx((2 / 3 + 4 / 5) / 2)
    assert m.mcc == pytest.approx((2 * 4 - 1 * 1) / np.sqrt(3 * 3 * 5 * 5))
    assert cohen_kappa(np.zeros(4, bool), np.zeros(4, bool)) == 0.0


def test_cutoff_separates_when_it_can() -> None:
    scores = np.array([0.9, 0.8, 0.75, 0.3, 0.2, 0.1, 0.05])
    gold = np.array([1, 1, 1, 0, 0, 0, 0], bool)
    for criterion in ("balanced_accuracy", "mcc", "f1"):
        cutoff, metrics = choose_cutoff(scores, gold, criterion)
        assert 0.3 < cutoff <= 0.75
        assert metrics.kappa == pytest.approx(1.0) and metrics.positives == 3
    with pytest.raises(ValueError):
        choose_cutoff(scores, gold, "accuracy")


def test_gold_pairs_label_every_sentence(paper: CitedPaper) -> None:
    examples = [Example("A00-1031", "c", unit(3), paper, frozenset({3}))]
    scores, labels = gold_pairs(examples)
    assert labels.tolist() == [False, False, False, True, False] and scores[3] == pytest.approx(1.0)


def test_balance_keeps_positives_and_draws_equal_negatives() -> None:
    rows = []
    for citance, positives in (("c1", 2), ("c2", 1), ("c3", 0)):
        for sid in range(10):
            rows.append(
                {
                    "citing_sentence_id": citance,
                    "reference_paper": "R",
                    "reference_sid": sid,
                    "citing_text": citance,
                    "cited_text": f"s{sid}",
                    "score": 0.9 if sid < positives else 0.1 + sid / 100,
                }
            )
    pairs = pd.DataFrame(rows)
    corpus = balance(pairs, 0.5, seed=7)
    counts = corpus.groupby(["citing_sentence_id", "label"]).size().to_dict()
    assert counts == {("c1", 0): 2, ("c1", 1): 2, ("c2", 0): 1, ("c2", 1): 1}  # c3 has no positive
    assert list(corpus.columns) == [
        "citing_sentence_id",
        "reference_paper",
        "reference_sid",
        "citing_text",
        "cited_text",
        "label",
        "score",
    ]
    assert balance(pairs, 0.5, seed=7).equals(corpus)  # seeded
    negatives = {tuple(balance(pairs, 0.5, seed=s).query("label == 0")["reference_sid"]) for s in range(6)}
    assert len(negatives) > 1  # the seed matters


def test_silver_paper_selection_prefers_citances_per_sentence() -> None:
    sentences = pd.DataFrame({"paper_id": ["A"] * 100 + ["B"] * 200 + ["C"] * 10})
    mentions = pd.DataFrame({"source": [f"s{i}" for i in range(30)], "target": ["A"] * 10 + ["B"] * 10 + ["C"] * 10})
    assert select_papers(sentences, mentions, None, min_sentences=80) == ["A", "B"]  # C is too short
    assert select_papers(sentences, mentions, 1, min_sentences=80) == ["A"]


def test_human_agreement_by_hand(paper: CitedPaper) -> None:
    """Citance c1 has two annotators: A links {1, 2}, B links {2, 3}. Each ordered pair counts TP 1,
    FP 1, FN 1, so P = R = F1 = 0.5. Citance c2 has one annotator and does not count."""
    from gnn.linkage.corpus import GoldCorpus
    from gnn.linkage.evaluate import human_agreement
    from gnn.linkage.model import Example

    def example(sids: set[int]) -> Example:
        return Example("R1", "text", unit(0), paper, frozenset(sids))

    corpus = GoldCorpus(
        [example({1, 2}), example({2, 3}), example({4})], ["c1", "c1", "c2"], ["A", "B", "A"], {"R1": paper}
    )
    agreement = human_agreement(corpus)
    assert agreement["citances_with_two_or_more_annotators"] == 1
    assert (agreement["precision"], agreement["recall"], agreement["f1"]) == (0.5, 0.5, 0.5)
    assert agreement["papers_with_two_or_more_annotators"] == {"R1": {"A": 2, "B": 1}}
    alone = GoldCorpus([example({1})], ["c1"], ["A"], {"R1": paper})
    assert human_agreement(alone)["f1"] is None
