r"""Poincaré embeddings of a hierarchy (Nickel & Kiela, 2017), with a Euclidean twin for comparison.

Nickel & Kiela (2017), "Poincaré Embeddings for Learning Hierarchical Representations" (NeurIPS),
embed the transitive closure :math:`D` of a hierarchy by maximising, over related pairs
:math:`(u, v) \in D`,

.. math::
    \mathcal{L} = \sum_{(u,v) \in D} \log \frac{e^{-d(u,v)}}{\sum_{v' \in \mathcal{N}(u) \cup \{v\}} e^{-d(u,v')}},
    \qquad \mathcal{N}(u) = \{v' : (u, v') \notin D,\ v' \ne u\},

with :math:`d` the Poincaré distance (:func:`gnn.hyperbolic.poincare.dist`). Here :math:`D` is read
symmetrically (each pair trains once from each end; negatives are nodes neither above nor below
:math:`u`), and :math:`\mathcal{N}(u)` is either a uniform sample of ``negatives`` nodes per pair
(the paper: 10) or, with ``negatives=None``, every unrelated node (an exact softmax; affordable
for taxonomies of a few thousand classes). The parameters are a geoopt ``ManifoldParameter`` on
the ball, optimised by ``RiemannianAdam`` (Bécigneul & Ganea, 2019, "Riemannian Adaptive
Optimization Methods"); the first ``burn_in`` epochs run at ``lr * burn_in_factor`` so that the
points find their angular layout before they move outwards (the paper's burn-in, §3).

**Stopping.** ``epochs`` is a cap: the refinement stops earlier once the loss has stopped
improving (:func:`converged`): with :math:`\bar L_t` the mean loss of the refinement epochs
:math:`t - W + 1, \ldots, t` (window :math:`W` = ``window``), it stops after epoch :math:`t` when

.. math::
    \frac{\bar L_{t-W} - \bar L_t}{|\bar L_{t-W}|} < \text{tolerance},

that is when the last :math:`W` epochs lowered the mean loss by less than the fraction ``tolerance``
of the :math:`W` before them (the burn-in does not count). Full batch and a seeded order make an
early stop the exact prefix of the capped run.

Initialisation: uniform in :math:`[-10^{-3}, 10^{-3}]^d` (the paper), or ``"tree"``: Sarkar's
combinatorial embedding of a spanning tree (:func:`gnn.hyperbolic.hierarchy.tree_embedding`; Sala et al.,
2018, "Representation Tradeoffs for Hyperbolic Embeddings"), which the loss then refines.

**Saved layouts.** A trained layout depends only on the hierarchy and the settings, so
:func:`cached_embedding` keeps it under a folder (``compute hyperbolic``:
``$CITEGRAPH_CACHE/models/hyperbolic_classes/``) as ``<key>.pt``, the key a hash of the hierarchy
(names in order, edges, virtual flags; :func:`hierarchy_hash`), of every setting but the device
and of :data:`CACHE_FORMAT`; a later call with the same key loads it instead of training. A file is
written whole or not at all (:func:`graph.files.write_atomic`) and carries a checksum of its points:
one that does not load, names other nodes or fails its checksum is trained again and replaced.

``geometry="euclidean"`` trains the same loss with :math:`d(x, y) = \|x - y\|` in
:math:`\mathbb{R}^d` (plain Adam through the same optimiser): the paper's Euclidean baseline.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import geoopt
import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from gnn.device import reuse_large_cpu_buffers, select_device
from gnn.hyperbolic import poincare
from gnn.hyperbolic.hierarchy import Hierarchy, tree_embedding
from graph.errors import ConfigError, DataError
from graph.files import write_atomic

log = logging.getLogger(__name__)

GEOMETRIES = ("poincare", "euclidean")
INITS = ("random", "tree")
# Version of the saved layout's record and of the training that makes it: raise it when either changes, so
# that layouts saved before are trained again rather than loaded.
CACHE_FORMAT = 1


@dataclass(frozen=True)
class PoincareEmbeddingSettings:
    """How :func:`train_embedding` trains."""

    # Dimension of the ball. 2 can be drawn; 5-10 reconstruct taxonomies almost perfectly (N&K table 1).
    dim: int = 16
    # "poincare", or "euclidean" for the baseline trained the same way.
    geometry: str = "poincare"
    # Full passes over the related pairs, at most (see `tolerance`). The loss keeps falling slowly for thousands of
    # epochs at dim 2.
    epochs: int = 1500
    # Stop once the mean loss of the last `window` epochs is less than this fraction below the mean of the `window`
    # before (module docstring); 0: always run every epoch.
    tolerance: float = 0.0
    # Epochs averaged on each side of the comparison: Adam's loss wobbles from epoch to epoch, a mean does not.
    window: int = 10
    # Epochs at the start run at lr * burn_in_factor (N&K: 10 epochs at lr/10) so the layout settles first.
    burn_in: int = 20
    burn_in_factor: float = 0.1
    # RiemannianAdam step size; 0.05 moves points fast without overshooting near the boundary (float64).
    lr: float = 0.05
    # Negatives per related pair; None: every unrelated node (exact softmax, best ranks, O(pairs x nodes)).
    negatives: int | None = None
    # Related pairs per optimiser step; None: every pair in one step (full batch, deterministic). The exact
    # softmax (negatives=None) costs one n x n distance matrix per step, so full batch is also the fastest.
    batch_size: int | None = None
    # "random" (uniform ±1e-3, the paper) or "tree" (Sarkar's combinatorial embedding, then refined).
    init: str = "tree"
    # Edge length τ of the tree initialisation; depth h lands at distance hτ from the origin.
    tree_scale: float = 3.0
    # Closest a point may come to the boundary, as 1 - ‖x‖ (float64). geoopt's default 1e-5 caps distances
    # from the origin at ~12; 1e-10 allows ~23, room for 5-8 levels; float64 still has ~6 digits of 1 - ‖x‖² there.
    margin: float = 1e-10
    # Seed of the initialisation and the negative samples.
    seed: int = 0
    # "cpu", "cuda", "cuda:N", or None for CUDA when available.
    device: str | None = None

    def __post_init__(self) -> None:
        if self.dim < 1 or (self.init == "tree" and self.dim < 2):
            raise ConfigError(f"dim is {self.dim}; use at least 2 (default 16)")
        if self.geometry not in GEOMETRIES:
            raise ConfigError(f"geometry {self.geometry!r} is not one of {GEOMETRIES}")
        if self.init not in INITS:
            raise ConfigError(f"init {self.init!r} is not one of {INITS}")
        if self.epochs < 0 or self.burn_in < 0:
            raise ConfigError(f"epochs ({self.epochs}) and burn_in ({self.burn_in}) must be >= 0")
        if self.tolerance < 0 or self.window < 1:
            raise ConfigError(f"tolerance ({self.tolerance}) must be >= 0 and window ({self.window}) >= 1")
        if self.negatives is not None and self.negatives < 1:
            raise ConfigError(f"negatives is {self.negatives}; use >= 1, or None for every unrelated node")
        if not 0 < self.margin < 1e-2:
            raise ConfigError(f"margin is {self.margin}; use a value in (0, 0.01) (default 1e-10)")


class _Ball(geoopt.PoincareBall):
    """geoopt's unit ball (curvature -1) with a configurable distance kept from the boundary."""

    def __init__(self, margin: float) -> None:
        super().__init__(c=1.0)
        self.margin = margin

    def projx(self, x: torch.Tensor, *, dim: int = -1) -> torch.Tensor:
        return poincare.project(x, eps=self.margin)

    def retr(self, x: torch.Tensor, u: torch.Tensor, *, dim: int = -1) -> torch.Tensor:
        return poincare.project(x + u, eps=self.margin)


@dataclass(frozen=True)
class TrainedEmbedding:
    points: torch.Tensor  # float64 [n, dim] on the CPU, rows in the hierarchy's node order
    settings: PoincareEmbeddingSettings
    losses: tuple[float, ...]  # mean loss per epoch, the burn-in's first
    seconds: float
    epochs: int  # refinement epochs run after the burn-in: settings.epochs, or fewer when the loss converged

    def distances(self) -> np.ndarray:
        """[n, n] distances in the embedding's geometry."""
        return pairwise_distances(self.points, self.settings.geometry)


def pairwise_distances(points: torch.Tensor, geometry: str = "poincare") -> np.ndarray:
    with torch.no_grad():
        if geometry == "poincare":
            return poincare.pairwise_dist(points, points).cpu().numpy()
        return torch.cdist(points, points, compute_mode="donot_use_mm_for_euclid_dist").cpu().numpy()


def _distance(geometry: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if geometry == "poincare":
        return poincare.dist(x, y)
    return (x - y).pow(2).sum(-1).clamp_min(1e-30).sqrt()  # 1e-30: sqrt's gradient at x = y


def _pairwise(geometry: str, points: torch.Tensor) -> torch.Tensor:
    if geometry == "poincare":
        return poincare.pairwise_dist(points, points)
    return torch.cdist(points, points, compute_mode="donot_use_mm_for_euclid_dist")


def initial_points(hierarchy: Hierarchy, settings: PoincareEmbeddingSettings) -> torch.Tensor:
    """float64 [n, dim]: the starting layout of ``settings.init`` (module docstring)."""
    generator = torch.Generator().manual_seed(settings.seed)
    if settings.init == "tree":
        points = tree_embedding(hierarchy.spanning_tree(), settings.dim, scale=settings.tree_scale, seed=settings.seed)
        if settings.geometry == "euclidean":  # the same layout read in the tangent space at the origin
            points = poincare.logmap0(points)
        return points
    return (torch.rand(len(hierarchy), settings.dim, dtype=torch.float64, generator=generator) * 2 - 1) * 1e-3


def converged(losses: Sequence[float], window: int, tolerance: float) -> bool:
    """True when the mean of the last ``window`` losses is less than ``tolerance`` (a fraction) below the mean of the
    ``window`` before them (module docstring); False while fewer than ``2 * window`` losses are given, or with
    ``tolerance`` 0. ``losses``: the refinement epochs' mean losses, in order."""
    if tolerance <= 0 or len(losses) < 2 * window:
        return False
    before = float(np.mean(losses[-2 * window : -window]))
    last = float(np.mean(losses[-window:]))
    return (before - last) < tolerance * abs(before)


def train_embedding(
    hierarchy: Hierarchy,
    settings: PoincareEmbeddingSettings | None = None,
    *,
    progress: bool = True,
    checkpoint: Callable[[int, torch.Tensor], None] | None = None,
) -> TrainedEmbedding:
    """Embed ``hierarchy`` with the loss of the module docstring; deterministic for a seed on one device.

    ``checkpoint(epoch, points)`` is called after the burn-in (epoch 0) and after every refinement epoch
    (1, 2, ...) with a float64 CPU copy of the points: benchmarks rank the layout as it trains.
    """
    settings = settings or PoincareEmbeddingSettings()
    device = select_device(settings.device)
    started = time.perf_counter()
    torch.manual_seed(settings.seed)
    generator = torch.Generator(device=device).manual_seed(settings.seed)
    n = len(hierarchy)
    closure = torch.as_tensor(hierarchy.closure, device=device)
    pairs = torch.cat([closure, closure.flip(1)])  # [2p, 2]: (anchor, related), from both ends
    related = torch.as_tensor(hierarchy.related(), device=device)
    related.fill_diagonal_(True)  # a node is never its own negative
    # an anchor related to every node (the root) has no negatives: its softmax is 1, its loss 0
    pairs = pairs[~related.all(dim=1)[pairs[:, 0]]]
    if len(pairs) == 0:
        raise DataError("the hierarchy has no related pairs to train on")

    manifold: geoopt.Manifold = _Ball(settings.margin) if settings.geometry == "poincare" else geoopt.Euclidean()
    start = initial_points(hierarchy, settings).to(device)
    weights = geoopt.ManifoldParameter(manifold.projx(start), manifold=manifold)
    optimizer = geoopt.optim.RiemannianAdam([weights], lr=settings.lr)
    batch = settings.batch_size or len(pairs)
    losses: list[float] = []
    total = settings.burn_in + settings.epochs
    bar = tqdm(range(total), desc=f"{settings.geometry} d={settings.dim}", unit="epoch", disable=not progress or None)
    if checkpoint is not None and settings.burn_in == 0:
        checkpoint(0, weights.detach().to("cpu", torch.float64, copy=True))
    with reuse_large_cpu_buffers(device):  # the exact softmax allocates [n, n] matrices every epoch
        for epoch in bar:
            lr = settings.lr * (settings.burn_in_factor if epoch < settings.burn_in else 1.0)
            for group in optimizer.param_groups:
                group["lr"] = lr
            order = torch.randperm(len(pairs), device=device, generator=generator)
            epoch_loss = 0.0
            for begin in range(0, len(pairs), batch):
                chunk = pairs[order[begin : begin + batch]]
                anchor, positive = chunk[:, 0], chunk[:, 1]
                optimizer.zero_grad()
                loss = _pair_loss(weights, anchor, positive, related, settings, generator, n)
                loss.backward()
                optimizer.step()
                epoch_loss += float(loss.detach()) * len(chunk)
            losses.append(epoch_loss / len(pairs))
            if epoch % 50 == 0:
                bar.set_postfix(loss=f"{losses[-1]:.4f}")
            refined = epoch + 1 - settings.burn_in  # refinement epochs done (0: the burn-in just ended)
            if checkpoint is not None and refined >= 0:
                checkpoint(refined, weights.detach().to("cpu", torch.float64, copy=True))  # a copy: training goes on
            if refined > 0 and converged(losses[settings.burn_in :], settings.window, settings.tolerance):
                log.info(
                    "%s d=%d: loss converged after %d of %d epochs",
                    settings.geometry,
                    settings.dim,
                    refined,
                    settings.epochs,
                )
                break
    bar.close()
    points = weights.detach().to("cpu", torch.float64)
    epochs = max(len(losses) - settings.burn_in, 0)
    return TrainedEmbedding(points, settings, tuple(losses), time.perf_counter() - started, epochs)


# saved layouts ---------------------------------------------------------------------------------


def hierarchy_hash(hierarchy: Hierarchy) -> str:
    """sha256 of what a layout is trained from in ``hierarchy``: node names in order, edges, virtual flags."""
    digest = hashlib.sha256("\n".join(hierarchy.names).encode())
    digest.update(np.ascontiguousarray(hierarchy.edges, dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(hierarchy.virtual, dtype=np.uint8).tobytes())
    return digest.hexdigest()


def embedding_key(hierarchy: Hierarchy, settings: PoincareEmbeddingSettings) -> str:
    """16 hex digits naming the layout of ``hierarchy`` under ``settings`` (the device does not count)."""
    config = {k: v for k, v in asdict(settings).items() if k != "device"}
    text = json.dumps(
        {"format": CACHE_FORMAT, "hierarchy": hierarchy_hash(hierarchy), "settings": config}, sort_keys=True
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _checksum(names: Sequence[str], points: torch.Tensor) -> str:
    digest = hashlib.sha256("\n".join(names).encode())
    digest.update(np.ascontiguousarray(points.numpy(), dtype=np.float64).tobytes())
    return digest.hexdigest()


def save_embedding(trained: TrainedEmbedding, hierarchy: Hierarchy, folder: Path) -> Path:
    """Write ``trained`` as ``<folder>/<key>.pt`` (:func:`embedding_key`), whole or not at all; returns the path."""
    key = embedding_key(hierarchy, trained.settings)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.pt"
    record = {
        "format": CACHE_FORMAT,
        "key": key,
        "names": list(hierarchy.names),
        "points": trained.points.contiguous(),
        "checksum": _checksum(hierarchy.names, trained.points),
        "losses": list(trained.losses),
        "epochs": trained.epochs,
        "seconds": trained.seconds,
    }
    buffer = io.BytesIO()
    torch.save(record, buffer)
    write_atomic(path, buffer.getvalue())
    return path


def load_embedding(hierarchy: Hierarchy, settings: PoincareEmbeddingSettings, folder: Path) -> TrainedEmbedding | None:
    """The layout saved by :func:`save_embedding` for ``hierarchy`` and ``settings``; None when there is none or
    the file cannot be trusted (it does not load, names other nodes, or its points fail their checksum)."""
    key = embedding_key(hierarchy, settings)
    path = Path(folder) / f"{key}.pt"
    if not path.is_file():
        return None
    try:
        record: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
        points = record["points"]
        problem = _record_problem(record, key, hierarchy, settings)
    except Exception as exc:  # a torn or foreign file raises whatever torch.load raises on it
        problem = f"it does not load ({type(exc).__name__}: {exc})"
    if problem:
        log.warning("saved class layout %s ignored, training again: %s", path, problem)
        return None
    losses = tuple(float(x) for x in record["losses"])
    return TrainedEmbedding(points.to(torch.float64), settings, losses, float(record["seconds"]), int(record["epochs"]))


def _record_problem(record: dict[str, Any], key: str, hierarchy: Hierarchy, settings: PoincareEmbeddingSettings) -> str:
    """Why a loaded record is not the layout of ``key``, or ""."""
    if record.get("format") != CACHE_FORMAT or record.get("key") != key:
        return f"format {record.get('format')} / key {record.get('key')}, expected {CACHE_FORMAT} / {key}"
    if list(record["names"]) != list(hierarchy.names):
        return "it holds other nodes"
    points = record["points"]
    if not isinstance(points, torch.Tensor) or tuple(points.shape) != (len(hierarchy), settings.dim):
        return f"its points are not a [{len(hierarchy)}, {settings.dim}] tensor"
    if _checksum(hierarchy.names, points.to(torch.float64)) != record["checksum"]:
        return "its points fail their checksum"
    return ""


@dataclass(frozen=True)
class CachedEmbedding:
    """What :func:`cached_embedding` gives: the layout, and whether it was loaded or trained."""

    embedding: TrainedEmbedding
    path: Path | None  # where it is saved; None without a folder
    from_cache: bool  # loaded from `path`, not trained


def cached_embedding(
    hierarchy: Hierarchy, settings: PoincareEmbeddingSettings, folder: Path | None, *, progress: bool = True
) -> CachedEmbedding:
    """The layout saved under ``folder`` for ``hierarchy`` and ``settings``, else one trained now and saved there
    (module docstring); ``folder`` None: always trained, never saved."""
    if folder is not None:
        saved = load_embedding(hierarchy, settings, folder)
        if saved is not None:
            path = Path(folder) / f"{embedding_key(hierarchy, settings)}.pt"
            log.info("class layout loaded from %s", path)
            return CachedEmbedding(saved, path, True)
    trained = train_embedding(hierarchy, settings, progress=progress)
    if folder is None:
        return CachedEmbedding(trained, None, False)
    return CachedEmbedding(trained, save_embedding(trained, hierarchy, folder), False)


def _pair_loss(
    weights: torch.Tensor,
    anchor: torch.Tensor,
    positive: torch.Tensor,
    related: torch.Tensor,
    settings: PoincareEmbeddingSettings,
    generator: torch.Generator,
    n: int,
) -> torch.Tensor:
    r"""Mean softmax cross-entropy of each positive against its negatives (module docstring).

    With every unrelated node as a negative the denominator of an anchor :math:`u` is shared by
    all its pairs: with :math:`S_u = \sum_{w \in \mathcal{N}(u)} e^{-d(u,w)}`,

    .. math::
        -\log \frac{e^{-d(u,v)}}{e^{-d(u,v)} + S_u} = \operatorname{softplus}\bigl(d(u,v) + \log S_u\bigr),

    so one :math:`n \times n` distance matrix per step gives the exact loss of every pair.
    """
    if settings.negatives is None:
        d = _pairwise(settings.geometry, weights)  # [n, n]
        log_s = torch.logsumexp((-d).masked_fill(related, float("-inf")), dim=1)  # [n]: log S_u
        return F.softplus(d[anchor, positive] + log_s[anchor]).mean()
    sampled = torch.randint(n, (len(anchor), settings.negatives), device=weights.device, generator=generator)
    candidates = torch.cat([positive.unsqueeze(1), sampled], dim=1)  # [B, 1 + K], the positive first
    d = _distance(settings.geometry, weights[anchor].unsqueeze(1), weights[candidates])  # [B, 1 + K]
    excluded = related[anchor.unsqueeze(1), candidates]  # related or the anchor itself: not a negative ...
    excluded[:, 0] = False  # ... but the positive stays
    logits = (-d).masked_fill(excluded, float("-inf"))
    target = torch.zeros(len(anchor), dtype=torch.long, device=weights.device)
    return F.cross_entropy(logits, target)


__all__ = [
    "CACHE_FORMAT",
    "GEOMETRIES",
    "INITS",
    "CachedEmbedding",
    "PoincareEmbeddingSettings",
    "TrainedEmbedding",
    "cached_embedding",
    "converged",
    "embedding_key",
    "hierarchy_hash",
    "initial_points",
    "load_embedding",
    "pairwise_distances",
    "save_embedding",
    "train_embedding",
]
