"""Training and evaluating on a store's own citing sentences (``--queries store``), and the linker on a
store's own data (``linkage train --from-store``), on tiny corpora without any ScisummNet or CL-SciSumm id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from api.cli.main import main
from gnn.recommend import evaluate
from gnn.recommend.citances import default_query_source, store_queries
from gnn.recommend.evaluate import RecommendEvalSettings, report_markdown, run_evaluation
from gnn.recommend.examples import TrainSettings
from gnn.recommend.train import TrainingOptions, run_training
from gnn.rerank.model import RerankerSettings
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.retrieval.profiles import ProfileIndex
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from graph.files import IndexFiles
from tests.gnn.recommend.test_recommend_eval import _citances

# Full-text sentences as unarXive and JSONL give them (<paper>#<n>), citing the tiny graph's papers, two per
# citing year 2006-2009: the split is train 1 = 2006, train 2 = 2007, validation = 2008, test = 2009.
SENTENCES = [
    ("c06", 1, "Word links come from alignment models {{cite:a}}.", {"p2": "{{cite:a}}"}),
    ("c06", 2, "We extract phrase tables as Smith (1999) did.", {"p3": None}),
    ("c07", 1, "Alignment models {{cite:b}} give word links.", {"p2": "{{cite:b}}"}),
    ("c07", 2, "Phrase tables {{cite:c}} and alignments {{cite:d}} help.", {"p3": "{{cite:c}}", "p2": "{{cite:d}}"}),
    ("c08", 1, "Neural translation {{cite:e}} attends to words.", {"p4": "{{cite:e}}"}),
    ("c08", 2, "Phrase tables (Smith, 1999) are large.", {"p3": None}),
    (
        "c09",
        1,
        "Phrase tables {{cite:g}} and word alignment {{cite:h}} combine.",
        {"p3": "{{cite:g}}", "p2": "{{cite:h}}"},
    ),
    ("c09", 2, "Attention {{cite:i}} helps translation.", {"p5": "{{cite:i}}"}),
]
CITING = {
    "c06": ("Phrase-based translation with word alignments", 2006),
    "c07": ("Combining phrase tables and alignment models", 2007),
    "c08": ("Large phrase tables for neural translation", 2008),
    "c09": ("Attention over phrase tables and alignments", 2009),
}


def corpus() -> GraphBatch:
    """Four citing papers with full-text sentences that cite the tiny graph's papers (MENTIONS with markers)."""
    sentences = pd.DataFrame(
        {
            "id": [f"{p}#{n}" for p, n, _, _ in SENTENCES],
            "paper_id": [p for p, _, _, _ in SENTENCES],
            "sid": [n for _, n, _, _ in SENTENCES],
            "text": [t for _, _, t, _ in SENTENCES],
        }
    )
    mentions = [(f"{p}#{n}", cited, marker) for p, n, _, cites in SENTENCES for cited, marker in cites.items()]
    cites = sorted({(p, cited) for p, _, _, targets in SENTENCES for cited in targets} | {("c09", "p1")})
    papers = pd.DataFrame(
        {"id": list(CITING), "title": [t for t, _ in CITING.values()], "year": [y for _, y in CITING.values()]}
    )
    return GraphBatch(
        "corpus",
        nodes={"Paper": papers, "Sentence": sentences, "Author": pd.DataFrame({"id": ["a3"], "name": ["John Smith"]})},
        rels={
            "HAS_SENTENCE": pd.DataFrame({"source": sentences["paper_id"], "target": sentences["id"]}),
            "MENTIONS": pd.DataFrame(
                {
                    "source": [m[0] for m in mentions],
                    "target": [m[1] for m in mentions],
                    "marker": [m[2] for m in mentions],
                }
            ),
            "CITES": pd.DataFrame({"source": [c[0] for c in cites], "target": [c[1] for c in cites]}),
            "WROTE": pd.DataFrame({"source": ["a3"], "target": ["p3"], "position": [1]}),
        },
    )


@pytest.fixture
def indexed(store: GraphStore, encoder: TextEncoder, tmp_path: Path) -> tuple[Path, RetrievalIndex]:
    """The tiny graph with :func:`corpus` in it, embedded, and its retrieval index in ``tmp_path / "index"``."""
    ingest(store, corpus())
    compute_embeddings(store, encoder)
    folder = tmp_path / "index"
    index, _ = RetrievalIndex.open(store, IndexSettings(), path=folder, cache=encoder)
    return folder, index


def test_store_queries_mask_every_target_and_the_default_source_follows_the_data(store: GraphStore) -> None:
    ingest(store, corpus())
    frame = store_queries(store).set_index("sentence_id")
    assert len(frame) == len(SENTENCES)
    for paper, n, text, cites in SENTENCES:
        row = frame.loc[f"{paper}#{n}"]
        assert row["raw"] == text and set(row["targets"]) == set(cites) and row["citing_year"] == CITING[paper][1]
        for marker in (m for m in cites.values() if m):
            assert marker not in row["context"]
        assert "Smith" not in row["context"] and "1999" not in row["context"] and "{{cite:" not in row["context"]
        assert row["context"].count("[CIT]") == len(cites)
    assert frame.loc["c07#2", "context"] == "Phrase tables [CIT] and alignments [CIT] help."
    assert frame.loc["c06#2", "context"] == "We extract phrase tables as [CIT] did."
    assert frame.loc["c09#1", "cited_elsewhere"] == ("p1", "p5")  # its other CITES: "papers already cited"
    assert default_query_source(store) == "store"
    ingest(store, _citances())  # ScisummNet-style sentences (<citing>#c<hash>): the shared data's default
    assert default_query_source(store) == "scisummnet"


def test_reranker_trains_on_the_store_queries_without_seeing_a_query_in_its_profiles(
    store: GraphStore,
    encoder: TextEncoder,
    indexed: tuple[Path, RetrievalIndex],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder, index = indexed
    profiled: list[set[str]] = []  # the citing sentences in the profiles of each split, in build order
    build = ProfileIndex.build.__func__  # type: ignore[attr-defined]

    def recording(cls: type[ProfileIndex], *args: Any, **kwargs: Any) -> ProfileIndex:
        built = build(cls, *args, **kwargs)
        profiled.append(set(built.citances["sentence_id"]))
        return built

    monkeypatch.setattr(ProfileIndex, "build", classmethod(recording))
    report = run_training(
        store,
        encoder,
        index,
        out_dir=IndexFiles(folder).reranker,
        options=TrainingOptions(
            settings=TrainSettings(queries="store", noise_negatives=2),
            model_settings=RerankerSettings(epochs=2, patience=2, pool_negatives=4),
            objectives=("triplet",),
            lambdamart=None,
        ),
    )
    queries = report["queries"]
    assert list(queries) == ["train 1 (2006-2006)", "train 2 (2007-2007)", "validation", "test"]
    assert [q["knows until"] for q in queries.values()] == [2005, 2006, 2007, 2007]
    assert [q["queries"] for q in queries.values()] == [2, 2, 2, 2]
    assert all(q["citing papers"] == 1 for q in queries.values())
    assert report["query source"] == "store" and "by citing paper and year" in report["split"]["rule"]
    # each split's profiles hold only sentences of citing papers before it: never a query of the split
    split_sentences = [{f"{p}#{n}" for p, n, _, _ in SENTENCES if p == c} for c in ("c06", "c07", "c08", "c09")]
    # (validation and test know the same years: the test split reuses validation's profiles)
    assert profiled[:3] == [set(), split_sentences[0], split_sentences[0] | split_sentences[1]]
    assert queries["test"]["knows until"] == queries["validation"]["knows until"]
    names = [row["name"] for row in report["systems"]]
    assert names == [
        "BM25 (tuned)",
        "BM25 + profile + global",
        "dense",
        "service fusion (no reranker)",
        "reranker (triplet)",
    ]
    for row in report["systems"]:
        test = row["test"]
        assert test["queries"] == 2 and 0.0 <= test["hit@1"] <= test["hit@10"] <= 1.0
        assert test["hit@10"] >= test["R@10"] - 1e-9  # a query with any target in its top 10 is a hit
    assert (IndexFiles(folder).reranker / "config.json").is_file()


def test_evaluation_on_the_store_queries_reports_the_split_and_every_baseline(
    store: GraphStore, encoder: TextEncoder, indexed: tuple[Path, RetrievalIndex]
) -> None:
    _, index = indexed
    settings = RecommendEvalSettings(
        queries="store", n=3, tune_queries=2, k1_grid=(1.2,), b_grid=(0.75,), global_grid=(0.0, 0.5)
    )
    report = run_evaluation(store, encoder, settings, index=index)
    assert report["query source"] == "store" and report["train_until"] == 2007
    assert report["queries"]["validation"] == 2 and report["queries"]["test"] == 2
    assert report["queries"]["train (profiles, enricher knowledge)"] == 4
    assert report["pool"]["profile sentences"] == 5  # the 2006-2007 sentences, once per cited paper
    assert report["split"]["parts"]["test"]["years"] == [2009, 2009] and report["manuscript"] is None
    names = [s["name"] for s in report["systems"]]
    assert names[:3] == ["BM25 (default)", "BM25 (tuned)", "dense"] and "+ profiles" in names
    assert names[-1] == "+ cited papers (co-citation partners)"  # the service's fusion score
    markdown = report_markdown(report)
    assert "Queries (store): validation 2 (citing years 2008-2008), test 2 (citing years 2009-2009)" in markdown
    assert "| hit@1 | hit@10 |" in markdown


def test_the_cli_takes_the_query_source_or_chooses_it_from_the_store(
    store: GraphStore,
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ingest(store, corpus())
    store.close()
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    chosen: list[str] = []

    def fake(store: GraphStore, encoder: TextEncoder, settings: RecommendEvalSettings, **kwargs: Any) -> dict[str, Any]:
        chosen.append(settings.queries)
        return {}

    monkeypatch.setattr(evaluate, "run_evaluation", fake)
    monkeypatch.setattr(evaluate, "report_markdown", lambda report: "")
    base = ["--db", str(store_path), "-q", "eval", "recommend", "--out", str(tmp_path / "e.json")]
    assert main(base) == 0 and main([*base, "--queries", "scisummnet"]) == 0
    assert chosen == ["store", "scisummnet"]
    with pytest.raises(SystemExit):  # argparse refuses a source it does not know
        main([*base, "--queries", "nonsense"])


def test_train_encoder_fine_tunes_on_the_training_folds_evaluates_and_serves(
    store: GraphStore, store_path: Path, encoder: TextEncoder, tiny_model: str, tmp_path: Path, monkeypatch: Any
) -> None:
    from gnn.text.encoder import EncoderSettings

    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    ingest(store, corpus())
    compute_embeddings(store, encoder)
    RetrievalIndex.open(store, IndexSettings(), cache=encoder)  # beside the store: the hard negatives' dense channel
    store.close()
    out = tmp_path / "encoder.json"
    argv = ["--db", str(store_path), "-q", "train", "encoder", "--queries", "store", "--base", tiny_model]
    argv += ["--steps", "2", "--batch-queries", "2", "--serve", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    # train 1 (2006) and train 2 (2007): two sentences each, every one with its place in its paper
    assert report["contexts"] == report["contexts with a manuscript"] == 4
    assert report["training"]["steps"] == 2 and report["served"] is True
    for split in ("validation", "test"):  # the 2008 and 2009 sentences, never trained on
        evaluated = report["evaluation"]["splits"][split]
        assert evaluated["queries"] == 2 and set(evaluated["encoders"]) == {"frozen", "fine-tuned"}
        assert set(evaluated["paired"]["fine-tuned"]["all"]) == {"R@10", "MRR"}
    pointer = store_path.with_name(store_path.name + ".encoder.json")
    served = EncoderSettings.from_env(served=pointer)
    assert served.model == report["training"]["folder"] and Path(served.model).is_dir()
    assert str(tmp_path / "cache") in served.model  # saved under $CITEGRAPH_CACHE


# --- the linker on a store's own data ----------------------------------------------------------------

TOPICS = ["phrase tables", "word alignment", "language models", "beam search", "attention weights"]


def full_text_corpus() -> GraphBatch:
    """A cited paper ``f1`` with a full text of 100 sentences, and a citing paper whose sentences cite it."""
    rng = np.random.default_rng(0)
    body = [f"We study {TOPICS[k % 5]} in setting {k} with {int(rng.integers(2, 90))} examples." for k in range(100)]
    citing = [
        "Earlier work {{cite:x}} studied phrase tables in setting 10.",
        "Attention weights {{cite:y}} were studied.",
    ]
    ids = [f"f1#{k}" for k in range(1, 101)] + ["g1#1", "g1#2"]
    sentences = pd.DataFrame(
        {
            "id": ids,
            "paper_id": ["f1"] * 100 + ["g1"] * 2,
            "sid": [*range(1, 101), 1, 2],
            "text": body + citing,
        }
    )
    papers = pd.DataFrame(
        {"id": ["f1", "g1"], "title": ["Studies of translation", "Citing studies"], "year": [2010, 2012]}
    )
    return GraphBatch(
        "full text",
        nodes={"Paper": papers, "Sentence": sentences},
        rels={
            "HAS_SENTENCE": pd.DataFrame({"source": sentences["paper_id"], "target": sentences["id"]}),
            "MENTIONS": pd.DataFrame(
                {"source": ["g1#1", "g1#2"], "target": ["f1", "f1"], "marker": ["{{cite:x}}", "{{cite:y}}"]}
            ),
        },
    )


def test_linkage_trains_on_a_store_without_cl_scisumm_or_says_what_it_needs(
    store: GraphStore,
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    no_data = ["--data", str(tmp_path / "no-data")]  # no CL-SciSumm here: the store is the default
    ingest(store, corpus())  # citing sentences, but no cited paper has a full text
    store.close()
    model = tmp_path / "linker.json"
    assert main(["--db", str(store_path), "-q", "linkage", "train", *no_data, "--out", str(model)]) == 65
    err = capsys.readouterr().err
    assert "nothing the linker learns from" in err and "10 MENTIONS (citing sentence -> cited paper), 0 of them" in err
    assert "Training-Set-2018" in err and not model.exists()

    with open_store(StoreConfig(db_path=store_path)) as again:
        ingest(again, full_text_corpus())
    assert main(["--db", str(store_path), "-q", "linkage", "train", *no_data, "--out", str(model)]) == 0
    out = capsys.readouterr().out
    assert "linker trained on 0 gold + 2 silver citances (the store: 12 MENTIONS" in out
    assert "2 of them to one of 1 papers whose full text" in out and "silver labels at cosine >= 0.517" in out
    saved = json.loads(model.read_text(encoding="utf-8"))
    assert saved["format"] == "citegraph-linker/1" and len(saved["weights"]) == len(saved["features"])

    # gold links in the store (any loader's): trained on them, the silver cutoff chosen on them
    with open_store(StoreConfig(db_path=store_path)) as again:
        gold = pd.DataFrame(
            {"source": ["g1#1", "g1#2"], "target": ["f1#11", "f1#5"], "method": "gold", "annotator": "A", "score": None}
        )
        ingest(again, GraphBatch("gold", rels={"LINKS_TO": gold}))
    args = ["--db", str(store_path), "-q", "linkage", "train", "--from-store", "--max-papers", "1", "--out", str(model)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "linker trained on 2 gold + " in out and "2 gold LINKS_TO" in out
