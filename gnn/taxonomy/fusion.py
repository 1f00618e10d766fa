r"""Taxonomy fusion, both SymTax variants: a vector mean, or a GNN trained by link prediction.

SymTax (Goyal et al., 2024, https://arxiv.org/abs/2406.01606, §3) fuses the flat arXiv taxonomy
with the ACM hierarchy it maps into. With text vectors :math:`x_v` of every class
(:mod:`gnn.taxonomy.graph`):

**vector** (``method="vector"``). An ACM class keeps its own vector (``acm_vector="own"``, the
default) or takes the mean over itself and its ancestors :math:`\mathrm{anc}(a)` along BROADER
(``acm_vector="ancestors"``); an arXiv category takes the mean of its own vector and the fused
vectors of the ACM classes :math:`M(c)` it MAPS_TO:

.. math::
    f_a = \frac{x_a + \sum_{b \in \mathrm{anc}(a)} x_b}{1 + |\mathrm{anc}(a)|}
    \quad(\text{or } f_a = x_a), \qquad
    f_c = \frac{x_c + \sum_{a \in M(c)} f_a}{1 + |M(c)|}

(with "own", :math:`f_c` is SymTax's mean of the category's and its mapped classes' vectors).
**graph** (``method="gat"`` or ``"appnp"``): :class:`~gnn.taxonomy.fusion_models.GATFusion` or
:class:`~gnn.taxonomy.fusion_models.APPNPFusion` over the joint graph (BROADER and MAPS_TO, both
directions), initialised with the text vectors and trained self-supervised by link prediction:

.. math::
    \mathcal{L} = -\frac{1}{|E^+|}\sum_{(u,v) \in E^+} \log \sigma(\ell(u,v))
                  -\frac{1}{|E^-|}\sum_{(u,v) \in E^-} \log\big(1 - \sigma(\ell(u,v))\big)

with :math:`\ell` the scaled cosine of :class:`~gnn.taxonomy.fusion_models.LinkScorer`, :math:`E^+` the
training edges and :math:`E^-` as many node pairs drawn uniformly from the non-edges each epoch
(:func:`torch_geometric.utils.negative_sampling`). Given edges are split into train / validation /
test (:func:`~gnn.taxonomy.links.split_links`; inferred MAPS_TO edges only ever train: text similarity made them, so
predicting them from text would flatter every method). Training stops when validation AUC has
not improved for ``patience`` epochs and keeps the best epoch (epoch 0, the untrained model,
included). The written vectors come from the best model run over *all* edges.

Every fused vector is L2-normalised, so all variants live on the unit sphere of the text space and
cosines with paper embeddings mean the same thing for each. Trained models are saved under
``$CITEGRAPH_CACHE/models/`` named by a hash of their settings and their input data
(:func:`data_hash`); a re-run with the same settings on the same taxonomy loads the model
instead of retraining.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.utils import negative_sampling
from tqdm.auto import tqdm

from gnn.device import select_device
from gnn.taxonomy.fusion_models import APPNPFusion, GATFusion, LinkScorer
from gnn.taxonomy.graph import JointTaxonomy
from gnn.taxonomy.links import BROADER_KIND, MAPS_TO_KIND, LinkSplit, link_metrics, split_links
from graph.errors import ConfigError
from graph.files import StoreFiles

log = logging.getLogger(__name__)

FUSIONS = ("vector", "gat", "appnp")
ACM_VECTORS = ("own", "ancestors")


@dataclass(frozen=True)
class FusionSettings:
    """Settings of the taxonomy fusion (``citegraph compute taxonomy --fusion``)."""

    # vector: SymTax's mean; gat / appnp: a GNN trained by link prediction on the joint graph.
    method: str = field(
        default="vector",
        metadata={
            "help": "taxonomy fusion: SymTax's vector mean, or a GAT / APPNP trained by link prediction "
            "(default: %(default)s)",
            "choices": FUSIONS,
        },
    )
    # Vector fusion of ACM classes: "own" keeps the text vector; "ancestors" averages it with the
    # class's BROADER ancestors. Measured in docs/results.md; "own" is SymTax's formula.
    acm_vector: str = "own"
    # GNN sizes. GAT: `hidden` per head x `heads` in the first layer; APPNP: the MLP's hidden size.
    hidden: int = 64
    heads: int = 4
    # APPNP: K propagation steps with teleport α (Klicpera et al. use K=10, α=0.1).
    K: int = 10
    alpha: float = 0.1
    # Dropout on features (and GAT attention): the graph is small (≈2.7k nodes), the model is not.
    dropout: float = 0.2
    lr: float = 0.005
    weight_decay: float = 5e-4
    # Early stopping: at most max_epochs; stop after `patience` epochs without a better validation AUC.
    max_epochs: int = 300
    patience: int = 30
    # Shares of the given (non-inferred) taxonomy edges held out for validation and for test.
    val_fraction: float = 0.1
    test_fraction: float = 0.1
    # One seed for the split, the negatives, the initialisation and dropout.
    seed: int = 0
    # "cpu", "cuda", "cuda:N", or None for CUDA when present.
    device: str | None = None

    def __post_init__(self) -> None:
        if self.method not in FUSIONS:
            raise ConfigError(f"unknown fusion {self.method!r}; use one of {', '.join(FUSIONS)}")
        if self.acm_vector not in ACM_VECTORS:
            raise ConfigError(f"unknown acm_vector {self.acm_vector!r}; use one of {', '.join(ACM_VECTORS)}")
        if not (0 < self.val_fraction < 0.5 and 0 < self.test_fraction < 0.5):
            raise ConfigError("val_fraction and test_fraction must each lie in (0, 0.5) (default 0.1)")
        if self.max_epochs < 1 or self.patience < 1:
            raise ConfigError("max_epochs and patience must be at least 1 (defaults 300 and 30)")

    def model_config(self) -> dict[str, Any]:
        """What the trained model depends on (the device does not: results are the same up to float error)."""
        config = asdict(self)
        config.pop("device")
        return config


# vector fusion ---------------------------------------------------------------------------------
def vector_fusion(
    features: np.ndarray, broader: np.ndarray, maps_to: np.ndarray, *, acm_vector: str = "own"
) -> np.ndarray:
    """SymTax's vector fusion (module docstring, :math:`f_a` and :math:`f_c`), L2-normalised rows.

    ``broader``: int [m, 2] (child, parent); ``maps_to``: int [k, 2] (category, ACM class).
    A node with no ancestors and no mapping keeps its own (normalised) vector.
    """
    if acm_vector not in ACM_VECTORS:
        raise ConfigError(f"unknown acm_vector {acm_vector!r}; use one of {', '.join(ACM_VECTORS)}")
    n = len(features)
    x = features.astype(np.float64)
    fused = x.copy()
    if acm_vector == "ancestors" and len(broader):
        parent = sp.csr_matrix((np.ones(len(broader)), (broader[:, 0], broader[:, 1])), shape=(n, n))
        closure = parent.copy()
        step = parent.copy()
        for _ in range(n):  # paths get longer each step; a DAG of depth d stops after d steps
            step = ((step @ parent) > 0).astype(np.float64)
            if step.nnz == 0:
                break
            closure = ((closure + step) > 0).astype(np.float64)
        ancestors = sp.csr_matrix(closure)
        fused = (x + ancestors @ x) / (1.0 + np.asarray(ancestors.sum(axis=1))).reshape(-1, 1)
    if len(maps_to):
        mapped = sp.csr_matrix((np.ones(len(maps_to)), (maps_to[:, 0], maps_to[:, 1])), shape=(n, n))
        mapped.data[:] = 1.0  # a repeated edge counts once
        has = np.asarray(mapped.sum(axis=1)).ravel() > 0
        mean = (x + mapped @ fused) / (1.0 + np.asarray(mapped.sum(axis=1))).reshape(-1, 1)
        fused[has] = mean[has]
    norms = np.linalg.norm(fused, axis=1, keepdims=True).clip(min=1e-12)  # clip: an all-zero input row stays zero
    return (fused / norms).astype(np.float32)


# graph fusion ----------------------------------------------------------------------------------
def build_model(settings: FusionSettings, in_channels: int, out_channels: int) -> nn.Module:
    if settings.method == "gat":
        return GATFusion(
            in_channels, out_channels, hidden_channels=settings.hidden, heads=settings.heads, dropout=settings.dropout
        )
    if settings.method == "appnp":
        return APPNPFusion(
            in_channels,
            out_channels,
            hidden_channels=settings.hidden * settings.heads,
            K=settings.K,
            alpha=settings.alpha,
            dropout=settings.dropout,
        )
    raise ConfigError(f"{settings.method!r} is not a graph fusion; use gat or appnp")


def seed_everything(seed: int) -> None:
    """Seed Python's ``random`` (PyG's negative sampling), NumPy and torch (init, dropout)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class TrainedFusion:
    model: nn.Module
    scorer: LinkScorer
    epochs: int  # epochs run (including the patience tail)
    best_epoch: int  # 0: the untrained model was best on validation
    seconds: float  # training time
    history: list[tuple[int, float, float]]  # (epoch, training loss, validation AUC)


def train_graph_fusion(
    features: np.ndarray, split: LinkSplit, settings: FusionSettings, out_channels: int, *, progress: bool = False
) -> TrainedFusion:
    """Train :func:`build_model` by link prediction (module docstring, :math:`\\mathcal{L}`) with early stopping."""
    device = select_device(settings.device)
    seed_everything(settings.seed)
    model = build_model(settings, features.shape[1], out_channels).to(device)
    scorer = LinkScorer().to(device)
    optimizer = torch.optim.Adam(
        [*model.parameters(), *scorer.parameters()], lr=settings.lr, weight_decay=settings.weight_decay
    )
    x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32)).to(device)
    train_ei = torch.from_numpy(split.message_edges()).to(device)
    positives = torch.from_numpy(split.edges(0).T.copy()).to(device)  # (2, P)
    n = x.size(0)

    def validation_auc() -> float:
        model.eval()
        with torch.no_grad():
            z = model(x, train_ei).cpu().numpy()
        return link_metrics(z, split, "val")["auc"]

    start = time.perf_counter()
    best_auc, best_epoch = validation_auc(), 0
    best_state = copy.deepcopy((model.state_dict(), scorer.state_dict()))
    history: list[tuple[int, float, float]] = [(0, float("nan"), best_auc)]
    bar = tqdm(range(1, settings.max_epochs + 1), desc=f"fusion {settings.method}", unit="epoch", disable=not progress)
    epoch = 0
    for epoch in bar:
        model.train()
        scorer.train()
        optimizer.zero_grad()
        z = model(x, train_ei)  # (N, out)
        negatives = negative_sampling(train_ei, num_nodes=n, num_neg_samples=positives.size(1))  # (2, ≤P)
        logits = scorer(z, torch.cat([positives, negatives], dim=1))
        labels = torch.cat([torch.ones(positives.size(1)), torch.zeros(negatives.size(1))]).to(device)
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        loss.backward()
        optimizer.step()
        auc = validation_auc()
        history.append((epoch, float(loss.item()), auc))
        bar.set_postfix(loss=f"{loss.item():.3f}", val_auc=f"{auc:.4f}")
        if auc > best_auc:
            best_auc, best_epoch = auc, epoch
            best_state = copy.deepcopy((model.state_dict(), scorer.state_dict()))
        elif epoch - best_epoch >= settings.patience:
            break
    bar.close()
    model.load_state_dict(best_state[0])
    scorer.load_state_dict(best_state[1])
    model.eval()
    return TrainedFusion(model, scorer, epoch, best_epoch, time.perf_counter() - start, history)


# the fusion step -------------------------------------------------------------------------------
def data_hash(taxonomy: JointTaxonomy, features: np.ndarray) -> str:
    """Hash of what a fusion is computed from: node keys, features, edges (with their inferred flags)."""
    h = hashlib.sha256()
    h.update("\n".join(f"{label}\t{key}" for label, key in zip(taxonomy.labels, taxonomy.keys)).encode())
    h.update(np.ascontiguousarray(features, dtype=np.float32).tobytes())
    for array in (taxonomy.broader, taxonomy.maps_to, taxonomy.maps_inferred):
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def model_path(settings: FusionSettings, digest: str, cache_root: Path | None = None) -> Path:
    """``$CITEGRAPH_CACHE/models/taxonomy-<method>-<hash of settings and data>.pt``."""
    key = hashlib.sha256((json.dumps(settings.model_config(), sort_keys=True) + digest).encode()).hexdigest()[:16]
    models = StoreFiles().models if cache_root is None else StoreFiles(cache=cache_root).models
    return models / f"taxonomy-{settings.method}-{key}.pt"


@dataclass(frozen=True)
class FusionResult:
    method: str
    fused: np.ndarray  # float32 [n, out]: unit vectors, node order of the taxonomy
    metrics: dict[str, dict[str, float]]  # "val"/"test" -> auc, ap (test also auc_hard, ap_hard)
    baseline: dict[str, dict[str, float]]  # the same for the raw text vectors
    seconds: float  # training (0 for vector fusion)
    epochs: int
    best_epoch: int
    held_out: dict[str, int]  # validation / test edge counts
    model_file: str | None  # saved model (graph fusion)
    from_cache: bool  # the model was loaded, not trained


def fuse(
    taxonomy: JointTaxonomy,
    features: np.ndarray,
    settings: FusionSettings,
    *,
    out_channels: int | None = None,
    cache_root: Path | None = None,
    progress: bool = False,
) -> FusionResult:
    """Fused vectors of every node, and link-prediction metrics on held-out edges (see the module docstring)."""
    out_channels = out_channels or features.shape[1]
    if settings.method == "vector" and out_channels != features.shape[1]:
        raise ConfigError(
            f"vector fusion keeps the encoder's size ({features.shape[1]}), but the store wants {out_channels}-d "
            "taxonomy vectors; use --fusion gat or appnp, or a store with CITEGRAPH_TAXONOMY_DIM equal to the encoder's"
        )
    split = split_links(
        taxonomy, val_fraction=settings.val_fraction, test_fraction=settings.test_fraction, seed=settings.seed
    )
    held_out = {"val": int((split.part == 1).sum()), "test": int((split.part == 2).sum())}
    baseline = {part: link_metrics(features, split, part) for part in ("val", "test")}
    if settings.method == "vector":
        start = time.perf_counter()
        kwargs = {"acm_vector": settings.acm_vector}
        on_train = vector_fusion(features, split.edges(0, BROADER_KIND), split.edges(0, MAPS_TO_KIND), **kwargs)
        fused = vector_fusion(features, taxonomy.broader, taxonomy.maps_to, **kwargs)
        metrics = {part: link_metrics(on_train, split, part) for part in ("val", "test")}
        return FusionResult(
            "vector", fused, metrics, baseline, time.perf_counter() - start, 0, 0, held_out, None, False
        )
    path = model_path(settings, data_hash(taxonomy, features), cache_root)
    fitted = _load_or_train(path, features, split, settings, out_channels, progress=progress)
    device = select_device(settings.device)
    x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32)).to(device)
    with torch.no_grad():
        on_train = fitted.model(x, torch.from_numpy(split.message_edges()).to(device)).cpu().numpy()
        fused = fitted.model(x, torch.from_numpy(split.message_edges(everything=True)).to(device)).cpu().numpy()
    metrics = {part: link_metrics(on_train, split, part) for part in ("val", "test")}
    if fitted.trained is not None:
        _save_model(
            path, fitted.trained, settings, data_hash(taxonomy, features), features.shape[1], out_channels, metrics
        )
    return FusionResult(
        settings.method,
        fused.astype(np.float32),
        metrics,
        baseline,
        fitted.seconds,
        fitted.epochs,
        fitted.best_epoch,
        held_out,
        str(path),
        fitted.trained is None,
    )


@dataclass
class _FittedFusion:
    """A graph fusion model ready to run: loaded from the cache, or just trained (``trained`` set)."""

    model: nn.Module
    epochs: int
    best_epoch: int
    seconds: float  # the training time (of the run that saved it, when loaded)
    trained: TrainedFusion | None  # None: loaded from the cache


def _load_or_train(
    path: Path, features: np.ndarray, split: LinkSplit, settings: FusionSettings, out_channels: int, *, progress: bool
) -> _FittedFusion:
    """The model saved at ``path`` (same settings, same data), else one trained now."""
    if not path.is_file():
        trained = train_graph_fusion(features, split, settings, out_channels, progress=progress)
        return _FittedFusion(trained.model, trained.epochs, trained.best_epoch, trained.seconds, trained)
    device = select_device(settings.device)
    saved = torch.load(path, map_location=device, weights_only=False)
    model = build_model(settings, features.shape[1], out_channels).to(device)
    model.load_state_dict(saved["model"])
    model.eval()
    log.info("taxonomy fusion: loaded %s", path)
    return _FittedFusion(model, saved["epochs"], saved["best_epoch"], saved["seconds"], None)


def _save_model(
    path: Path,
    trained: TrainedFusion,
    settings: FusionSettings,
    digest: str,
    in_channels: int,
    out_channels: int,
    metrics: dict[str, dict[str, float]],
) -> None:
    """Save a just-trained model with what it was trained from and how it did (``torch.save``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "model": trained.model.state_dict(),
            "scorer": trained.scorer.state_dict(),
            "config": settings.model_config(),
            "data_hash": digest,
            "in_channels": in_channels,
            "out_channels": out_channels,
            "epochs": trained.epochs,
            "best_epoch": trained.best_epoch,
            "seconds": trained.seconds,
            "history": trained.history,
            "metrics": metrics,
        },
        path,
    )


__all__ = [
    "ACM_VECTORS",
    "FUSIONS",
    "FusionResult",
    "FusionSettings",
    "TrainedFusion",
    "data_hash",
    "fuse",
    "model_path",
    "train_graph_fusion",
    "vector_fusion",
]
