"""The server's background build: the rest of the corpus computed while serving, recorded, resumed, reported."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient

import api.pipeline.plans as plans
import api.pipeline.train as train_step
from api.app import create_app
from api.background import BackgroundBuild, SerialisedStore
from api.cli.main import main
from api.pipeline.compute import EMBEDDINGS, INDEX, EmbeddingsStep, IndexStep
from api.pipeline.ingest import INGEST, IngestSettings
from api.pipeline.registry import Action, Step, StepContext
from api.pipeline.train import RERANKER_TRAINING, RerankerTraining
from api.settings import AppSettings
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError
from graph.files import StoreFiles
from tests.gnn.recommend.test_recommend_eval import _citances
from tests.gnn.recommend.test_rerank_train import SPLIT as TINY_SPLIT

TITLES = [
    "Parsing with probabilistic context-free grammars",
    "Tagging words with hidden Markov models",
    "Phrase-based statistical machine translation",
    "Minimum error rate training for translation",
    "Word alignment with IBM models",
]
CORPUS = [
    *({"type": "paper", "id": f"p{i}", "title": t, "year": 2000 + i} for i, t in enumerate(TITLES)),
    {"type": "paper", "id": "bare"},  # no text at all: never embedded, never counted as missing
    {"type": "citation", "citing": "p1", "cited": "p0"},
    {"type": "citation", "citing": "p2", "cited": "p0"},
    {"type": "citation", "citing": "p3", "cited": "p2"},
]
# a paper of 2006 with text: the index the background build makes differs from the one the reranker knew
LATER_PAPER = {"id": ["p9"], "title": ["Attention for sequence transduction"], "year": [2006]}
QUICK = (Step("embeddings", EMBEDDINGS, EmbeddingsStep(embed="papers")), Step("index", INDEX, IndexStep()))


@dataclass(frozen=True)
class Refused:
    def command(self) -> tuple[str, ...]:
        return ("compute", "cocitation", "--min-count", "0")


def refuse(context: StepContext, settings: Refused) -> None:
    raise ConfigError("co-citation min_count is 0; give 1 or more")


REFUSED = Step("cocitation", Action("compute cocitation", refuse), Refused())


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store built by `citegraph build` with two papers embedded: the default build's partial state."""
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "data"
    (data / "jsonl").mkdir(parents=True)
    (data / "jsonl" / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in CORPUS) + "\n", encoding="utf-8")

    def plan(settings: plans.BuildSettings) -> list[Step]:
        return [
            Step("ingest", INGEST, IngestSettings(data=str(settings.data), on_error="skip"), reads=settings.data),
            Step("compute", EMBEDDINGS, EmbeddingsStep(limit=2)),
        ]

    monkeypatch.setattr(plans, "build_plan", plan)
    db = tmp_path / "store.db"
    assert main(["--db", str(db), "--quiet", "build", "--data", str(data)]) == 0
    return db


def _embedded(db: Path) -> int:
    with open_store(StoreConfig(db_path=db, read_only=True), ensure_schema=False) as store:
        _, rows = store.read_only_query("MATCH (p:Paper) WHERE p.embedding IS NOT NULL RETURN count(p)")
    return int(rows[0][0])


def test_the_background_build_embeds_the_rest_swaps_the_index_and_is_recorded(built: Path) -> None:
    assert _embedded(built) == 2
    indexes: list[int] = []
    with open_store(StoreConfig(db_path=built)) as store:
        background = BackgroundBuild(
            store, threading.Lock(), built, reload_recommend=lambda: indexes.append(1), threads=2, steps=QUICK
        )
        background.run()
        status = background.status.as_dict()
    assert status["state"] == "complete" and status["error"] is None
    assert [s["name"] for s in status["steps"]] == ["embeddings", "index"]  # type: ignore[index]
    assert indexes == [1]  # the server's recommendation service was told once, after the index step
    assert _embedded(built) == len(TITLES)  # every paper with text; the bare one has nothing to embed
    assert (built.parent / "store.db.index" / "manifest.json").is_file()
    assert "background" in json.loads((built.parent / "store.db.build.json").read_text())["steps"]

    # A restart over the same build finds it recorded and runs nothing.
    with open_store(StoreConfig(db_path=built)) as store:
        again = BackgroundBuild(
            store, threading.Lock(), built, reload_recommend=lambda: indexes.append(2), steps=QUICK, threads=1
        )
        again.run()
    assert again.status.state == "complete" and again.status.steps == [] and indexes == [1]


def test_a_failed_step_is_reported_by_name_and_the_next_start_resumes(built: Path) -> None:
    failing = (*QUICK[:1], REFUSED, QUICK[1])
    with open_store(StoreConfig(db_path=built)) as store:
        background = BackgroundBuild(
            store, threading.Lock(), built, reload_recommend=lambda: None, threads=1, steps=failing
        )
        background.run()
    status = background.status
    assert status.state == "failed" and status.step == "cocitation"
    assert status.error is not None and status.error.startswith("step cocitation:") and "min_count" in status.error
    assert [s["name"] for s in status.steps] == ["embeddings"]  # done before the failure, and kept
    assert _embedded(built) == len(TITLES)
    assert "background" not in json.loads((built.parent / "store.db.build.json").read_text())["steps"]

    with open_store(StoreConfig(db_path=built)) as store:  # the next start: embeddings have nothing left to do
        resumed = BackgroundBuild(store, threading.Lock(), built, reload_recommend=lambda: None, threads=1, steps=QUICK)
        resumed.run()
    assert resumed.status.state == "complete"


def test_store_calls_of_the_background_build_wait_for_the_servers_lock(built: Path) -> None:
    lock = threading.Lock()
    with open_store(StoreConfig(db_path=built)) as store:
        serialised = SerialisedStore(store, lock)
        assert serialised.backend == store.backend  # attributes pass through
        finished = threading.Event()
        lock.acquire()  # a query of the server holds the store
        worker = threading.Thread(target=lambda: (serialised.count_nodes("Paper"), finished.set()))
        worker.start()
        assert not finished.wait(0.5)  # the background build's call waits ...
        lock.release()
        worker.join(30)
        assert finished.is_set()  # ... and runs once the query is done


def test_serve_complete_reports_the_background_build_in_readyz(built: Path) -> None:
    app = create_app(StoreConfig(db_path=built), AppSettings.from_env(), complete=True)
    with TestClient(app) as client:
        ready = client.get("/readyz").json()
        assert ready["background"]["state"] in {"waiting", "running", "complete"}
        app.state.server.background.join(600)
        deadline = time.monotonic() + 30
        ready = client.get("/readyz").json()
        while _embedding_have(ready) != len(TITLES) and time.monotonic() < deadline:  # read again after the build
            time.sleep(0.2)
            ready = client.get("/readyz").json()
    background = ready["background"]
    assert background["state"] == "complete" and background["error"] is None, background
    assert [s["name"] for s in background["steps"]] == [s.name for s in plans.background_plan(built)]
    skipped = {s["name"] for s in background["steps"] if "skipped" in s}
    # this store has no taxonomy, as `compute all` would say, and its build trained no reranker to train again,
    # nor citation contexts to fine-tune the encoder on (and so nothing to do with a fine-tuned one)
    assert skipped == {"taxonomy", "hyperbolic", "reranker", *(s.name for s in plans.encoder_steps())}
    assert ready["encoder"]["fine_tuned"] is False
    completeness = {row["property"]: row for row in ready["completeness"]}
    assert completeness["Paper.embedding"] == {
        "property": "Paper.embedding",
        "have": len(TITLES),
        "of": len(TITLES),
        "fraction": 1.0,
    }
    assert _embedded(built) == len(TITLES)


def _embedding_have(ready: dict[str, Any]) -> object:
    return next((row["have"] for row in ready.get("completeness", []) if row["property"] == "Paper.embedding"), None)


def test_a_server_without_complete_opens_the_store_read_only_and_builds_nothing(built: Path) -> None:
    app = create_app(StoreConfig(db_path=built, read_only=True), AppSettings.from_env())
    with TestClient(app) as client:
        ready = client.get("/readyz").json()
    assert "background" not in ready
    embedding = next(row for row in ready["completeness"] if row["property"] == "Paper.embedding")
    assert (embedding["have"], embedding["of"]) == (2, len(TITLES))  # the default build's partial state
    assert _embedded(built) == 2


def test_the_background_build_starts_once_the_models_are_loaded_even_when_one_fails() -> None:
    from api.app import _warm
    from api.lazy import Lazy
    from graph.errors import DataError

    order: list[str] = []

    def load_index() -> object:
        order.append("recommend loaded")
        return object()

    def no_linker() -> object:
        order.append("linkage tried")
        raise DataError("no linker trained")

    models: dict[str, str] = {}
    _warm(
        {"recommend": Lazy(load_index), "linkage": Lazy(no_linker)},  # type: ignore[dict-item]
        models,
        lambda: order.append("background started"),
    )
    assert order == ["recommend loaded", "linkage tried", "background started"]
    assert models["recommend"] == "loaded" and models["linkage"].startswith("unavailable: no linker trained")


def test_the_reranker_is_trained_again_on_the_new_index_and_the_service_rebuilt(
    store: GraphStore, store_path: Path, encoder: TextEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's reranker knew the build's index; after the background build's index step it trains again
    on the new one (real training, on the tiny citances' own years) and the service is told; on an index it
    was trained on, the step is skipped."""
    from gnn.recommend.train import trained_index_digest
    from gnn.retrieval.index import built_digest

    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # the step's report goes to var/eval/ of the working directory
    # the default split's years are the bundled corpora's; the tiny citances train on 2004, validate on 2005
    monkeypatch.setattr(train_step, "TrainSettings", lambda **given: replace(TINY_SPLIT, **given))
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    files = StoreFiles(store_path)
    assert files.index is not None and files.reranker is not None
    plan = (
        Step("index", INDEX, IndexStep()),
        Step("reranker", RERANKER_TRAINING, RerankerTraining(objective="triplet", mart_seeds=1, plain_trees=False)),
    )
    reloads: list[str] = []
    lock = threading.Lock()
    background = BackgroundBuild(
        store, lock, store_path, reload_recommend=lambda: reloads.append("x"), threads=1, steps=plan[:1]
    )
    background.run()  # no build record here: nothing is recorded
    assert background.run_step(plan[1]) == "the build trained no reranker"

    args = ["--db", str(store_path), "-q", "train", "reranker", "--objective", "triplet", "--mart-seeds", "1"]
    store.close()
    assert main([*args, "--no-plain-trees", "--out", str(tmp_path / "first.json")]) == 0
    first = trained_index_digest(files.reranker)
    assert first is not None and first == built_digest(files.index)

    with open_store(StoreConfig(db_path=store_path)) as reopened:
        ingest(reopened, GraphBatch("later", nodes={"Paper": pd.DataFrame(LATER_PAPER)}))
        compute_embeddings(reopened, encoder)
        again = BackgroundBuild(
            reopened, threading.Lock(), store_path, reload_recommend=lambda: reloads.append("x"), threads=1, steps=plan
        )
        again.run()
        assert again.status.state == "complete", again.status.error
        assert [s.get("skipped") for s in again.status.steps] == [None, None]  # both ran
        assert len(reloads) == 3  # after each index step and after the reranker's training
        new = built_digest(files.index)
        assert new != first and trained_index_digest(files.reranker) == new
        assert (tmp_path / "var" / "eval" / "reranker.json").is_file()  # the step's report, where the build puts it
        assert again.run_step(plan[1]) == "the reranker was trained on this index"
