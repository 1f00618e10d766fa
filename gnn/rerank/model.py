r"""The reranker: a text-relevance part over the frozen bi-encoder plus the graph and taxonomy features.

**Scorer.** For a query with context vector :math:`e_q` and the citing paper's vector :math:`g_q`,
and a candidate with vector :math:`e_d` and features :math:`x_{qd}` (:mod:`gnn.rerank.features`):

.. math::
    s(q, d) = \underbrace{w^\top \mathrm{GELU}\bigl(W_t [\,Pe_q \odot Pe_d;\ |Pe_q - Pe_d|;\ Pg_q \odot Pe_d\,]\bigr)}_{\text{text}}
            + \underbrace{\mathrm{MLP}\bigl((x_{qd} - \mu)/\sigma\bigr)}_{\text{features}}

with :math:`P` a learned projection of the all-MiniLM-L6-v2 vectors (384 → ``projection``),
initialised from a seeded random orthogonal matrix, and :math:`\mu, \sigma` the features' training
means and deviations. The encoder itself stays frozen, so a query scores its 200–300 candidates in
about a millisecond on a CPU.

**Objectives** (margin :math:`m`, negatives :math:`N_q` = the prefetched non-targets, the hard
negatives of Medić & Šnajder 2020, plus papers drawn from :math:`p(i) \propto \mathrm{count}(i)^{3/4}`;
in the multi-positive objectives the query's co-cited partners :math:`J_q` are never in :math:`N_q`):

* single-positive triplet, the conventional baseline MP-BERT4CR compares with: one instance per
  (context, target), :math:`\operatorname{mean}_{t \in T_q,\ n \in N_q \cup T_q \setminus \{t\}} [m - s(q,t) + s(q,n)]_+` —
  an instance knows only its own target, so the context's other targets can be drawn as its negatives;
* triplet: :math:`\mathcal{L}_\mathrm{tri} = \operatorname{mean}_{t \in T_q, n \in N_q} [m - s(q,t) + s(q,n)]_+`
  over the targets :math:`T_q` the prefetch returned — already multi-positive over the context's own
  targets (no target is another's negative), without extra positives from co-citation;
* target-based (MP-BERT4CR, Zhang & Ma 2021, eq. 4): the triplet loss plus the targets pulling
  their co-cited partners, :math:`j \sim p(\cdot \mid t) \propto \mathrm{freq}(t,j)^{3/4}`, in the
  text part: :math:`\operatorname{mean}_{t, j, n} [m - s_\mathrm{text}(t, j) + s_\mathrm{text}(t, n)]_+`;
* source-based (eq. 5): the query pulls the targets *and* the partners,
  :math:`\operatorname{mean}_{p \in T_q \cup J_q, n \in N_q} [m - s(q,p) + s(q,n)]_+`, partners
  weighted by ``partner_weight``;
* source–target (eq. 6): source-based plus the target term of eq. 4.

Partners and popularity negatives are drawn once per query, seeded (:class:`gnn.cocitation.noise.NoiseSampler`),
from the co-citation counts known at the query's cutoff. Training is early-stopped on validation
MRR; the model is saved with its config, the feature names and the hash of the data it saw.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from gnn.device import select_device
from gnn.metrics import reciprocal_rank
from gnn.rerank.examples import QueryExample, ranked_ids
from gnn.rerank.features import FEATURE_NAMES
from graph.errors import ConfigError, DataError

log = logging.getLogger(__name__)

OBJECTIVES = ("single_positive", "triplet", "target", "source", "source_target")
# the objectives that draw co-cited partners as extra positives (MP-BERT4CR eq. 4–6)
WITH_PARTNERS = ("target", "source", "source_target")


@dataclass(frozen=True)
class RerankerSettings:
    """Model size and training of the reranker; defaults are the validated configuration."""

    # One of OBJECTIVES (module docstring). Over five seeds source–target ranks a little better (validation
    # MRR 0.492 vs 0.489, R@10 0.724 vs 0.716) but trains twice as long, and the service's LambdaMART on top
    # reads either score (docs/history.md): triplet stays the default.
    objective: str = "triplet"
    projection: int = 64  # size of the learned projection of the 384-d encoder vectors
    text_hidden: int = 64  # hidden units of the text part
    feature_hidden: int = 64  # hidden units of the feature MLP
    dropout: float = 0.1
    margin: float = 1.0  # m of every hinge
    partner_weight: float = 0.5  # weight of co-cited partners as positives (source-based objectives)
    pool_negatives: int = 64  # prefetched non-targets per query and step (resampled every epoch)
    lr: float = 2e-3
    weight_decay: float = 1e-4
    batch_queries: int = 64
    epochs: int = 30
    patience: int = 4  # epochs without a better validation MRR before stopping
    seed: int = 0
    device: str | None = None  # None: CUDA when available

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"objective {self.objective!r} is not one of {', '.join(OBJECTIVES)}")


class RerankerModel(nn.Module):
    r"""The scorer of the module docstring.

    Args:
        dim: size of the encoder vectors (384 for all-MiniLM-L6-v2).
        n_features: number of pair features (``len(FEATURE_NAMES)``).
        settings: sizes and dropout.

    Shapes: ``forward(context [B, dim], global_ [B, dim], candidates [B, N, dim], features [B, N, F]) -> [B, N]``.
    """

    feature_mean: torch.Tensor  # (F,) buffers: the training features' mean and deviation
    feature_std: torch.Tensor

    def __init__(self, dim: int, n_features: int, settings: RerankerSettings = RerankerSettings()) -> None:
        super().__init__()
        self.dim, self.n_features = dim, n_features
        generator = torch.Generator().manual_seed(settings.seed)
        self.project = nn.Linear(dim, settings.projection, bias=False)
        nn.init.orthogonal_(self.project.weight, generator=generator)
        self.text = nn.Sequential(
            nn.Linear(3 * settings.projection, settings.text_hidden),
            nn.GELU(),
            nn.Dropout(settings.dropout),
            nn.Linear(settings.text_hidden, 1),
        )
        self.features = nn.Sequential(
            nn.Linear(n_features, settings.feature_hidden),
            nn.GELU(),
            nn.Dropout(settings.dropout),
            nn.Linear(settings.feature_hidden, 1),
        )
        self.register_buffer("feature_mean", torch.zeros(n_features))
        self.register_buffer("feature_std", torch.ones(n_features))

    def text_score(
        self, anchor: torch.Tensor, other: torch.Tensor, global_: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Text part for anchors ``[..., dim]`` against ``other`` ``[..., dim]`` (broadcast); ``[...]``."""
        a, o = self.project(anchor), self.project(other)
        g = self.project(global_) if global_ is not None else torch.zeros_like(a)
        a, g = torch.broadcast_to(a, o.shape), torch.broadcast_to(g, o.shape)
        return self.text(torch.cat([a * o, (a - o).abs(), g * o], dim=-1)).squeeze(-1)

    def terms(
        self, context: torch.Tensor, global_: torch.Tensor, candidates: torch.Tensor, features: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The two terms of :math:`s(q, d)`, text and features, each ``[B, N]`` (shapes of :meth:`forward`)."""
        text = self.text_score(context[:, None, :], candidates, global_[:, None, :])  # [B, N]
        standardised = (features - self.feature_mean) / self.feature_std
        return text, self.features(standardised).squeeze(-1)

    def forward(
        self, context: torch.Tensor, global_: torch.Tensor, candidates: torch.Tensor, features: torch.Tensor
    ) -> torch.Tensor:
        text, feature_term = self.terms(context, global_, candidates, features)
        return text + feature_term


def hinge(positive: torch.Tensor, negative: torch.Tensor, margin: float, weight: torch.Tensor) -> torch.Tensor:
    r"""Weighted mean of :math:`[m - s_p + s_n]_+` over every valid (positive, negative) pair of each row.

    ``positive`` ``[B, P]``, ``negative`` ``[B, N]``; ``weight`` ``[B, P]`` (0 marks padding),
    negatives of ``-inf`` are padding. Returns a scalar (0 when no pair is valid).
    """
    valid_negative = torch.isfinite(negative)
    terms = (margin - positive[:, :, None] + torch.where(valid_negative, negative, 0.0)[:, None, :]).clamp(min=0)
    pair_weight = weight[:, :, None] * valid_negative[:, None, :]
    total = pair_weight.sum()
    return (terms * pair_weight).sum() / total if total > 0 else positive.sum() * 0.0


def objective_loss(
    positive: torch.Tensor,
    weight: torch.Tensor,
    negative: torch.Tensor,
    target_positive: torch.Tensor | None = None,
    target_negative: torch.Tensor | None = None,
    *,
    margin: float,
) -> torch.Tensor:
    r"""The objectives of the module docstring from scores.

    ``positive`` ``[B, P]`` query scores of the positives with ``weight`` ``[B, P]`` (1 for targets,
    ``partner_weight`` for co-cited partners in the source-based objectives, 0 for padding),
    ``negative`` ``[B, N]`` (``-inf`` for padding); for the target-based objectives also
    ``target_positive`` / ``target_negative`` ``[T]``, the text scores :math:`s_\mathrm{text}(t, j)`
    and :math:`s_\mathrm{text}(t, n)` of the triples. Which objective it is follows from what is
    passed: partners in ``weight`` make it source-based, triples make it target-based.
    """
    loss = hinge(positive, negative, margin, weight)
    if target_positive is not None and target_negative is not None and len(target_positive):
        loss = loss + (margin - target_positive + target_negative).clamp(min=0).mean()
    return loss


# --- training data ----------------------------------------------------------------------------


def data_hash(examples: Sequence[QueryExample]) -> str:
    """sha256 over each example's candidate ids, targets and features: what a model was trained on."""
    digest = hashlib.sha256()
    for ex in examples:
        digest.update("\x1f".join(ex.ids).encode())
        digest.update("\x1e".join(sorted(ex.targets)).encode())
        digest.update(np.ascontiguousarray(ex.features).tobytes())
    return digest.hexdigest()[:16]


# --- training ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingReport:
    objective: str
    epochs: int  # epochs run
    best_epoch: int
    validation_mrr: float  # the best, at best_epoch
    history: list[float]  # validation MRR per epoch
    seconds: float


def _tensor(values: np.ndarray, device: torch.device, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.as_tensor(values, dtype=dtype, device=device)


class RerankerTrainer:
    """Trains a :class:`RerankerModel` on :class:`QueryExample` lists (module docstring)."""

    def __init__(self, vectors: np.ndarray, settings: RerankerSettings = RerankerSettings()) -> None:
        self.settings = settings
        self.device = select_device(settings.device)
        # one zero row at the end stands for "not indexed" (row -1)
        padded = np.vstack([vectors, np.zeros((1, vectors.shape[1]), vectors.dtype)])
        self.vectors = _tensor(padded, self.device)

    def _vectors(self, rows: np.ndarray) -> torch.Tensor:
        return self.vectors[_tensor(rows, self.device, torch.int64)]

    def fit(
        self,
        train: Sequence[QueryExample],
        validation: Sequence[QueryExample],
        *,
        progress: bool = False,
    ) -> tuple[RerankerModel, TrainingReport]:
        s = self.settings
        start = time.perf_counter()
        torch.manual_seed(s.seed)
        rng = np.random.default_rng(s.seed)
        usable = [ex for ex in train if ex.label.any()]
        if not usable:
            raise DataError("no training query has a target among its candidates; nothing to learn from")
        model = RerankerModel(self.vectors.shape[1], len(FEATURE_NAMES), s).to(self.device)
        stacked = np.vstack([ex.features for ex in usable])
        model.feature_mean.copy_(_tensor(stacked.mean(0), self.device))
        model.feature_std.copy_(_tensor(stacked.std(0).clip(min=1e-3), self.device))
        optimizer = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
        history: list[float] = []
        best_state, best_mrr, best_epoch = None, -1.0, 0
        for epoch in range(1, s.epochs + 1):
            model.train()
            order = rng.permutation(len(usable))
            for begin in range(0, len(order), s.batch_queries):
                batch = [usable[i] for i in order[begin : begin + s.batch_queries]]
                loss = self._loss(model, batch, rng)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            mrr = evaluate_mrr(model, self, validation)
            history.append(mrr)
            log.info("reranker %s epoch %d: validation MRR %.4f", s.objective, epoch, mrr)
            if mrr > best_mrr + 1e-5:
                best_mrr, best_epoch = mrr, epoch
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            elif epoch - best_epoch >= s.patience:
                break
        assert best_state is not None
        model.load_state_dict(best_state)
        model.eval()
        report = TrainingReport(s.objective, len(history), best_epoch, best_mrr, history, time.perf_counter() - start)
        return model.cpu(), report

    def _loss(self, model: RerankerModel, batch: Sequence[QueryExample], rng: np.random.Generator) -> torch.Tensor:
        s = self.settings
        multi_source = s.objective in ("source", "source_target")
        with_targets = s.objective in ("target", "source_target")
        rows_p, feats_p, weights_p, rows_n, feats_n, anchors = [], [], [], [], [], []
        for ex, positives, negatives in self._instances(batch, rng):
            anchors.append(ex)
            p_rows, p_feats, p_weights = [ex.rows[positives]], [ex.features[positives]], [np.ones(len(positives))]
            n_rows, n_feats = [ex.rows[negatives]], [ex.features[negatives]]
            if multi_source and ex.extra_positive.any():
                p_rows.append(ex.extra_rows[ex.extra_positive])
                p_feats.append(ex.extra_features[ex.extra_positive])
                p_weights.append(np.full(int(ex.extra_positive.sum()), s.partner_weight))
            noise = ~ex.extra_positive
            n_rows.append(ex.extra_rows[noise])
            n_feats.append(ex.extra_features[noise])
            rows_p.append(np.concatenate(p_rows))
            feats_p.append(np.vstack(p_feats))
            weights_p.append(np.concatenate(p_weights))
            rows_n.append(np.concatenate(n_rows))
            feats_n.append(np.vstack(n_feats))
        context = _tensor(np.stack([ex.context for ex in anchors]), self.device)
        global_ = _tensor(np.stack([ex.global_ for ex in anchors]), self.device)
        pos_scores, pos_weight = self._padded_scores(model, context, global_, rows_p, feats_p, weights_p)
        neg_scores, _ = self._padded_scores(model, context, global_, rows_n, feats_n, None)
        target_pos = target_neg = None
        triples = [ex.triples for ex in batch if len(ex.triples)]
        if with_targets and triples:
            t = _tensor(np.vstack(triples), self.device, torch.int64)
            anchor = self.vectors[t[:, 0]]
            target_pos = model.text_score(anchor, self.vectors[t[:, 1]])
            target_neg = model.text_score(anchor, self.vectors[t[:, 2]])
        return objective_loss(pos_scores, pos_weight, neg_scores, target_pos, target_neg, margin=s.margin)

    def _instances(
        self, batch: Sequence[QueryExample], rng: np.random.Generator
    ) -> list[tuple[QueryExample, np.ndarray, np.ndarray]]:
        """The training instances of ``batch`` this step: (query, positive positions, negative positions).

        One per query, with all its prefetched targets as positives; in the single-positive objective one
        per (query, target), whose negatives may include the query's other targets.
        """
        out: list[tuple[QueryExample, np.ndarray, np.ndarray]] = []
        for ex in batch:
            positives = np.flatnonzero(ex.label)
            if self.settings.objective == "single_positive":
                out.extend(
                    (ex, positives[k : k + 1], self.pool_negatives(ex, rng, positive=int(p)))
                    for k, p in enumerate(positives)
                )
            else:
                out.append((ex, positives, self.pool_negatives(ex, rng)))
        return out

    def pool_negatives(self, ex: QueryExample, rng: np.random.Generator, positive: int | None = None) -> np.ndarray:
        """Positions in ``ex``'s pool that serve as negatives this step: at most ``pool_negatives`` non-targets.

        With ``positive`` (the single-positive objective: an instance knows only its own target, at that
        position) every other candidate may be a negative, the query's other targets included.
        In the multi-positive objectives the candidates drawn as the query's co-cited partners are left
        out: three in four partners are among the prefetched candidates (the co-citation channel
        proposes them), and a paper the objective treats as a positive — of the query (source-based)
        or of its target (target-based) — must not also be pushed away from the query as its hard
        negative.
        """
        excluded = ex.label if positive is None else np.arange(len(ex.ids)) == positive
        if self.settings.objective in WITH_PARTNERS and ex.extra_positive.any():
            partner_rows = ex.extra_rows[ex.extra_positive]
            excluded = excluded | (np.isin(ex.rows, partner_rows) & (ex.rows >= 0))
        negatives = np.flatnonzero(~excluded)
        if len(negatives) > self.settings.pool_negatives:
            negatives = rng.choice(negatives, self.settings.pool_negatives, replace=False)
        return negatives

    def _padded_scores(
        self,
        model: RerankerModel,
        context: torch.Tensor,
        global_: torch.Tensor,
        rows: list[np.ndarray],
        feats: list[np.ndarray],
        weights: list[np.ndarray] | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(max(len(r) for r in rows), 1)
        batch = len(rows)
        row_matrix = np.full((batch, width), -1, dtype=np.int64)
        feat_matrix = np.zeros((batch, width, len(FEATURE_NAMES)), dtype=np.float32)
        weight_matrix = np.zeros((batch, width), dtype=np.float32)
        for b, (r, f) in enumerate(zip(rows, feats)):
            row_matrix[b, : len(r)] = r
            feat_matrix[b, : len(r)] = f
            weight_matrix[b, : len(r)] = 1.0 if weights is None else weights[b]
        scores = model(context, global_, self._vectors(row_matrix), _tensor(feat_matrix, self.device))
        present = _tensor(weight_matrix, self.device) > 0
        return torch.where(present, scores, -torch.inf), _tensor(weight_matrix, self.device)

    def score(self, model: RerankerModel, ex: QueryExample) -> np.ndarray:
        """Scores of ``ex``'s pool (no extras)."""
        with torch.no_grad():
            model.eval()
            scores = model(
                _tensor(ex.context[None], self.device),
                _tensor(ex.global_[None], self.device),
                self._vectors(ex.rows[None]),
                _tensor(ex.features[None], self.device),
            )
        return scores[0].cpu().numpy()

    def score_many(self, model: RerankerModel, examples: Sequence[QueryExample], batch: int = 64) -> list[np.ndarray]:
        """:meth:`score` of every example, ``batch`` pools per forward pass (padded to the widest; one pass
        per pool spends most of its time in per-call overhead)."""
        out: list[np.ndarray] = []
        with torch.no_grad():
            model.eval()
            for begin in range(0, len(examples), batch):
                chunk = examples[begin : begin + batch]
                context = _tensor(np.stack([ex.context for ex in chunk]), self.device)
                global_ = _tensor(np.stack([ex.global_ for ex in chunk]), self.device)
                scores, _ = self._padded_scores(
                    model, context, global_, [ex.rows for ex in chunk], [ex.features for ex in chunk], None
                )
                matrix = scores.cpu().numpy()
                out.extend(matrix[k, : len(ex.ids)] for k, ex in enumerate(chunk))
        return out


def evaluate_mrr(model: RerankerModel, trainer: RerankerTrainer, examples: Sequence[QueryExample]) -> float:
    """Mean reciprocal rank of the first target over ``examples`` (0 where no target is a candidate)."""
    if not examples:
        return 0.0
    model = model.to(trainer.device)
    scores = trainer.score_many(model, examples)
    values = [reciprocal_rank(ranked_ids(s, ex.ids), ex.targets) for s, ex in zip(scores, examples, strict=True)]
    return float(np.mean(values))


# --- saving ------------------------------------------------------------------------------------


def save_reranker(model: RerankerModel, folder: Path, *, settings: RerankerSettings, info: dict[str, Any]) -> Path:
    """Write ``model.pt`` and ``config.json`` (settings, feature names, dims, ``info``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), folder / "model.pt")
    record = {
        "settings": {k: v for k, v in asdict(settings).items() if k != "device"},
        "features": list(FEATURE_NAMES),
        "dim": model.dim,
        **info,
    }
    (folder / "config.json").write_text(json.dumps(record, indent=2, sort_keys=True), encoding="utf-8")
    return folder


def load_reranker(folder: Path) -> tuple[RerankerModel, dict[str, Any]]:
    """The model saved in ``folder`` and its config; refuses one trained on other features."""
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise DataError(f"{folder}: no trained reranker (config.json missing); run `citegraph train reranker`")
    record = json.loads(config_path.read_text(encoding="utf-8"))
    if record.get("features") != list(FEATURE_NAMES):
        raise DataError(
            f"{folder}: the reranker was trained on other features than this version computes; "
            "rerun `citegraph train reranker`"
        )
    settings = RerankerSettings(**record["settings"])
    model = RerankerModel(int(record["dim"]), len(FEATURE_NAMES), settings)
    model.load_state_dict(torch.load(folder / "model.pt", map_location="cpu", weights_only=True))
    model.eval()
    return model, record


__all__ = [
    "OBJECTIVES",
    "RerankerModel",
    "RerankerSettings",
    "RerankerTrainer",
    "TrainingReport",
    "data_hash",
    "evaluate_mrr",
    "hinge",
    "load_reranker",
    "objective_loss",
    "save_reranker",
]
