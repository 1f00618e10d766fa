r"""``citegraph train encoder``: fine-tune the text encoder itself on the store's citation contexts.

The reranker's objectives (:mod:`gnn.rerank.model`) train a small head over a *frozen*
all-MiniLM-L6-v2; MP-BERT4CR (Zhang & Ma 2022) fine-tunes the transformer itself. This module does
the latter, with the same five objectives, on pairs (citing context → cited paper) of the time
split's **training folds only** (:func:`gnn.recommend.examples.split_frames`: validation and test
citing sentences are never seen), every cited paper's marker masked (:mod:`gnn.recommend.citances`).

**Dynamic context sampling** (MP-BERT4CR §3.2), redrawn at every step:

* the query: the citing sentence with its neighbours and ``supplemental`` sentences sampled from
  earlier in the manuscript (:func:`gnn.retrieval.manuscript.manuscript_context`), where the store
  knows the sentence's place in its paper (``Sentence.sid``); otherwise the sentence alone (the
  ScisummNet citances of the shared data carry no position);
* the cited side: title and abstract plus ``body_sentences`` sampled body sentences where the store
  has the paper's full text (:func:`gnn.retrieval.manuscript.body_sampled_text`).

**Scores and objectives.** Query :math:`q` and paper :math:`d` are encoded by mean pooling and L2
normalisation (:mod:`gnn.text.encoder`), :math:`s(q, d) = e_q^\top e_d` (cosine). Each step takes
``batch_queries`` contexts; the papers of the step are their targets, the targets' co-cited partners
:math:`j \sim p(\cdot \mid t) \propto \mathrm{freq}(t,j)^{3/4}`, ``hard_negatives`` per context drawn
from the papers the frozen encoder ranks highest for it (the prefetch's dense channel: the
hard negatives of Medić & Šnajder 2020) and ``noise_negatives`` drawn from
:math:`p(i) \propto \mathrm{count}(i)^{3/4}` (MP-BERT4CR eq. 1–2, :class:`gnn.cocitation.noise.NoiseSampler`,
from the co-citations known at the fold's cutoff). Every paper of the step that is not a context's
target, partner or already-cited paper is its negative (**in-batch negatives**), and
:func:`gnn.rerank.model.objective_loss` gives the loss:

* ``single_positive``: one instance per (context, target), the context's other targets among the negatives;
* ``triplet``: :math:`\operatorname{mean}_{t \in T_q, n \in N_q}[m - s(q,t) + s(q,n)]_+`;
* ``target`` (eq. 4): triplet plus :math:`[m - s(t, j) + s(t, n)]_+` over (target, partner, noise) triples;
* ``source`` (eq. 5): the partners are positives of the query too, weighted ``partner_weight``;
* ``source_target`` (eq. 6): both.

``encoders = "dual"`` trains MP-BERT4CR's two encoders, a manuscript encoder for queries and a
citation encoder for papers (both from the same base); ``"shared"`` one for both, the only kind the
service can put in place of its encoder (it encodes queries and papers with one model).

**Bounded and resumable.** Sequence lengths, steps, gradient accumulation and a subset of contexts
bound the work; ``max_minutes`` stops early (the model is saved with the steps it took, and the
checkpoint stays, so a rerun goes on). A checkpoint (weights, optimiser, schedule, losses) is written
every ``checkpoint_every`` steps; a run with the same base, settings and data resumes from it. Every
random draw of step :math:`k` is seeded by ``(seed, k)``, so a resumed run takes the steps an
uninterrupted one would. Mixed precision: fp16 with loss scaling on CUDA, bfloat16 autocast on a CPU
that multiplies it natively (:func:`gnn.text.encoder.encoder_dtype`).

The model is saved under ``$CITEGRAPH_CACHE/models/encoder/<base>-<key>/`` (``key``: hash of the
base, the settings and the data) with :data:`gnn.text.encoder.FINETUNE_RECORD`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from gnn.cocitation.noise import NoiseSampler
from gnn.device import select_device
from gnn.recommend.citances import author_lists, mask_citance
from gnn.recommend.examples import TrainSettings, noise_sampler, split_frames
from gnn.rerank.model import OBJECTIVES, objective_loss
from gnn.retrieval.enricher import read_citations_with_years
from gnn.retrieval.manuscript import body_sampled_text, manuscript_context
from gnn.text.embeddings import ABSTRACT_SECTION, clean_texts, paper_texts
from gnn.text.encoder import FINETUNE_RECORD, PRECISIONS, encoder_dtype, finetune_record
from graph.errors import ConfigError, DataError
from graph.files import publish_folder, staging_folder, write_atomic
from graph.store import GraphStore

log = logging.getLogger(__name__)

ENCODER_KINDS = ("shared", "dual")


@dataclass(frozen=True)
class EncoderTrainingSettings:
    """What ``train encoder`` trains and how long; the defaults are sized for 2 CPU cores (docs/recommend.md)."""

    objective: str = "source_target"  # one of gnn.rerank.model.OBJECTIVES (module docstring)
    encoders: str = "shared"  # shared: one encoder for queries and papers; dual: MP-BERT4CR's two
    query_max_length: int = 96  # tokens of a query (sentence, neighbours, sampled earlier sentences)
    document_max_length: int = 128  # tokens of a paper (title, abstract, sampled body sentences)
    batch_queries: int = 16  # contexts per micro-batch: their papers are each other's in-batch negatives
    accumulation: int = 1  # micro-batches per optimiser step (a larger effective batch at the same memory)
    steps: int = 200  # optimiser steps
    lr: float = 2e-5  # AdamW; the usual rate for fine-tuning a 6-layer sentence encoder
    warmup: float = 0.1  # share of the steps with a linear warm-up, then linear decay to 0
    weight_decay: float = 0.01
    margin: float = 0.2  # m of every hinge, on cosines (the reranker's 1.0 is for unbounded scores)
    partner_weight: float = 0.5  # weight of co-cited partners as positives (source-based objectives)
    partners_per_target: int = 1  # co-cited partners drawn per target and step from p(j|t)
    hard_negatives: int = 2  # papers drawn per context and step from the frozen encoder's top HARD_POOL
    noise_negatives: int = 4  # papers drawn per micro-batch from p(i) ∝ count(i)^¾
    supplemental: int = 2  # earlier sentences of the manuscript added to the query (where known)
    body_sentences: int = 2  # body sentences added to a paper with full text
    # The top this many transformer layers learn (the embeddings and the layers below stay as the base has them;
    # no backward pass through them): about a third of the work of full fine-tuning with 2 of MiniLM's 6 layers,
    # what a shared 2-core CPU affords. None: every layer (the setting for a GPU).
    train_layers: int | None = None
    max_contexts: int | None = 4000  # training contexts at most (a seeded subset); None: all
    max_minutes: float | None = None  # stop after the step that passes this, save what was learnt
    checkpoint_every: int = 25  # steps between checkpoints
    precision: str = "auto"  # auto | fp32 | bf16 | fp16 (autocast; the weights stay fp32)
    seed: int = 0
    device: str | None = None  # None: CUDA when present

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"objective {self.objective!r} is not one of {', '.join(OBJECTIVES)}")
        if self.encoders not in ENCODER_KINDS:
            raise ConfigError(f"encoders {self.encoders!r} is not one of {', '.join(ENCODER_KINDS)}")
        if self.precision not in PRECISIONS:
            raise ConfigError(f"precision {self.precision!r} is not one of {', '.join(PRECISIONS)}")
        for name in ("batch_queries", "accumulation", "steps", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ConfigError(f"encoder training: {name} is {getattr(self, name)}; give 1 or more")
        if self.train_layers is not None and self.train_layers < 1:
            raise ConfigError(
                f"--train-layers is {self.train_layers}; give 1 or more (or leave it out for every layer)"
            )
        if self.max_contexts is not None and self.max_contexts < 2:
            raise ConfigError(f"--max-contexts is {self.max_contexts}; give 2 or more (or leave it out for all)")

    def identity(self) -> dict[str, Any]:
        """The settings that change what is learnt (the model's key): not where, how long in minutes, or
        how often it checkpoints."""
        skip = {"device", "max_minutes", "checkpoint_every"}
        return {k: v for k, v in asdict(self).items() if k not in skip}


HARD_POOL = 20  # the frozen encoder's top papers per context that hard negatives are drawn from


# --- data ----------------------------------------------------------------------------------------


@dataclass
class TrainingContext:
    """One citing sentence of a training fold: its (masked) manuscript, its targets and what it must not push away."""

    sentence_id: str
    draft: list[str]  # the masked sentences of its paper in reading order, or [the sentence] without positions
    position: int  # the citing sentence's place in ``draft``
    targets: tuple[str, ...]  # the papers it cites (that have text)
    banned: frozenset[str]  # never its negatives: its targets, what its paper cites elsewhere, the paper itself
    fold: int  # which training fold (which noise sampler: the co-citations known at the fold's cutoff)
    hard: tuple[str, ...] = ()  # the frozen encoder's top papers for it that it does not cite


@dataclass
class EncoderTrainingData:
    """The training contexts, the papers' texts and body sentences, and one noise sampler per fold."""

    contexts: list[TrainingContext]
    texts: dict[str, str]  # paper id -> title and abstract
    body: dict[str, list[str]]  # paper id -> body sentences in reading order (full-text papers)
    samplers: list[NoiseSampler]
    data_hash: str = ""

    def __post_init__(self) -> None:
        if not self.data_hash:
            self.data_hash = self.digest()

    def digest(self) -> str:
        """sha256 over each context (id, draft, targets) and the text of every paper it cites: what a model saw."""
        h = hashlib.sha256()
        for c in self.contexts:
            h.update("\x1f".join([c.sentence_id, *c.draft, str(c.position), *c.targets, *c.hard]).encode())
            for t in c.targets:
                h.update(self.texts.get(t, "").encode())
        return h.hexdigest()[:16]


def training_data(
    store: GraphStore,
    settings: EncoderTrainingSettings,
    split: TrainSettings,
    *,
    hard_negatives: Callable[[list[str], list[int | None]], list[list[str]]] | None = None,
    progress: bool = False,
) -> EncoderTrainingData:
    """The contexts of the time split's training folds (``split``: the reranker's :class:`TrainSettings`, whose
    ``queries`` is ``scisummnet`` or ``store``), a seeded subset of ``max_contexts``, with their
    manuscripts, the papers' texts and body sentences, and the folds' noise samplers (drawn with
    ``split.power``).

    ``hard_negatives(contexts, years)``: for each masked citing sentence, the papers (ids) the frozen
    encoder ranks highest among those published up to its year (None: no hard negatives).
    """
    parts = [(name, frame, until) for name, (frame, until, extras) in split_frames(store, split).items() if extras]
    if not parts:
        raise DataError("the time split has no training fold: nothing to fine-tune the encoder on")
    texts_frame = paper_texts(store)
    texts = {str(i): str(t) for i, t in zip(texts_frame["id"], texts_frame["text"]) if str(t).strip()}
    frames = []
    for fold, (_, frame, _) in enumerate(parts):
        frame = frame.assign(fold=fold)
        frame = frame[[any(t in texts for t in targets) for targets in frame["targets"]]]
        frames.append(frame)
    chosen = pd.concat(frames, ignore_index=True)
    if chosen.empty:
        raise DataError(
            "no training citing sentence cites a paper with a title or an abstract: load the cited works' metadata "
            "and train again"
        )
    if settings.max_contexts is not None and len(chosen) > settings.max_contexts:
        chosen = chosen.sample(n=settings.max_contexts, random_state=settings.seed).sort_index()
    drafts = _drafts(store, chosen)
    contexts = []
    for row in chosen.itertuples():
        draft, position = drafts.get(str(row.sentence_id), ([str(row.context)], 0))
        targets = tuple(t for t in row.targets if t in texts)
        banned = frozenset([*row.targets, *row.cited_elsewhere, str(row.citing_id)])
        contexts.append(TrainingContext(str(row.sentence_id), draft, position, targets, banned, int(row.fold)))
    if hard_negatives is not None:
        years = [None if pd.isna(y) else int(y) for y in chosen["citing_year"]]
        for context, top in zip(contexts, hard_negatives([c.draft[c.position] for c in contexts], years)):
            context.hard = tuple(p for p in top if p not in context.banned and p in texts)[:HARD_POOL]
    citations = read_citations_with_years(store)
    samplers = [noise_sampler(citations, until, split) for _, _, until in parts]
    body = _body_sentences(store) if settings.body_sentences else {}
    log.info(
        "encoder training: %d contexts from %s, %d with a manuscript, %d papers with body sentences",
        len(contexts),
        ", ".join(name for name, _, _ in parts),
        sum(len(c.draft) > 1 for c in contexts),
        len(body),
    )
    return EncoderTrainingData(contexts, texts, body, samplers)


def _drafts(store: GraphStore, chosen: pd.DataFrame) -> dict[str, tuple[list[str], int]]:
    """Per citing sentence with a known place (``sid``) in its paper: the paper's sentences in reading order,
    each with the sentence's targets masked, and its position among them."""
    citing = sorted(set(chosen["citing_id"].astype(str)))
    rows = pd.DataFrame(
        [
            r
            for b in range(0, len(citing), 2000)
            for r in store.query("sentences_of_papers", {"ids": citing[b : b + 2000]})
        ],
        columns=["paper_id", "id", "sid", "section", "text"],
    )
    rows = rows[rows["sid"].notna()]
    if rows.empty:
        return {}
    by_paper = {p: g.sort_values("sid") for p, g in rows.groupby("paper_id", sort=False)}
    wanted = chosen[chosen["sentence_id"].isin(set(rows["id"]))]
    cited = sorted({t for targets in wanted["targets"] for t in targets})
    authors = author_lists(store, cited)
    years = {str(r["id"]): r["year"] for r in store.query("paper_by_ids", {"ids": cited})} if cited else {}
    out: dict[str, tuple[list[str], int]] = {}
    for row in wanted.itertuples():
        group = by_paper[str(row.citing_id)]
        ids = group["id"].astype(str).tolist()
        draft = clean_texts(group["text"]).tolist()
        for target in row.targets:
            first, *others = authors.get(target, [[]])
            year = years.get(target)
            year = None if year is None or pd.isna(year) else int(year)
            draft = [mask_citance(s, None, first, year, spellings=others)[0] for s in draft]
        position = ids.index(str(row.sentence_id))
        draft[position] = str(row.context)  # the query's own sentence as the split masked it
        out[str(row.sentence_id)] = (draft, position)
    return out


def _body_sentences(store: GraphStore) -> dict[str, list[str]]:
    body = pd.DataFrame(
        store.query("body_sentences", {"section": ABSTRACT_SECTION}), columns=["paper_id", "sid", "text"]
    )
    body = body.assign(text=clean_texts(body["text"]))
    body = body[body["text"] != ""]
    return {str(p): g["text"].tolist() for p, g in body.groupby("paper_id", sort=False)}


# --- the model -----------------------------------------------------------------------------------


class _Tower(torch.nn.Module):
    """A transformer with mean pooling and L2 normalisation: :math:`e(x)` of :mod:`gnn.text.encoder`, with gradients."""

    model: Any  # a transformers PreTrainedModel

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state.float()  # (B, T, d)
        weights = attention_mask.unsqueeze(-1).float()  # (B, T, 1)
        pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)  # (B, d)
        return torch.nn.functional.normalize(pooled, p=2, dim=1)


@dataclass
class StepBatch:
    """One micro-batch: query texts, paper texts, and per instance its positives, weights and negatives."""

    queries: list[str]
    papers: list[str]  # paper ids; texts in ``paper_texts``
    paper_texts: list[str]
    instance_query: list[int]  # per instance: its query
    positives: list[list[int]]  # per instance: paper positions
    weights: list[list[float]]
    negatives: list[list[int]]
    triples: list[tuple[int, int, int]] = field(default_factory=list)  # (target, partner, noise) positions
    pairs: int = 0  # (context, target) pairs in the batch
    sentence_ids: list[str] = field(default_factory=list)  # per query: its citing sentence


def step_batch(data: EncoderTrainingData, settings: EncoderTrainingSettings, step: int, micro: int) -> StepBatch:
    """The contexts of micro-batch ``micro`` of step ``step`` with everything sampled for it (module docstring),
    every draw seeded by ``(seed, step, micro)``: the same step draws the same whether or not the run resumed."""
    s = settings
    per_step = s.batch_queries * s.accumulation
    epoch_size = max(len(data.contexts) // per_step, 1) * per_step
    absolute = (step * s.accumulation + micro) * s.batch_queries  # contexts drawn before this micro-batch
    epoch, offset = divmod(absolute, epoch_size)
    order = np.random.default_rng([s.seed, epoch]).permutation(len(data.contexts))
    picked = [data.contexts[i % len(data.contexts)] for i in order[offset : offset + s.batch_queries]]
    rng = random.Random(f"{s.seed}:{step}:{micro}")
    papers: dict[str, int] = {}

    def paper(pid: str) -> int:
        return papers.setdefault(pid, len(papers))

    queries = [
        manuscript_context(c.draft, c.position, supplemental=s.supplemental, seed=rng.randrange(2**31))
        if len(c.draft) > 1
        else c.draft[c.position]
        for c in picked
    ]
    with_partners = s.objective in ("target", "source", "source_target")
    source = s.objective in ("source", "source_target")
    partners: list[list[int]] = []  # per context: partner positions
    triple_targets: list[tuple[int, int]] = []  # (target, partner) positions
    noise: list[int] = []
    for c in picked:
        for t in c.targets:
            paper(t)
    for k, c in enumerate(picked):
        sampler = data.samplers[c.fold]
        sampler.generator.manual_seed(hash_seed(s.seed, step, micro, k))
        own: list[int] = []
        known = [t for t in c.targets if sampler.noise.ids.get_indexer([t])[0] >= 0]
        if with_partners and known and s.partners_per_target:
            exclude_codes = [int(x) for x in sampler.noise.ids.get_indexer(sorted(c.banned)) if x >= 0]
            drawn = sampler.positives(
                sampler.noise.index(known), s.partners_per_target, exclude=[exclude_codes] * len(known)
            )
            for target, row in zip(known, drawn.tolist()):
                for code in row:
                    pid = str(sampler.noise.ids[code]) if code >= 0 else ""
                    if pid and pid in data.texts and pid not in c.banned:
                        own.append(paper(pid))
                        triple_targets.append((papers[target], papers[pid]))
        partners.append(sorted(set(own)))
        if c.hard and s.hard_negatives:
            for pid in rng.sample(list(c.hard), min(s.hard_negatives, len(c.hard))):
                paper(pid)
    if s.noise_negatives:
        sampler = data.samplers[picked[0].fold]
        sampler.generator.manual_seed(hash_seed(s.seed, step, micro, -1))
        first = [t for t in picked[0].targets if sampler.noise.ids.get_indexer([t])[0] >= 0][:1]
        if first:
            banned_all = sorted(set().union(*(c.banned for c in picked)))
            codes = [int(x) for x in sampler.noise.ids.get_indexer(banned_all) if x >= 0]
            drawn = sampler.negatives(sampler.noise.index(first), s.noise_negatives, exclude=[codes])[0].tolist()
            for code in drawn:
                pid = str(sampler.noise.ids[code]) if code >= 0 else ""
                if pid and pid in data.texts:
                    noise.append(paper(pid))
    ids = list(papers)
    texts = [
        body_sampled_text(data.texts[p], data.body[p], sentences=s.body_sentences, seed=rng.randrange(2**31), key=p)
        if p in data.body and s.body_sentences
        else data.texts[p]
        for p in ids
    ]
    batch = StepBatch(queries, ids, texts, [], [], [], [], sentence_ids=[c.sentence_id for c in picked])
    for k, c in enumerate(picked):
        target_pos = [papers[t] for t in c.targets]
        batch.pairs += len(target_pos)
        keep_out = (
            set(target_pos)
            | ({papers[p] for p in c.banned if p in papers})
            | (set(partners[k]) if with_partners else set())
        )
        negatives = [j for j in range(len(ids)) if j not in keep_out]
        if s.objective == "single_positive":
            for t in target_pos:
                batch.instance_query.append(k)
                batch.positives.append([t])
                batch.weights.append([1.0])
                batch.negatives.append(negatives + [o for o in target_pos if o != t])
            continue
        positives, weights = list(target_pos), [1.0] * len(target_pos)
        if source:
            positives += partners[k]
            weights += [s.partner_weight] * len(partners[k])
        batch.instance_query.append(k)
        batch.positives.append(positives)
        batch.weights.append(weights)
        batch.negatives.append(negatives)
    if s.objective in ("target", "source_target") and noise:
        batch.triples = [(t, j, noise[n % len(noise)]) for n, (t, j) in enumerate(triple_targets)]
    return batch


def hash_seed(*parts: int) -> int:
    """A 63-bit seed from integers (torch generators take one integer)."""
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(), "big") >> 1


def batch_loss(queries: torch.Tensor, papers: torch.Tensor, batch: StepBatch, margin: float) -> torch.Tensor:
    """:func:`gnn.rerank.model.objective_loss` of a micro-batch from its query vectors ``[B, d]`` and paper
    vectors ``[M, d]`` (both unit length): scores are cosines, padding positives weigh 0, padding negatives are -inf."""
    scores = queries @ papers.T  # [B, M]
    rows = scores[torch.as_tensor(batch.instance_query, dtype=torch.int64, device=scores.device)]  # [I, M]
    width = max(max(len(p) for p in batch.positives), 1)
    index = torch.zeros((len(rows), width), dtype=torch.int64, device=scores.device)
    weight = torch.zeros((len(rows), width), dtype=torch.float32, device=scores.device)
    negative_mask = torch.zeros(rows.shape, dtype=torch.bool, device=scores.device)
    for i, (pos, w, neg) in enumerate(zip(batch.positives, batch.weights, batch.negatives)):
        index[i, : len(pos)] = torch.as_tensor(pos, dtype=torch.int64)
        weight[i, : len(pos)] = torch.as_tensor(w, dtype=torch.float32)
        if neg:
            negative_mask[i, torch.as_tensor(neg, dtype=torch.int64)] = True
    positive = rows.gather(1, index)  # [I, P]
    negative = torch.where(negative_mask, rows, -torch.inf)  # [I, M]
    target_positive = target_negative = None
    if batch.triples:
        t = torch.as_tensor(batch.triples, dtype=torch.int64, device=scores.device)  # [T, 3]
        anchor = papers[t[:, 0]]
        target_positive = (anchor * papers[t[:, 1]]).sum(-1)
        target_negative = (anchor * papers[t[:, 2]]).sum(-1)
    return objective_loss(positive, weight, negative, target_positive, target_negative, margin=margin)


# --- training ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncoderTrainingReport:
    folder: str  # where the model is
    steps: int  # optimiser steps taken in all (with resumed ones)
    planned_steps: int
    resumed_from: int  # the checkpoint's step this run started from (0: a fresh start)
    seconds: float  # this run's training time
    pairs_per_second: float  # (context, target) pairs through forward and backward per second, this run
    losses: list[float]  # mean loss per checkpoint interval, from the first step
    data_hash: str
    stopped_early: bool  # max_minutes ran out before the planned steps


class EncoderTrainer:
    """Fine-tunes ``base`` (a local model folder) on :class:`EncoderTrainingData` (module docstring)."""

    def __init__(self, base: str, settings: EncoderTrainingSettings, out_root: Path) -> None:
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        self.base, self.settings, self.out_root = base, settings, out_root
        self.device = select_device(settings.device)
        local = Path(base).is_dir()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=local)
            towers = [_Tower(AutoModel.from_pretrained(base, local_files_only=local))]
            if settings.encoders == "dual":
                towers.append(_Tower(AutoModel.from_pretrained(base, local_files_only=local)))
        except OSError as exc:
            raise ConfigError(f"cannot load the encoder to fine-tune from {base!r}: {exc}") from exc
        if settings.train_layers is not None:
            for tower in towers:
                _freeze_below(tower.model, settings.train_layers)
        self.towers = torch.nn.ModuleList(towers).to(self.device)
        self.dtype = encoder_dtype(settings.precision, self.device)
        self.base_config = json.dumps(
            {k: v for k, v in towers[0].model.config.to_dict().items() if k != "_name_or_path"}, sort_keys=True
        )

    def _tower_list(self) -> list[_Tower]:
        return [tower for tower in self.towers if isinstance(tower, _Tower)]

    @property
    def query_tower(self) -> _Tower:
        return self.towers[0]  # type: ignore[return-value]

    @property
    def paper_tower(self) -> _Tower:
        return self.towers[-1]  # type: ignore[return-value]

    def key(self, data: EncoderTrainingData) -> str:
        """Hash of the base model, the settings that change what is learnt and the data."""
        text = json.dumps([self.base_config, self.settings.identity(), data.data_hash], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def folder(self, data: EncoderTrainingData) -> Path:
        return self.out_root / f"{Path(self.base).name}-{self.key(data)}"

    def _encode(self, tower: _Tower, texts: Sequence[str], max_length: int) -> torch.Tensor:
        tokens = self.tokenizer(list(texts), truncation=True, max_length=max_length, padding=True, return_tensors="pt")
        return tower(tokens["input_ids"].to(self.device), tokens["attention_mask"].to(self.device))

    def _autocast(self) -> Any:
        if self.dtype == torch.float32:
            return torch.autocast(self.device.type, enabled=False)
        return torch.autocast(self.device.type, dtype=self.dtype)

    def fit(
        self, data: EncoderTrainingData, *, progress: bool = False, stop_after: int | None = None
    ) -> EncoderTrainingReport:
        """Train (resuming from this key's checkpoint), save the model with its record, report.

        ``stop_after``: steps this run takes at most before it checkpoints and stops as ``max_minutes`` stops
        it (the model saved with the steps taken, the checkpoint kept for the next run)."""
        s = self.settings
        folder = self.folder(data)
        checkpoint = folder.with_name(folder.name + ".checkpoint")
        done = finetune_record(folder)
        if done is not None and int(done.get("steps", 0)) >= s.steps:  # trained already: same base, settings, data
            log.info("encoder training: %s holds this model already", folder)
            self._load(folder)
            return EncoderTrainingReport(
                str(folder),
                int(done["steps"]),
                s.steps,
                int(done["steps"]),
                0.0,
                0.0,
                list(done["losses"]),
                data.data_hash,
                False,
            )
        params = [p for p in self.towers.parameters() if p.requires_grad]
        decay = [p for p in params if p.ndim > 1]
        no_decay = [p for p in params if p.ndim <= 1]
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": s.weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=s.lr
        )
        warm = max(1, round(s.warmup * s.steps))

        def schedule(step: int) -> float:  # linear warm-up, then linear decay to 0 at the last step
            return (step + 1) / warm if step < warm else max(0.0, (s.steps - step) / max(1, s.steps - warm))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
        scaler = torch.amp.GradScaler("cuda", enabled=self.dtype == torch.float16)
        step, losses, interval = 0, list[float](), list[float]()
        state_file = checkpoint / "state.pt"
        if state_file.is_file():
            state = torch.load(state_file, map_location=self.device, weights_only=False)  # our own checkpoint
            if state.get("key") == self.key(data):
                self.towers.load_state_dict(state["towers"])
                optimizer.load_state_dict(state["optimizer"])
                scheduler.load_state_dict(state["scheduler"])
                scaler.load_state_dict(state["scaler"])
                step, losses = int(state["step"]), list(state["losses"])
                log.info("encoder training resumes at step %d of %d (%s)", step, s.steps, state_file)
        resumed_from = step
        start = time.perf_counter()
        pairs = 0
        stopped_early = False
        bar = tqdm(total=s.steps, initial=step, desc="train encoder", unit="step", disable=not progress)
        self.towers.train()
        while step < s.steps:
            torch.manual_seed(hash_seed(s.seed, step))  # dropout of this step, the same after a resume
            optimizer.zero_grad(set_to_none=True)
            total = 0.0
            for micro in range(s.accumulation):
                batch = step_batch(data, s, step, micro)
                with self._autocast():
                    q = self._encode(self.query_tower, batch.queries, s.query_max_length)
                    d = self._encode(self.paper_tower, batch.paper_texts, s.document_max_length)
                loss = batch_loss(q.float(), d.float(), batch, s.margin) / s.accumulation
                scaler.scale(loss).backward()
                total += float(loss.detach())
                pairs += batch.pairs
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, 1.0)  # one noisy micro-batch must not undo the base model
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            interval.append(total)
            bar.update(1)
            bar.set_postfix(loss=f"{total:.4f}")
            out_of_time = (s.max_minutes is not None and time.perf_counter() - start > 60 * s.max_minutes) or (
                stop_after is not None and step - resumed_from >= stop_after
            )
            if step % s.checkpoint_every == 0 or step == s.steps or out_of_time:
                losses.append(float(np.mean(interval)))
                interval = []
                if step < s.steps:
                    self._checkpoint(checkpoint, data, step, losses, optimizer, scheduler, scaler)
            if out_of_time and step < s.steps:
                stopped_early = True
                log.warning("encoder training stops at step %d of %d (its time budget); a rerun resumes", step, s.steps)
                break
        bar.close()
        seconds = time.perf_counter() - start
        report = EncoderTrainingReport(
            str(folder),
            step,
            s.steps,
            resumed_from,
            round(seconds, 1),
            round(pairs / max(seconds, 1e-9), 2),
            [round(x, 5) for x in losses],
            data.data_hash,
            stopped_early,
        )
        self.save(folder, data, report)
        if not stopped_early:
            shutil.rmtree(checkpoint, ignore_errors=True)
        return report

    def _load(self, folder: Path) -> None:
        """The towers' weights from a saved model folder (``shared``: the folder; ``dual``: its two)."""
        from transformers import AutoModel

        places = [folder] if self.settings.encoders == "shared" else [folder / "query", folder / "paper"]
        for place, tower in zip(places, self._tower_list(), strict=True):
            loaded = AutoModel.from_pretrained(place, local_files_only=True)
            tower.model.load_state_dict(loaded.state_dict())

    def _checkpoint(
        self,
        folder: Path,
        data: EncoderTrainingData,
        step: int,
        losses: list[float],
        optimizer: torch.optim.Optimizer,
        scheduler: torch.optim.lr_scheduler.LRScheduler,
        scaler: torch.amp.GradScaler,
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        state = {
            "key": self.key(data),
            "step": step,
            "losses": losses,
            "towers": self.towers.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": scaler.state_dict(),
        }
        tmp = folder / "state.pt.tmp"
        torch.save(state, tmp)
        tmp.replace(folder / "state.pt")

    def save(self, folder: Path, data: EncoderTrainingData, report: EncoderTrainingReport) -> Path:
        """The model (``dual``: ``query/`` and ``paper/``) with its tokenizer and record, put in place whole."""
        staging = staging_folder(folder)
        record = {
            "base": self.base,
            "key": self.key(data),
            "settings": self.settings.identity(),
            "data_hash": data.data_hash,
            "contexts": len(data.contexts),
            "steps": report.steps,
            "planned_steps": report.planned_steps,
            "losses": report.losses,
        }
        places = [staging] if self.settings.encoders == "shared" else [staging / "query", staging / "paper"]
        for place, tower in zip(places, self._tower_list()):
            place.mkdir(parents=True, exist_ok=True)
            tower.model.save_pretrained(place)
            self.tokenizer.save_pretrained(place)
            write_atomic(place / FINETUNE_RECORD, json.dumps(record, indent=2, sort_keys=True))
        write_atomic(staging / FINETUNE_RECORD, json.dumps(record, indent=2, sort_keys=True))
        publish_folder(staging, folder)
        return folder


def _freeze_below(model: Any, top: int) -> None:
    """Leave only the top ``top`` transformer layers of a BERT-style ``model`` trainable (its pooler is unused)."""
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is None:
        raise ConfigError(
            "--train-layers needs a BERT-style encoder (model.encoder.layer); leave it out for this model"
        )
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    for layer in list(layers)[len(layers) - top :] if top else []:
        for parameter in layer.parameters():
            parameter.requires_grad_(True)


def frozen_neighbours(
    encoder: Any, vectors: np.ndarray, ids: np.ndarray, years: np.ndarray, k: int = HARD_POOL
) -> Callable[[list[str], list[int | None]], list[list[str]]]:
    """Hard negatives as :func:`training_data` takes them: for each context, the ``k + 10`` papers of
    ``vectors`` (unit rows, ``years`` ascending like the retrieval index's) the frozen ``encoder`` scores
    highest among those published up to the context's year."""

    def top(contexts: list[str], context_years: list[int | None]) -> list[list[str]]:
        queries = encoder.encode(contexts)
        out: list[list[str]] = []
        for begin in range(0, len(queries), 256):
            scores = queries[begin : begin + 256] @ vectors.T  # [b, n]
            for row, year in zip(scores, context_years[begin : begin + 256]):
                if year is not None:
                    row[years > year] = -np.inf
                depth = min(k + 10, len(row) - 1)  # argpartition's kth must lie inside the row
                best = np.argpartition(-row, depth)[: depth + 1]
                best = best[np.argsort(-row[best])]
                out.append([str(ids[i]) for i in best if np.isfinite(row[i])])
        return out

    return top


def put_in_service(pointer: Path, folder: Path, report: dict[str, Any]) -> None:
    """Make ``folder`` (a shared fine-tuned encoder) the store's encoder: ``<db>.encoder.json``."""
    if (folder / "query").is_dir():
        raise ConfigError(
            f"{folder} holds two encoders (--encoders dual): the service encodes queries and papers with one model; "
            "train with --encoders shared to serve the fine-tuned encoder"
        )
    write_atomic(pointer, json.dumps({"model": str(folder), **report}, indent=2, sort_keys=True))


__all__ = [
    "ENCODER_KINDS",
    "HARD_POOL",
    "EncoderTrainer",
    "EncoderTrainingData",
    "EncoderTrainingReport",
    "EncoderTrainingSettings",
    "StepBatch",
    "TrainingContext",
    "batch_loss",
    "frozen_neighbours",
    "hash_seed",
    "put_in_service",
    "step_batch",
    "training_data",
]
