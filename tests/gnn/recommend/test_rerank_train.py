"""Training the reranker end to end on the tiny graph, and the service using it once trained."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gnn import reports
from gnn.recommend.examples import Fold, TrainSettings
from gnn.recommend.service import RecommendationService, RecommendRequest, ServiceSettings
from gnn.recommend.studies import compare_objectives, paired_bootstrap, run_ablation
from gnn.recommend.train import TrainingOptions, evaluate_saved_scorer, report_markdown, run_training
from gnn.rerank.examples import QueryExample
from gnn.rerank.features import FEATURE_GROUPS, FEATURE_NAMES
from gnn.rerank.model import RerankerSettings, RerankerTrainer
from gnn.rerank.scorer import TrainedReranker
from gnn.retrieval.enricher import EnricherSettings
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import GraphStore, ingest
from graph.errors import DataError
from graph.files import IndexFiles
from tests.gnn.recommend.test_recommend_eval import _citances

# training queries of 2004 know the graph up to 2003; validation and test (2005) up to 2004
SPLIT = TrainSettings(
    folds=(Fold(2003, (2004, 2004)),), known_until=2004, validation=(2005, 2005), test=(2005, 2005), noise_negatives=2
)


def _check_sampled_extras(path: Path, index: RetrievalIndex) -> None:
    """Training examples carry noise-sampled extras: partners co-cited (up to the cutoff) with a target, never
    a target itself or the citing paper; negatives never among what the query cites."""
    import pickle

    with path.open("rb") as handle:
        splits = pickle.load(handle)
    [train] = [split for name, split in splits.items() if name.startswith("train")]
    assert not any(
        len(ex.extra_rows) for name, split in splits.items() if not name.startswith("train") for ex in split.examples
    )
    # up to 2003 only p1 (2001) cites: p2 and p3 are its co-cited pair, so a target p3 draws p2 and vice versa
    for ex, q in zip(train.examples, train.inputs):
        extra_ids = [str(index.ids[r]) for r in ex.extra_rows]
        banned = ex.targets | set(q.cited_ids) | {q.query.citing_id}
        assert not banned & set(extra_ids)
        for paper, positive in zip(extra_ids, ex.extra_positive.tolist()):
            if positive:
                assert paper in {"p2", "p3"} - ex.targets
        assert ex.extra_features.shape == (len(extra_ids), ex.features.shape[1])
        for target_row, partner_row, negative_row in ex.triples.tolist():
            assert str(index.ids[target_row]) in ex.targets and partner_row != negative_row
    # (in this graph the only co-cited pair is also what p4 cites elsewhere: nothing is admissible;
    # test_sampled_extras_come_from_the_noise_distributions draws for real)


def _indexed(store: GraphStore, encoder: TextEncoder, tmp_path: Path) -> tuple[Path, RetrievalIndex]:
    """The tiny citances ingested and embedded, and their retrieval index in ``tmp_path / "index"``."""
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    folder = tmp_path / "index"
    index, _ = RetrievalIndex.open(store, IndexSettings(), path=folder, cache=encoder)
    return folder, index


def _alpha(report: dict[str, Any], objective: str) -> str:
    """The α in the name of ``objective``'s one-seed blend row."""
    prefix = f"LambdaMART + reranker ({objective}), α = "
    row = next(r["name"] for r in report["systems"] if r["name"].startswith(prefix))
    return row[len(prefix) :].split(",")[0]


def _train(
    store: GraphStore,
    encoder: TextEncoder,
    tmp_path: Path,
    model_settings: RerankerSettings,
    settings: TrainSettings = SPLIT,
    **options: Any,
) -> tuple[Path, RetrievalIndex, dict[str, Any]]:
    """The tiny citances ingested and embedded, the index beside ``tmp_path``, and a training run's report
    (``ablation=True``: the ablation's)."""
    folder, index = _indexed(store, encoder, tmp_path)
    training = run_ablation if options.pop("ablation", False) else run_training
    report = training(
        store,
        encoder,
        index,
        out_dir=IndexFiles(folder).reranker,
        options=TrainingOptions(settings=settings, model_settings=model_settings, **options),
    )
    return folder, index, report


def test_training_saves_a_model_the_service_then_uses(store: GraphStore, encoder: TextEncoder, tmp_path: Path) -> None:
    folder, index, report = _train(
        store,
        encoder,
        tmp_path,
        RerankerSettings(epochs=3, patience=3, pool_negatives=4),
        objectives=("triplet", "source_target"),
        cache_dir=tmp_path / "examples",
    )
    names = [row["name"] for row in report["systems"]]
    best = report["chosen"]["objective"]
    assert names == [
        "BM25 (tuned)",
        "BM25 + profile + global",
        "dense",
        "service fusion (no reranker)",
        "reranker (triplet)",
        "reranker (source_target)",
        "LambdaMART (features only)",
        *(f"LambdaMART + reranker ({o}), α = {_alpha(report, o)}, one seed" for o in ("triplet", "source_target")),
        f"LambdaMART (features + {best} score, stacked, 5 seeds)",
        f"LambdaMART (5 seeds) + reranker ({best}), α = {report['systems'][-1]['name'].split('= ')[-1]}",
    ]
    # the objective is the one whose one-seed blend ranks the validation queries best (MRR)
    by_objective = report["chosen"]["validation_mrr_by_objective"]
    assert best == max(by_objective, key=lambda o: by_objective[o])
    for objective, mrr in by_objective.items():
        row = next(r for r in report["systems"] if r["name"].startswith(f"LambdaMART + reranker ({objective})"))
        assert row["validation"]["MRR"] == pytest.approx(mrr, abs=1e-6)
    assert report["queries"]["train 2004-2004"]["queries"] == 2 and report["queries"]["validation"]["queries"] == 2
    assert report["queries"]["train 2004-2004"]["knows until"] == 2003
    for row in report["systems"]:
        assert 0.0 <= row["validation"]["R@10"] <= 1.0 and row["validation"]["multi_queries"] == 1
    config = json.loads((IndexFiles(folder).reranker / "config.json").read_text(encoding="utf-8"))
    assert config["settings"]["objective"] == report["chosen"]["objective"] and len(config["data_hash"]) == 16
    # the blend is saved exactly when validation chose it over the neural model alone
    blended = report["chosen"]["lambdamart"]
    assert (blended is None) == ("lambdamart" not in config)
    assert (IndexFiles(folder).reranker / "lambdamart.txt").is_file() == (blended is not None)
    if blended is not None:  # the bag: one booster per seed
        assert blended["seeds"] == 5 and len(blended["trees"]) == 5
        assert sorted(p.name for p in IndexFiles(folder).reranker.glob("lambdamart*.txt")) == [
            "lambdamart.1.txt",
            "lambdamart.2.txt",
            "lambdamart.3.txt",
            "lambdamart.4.txt",
            "lambdamart.txt",
        ]
    cached = list((tmp_path / "examples").glob("examples-*.pkl"))
    assert cached, "the examples are cached for the next run"
    _check_sampled_extras(cached[0], index)
    json_path, md_path = reports.write_report(report, tmp_path / "r.json", report_markdown)
    assert json_path.is_file() and "reranker (triplet)" in md_path.read_text(encoding="utf-8")
    assert report_markdown(report).count("\n| ") == len(names) + 1

    settings = ServiceSettings(enricher=EnricherSettings(top_m=3))
    service = RecommendationService.open(store, settings, encoder=encoder, index_dir=folder)
    assert isinstance(service.reranker, TrainedReranker)
    response = service.recommend(RecommendRequest("Phrase tables [CIT] help.", citing_paper_id="p5", k=3))
    assert response.items and all(item.paper_id not in {"p5"} for item in response.items)
    assert [i.score for i in response.items] == sorted((i.score for i in response.items), reverse=True)
    # the trained reranker explains with its own terms, then the stages that found the candidate
    assert all(re.match(r"(text|feature term) [+-]\d+\.\d\d, ", i.why) for i in response.items)
    fusion = RecommendationService.open(store, ServiceSettings(use_reranker=False), encoder=encoder, index_dir=folder)
    assert not isinstance(fusion.reranker, TrainedReranker)

    # a LambdaMART blend saved beside the model is what the service scores with from then on
    import pickle

    import numpy as np

    from gnn.rerank.lambdamart import LambdaMartSettings, fit_lambdamart, save_blend

    with cached[0].open("rb") as handle:
        splits = pickle.load(handle)
    train = [ex for name, split in splits.items() if name.startswith("train") for ex in split.examples]
    validation = splits["validation"].examples
    tiny = LambdaMartSettings(max_trees=5, leaves=2, min_child_samples=1, patience=5)  # stacked on the neural score
    mart = fit_lambdamart(
        train,
        validation,
        tiny,
        train_neural=[np.linspace(0, 1, len(ex.ids)) for ex in train],
        validation_neural=[np.linspace(0, 1, len(ex.ids)) for ex in validation],
    )
    save_blend(IndexFiles(folder).reranker, mart, 0.5, {0.5: 1.0})
    blended = RecommendationService.open(store, settings, encoder=encoder, index_dir=folder)
    assert isinstance(blended.reranker, TrainedReranker) and blended.reranker.blend is not None
    assert "alpha=0.5" in repr(blended.reranker)
    again = blended.recommend(RecommendRequest("Phrase tables [CIT] help.", citing_paper_id="p5", k=3))
    assert [i.score for i in again.items] == sorted((i.score for i in again.items), reverse=True)
    assert [i.score for i in again.items] != [i.score for i in response.items]  # standardised blend scores
    assert all(re.search(r" [+-]\d+\.\d\d", i.why) and "#" in i.why for i in again.items)


def test_the_saved_scorer_on_an_unchanged_store_ranks_as_its_training_reported(
    store: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    """`eval reranker` rebuilds the validation and test examples and ranks them with the saved model and
    trees: on the store it was trained on, its figures are the training run's for the scorer it saved."""
    from gnn.rerank.lambdamart import LambdaMartSettings

    folder, index, report = _train(
        store,
        encoder,
        tmp_path,
        RerankerSettings(epochs=2, patience=2, pool_negatives=4),
        objectives=("triplet",),
        lambdamart=LambdaMartSettings(max_trees=5, leaves=2, min_child_samples=1, patience=5, bag=1),
        plain_trees=False,
        cache_dir=tmp_path / "examples",
    )
    saved = evaluate_saved_scorer(store, encoder, index, IndexFiles(folder).reranker, settings=SPLIT)
    names = [row["name"] for row in saved["systems"]]
    assert names[:4] == [row["name"] for row in report["systems"][:4]]  # the baselines of the same run
    assert set(saved["queries"]) == {"validation", "test"} and saved["command"] == "citegraph eval reranker"
    trained = {row["name"]: row for row in report["systems"]}
    neural = next(row for row in saved["systems"] if row["name"].startswith("saved reranker, neural model"))
    assert neural["validation"] == pytest.approx(trained["reranker (triplet)"]["validation"])
    if report["chosen"]["lambdamart"] is not None:  # the blend was saved: it is the last row of both
        assert saved["systems"][-1]["name"].startswith("saved scorer: LambdaMART (1 seeds)")
        assert saved["systems"][-1]["validation"] == pytest.approx(report["systems"][-1]["validation"])
    # trees blended in with a weight that leaves the neural model's order: the blend row ranks as it does
    import numpy as np

    from gnn.rerank.lambdamart import fit_lambdamart, save_blend

    mart = fit_lambdamart(
        [ex for ex in _examples_of(tmp_path) if ex.label.any()],
        [ex for ex in _examples_of(tmp_path, "validation") if ex.label.any()],
        LambdaMartSettings(max_trees=5, leaves=2, min_child_samples=1, patience=5, bag=1, stacked=False),
    )
    save_blend(IndexFiles(folder).reranker, mart, 1e6, {1e6: 0.0})
    blended = evaluate_saved_scorer(store, encoder, index, IndexFiles(folder).reranker, settings=SPLIT)
    last = blended["systems"][-1]
    assert last["name"].startswith("saved scorer: LambdaMART (1 seeds) + neural, α = 1e+06")
    assert last["validation"] == pytest.approx(neural["validation"]) and last["test"] == pytest.approx(neural["test"])
    assert np.isfinite(last["validation"]["MRR"])


def _examples_of(tmp_path: Path, split: str = "train") -> list[QueryExample]:
    """The examples a run cached under ``tmp_path / "examples"`` (all training folds, or one split)."""
    import pickle

    with next((tmp_path / "examples").glob("examples-*.pkl")).open("rb") as handle:
        splits = pickle.load(handle)
    return [ex for name, data in splits.items() if name.startswith(split) for ex in data.examples]


def test_without_test_queries_validation_still_chooses_and_the_test_columns_stay_empty(
    store: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    folder, _, report = _train(
        store,
        encoder,
        tmp_path,
        RerankerSettings(epochs=1, patience=1, pool_negatives=4),
        settings=replace(SPLIT, evaluate_test=False),
        objectives=("triplet",),
        lambdamart=None,
    )
    assert report["queries"]["test"]["queries"] == 0 and report["queries"]["validation"]["queries"] == 2
    assert all(row["test"]["queries"] == 0 and row["validation"]["queries"] == 2 for row in report["systems"])
    assert (IndexFiles(folder).reranker / "config.json").is_file()  # the model is chosen and saved as before
    table = report_markdown(report)
    assert table.count("| – | – | – | – |") == len(report["systems"])


def test_latest_folds_keeps_the_latest_training_folds_and_every_held_out_split(store: GraphStore) -> None:
    from gnn.recommend.examples import split_frames

    ingest(store, _citances())
    two = replace(SPLIT, folds=(Fold(2002, (2003, 2003)), Fold(2003, (2004, 2004))))
    assert list(split_frames(store, two)) == ["train 2003-2003", "train 2004-2004", "validation", "test"]
    latest = split_frames(store, replace(two, latest_folds=1))
    assert list(latest) == ["train 2004-2004", "validation", "test"]
    assert latest["train 2004-2004"][1] == 2003  # the fold keeps what it knows


def test_a_training_run_killed_while_saving_leaves_the_served_reranker_as_it_was(
    store: GraphStore, encoder: TextEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new scorer is written beside the served one and swapped in whole: a run killed after writing its
    neural model (before its trees) leaves the previous reranker, every file of it, where the service loads it."""
    import gnn.recommend.train as train_module
    from gnn.rerank.lambdamart import LambdaMartSettings, load_blend
    from gnn.rerank.model import load_reranker

    tiny = LambdaMartSettings(max_trees=5, leaves=2, min_child_samples=1, patience=5, bag=2)
    options: dict[str, Any] = {"objectives": ["triplet"], "lambdamart": tiny, "cache_dir": tmp_path / "examples"}
    folder, index, _ = _train(
        store, encoder, tmp_path, RerankerSettings(epochs=2, patience=2, pool_negatives=4), **options
    )
    served = IndexFiles(folder).reranker
    before = {f.name: f.read_bytes() for f in served.iterdir()}
    real = train_module.save_reranker

    def killed_after_writing(*args: Any, **kwargs: Any) -> Path:
        real(*args, **kwargs)
        raise KeyboardInterrupt  # the process dies here, its new model written

    monkeypatch.setattr(train_module, "save_reranker", killed_after_writing)
    with pytest.raises(KeyboardInterrupt):
        run_training(
            store,
            encoder,
            index,
            out_dir=served,
            options=TrainingOptions(
                settings=SPLIT,
                model_settings=RerankerSettings(epochs=2, patience=2, pool_negatives=4, seed=1),
                **options,
            ),
        )
    assert {f.name: f.read_bytes() for f in served.iterdir()} == before
    _, config = load_reranker(served)
    load_blend(served, config)


def test_sampled_extras_come_from_the_noise_distributions() -> None:
    import numpy as np
    import pandas as pd

    from gnn.recommend.examples import _add_extras, noise_sampler
    from gnn.rerank.features import FeatureBuilder, QueryInput
    from gnn.rerank.knowledge import Knowledge, TaxonomyPlaces
    from gnn.retrieval.enricher import Candidate
    from gnn.retrieval.lexical import tokenize
    from gnn.retrieval.prefetch import PrefetchQuery

    # up to 2003: c1 cites A, B, C; c2 cites A, B; c3 cites D; c4 (2004, after the cutoff) cites A, E
    citations = pd.DataFrame(
        {
            "citing_id": ["c1", "c1", "c1", "c2", "c2", "c3", "c4", "c4"],
            "citing_year": [2000, 2000, 2000, 2001, 2001, 2002, 2004, 2004],
            "cited_id": ["A", "B", "C", "A", "B", "D", "A", "E"],
        }
    )
    ids = ["A", "B", "C", "D", "E"]
    index = RetrievalIndex(
        ids=np.asarray(ids),
        years=np.asarray([1990, 1991, 1992, 1993, 1994]),
        text_hashes=np.asarray(ids),
        embedding_hashes=np.asarray(ids),
        tokens=[tokenize(f"paper {p}") for p in ids],
        vectors=np.eye(5, 8, dtype=np.float32),
        settings=IndexSettings(),
    )
    settings = TrainSettings(partners_per_target=6, noise_negatives=20)
    sampler = noise_sampler(citations, 2003, settings)
    builder = FeatureBuilder(
        index, Knowledge.from_citations(citations, 2003), TaxonomyPlaces([], np.zeros((0, 8)), np.zeros((0, 2)))
    )
    query = QueryInput(
        PrefetchQuery("paper [CIT]", year=2005, citing_id="q"), (), np.eye(1, 8)[0].astype(np.float32), None
    )
    pool = [Candidate("A", prefetch_rank=1), Candidate("D", prefetch_rank=2)]
    features = builder.features(query, pool)
    example = QueryExample(
        query.context_vector, np.zeros(8, np.float32), np.asarray([0, 3]), features, ["A", "D"], {"A"}
    )
    _add_extras(example, query, builder, sampler, index, settings)
    extra = [ids[r] for r in example.extra_rows]
    positives = {p for p, pos in zip(extra, example.extra_positive.tolist()) if pos}
    negatives = {p for p, pos in zip(extra, example.extra_positive.tolist()) if not pos}
    assert positives == {"B", "C"}  # A's co-cited partners up to 2003 (E is co-cited with A only in 2004)
    assert negatives and negatives <= {"D"}  # cited papers by count^3/4, minus the target and the partners
    assert {(ids[t], ids[j], ids[n]) for t, j, n in example.triples.tolist()} == {("A", "B", "D"), ("A", "C", "D")}
    assert example.extra_features.shape == (len(extra), features.shape[1])


def test_ablation_runs_every_objective_and_every_part(store: GraphStore, encoder: TextEncoder, tmp_path: Path) -> None:
    _, _, report = _train(
        store, encoder, tmp_path, RerankerSettings(epochs=1, patience=1, pool_negatives=4), ablation=True
    )
    names = [row["name"] for row in report["systems"]][4:]
    best = report["chosen"]["objective"]
    assert names[:5] == [f"reranker ({o})" for o in ("single_positive", "triplet", "target", "source", "source_target")]
    assert names[5] == "LambdaMART (features only)"
    assert names[6:11] == [
        f"LambdaMART + reranker ({o}), α = {_alpha(report, o)}, one seed"
        for o in ("single_positive", "triplet", "target", "source", "source_target")
    ]
    assert names[11:13] == [
        f"LambdaMART (features + {best} score, stacked, 5 seeds)",
        f"LambdaMART (5 seeds) + reranker ({best}), α = {names[12].split('= ')[-1]}",
    ]
    # each ablation row is retrained the way the one-seed row of the chosen objective was: the (stacked)
    # blend with one seed of trees when the blend was chosen
    final = f"LambdaMART + reranker ({best}), one seed" if report["chosen"]["lambdamart"] else f"reranker ({best})"
    assert names[13:] == [
        f"{final} − {part}"
        for part in (
            "hyperbolic (Euclidean distance)",
            "taxonomy",
            "co-citation",
            "enricher",
            "authors",
            "title and names (per-field overlap)",
        )
    ]
    assert report["command"] == "citegraph eval recommend --ablation"


def test_objective_comparison_trains_as_the_ablation_does_and_pairs_each_seed_with_the_references(
    store: GraphStore, encoder: TextEncoder, tmp_path: Path
) -> None:
    model = RerankerSettings(epochs=2, patience=2, pool_negatives=4)
    _, index, report = _train(store, encoder, tmp_path, model, objectives=("triplet",), lambdamart=None)
    compared = compare_objectives(
        store,
        encoder,
        index,
        seeds=[0, 1],
        objectives=("single_positive", "triplet", "source"),
        settings=SPLIT,
        model_settings=model,
    )
    assert [(r["objective"], r["seed"]) for r in compared["runs"]] == [
        (objective, seed) for seed in (0, 1) for objective in ("single_positive", "triplet", "source")
    ]
    assert compared["references"] == ["single_positive", "triplet"]
    # seed 0 of triplet is the training run's own model: same examples, same seed, same rankings
    [trained] = [row for row in report["systems"] if row["name"] == "reranker (triplet)"]
    assert compared["runs"][0]["validation"] == trained["validation"]
    assert compared["queries"]["validation"] == {"all": 2, "multi-citation": 1}
    source = compared["summary"]["source"]["validation"]
    multi = [r["validation"]["multi_R@10"] for r in compared["runs"] if r["objective"] == "source"]
    assert source["multi_R@10"]["mean"] == pytest.approx(sum(multi) / 2)
    versus = source["multi_R@10 vs triplet"]
    triplet = [r["validation"]["multi_R@10"] for r in compared["runs"] if r["objective"] == "triplet"]
    assert versus["per_seed"] == pytest.approx([m - t for m, t in zip(multi, triplet)])
    assert versus["difference"] == pytest.approx(sum(versus["per_seed"]) / 2) and versus["sentences"] == 1
    assert "multi_R@10 vs triplet" not in compared["summary"]["triplet"]["validation"]
    assert set(compared["summary"]["triplet"]["validation"]) >= {"multi_R@10 vs single_positive"}
    assert "multi_R@10 vs single_positive" in source and "multi_R@10 vs source" not in source


def test_objective_comparison_without_a_feature_group_trains_and_scores_on_zeroed_features(
    store: GraphStore, encoder: TextEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index = _indexed(store, encoder, tmp_path)
    seen: list[list[QueryExample]] = []
    fit = RerankerTrainer.fit

    def recording_fit(
        self: RerankerTrainer, train: list[QueryExample], validation: list[QueryExample], **kw: Any
    ) -> Any:
        seen.append([*train, *validation])
        return fit(self, train, validation, **kw)

    monkeypatch.setattr(RerankerTrainer, "fit", recording_fit)
    columns = [FEATURE_NAMES.index(name) for name in FEATURE_GROUPS["cocitation"]]
    model = RerankerSettings(epochs=1, patience=1, pool_negatives=4)
    options: dict[str, Any] = {"seeds": [0], "objectives": ["triplet"], "settings": SPLIT, "model_settings": model}
    full = compare_objectives(store, encoder, index, **options)
    without = compare_objectives(store, encoder, index, disabled=["cocitation"], **options)
    with_counts, zeroed = seen
    # the tiny graph has co-citation evidence to lose, and only those columns lose it
    assert any(ex.features[:, columns].any() for ex in with_counts)
    assert not any(ex.features[:, columns].any() or ex.extra_features[:, columns].any() for ex in zeroed)
    others = [c for c in range(len(FEATURE_NAMES)) if c not in columns]
    assert all((a.features[:, others] == b.features[:, others]).all() for a, b in zip(with_counts, zeroed))
    assert [ex.ids for ex in with_counts] == [ex.ids for ex in zeroed]
    assert (full["disabled"], without["disabled"]) == ([], ["cocitation"])


def test_paired_bootstrap_by_hand() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    assert paired_bootstrap(np.full(5, 0.25), 200, rng) == pytest.approx((0.25, 0.25, 0.25))
    mean, low, high = paired_bootstrap(np.asarray([0.0, 1.0] * 50), 2000, rng)
    # the mean of 100 fair coin flips: 0.5 ± 1.96 · 0.05
    assert mean == 0.5 and low == pytest.approx(0.402, abs=0.02) and high == pytest.approx(0.598, abs=0.02)


def test_cross_fitted_scores_come_from_models_that_did_not_train_on_the_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two folds: each is scored by the model trained on the other; one fold is cut into halves.
    The real trainer runs; a wrapper records which queries each model trained on."""
    import numpy as np

    from gnn.recommend.train import cross_fitted_scores
    from gnn.rerank.features import FEATURE_NAMES

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(12, 8)).astype(np.float32)

    def query(name: str) -> QueryExample:
        rows = rng.choice(12, size=4, replace=False)
        ids = [f"{name}:{r}" for r in rows]
        features = rng.normal(size=(4, len(FEATURE_NAMES))).astype(np.float32)
        return QueryExample(vectors[rows[0]], np.zeros(8, np.float32), rows, features, ids, {ids[0]})

    first, second = [query(f"a{k}") for k in range(4)], [query(f"b{k}") for k in range(3)]
    validation = [query(f"v{k}") for k in range(2)]
    trained_on: list[set[str]] = []
    real_fit = RerankerTrainer.fit

    def recording_fit(self: RerankerTrainer, train: Any, *args: Any, **kwargs: Any) -> Any:
        trained_on.append({p for ex in train for p in ex.ids})
        return real_fit(self, train, *args, **kwargs)

    monkeypatch.setattr(RerankerTrainer, "fit", recording_fit)
    settings = RerankerSettings(epochs=1, patience=1, pool_negatives=2)
    scores = cross_fitted_scores([first, second], vectors, settings, validation)
    assert [len(s) for s in scores] == [4] * 7  # one array per query, in the folds' order
    assert trained_on == [{p for ex in second for p in ex.ids}, {p for ex in first for p in ex.ids}]

    trained_on.clear()
    assert len(cross_fitted_scores([first], vectors, settings, validation)) == 4
    assert trained_on == [{p for ex in first[2:] for p in ex.ids}, {p for ex in first[:2] for p in ex.ids}]
    with pytest.raises(DataError, match="two groups"):
        cross_fitted_scores([first[:1]], vectors, settings, validation)


def test_train_reranker_cli_refuses_an_empty_bag_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from api.cli.main import main

    args = ["--db", str(tmp_path / "never-opened.db"), "-q", "train", "reranker", "--mart-seeds", "0"]
    assert main(args) != 0
    assert "bag ≥ 1" in capsys.readouterr().err
    assert not (tmp_path / "never-opened.db").exists()


def test_epoch_patience_reaches_the_neural_model_and_nothing_else(tmp_path: Path) -> None:
    from api.cli.main import build_parser
    from api.cli.recommend import reranker_settings
    from graph.errors import ConfigError

    parser = build_parser()
    db = ["--db", str(tmp_path / "x.db")]
    given = reranker_settings(parser.parse_args([*db, "train", "reranker", "--epoch-patience", "2"])).options(
        progress=False
    )
    default = reranker_settings(parser.parse_args([*db, "train", "reranker"])).options(progress=False)
    assert given.model_settings == replace(default.model_settings, patience=2)
    assert default.model_settings.patience == RerankerSettings().patience  # the full build's
    assert given.lambdamart == default.lambdamart and given.settings == default.settings
    with pytest.raises(ConfigError, match="--epoch-patience is 0"):
        reranker_settings(parser.parse_args([*db, "train", "reranker", "--epoch-patience", "0"]))
