"""Training the reranker end to end on the tiny graph, and the service using it once trained."""

from __future__ import annotations

import json
from pathlib import Path

from test_recommend_eval import _citances

from api.recommend import RecommendationService, RecommendRequest, ServiceSettings, reranker_dir
from api.rerank_train import Fold, TrainSettings, report_markdown, run_training, write_report
from gnn.embeddings import compute_embeddings
from gnn.encoder import TextEncoder
from gnn.enricher import EnricherSettings
from gnn.index import IndexSettings, RetrievalIndex
from gnn.reranker import RerankerSettings, TrainedReranker
from graph import GraphStore, ingest

# training queries of 2004 know the graph up to 2003; validation and test (2005) up to 2004
SPLIT = TrainSettings(
    folds=(Fold(2003, (2004, 2004)),), known_until=2004, validation=(2005, 2005), test=(2005, 2005), noise_negatives=2
)


def test_training_saves_a_model_the_service_then_uses(store: GraphStore, encoder: TextEncoder, tmp_path: Path) -> None:
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    folder = tmp_path / "index"
    index, _ = RetrievalIndex.open(store, IndexSettings(), path=folder, cache=encoder)
    model_settings = RerankerSettings(epochs=3, patience=3, pool_negatives=4)
    report = run_training(
        store,
        encoder,
        index,
        out_dir=reranker_dir(folder),
        settings=SPLIT,
        model_settings=model_settings,
        objectives=["triplet", "source_target"],
        cache_dir=tmp_path / "examples",
    )
    names = [row["name"] for row in report["systems"]]
    assert names == [
        "BM25 (tuned)",
        "BM25 + profile + global",
        "dense",
        "service fusion (no reranker)",
        "reranker (triplet)",
        "reranker (source_target)",
    ]
    assert report["queries"]["train 2004-2004"]["queries"] == 2 and report["queries"]["validation"]["queries"] == 2
    assert report["queries"]["train 2004-2004"]["knows until"] == 2003
    for row in report["systems"]:
        assert 0.0 <= row["validation"]["R@10"] <= 1.0 and row["validation"]["multi_queries"] == 1
    config = json.loads((reranker_dir(folder) / "config.json").read_text(encoding="utf-8"))
    assert config["settings"]["objective"] == report["chosen"]["objective"] and len(config["data_hash"]) == 16
    assert list((tmp_path / "examples").glob("examples-*.pkl")), "the examples are cached for the next run"
    json_path, md_path = write_report(report, tmp_path / "r.json")
    assert json_path.is_file() and "reranker (triplet)" in md_path.read_text(encoding="utf-8")
    assert report_markdown(report).count("\n| ") == len(names) + 1

    settings = ServiceSettings(enricher=EnricherSettings(top_m=3))
    service = RecommendationService.open(store, settings, encoder=encoder, index_dir=folder)
    assert isinstance(service.reranker, TrainedReranker)
    response = service.recommend(RecommendRequest("Phrase tables [CIT] help.", citing_paper_id="p5", k=3))
    assert response.items and all(item.paper_id not in {"p5"} for item in response.items)
    assert [i.score for i in response.items] == sorted((i.score for i in response.items), reverse=True)
    fusion = RecommendationService.open(store, ServiceSettings(use_reranker=False), encoder=encoder, index_dir=folder)
    assert not isinstance(fusion.reranker, TrainedReranker)
