"""Fine-tuning the text encoder on citation contexts: the data, the batches, the loss, training, resuming, serving.

The model is the ``tiny_model`` fixture (conftest: a random 2-layer, 32-wide BERT with all-MiniLM-L6-v2's tokenizer),
so a few steps take well under a second; the real base model is what ``train encoder`` fine-tunes by default.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from gnn.recommend.examples import Fold, TrainSettings, noise_sampler
from gnn.recommend.finetune import (
    EncoderTrainer,
    EncoderTrainingData,
    EncoderTrainingSettings,
    TrainingContext,
    batch_loss,
    put_in_service,
    step_batch,
    training_data,
)
from gnn.rerank.model import hinge
from gnn.text.encoder import FINE_TUNED_ENCODERS, FINETUNE_RECORD, EncoderSettings, TextEncoder
from graph import GraphBatch, GraphStore, ingest
from graph.errors import ConfigError
from graph.files import StoreFiles

SPLIT = TrainSettings(folds=(Fold(2003, (2004, 2004)),), known_until=2004, validation=(2005, 2005), test=(2005, 2005))
TOPICS = {
    "t1": "Phrase tables are extracted from word-aligned parallel text.",
    "t2": "Word alignment with the IBM models and expectation maximisation.",
    "t3": "Part-of-speech tagging with hidden Markov models.",
    "t4": "Dependency parsing with a shift-reduce transition system.",
    "t5": "Translation quality measured by BLEU against reference translations.",
    "t6": "Word senses disambiguated by overlap with WordNet glosses.",
    "t7": "Named entities recognised with conditional random fields.",
    "t8": "Language models smoothed by Kneser-Ney discounting.",
}
CONTEXTS = [
    ("s1", "We extract phrase tables [CIT] from aligned text.", ("t1",)),
    ("s2", "Alignments come from the IBM models [CIT].", ("t2",)),
    ("s3", "Tags come from an HMM tagger [CIT].", ("t3",)),
    ("s4", "We parse with a shift-reduce parser [CIT].", ("t4",)),
    ("s5", "Phrase tables [CIT] and alignments [CIT] help translation.", ("t1", "t2")),
    ("s6", "We report BLEU [CIT] and disambiguate senses [CIT].", ("t5", "t6")),
]


def _citations() -> pd.DataFrame:
    """Co-citations known up to 2003: t1 with t2 (three times), t3 with t4, t5 with t6, t7 with t8."""
    rows = [(f"c{k}", 2001, t) for k in range(3) for t in ("t1", "t2")]
    rows += [("c3", 2002, "t3"), ("c3", 2002, "t4"), ("c4", 2002, "t5"), ("c4", 2002, "t6"), ("c5", 2002, "t6")]
    rows += [("c6", 2003, "t7"), ("c6", 2003, "t8")]
    return pd.DataFrame(rows, columns=["citing_id", "citing_year", "cited_id"])


def _data(**hard: tuple[str, ...]) -> EncoderTrainingData:
    contexts = [
        TrainingContext(sid, [text], 0, targets, frozenset(targets) | {"citer"}, 0, hard.get(sid, ()))
        for sid, text, targets in CONTEXTS
    ]
    sampler = noise_sampler(_citations(), 2003, TrainSettings())
    return EncoderTrainingData(contexts, dict(TOPICS), {"t1": ["We align.", "We extract.", "We score."]}, [sampler])


def _settings(**changes: object) -> EncoderTrainingSettings:
    base: dict[str, object] = dict(
        batch_queries=3, steps=6, lr=1e-3, warmup=0.0, checkpoint_every=2, device="cpu", precision="fp32"
    )
    base.update(changes)
    return EncoderTrainingSettings(**base)  # type: ignore[arg-type]


def _citances() -> GraphBatch:
    """ScisummNet-style citing sentences of the tiny graph: two of 2004 (training), two of 2005 (held out)."""
    rows = [
        ("p4#c00000000000a", "p4", "We extract phrase tables as Smith (1999) did.", ["p3"]),
        ("p4#c00000000000b", "p4", "Alignment models (Turing, 1993) give word links.", ["p2"]),
        ("p5#c00000000000c", "p5", "Phrase tables (Smith, 1999) and alignments (Turing, 1993) help.", ["p3", "p2"]),
        ("p5#c00000000000d", "p5", "Neural translation (Lovelace, 2004) attends.", ["p4"]),
    ]
    sentences = pd.DataFrame(
        {"id": [r[0] for r in rows], "paper_id": [r[1] for r in rows], "text": [r[2] for r in rows]}
    )
    mentions = [(r[0], t) for r in rows for t in r[3]]
    return GraphBatch(
        "citances",
        nodes={"Sentence": sentences, "Author": pd.DataFrame({"id": ["a3"], "name": ["John Smith"]})},
        rels={
            "HAS_SENTENCE": pd.DataFrame({"source": sentences["paper_id"], "target": sentences["id"]}),
            "MENTIONS": pd.DataFrame({"source": [m[0] for m in mentions], "target": [m[1] for m in mentions]}),
            "WROTE": pd.DataFrame({"source": ["a3", "a2"], "target": ["p3", "p2"], "position": [1, 1]}),
        },
    )


def test_the_training_data_holds_the_training_fold_only_with_every_marker_masked(store: GraphStore) -> None:
    ingest(store, _citances())
    data = training_data(store, _settings(), SPLIT)
    # the 2004 sentences of p4 train; the 2005 ones of p5 are validation and test and never seen
    assert sorted(c.sentence_id for c in data.contexts) == ["p4#c00000000000a", "p4#c00000000000b"]
    texts = {c.sentence_id: c.draft[c.position] for c in data.contexts}
    assert "Smith" not in texts["p4#c00000000000a"] and "[CIT]" in texts["p4#c00000000000a"]
    assert {c.targets for c in data.contexts} == {("p3",), ("p2",)}
    assert all("p4" in c.banned for c in data.contexts)  # the citing paper is never its own negative
    assert len(data.samplers) == 1 and len(data.data_hash) == 16
    smaller = training_data(store, _settings(max_contexts=2, seed=1), SPLIT)
    assert smaller.data_hash == data.data_hash  # a subset as large as the whole is the whole


def test_a_batch_keeps_targets_partners_and_cited_papers_out_of_the_negatives() -> None:
    data = _data(s1=("t4",))
    batch = step_batch(data, _settings(objective="source_target", batch_queries=6, noise_negatives=2), 0, 0)
    for k, positives, weights, negatives in zip(
        batch.instance_query, batch.positives, batch.weights, batch.negatives, strict=True
    ):
        context = next(c for c in data.contexts if c.sentence_id == batch.sentence_ids[k])
        ids = [batch.papers[j] for j in positives]
        assert set(context.targets) <= set(ids)
        assert not {batch.papers[j] for j in negatives} & (set(ids) | context.banned)
        partner_weights = [w for j, w in zip(positives, weights) if batch.papers[j] not in context.targets]
        assert all(w == 0.5 for w in partner_weights)
    # t1's only co-cited partner up to 2003 is t2: some context citing t1 alone draws it as a positive
    s1 = batch.sentence_ids.index("s1")
    assert "t2" in {batch.papers[j] for j in batch.positives[batch.instance_query.index(s1)]}
    assert batch.triples and all(len(set(t)) == 3 for t in batch.triples)
    assert batch.pairs == sum(len(c.targets) for c in data.contexts)
    # the same (seed, step, micro) draws the same batch; another step draws another order
    again = step_batch(data, _settings(objective="source_target", batch_queries=6, noise_negatives=2), 0, 0)
    assert (again.papers, again.paper_texts, again.positives) == (batch.papers, batch.paper_texts, batch.positives)


def test_single_positive_makes_one_instance_per_target_with_the_others_as_negatives() -> None:
    data = _data()
    batch = step_batch(data, _settings(objective="single_positive", batch_queries=6), 0, 0)
    assert len(batch.instance_query) == sum(len(c.targets) for c in data.contexts)
    s5 = batch.sentence_ids.index("s5")
    rows = [i for i, k in enumerate(batch.instance_query) if k == s5]
    assert len(rows) == 2
    for i in rows:
        (own,) = batch.positives[i]
        other = ({batch.papers.index("t1"), batch.papers.index("t2")} - {own}).pop()
        assert other in batch.negatives[i]  # an instance knows only its own target
    triplet = step_batch(data, _settings(objective="triplet", batch_queries=6), 0, 0)
    assert len(triplet.instance_query) == 6 and not triplet.triples


def test_batch_loss_is_the_objective_loss_of_the_cosines_by_hand() -> None:
    gen = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(2, 4, generator=gen), dim=1)
    d = torch.nn.functional.normalize(torch.randn(4, 4, generator=gen), dim=1)
    data = _data()
    batch = step_batch(data, _settings(objective="source", batch_queries=2), 0, 0)
    batch.positives, batch.weights, batch.negatives = [[0], [1, 2]], [[1.0], [1.0, 0.5]], [[2, 3], [3]]
    batch.instance_query, batch.triples = [0, 1], [(0, 1, 3)]
    s = q @ d.T
    positive = torch.tensor([[s[0, 0], 0.0], [s[1, 1], s[1, 2]]])
    weight = torch.tensor([[1.0, 0.0], [1.0, 0.5]])
    negative = torch.tensor([[-torch.inf, -torch.inf, s[0, 2], s[0, 3]], [-torch.inf] * 3 + [s[1, 3]]])
    expected = hinge(positive, negative, 0.2, weight) + (0.2 - d[0] @ d[1] + d[0] @ d[3]).clamp(min=0)
    assert float(batch_loss(q, d, batch, 0.2)) == pytest.approx(float(expected), rel=1e-5)


def test_a_few_steps_lower_the_loss_and_a_resumed_run_ends_where_an_uninterrupted_one_does(
    tiny_model: str, tmp_path: Path
) -> None:
    data = _data(s1=("t4", "t5"), s3=("t1",))
    straight = EncoderTrainer(tiny_model, _settings(objective="source_target", steps=6), tmp_path / "a")
    report = straight.fit(data)
    assert report.steps == 6 and report.resumed_from == 0 and not report.stopped_early
    assert report.losses[-1] < report.losses[0]  # checkpoint intervals of 2 steps: the first vs the last
    saved = Path(report.folder)
    record = json.loads((saved / FINETUNE_RECORD).read_text())
    assert record["data_hash"] == data.data_hash and record["steps"] == 6 and record["base"] == tiny_model
    assert not saved.with_name(saved.name + ".checkpoint").exists()  # finished: no checkpoint left

    # the same run stopped after its first checkpointed steps, then resumed by a new trainer
    interrupted = EncoderTrainer(tiny_model, _settings(objective="source_target", steps=6), tmp_path / "b")
    first = interrupted.fit(data, stop_after=2)
    assert first.steps == 2 and first.stopped_early
    resumed = EncoderTrainer(tiny_model, _settings(objective="source_target", steps=6), tmp_path / "b")
    second = resumed.fit(data)
    assert second.resumed_from == 2 and second.steps == 6 and second.losses == report.losses
    for a, b in zip(straight.towers.state_dict().values(), resumed.towers.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    # a third run of the same base, settings and data finds the model saved and trains nothing
    again = EncoderTrainer(tiny_model, _settings(objective="source_target", steps=6), tmp_path / "b")
    third = again.fit(data)
    assert (third.seconds, third.steps, third.folder) == (0.0, 6, second.folder)
    for a, b in zip(straight.towers.state_dict().values(), again.towers.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_the_store_serves_the_fine_tuned_encoder_once_put_in_service(
    tiny_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CITEGRAPH_ENCODER", tiny_model)
    files = StoreFiles(tmp_path / "g.db")
    assert files.served_encoder == tmp_path / "g.db.encoder.json"
    base = TextEncoder(EncoderSettings.from_env(device="cpu", served=files.served_encoder))
    assert base.settings.model == tiny_model and base.describe()["fine_tuned"] is False
    report = EncoderTrainer(tiny_model, _settings(steps=2), FINE_TUNED_ENCODERS.under(files)).fit(_data())
    put_in_service(files.served_encoder, Path(report.folder), {"data_hash": report.data_hash})
    tuned = TextEncoder(EncoderSettings.from_env(device="cpu", served=files.served_encoder))
    assert tuned.settings.model == report.folder
    assert tuned.describe() | {"model": ""} == {
        "model": "",
        "dim": 32,
        "fine_tuned": True,
        "base": Path(tiny_model).name,
        "objective": "source_target",
        "steps": 2,
        "data_hash": report.data_hash,
    }
    # same config and weights size as the base: its cache keys must differ all the same
    assert tuned.fingerprint != base.fingerprint
    text = ["phrase tables"]
    assert not np.allclose(tuned.encode(text), base.encode(text))
    assert [e.built_from for e in files.describe() if e.name == "served_encoder"] == [report.data_hash]
    # a store whose fine-tuned encoder was deleted says so rather than serving the base model
    import shutil

    shutil.rmtree(report.folder)
    with pytest.raises(ConfigError, match="is gone"):
        EncoderSettings.from_env(device="cpu", served=files.served_encoder)


def test_train_layers_leaves_the_embeddings_and_lower_layers_as_the_base_has_them(
    tiny_model: str, tmp_path: Path
) -> None:
    trainer = EncoderTrainer(tiny_model, _settings(train_layers=1, steps=2), tmp_path)
    before = {k: v.clone() for k, v in trainer.towers.state_dict().items()}
    trainer.fit(_data())
    after = trainer.towers.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(".encoder.layer.1." in k for k in changed)  # the top of the two layers only


def test_a_dual_encoder_trains_two_towers_and_cannot_be_served(tiny_model: str, tmp_path: Path) -> None:
    trainer = EncoderTrainer(tiny_model, _settings(encoders="dual", steps=2), tmp_path)
    report = trainer.fit(_data())
    assert (Path(report.folder) / "query" / FINETUNE_RECORD).is_file()
    assert (Path(report.folder) / "paper" / "config.json").is_file()
    query, paper = trainer.towers
    assert not torch.equal(query.model.embeddings.word_embeddings.weight, paper.model.embeddings.word_embeddings.weight)
    with pytest.raises(ConfigError, match="--encoders shared"):
        put_in_service(tmp_path / "g.db.encoder.json", Path(report.folder), {})


def test_settings_refuse_what_cannot_train() -> None:
    with pytest.raises(ConfigError, match="objective"):
        EncoderTrainingSettings(objective="nope")
    with pytest.raises(ConfigError, match="encoders"):
        EncoderTrainingSettings(encoders="three")
    with pytest.raises(ConfigError, match="accumulation"):
        EncoderTrainingSettings(accumulation=0)
    assert "device" not in replace(EncoderTrainingSettings(), device="cpu").identity()
