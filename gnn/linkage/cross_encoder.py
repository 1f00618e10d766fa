r"""A MiniLM cross-encoder that re-orders the linker's best candidates (CL-SciSumm Task 1A).

The logistic-regression linker (:mod:`gnn.linkage.model`) sees 42 signals about a (citance,
sentence) pair but never reads the two texts together. A cross-encoder does: all-MiniLM-L6-v2
reads ``[CLS] citance [SEP] sentence [SEP]`` and a linear head on the mean of its last hidden
states gives a score :math:`g(c, s)` (Nogueira & Cho 2019, "Passage Re-ranking with BERT"; mean
pooling because MiniLM-L6-v2 was trained with it).

**Training**, listwise per citance: the candidates are the citance's gold sentences (at most
``max_positives``) and the linker's highest-scored other sentences, ``train_candidates`` in all
(hard negatives: what the linker confuses). With :math:`t_i = 1/|G|` for the gold candidates
and 0 for the others,

.. math::
    \mathcal{L}(c) = -\sum_i t_i \log \frac{e^{g(c, s_i)}}{\sum_j e^{g(c, s_j)}}

(ListNet's top-one probability, Cao et al. 2007), AdamW with linear warm-up over the first 10% of
the steps and linear decay, ``epochs`` passes, seeded.

**Combination.** For the linker's top ``rerank_candidates`` sentences

.. math::
    s(c, s_i) = \operatorname{logit} p_\mathrm{LR}(c, s_i) + g(c, s_i),

the sum of the two models' log-scores (a product of experts, Hinton 2002), so there is no weight
to tune. *How many* sentences are linked is still the linker's :class:`~gnn.linkage.scoring.Selection`
on its own probabilities (its threshold was chosen out of fold for those); *which* ones is the
order of :math:`s`.

Cost: training reads about ``train_candidates`` pairs per gold citance (one epoch over 600
citances: about 10 minutes on 2 CPU cores); linking reads ``rerank_candidates`` pairs per citance
(about 0.37 s per citance on 2 CPU cores, docs/results.md). It runs on the GPU when there is one.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.special import expit, logit

from gnn.device import select_device
from gnn.linkage.features import CitedPaper
from gnn.linkage.model import Example, Linker
from gnn.text.encoder import default_model_path
from graph.errors import ConfigError, DataError
from graph.files import ModelFile

log = logging.getLogger(__name__)

# The fine-tuned cross-encoder of `linkage train --cross-encoder`: <cache>/models/linker-cross-encoder/.
CROSS_ENCODER_FILE = ModelFile("cross_encoder", "linker-cross-encoder")

MODEL_FORMAT = "citegraph-linker-cross-encoder/1"
ENCODER_FOLDER = "encoder"  # the fine-tuned transformer and its tokenizer (safetensors), inside the model folder


@dataclass(frozen=True)
class CrossEncoderSettings:
    train_candidates: int = 12  # pairs per training citance: its gold sentences plus the linker's top others
    max_positives: int = 4  # gold sentences per training citance at most (a few citances have many)
    rerank_candidates: int = 20  # the linker's top sentences the cross-encoder re-scores when linking
    # passes over the training citances (fractions allowed)
    epochs: float = field(default=1.0, metadata={"help": "training passes of the cross-encoder"})
    learning_rate: float = 3e-5
    citances_per_step: int = 4  # citances per optimiser step
    max_length: int = 128  # tokens of citance + sentence
    seed: int = 0
    device: str | None = None  # None: CUDA when present, else CPU

    def __post_init__(self) -> None:
        if (
            self.train_candidates < 2
            or self.rerank_candidates < 1
            or not 1 <= self.max_positives < self.train_candidates
        ):
            raise ConfigError(
                "cross-encoder needs train_candidates >= 2, 1 <= max_positives < train_candidates, rerank_candidates >= 1"
            )
        if self.epochs <= 0 or self.learning_rate <= 0 or self.citances_per_step < 1:
            raise ConfigError("cross-encoder needs epochs > 0, learning_rate > 0 and citances_per_step >= 1")


def listwise_loss(logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """ListNet top-one cross-entropy of one citance: ``-sum_i t_i log softmax(logits)_i``, ``t`` uniform over ``gold``."""
    target = gold.float() / gold.float().sum()
    return -(target * torch.log_softmax(logits, dim=0)).sum()


class _PairScorer(torch.nn.Module):
    def __init__(self, encoder: Any) -> None:  # a transformers PreTrainedModel
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(int(encoder.config.hidden_size), 1)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        hidden = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return self.head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)).squeeze(-1)


class CrossEncoder:
    """The pair scorer with its tokenizer; :meth:`scores` gives ``g(c, s)`` for one citance and many sentences."""

    def __init__(self, tokenizer: object, scorer: _PairScorer, settings: CrossEncoderSettings) -> None:
        self.tokenizer = tokenizer
        self.scorer = scorer
        self.settings = settings
        self.device = select_device(settings.device)
        self.scorer.to(self.device)

    @classmethod
    def from_pretrained(cls, model: str, settings: CrossEncoderSettings = CrossEncoderSettings()) -> CrossEncoder:
        """A fresh scorer on the weights at ``model`` (a local folder; the head starts at random, seeded)."""
        from transformers import AutoModel, AutoTokenizer  # heavy import, only where a cross-encoder is built

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        local = Path(model).is_dir()
        try:
            tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=local)
            encoder = AutoModel.from_pretrained(model, local_files_only=local)
        except OSError as exc:
            raise ConfigError(f"cannot load the cross-encoder's starting weights from {model!r}: {exc}") from exc
        with torch.random.fork_rng(devices=[]):  # seed the head's initialisation without touching the caller's RNG
            torch.manual_seed(settings.seed)
            scorer = _PairScorer(encoder)
        return cls(tokenizer, scorer, settings)

    def pairs(self, citance: str, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        encoded = self.tokenizer(  # type: ignore[operator]
            [citance] * len(texts),
            list(texts),
            truncation="longest_first",
            max_length=self.settings.max_length,
            padding=True,
            return_tensors="pt",
        )
        return {k: v.to(self.device) for k, v in encoded.items()}

    def scores(self, citance: str, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """``(len(texts),)`` scores ``g(citance, text)``; empty for no texts."""
        self.scorer.eval()
        out = []
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                out.append(self.scorer(self.pairs(citance, texts[start : start + batch_size])).float().cpu().numpy())
        return np.concatenate(out).astype(np.float64) if out else np.zeros(0)

    # persistence -----------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the fine-tuned transformer (safetensors), its tokenizer and the head (JSON) under ``folder``.

        Written to a sibling temporary folder first and renamed over the old one, so a crash while
        writing leaves the old model in place.
        """
        folder = Path(folder)
        tmp = folder.with_name(folder.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        (tmp / ENCODER_FOLDER).mkdir(parents=True)
        self.scorer.encoder.save_pretrained(tmp / ENCODER_FOLDER, safe_serialization=True)
        self.tokenizer.save_pretrained(tmp / ENCODER_FOLDER)  # type: ignore[attr-defined]
        head = self.scorer.head
        payload = {
            "format": MODEL_FORMAT,
            "head_weight": head.weight.detach().cpu().double().numpy().ravel().tolist(),
            "head_bias": float(head.bias.detach().cpu().item()),
            "settings": asdict(self.settings),
        }
        (tmp / "config.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
        old = folder.with_name(folder.name + ".old")
        if old.exists():
            shutil.rmtree(old)
        if folder.exists():
            folder.replace(old)  # two renames: at every moment a complete model is at one of the two names
        tmp.replace(folder)
        if old.exists():
            shutil.rmtree(old)

    @classmethod
    def load_if_saved(cls, folder: Path, device: str | None = None) -> CrossEncoder | None:
        """The cross-encoder saved at ``folder``, or None where none was saved there."""
        return cls.load(folder, device) if (Path(folder) / "config.json").is_file() else None

    @classmethod
    def load(cls, folder: Path, device: str | None = None) -> CrossEncoder:
        folder = Path(folder)
        try:
            payload = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise DataError(
                f"cannot read the cross-encoder at {folder}: {exc}; train one with `citegraph linkage train --cross-encoder`"
            ) from exc
        if payload.get("format") != MODEL_FORMAT:
            raise DataError(
                f"{folder} is not a linker cross-encoder of this version; retrain with `citegraph linkage train --cross-encoder`"
            )
        settings = CrossEncoderSettings(**{**payload["settings"], "device": device})
        model = cls.from_pretrained(str(folder / ENCODER_FOLDER), settings)
        with torch.no_grad():
            weight = torch.tensor(payload["head_weight"], dtype=model.scorer.head.weight.dtype)
            model.scorer.head.weight.copy_(weight.view_as(model.scorer.head.weight))
            model.scorer.head.bias.fill_(float(payload["head_bias"]))
        return model


def _training_lists(
    examples: Sequence[Example], linker: Linker, settings: CrossEncoderSettings
) -> list[tuple[Example, np.ndarray, int]]:
    """Per gold citance: candidate indices (gold first, then the linker's top others) and how many are gold."""
    lists = []
    for e in examples:
        if e.labelled is not None or len(e.paper) == 0:
            continue  # silver rows label only some sentences; their lists would hide unlabelled gold
        gold = [j for j, sid in enumerate(e.paper.sids) if int(sid) in e.positives][: settings.max_positives]
        if not gold:
            continue
        order = np.argsort(-linker.decision(e.matrix()), kind="stable")
        others = [int(j) for j in order if int(e.paper.sids[j]) not in e.positives]
        chosen = gold + others[: settings.train_candidates - len(gold)]
        if len(chosen) > len(gold):
            lists.append((e, np.asarray(chosen, dtype=np.int64), len(gold)))
    return lists


def train_cross_encoder(
    examples: Sequence[Example],
    linker: Linker,
    settings: CrossEncoderSettings = CrossEncoderSettings(),
    *,
    model: str | None = None,
) -> CrossEncoder:
    """Fine-tune a cross-encoder on the gold citances of ``examples`` against ``linker``'s hard negatives.

    ``model``: starting weights (default: the project's text encoder, all-MiniLM-L6-v2).
    """
    lists = _training_lists(examples, linker, settings)
    if not lists:
        raise DataError("the cross-encoder needs gold citances with at least one linked and one other sentence")
    cross = CrossEncoder.from_pretrained(model or default_model_path(), settings)
    scorer = cross.scorer
    optimiser = torch.optim.AdamW(scorer.parameters(), lr=settings.learning_rate, weight_decay=0.01)
    steps = max(1, math.ceil(len(lists) / settings.citances_per_step * settings.epochs))
    warmup = max(1.0, 0.1 * steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, (steps - step) / steps)
    )
    rng = np.random.default_rng(settings.seed)
    started, step = time.perf_counter(), 0
    while step < steps:
        order = rng.permutation(len(lists))
        for first in range(0, len(order), settings.citances_per_step):
            if step >= steps:
                break
            scorer.train()
            loss = torch.zeros((), device=cross.device)
            for k in order[first : first + settings.citances_per_step]:
                example, chosen, n_gold = lists[k]
                logits = scorer(cross.pairs(example.citance, [example.paper.texts[j] for j in chosen]))
                gold = torch.zeros(len(chosen), device=cross.device)
                gold[:n_gold] = 1.0
                loss = loss + listwise_loss(logits.float(), gold)
            (loss / settings.citances_per_step).backward()
            torch.nn.utils.clip_grad_norm_(scorer.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            if step % 50 == 0 or step == steps:
                log.info(
                    "cross-encoder step %d/%d, loss %.3f, %.0f s",
                    step,
                    steps,
                    float(loss.detach()) / settings.citances_per_step,
                    time.perf_counter() - started,
                )
    return cross


@dataclass
class CrossEncodedLinker:
    """The linker with its top candidates re-ordered by ``logit p + g`` (module docstring)."""

    linker: Linker
    cross_encoder: CrossEncoder

    def rank(
        self, citance: str, probabilities: np.ndarray, paper: CitedPaper, depth: int = 0
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """The linker's top ``max(rerank_candidates, depth)`` sentences re-ordered by ``logit p + g``.

        Returns their indices into ``paper`` and combined scores (best first), and how many of them
        the linker's selection links (its count on its own probabilities).
        """
        if len(probabilities) == 0:
            return np.zeros(0, np.int64), np.zeros(0), 0
        count = len(self.linker.selection.select(probabilities))
        width = max(count, depth, self.cross_encoder.settings.rerank_candidates)
        top = np.argsort(-probabilities, kind="stable")[:width]
        p = np.clip(probabilities[top], 1e-12, 1 - 1e-12)
        combined = logit(p) + self.cross_encoder.scores(citance, [paper.texts[j] for j in top])
        order = np.argsort(-combined, kind="stable")
        return top[order], combined[order], count

    def select(self, citance: str, probabilities: np.ndarray, paper: CitedPaper) -> list[tuple[int, float]]:
        """The linked ``(sentence index, combined score)`` pairs, best first, given the linker's probabilities."""
        indices, combined, count = self.rank(citance, probabilities, paper)
        return [(int(j), float(s)) for j, s in zip(indices[:count], combined[:count])]

    def link(self, citance: str, vector: np.ndarray, paper: CitedPaper) -> list[tuple[int, float]]:
        """The linked ``(sid, sigma(combined score))`` pairs, best first; empty for an empty paper or citance.

        The logistic of ``logit p + g`` puts the score on the linker's 0..1 scale, as stored on
        ``LINKS_TO.score`` and shown by the API.
        """
        if not citance.strip() or len(paper) == 0:
            return []
        chosen = self.select(citance, self.linker.score(citance, vector, paper), paper)
        return [(int(paper.sids[j]), float(expit(score))) for j, score in chosen]


__all__ = [
    "CROSS_ENCODER_FILE",
    "MODEL_FORMAT",
    "CrossEncodedLinker",
    "CrossEncoder",
    "CrossEncoderSettings",
    "listwise_loss",
    "train_cross_encoder",
]
