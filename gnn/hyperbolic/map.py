r"""h_θ: a learned map from fused class vectors into the Poincaré ball whose own distances keep the hierarchy.

**Model.** A one-hidden-layer MLP on standardised inputs gives a tangent vector at the origin,
its norm is bounded, and :math:`\exp_0` (:func:`gnn.hyperbolic.poincare.expmap0`) carries it into the ball:

.. math::
    u = W_2\,\mathrm{GELU}\Bigl(W_1 \frac{f - \mu}{\sigma} + b_1\Bigr) + b_2, \qquad
    v = \frac R2 \tanh\Bigl(\frac{2\|u\|}{R}\Bigr) \frac{u}{\|u\|}, \qquad
    h_\theta(f) = \exp_0(v) = \tanh(\|v\|)\,\frac{v}{\|v\|},

with :math:`\mu, \sigma` the per-feature mean and standard deviation of the training inputs
(fused vectors are unit vectors with components of about 0.05: unscaled, the first layer would
sit in GELU's linear range) and :math:`R` = ``max_radius``. As
:math:`d(0, \exp_0(v)) = 2\|v\|`, every point lies within hyperbolic distance :math:`R` of the
origin, :math:`\|h_\theta(f)\| \le \tanh(R/2)` (0.995 at the default :math:`R = 6`): ``tanh``
never saturates and float64 keeps about 13 digits of :math:`1 - \|x\|^2`, for any input.

**Objective.** The ranking loss of Nickel & Kiela (2017, "Poincaré Embeddings for Learning
Hierarchical Representations"; :mod:`gnn.hyperbolic.embedding`) with every point
:math:`h_c = h_\theta(p_c)` produced by the map instead of a free parameter: over the
transitive closure :math:`D` of the class hierarchy, read symmetrically (each ancestor–descendant
pair from both ends),

.. math::
    \mathcal{L}(\theta) = \frac{1}{|D_B|} \sum_{(u,v) \in D_B}
      -\log \frac{e^{-d(h_u, h_v)/T}}{e^{-d(h_u, h_v)/T} + \sum_{w \in \mathcal{N}(u)} e^{-d(h_u, h_w)/T}},
    \qquad \mathcal{N}(u) = \{w \ne u : w \text{ neither above nor below } u\},

with :math:`d` the Poincaré distance, every unrelated class a negative (the exact softmax), and
:math:`D_B` the pairs whose first node is in a seeded batch of ``batch_size`` anchors (one
:math:`B \times n` distance matrix per step). The temperature :math:`T` is what the bounded
radius needs: with :math:`T = 1` the softmax over ~2,700 negatives asks for distances the ball
of radius 6 does not have and drives every point to the bound (ACM 1998 MAP 0.88 after 1,000
steps even with a free point per class). Dividing by :math:`T` is the same as training in the flatter ball of
curvature :math:`-T^2` with radii up to :math:`R/T` (24 at the defaults, the range the free
embedding of :mod:`gnn.hyperbolic.embedding` uses). Adam, learning rate cosine-annealed to 0 over
``epochs`` steps; float64; deterministic for a seed on one device.

**Inputs.** SymTax (Goyal et al., 2024, https://arxiv.org/abs/2406.01606) projects fused
taxonomy vectors into the ball and uses Poincaré distances as reranker features. A class's own
fused vector cannot carry its place in the tree when its label does not: 80 of the 368 ACM 1998
classes share their fused vector with another class (41 "Miscellaneous" and 39 "General"
classes, one under each branch), and any function of the vector puts such classes on one point
(trained with one free point per distinct vector, the ACM 1998 tree reaches only MAP 0.59).
``inputs="path"`` (default) trains on each class's *path vector*, the normalised mean of its
fused vector and those of its ancestors,

.. math::
    p_c = \frac{\bar p_c}{\|\bar p_c\|}, \qquad
    \bar p_c = \frac{f_c + \sum_{a \in \mathrm{anc}(c)} f_a}{1 + |\mathrm{anc}(c)|}

(:func:`path_vectors`; the ``ancestors`` variant of :func:`gnn.taxonomy.fusion.vector_fusion`, over the
whole closure); ``inputs="fused"`` trains on :math:`f_c` itself. A path vector gives the
class's position away, which a new class or a paper's text vector does not have: at each step a
seeded fraction ``own_rate`` of the classes enters the loss from its own :math:`f_c` instead of
:math:`p_c` (an input dropout of the ancestors), so that h_θ also learns where bare vectors
land. :meth:`HyperbolicMap.to_ball` maps any vector of the fused size: a paper's text vector, a
category's fused vector, a path vector. The trained class points are saved with the model
(:func:`load_class_points`). Measured in docs/results.md (ACM 1998 MAP 0.946 from h_θ's points
at dim 16; held-out leaves and baselines there too).

h_θ's ball is its own: its points are not aligned with the ``poincare`` coordinates of the
store (a free embedding); compare h_θ points with h_θ points only.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from gnn.device import select_device
from gnn.hyperbolic import poincare
from gnn.hyperbolic.hierarchy import Hierarchy
from graph.errors import ConfigError, DataError
from graph.files import write_atomic

log = logging.getLogger(__name__)

INPUTS = ("path", "fused")
# Version of h_θ's training and saved record, part of its file's key: raise it when either changes, so that a map
# saved before is trained again rather than reused.
MAP_FORMAT = 1


@dataclass(frozen=True)
class MapSettings:
    """How :func:`train_hyperbolic_map` trains h_θ (module docstring); defaults measured in docs/results.md."""

    # Width of the MLP's one hidden layer: 256 fits the ~2,700 classes (512 measured no better, 2 layers worse).
    hidden: int = 256
    # R: every point within hyperbolic distance R of the origin (‖x‖ ≤ tanh(R/2) = 0.995 at 6); 8 measured no better.
    max_radius: float = 6.0
    # T of the softmax. With own_rate 0 and 2,000 steps at dim 16, ACM 1998 MAP 0.96 at T = 0.25, about the same
    # at 0.5, 0.85 at 0.125; at T = 1 even free points (no MLP) reach only 0.88 within radius 6.
    temperature: float = 0.25
    # Optimiser steps (one batch of anchors each): ACM 1998 MAP 0.91 after 2,000, 0.95 after 3,000 (~3.5 min on
    # one shared CPU thread for the ~2,700 classes of the joint taxonomy).
    epochs: int = field(
        default=3000, metadata={"help": "optimiser steps of h_θ, the map from fused class vectors into the ball"}
    )
    # Anchors per step, each with its exact softmax over every class (a [batch, n] distance matrix).
    batch_size: int = 256
    # Adam's starting step size, cosine-annealed to 0; 1e-2 drives points to the radius bound.
    lr: float = 3e-3
    # "path": train on path vectors (module docstring); "fused": on the classes' own fused vectors.
    inputs: str = "path"
    # With "path": the fraction of classes shown by their own fused vector instead, drawn anew each step, so that
    # h_θ learns where a bare text vector lands too. 0.1 (vs 0; one seed, 24 held-out ACM 1998 leaves, 2,000 steps):
    # the held-out leaves' parents' median rank 71 -> 14 of 344, the trained tree's MAP 0.94 -> 0.91; 0.3: 25, 0.88.
    own_rate: float = 0.1
    # Seed of the initialisation and the anchor batches.
    seed: int = 0
    # "cpu", "cuda", "cuda:N", or None for CUDA when available.
    device: str | None = None

    def __post_init__(self) -> None:
        if self.inputs not in INPUTS:
            raise ConfigError(f"h_θ inputs {self.inputs!r} is not one of {INPUTS}")
        if not 0 <= self.own_rate < 1:
            raise ConfigError(f"own_rate is {self.own_rate}; use a fraction in [0, 1) (default 0.1)")
        if self.max_radius <= 0 or self.temperature <= 0:
            raise ConfigError(
                f"max_radius ({self.max_radius}) and temperature ({self.temperature}) must be > 0 (defaults 6, 0.25)"
            )
        if self.epochs < 0 or self.batch_size < 1 or self.hidden < 1:
            raise ConfigError(
                f"epochs ({self.epochs}) must be >= 0, batch_size ({self.batch_size}) and hidden ({self.hidden}) >= 1"
            )


class HyperbolicMap(nn.Module):
    r"""h_θ: a fused-size vector to a point of the Poincaré ball (module docstring).

    .. math::
        h_\theta(f) = \exp_0\Bigl(\tfrac R2 \tanh\bigl(2\|u\|/R\bigr)\, u/\|u\|\Bigr), \quad
        u = \mathrm{MLP}_\theta\bigl((f - \mu)/\sigma\bigr)

    Args:
        in_dim: size of the input vectors (the fused taxonomy size, 384 with MiniLM).
        out_dim: dimension of the ball.
        hidden: width of the hidden layer (default: 256).
        max_radius: bound :math:`R` on the distance from the origin (default: 6.0).

    Shapes: input [..., in_dim] -> output [..., out_dim], float64, norm ≤ tanh(R/2) < 1.
    """

    mean: torch.Tensor  # buffers, declared for the type checker
    scale: torch.Tensor

    def __init__(self, in_dim: int, out_dim: int, hidden: int = 256, max_radius: float = 6.0) -> None:
        super().__init__()
        self.in_dim, self.out_dim, self.hidden, self.max_radius = in_dim, out_dim, hidden, max_radius
        # μ, σ of the training inputs (set by standardise_to), saved in the state dict with the weights
        self.register_buffer("mean", torch.zeros(in_dim, dtype=torch.float64))
        self.register_buffer("scale", torch.ones(in_dim, dtype=torch.float64))
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, out_dim))
        self.double()

    def standardise_to(self, inputs: torch.Tensor) -> None:
        """Set μ, σ from ``inputs`` [n, in_dim]; a constant feature keeps σ = 1 (no division by 0)."""
        self.mean.copy_(inputs.mean(dim=0))
        scale = inputs.std(dim=0) if len(inputs) > 1 else torch.ones_like(self.mean)
        self.scale.copy_(torch.where(scale > 1e-12, scale, torch.ones_like(scale)))  # 1e-12: a constant feature

    def tangent(self, vectors: torch.Tensor) -> torch.Tensor:
        """The bounded tangent vector :math:`v` at the origin, ‖v‖ < R/2."""
        u = self.mlp((vectors.to(torch.float64) - self.mean) / self.scale)
        half = self.max_radius / 2
        norm = u.norm(dim=-1, keepdim=True).clamp_min(poincare.MIN_NORM)  # MIN_NORM: u = 0 (0/0, NaN gradient)
        return u * (half * torch.tanh(norm / half) / norm)

    def forward(self, vectors: torch.Tensor) -> torch.Tensor:
        return poincare.expmap0(self.tangent(vectors))

    def to_ball(self, vectors: np.ndarray | torch.Tensor) -> np.ndarray:
        """Ball points (float64 [n, out_dim]) of ``vectors`` [n, in_dim] or [in_dim]."""
        x = torch.as_tensor(np.asarray(vectors), dtype=torch.float64)
        if x.shape[-1] != self.in_dim:
            raise ConfigError(f"h_θ maps {self.in_dim}-d vectors, got {x.shape[-1]}-d ones")
        device = next(self.parameters()).device
        with torch.no_grad():
            return self(x.to(device)).cpu().numpy()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.in_dim}, {self.out_dim}, hidden={self.hidden}, max_radius={self.max_radius})"
        )


def path_vectors(hierarchy: Hierarchy, vectors: np.ndarray) -> np.ndarray:
    r"""Path vectors :math:`p_c` (module docstring): rows of ``vectors`` [n, f] in ``hierarchy``'s node order.

    Every node of ``hierarchy`` needs a vector (take :meth:`Hierarchy.subset` of the nodes that
    have one first). float64 [n, f], unit rows (an all-zero mean stays zero).
    """
    if len(vectors) != len(hierarchy):
        raise ConfigError(f"{len(vectors)} vectors for {len(hierarchy)} hierarchy nodes; give one per node")
    x = np.asarray(vectors, dtype=np.float64)
    closure = hierarchy.closure  # (descendant, ancestor)
    total = x.copy()
    np.add.at(total, closure[:, 0], x[closure[:, 1]])
    count = 1 + np.bincount(closure[:, 0], minlength=len(x))
    mean = total / count[:, None]
    return mean / np.linalg.norm(mean, axis=1, keepdims=True).clip(min=1e-12)  # 1e-12: an all-zero row stays zero


@dataclass(frozen=True)
class TrainedMap:
    model: HyperbolicMap  # on the CPU, in eval mode
    inputs: np.ndarray  # float64 [n, f]: what each class was mapped from (path or fused vectors)
    points: np.ndarray  # float64 [n, dim]: h_θ(inputs), rows in the hierarchy's node order
    losses: tuple[float, ...]  # loss of each step
    seconds: float

    def distances(self) -> np.ndarray:
        """[n, n] Poincaré distances between the classes' h_θ points."""
        points = torch.from_numpy(self.points)
        return poincare.pairwise_dist(points, points).numpy()


def train_hyperbolic_map(
    vectors: np.ndarray,
    hierarchy: Hierarchy,
    dim: int,
    settings: MapSettings | None = None,
    *,
    progress: bool = True,
    checkpoint: Callable[[int, HyperbolicMap], None] | None = None,
) -> TrainedMap:
    """Fit h_θ to ``hierarchy`` with the loss of the module docstring.

    ``vectors`` [n, f]: each node's fused vector, in ``hierarchy``'s node order (no virtual nodes:
    every node needs one). Deterministic for a seed on one device. ``checkpoint(step, model)`` is called
    before the first step (0) and after every step (1, 2, ...): benchmarks rank h_θ's points as it trains.
    """
    settings = settings or MapSettings()
    if len(vectors) != len(hierarchy):
        raise ConfigError(f"{len(vectors)} vectors for {len(hierarchy)} hierarchy nodes; give one per node")
    device = select_device(settings.device)
    started = time.perf_counter()
    fused = np.asarray(vectors, dtype=np.float64)
    inputs = path_vectors(hierarchy, fused) if settings.inputs == "path" else fused
    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    x = torch.as_tensor(inputs, dtype=torch.float64, device=device)
    own = torch.as_tensor(fused, dtype=torch.float64, device=device)
    swap = settings.own_rate if settings.inputs == "path" else 0.0
    model = HyperbolicMap(x.shape[1], dim, settings.hidden, settings.max_radius).to(device)
    model.standardise_to(x)

    n = len(hierarchy)
    closure = torch.as_tensor(hierarchy.closure, device=device)
    pairs = torch.cat([closure, closure.flip(1)])  # [2p, 2]: (anchor, related), from both ends
    related = torch.as_tensor(hierarchy.related(), device=device)
    related.fill_diagonal_(True)  # a node is never its own negative
    pairs = pairs[~related.all(dim=1)[pairs[:, 0]]]  # an anchor related to every node has no negatives
    if len(pairs) == 0:
        raise DataError("the hierarchy has no related pairs to train h_θ on")
    anchors = torch.unique(pairs[:, 0])
    row_of = torch.full((n,), -1, dtype=torch.long, device=device)  # node -> its row in the batch, -1 outside

    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, max(settings.epochs, 1))
    losses: list[float] = []
    if checkpoint is not None:
        checkpoint(0, model)
    bar = tqdm(range(settings.epochs), desc=f"h_θ d={dim}", unit="step", disable=not progress or None)
    for step in bar:
        batch = anchors[torch.randperm(len(anchors), generator=generator)[: settings.batch_size].to(device)]
        row_of[batch] = torch.arange(len(batch), device=device)
        chunk = pairs[row_of[pairs[:, 0]] >= 0]  # the pairs anchored in the batch
        optimizer.zero_grad()
        if swap:  # some classes shown by their own vector this step
            shown = torch.rand(n, generator=generator).to(device) < swap
            points = model(torch.where(shown.unsqueeze(1), own, x))  # [n, dim]
        else:
            points = model(x)  # [n, dim]
        logits = -poincare.pairwise_dist(points[batch], points) / settings.temperature  # [B, n]
        log_s = torch.logsumexp(logits.masked_fill(related[batch], float("-inf")), dim=1)  # [B]: log Σ_negatives
        rows = row_of[chunk[:, 0]]
        # -log e^a / (e^a + S) = softplus(log S - a), a the positive's logit
        loss = F.softplus(log_s[rows] - logits[rows, chunk[:, 1]]).mean()
        loss.backward()
        optimizer.step()
        schedule.step()
        row_of[batch] = -1
        losses.append(float(loss.detach()))
        if step % 100 == 0:
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
        if checkpoint is not None:
            checkpoint(step + 1, model)
    bar.close()
    model = model.cpu().eval()
    return TrainedMap(model, inputs, model.to_ball(inputs), tuple(losses), time.perf_counter() - started)


# saving ----------------------------------------------------------------------------------------


def map_key(config: dict[str, Any], data_hash: str) -> str:
    """16 hex digits naming h_θ trained with ``config`` on the data of ``data_hash`` by this code (:data:`MAP_FORMAT`);
    its file is ``<key>.pt``."""
    text = json.dumps({"config": config, "data": data_hash, "format": MAP_FORMAT}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def save_hyperbolic_map(
    model: HyperbolicMap,
    map_dir: Path,
    *,
    config: dict[str, Any],
    data_hash: str,
    classes: list[str],
    points: np.ndarray | None = None,
    final_loss: float | None = None,
) -> Path:
    """Save h_θ as ``<map_dir>/<key>.pt`` (:func:`map_key`) and name it ``latest``; returns the path.

    ``points`` [len(classes), dim]: the classes' h_θ points, read back by :func:`load_class_points`;
    ``final_loss``: the mean loss of its last steps, reported again when :func:`load_saved_map` reuses it.
    """
    folder = Path(map_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{map_key(config, data_hash)}.pt"
    record = {
        "state_dict": model.state_dict(),
        "in_dim": model.in_dim,
        "out_dim": model.out_dim,
        "hidden": model.hidden,
        "max_radius": model.max_radius,
        "config": config,
        "data_hash": data_hash,
        "classes": classes,
        "points": None if points is None else torch.as_tensor(np.asarray(points, dtype=np.float64)),
        "final_loss": final_loss,
    }
    buffer = io.BytesIO()
    torch.save(record, buffer)
    # the model, then the pointer to it, each renamed into place: a kill leaves `latest` naming a whole file
    write_atomic(path, buffer.getvalue())
    write_atomic(folder / "latest", path.name + "\n")
    return path


@dataclass(frozen=True)
class SavedMap:
    """h_θ reused by :func:`load_saved_map`."""

    model: HyperbolicMap  # on the CPU, in eval mode
    points: np.ndarray  # float64 [n, dim]: the classes' h_θ points, in the order they were saved
    final_loss: float  # of the run that trained it; NaN when that run did not record it
    path: Path


def load_saved_map(map_dir: Path, *, config: dict[str, Any], data_hash: str, classes: list[str]) -> SavedMap | None:
    """h_θ saved for ``config`` and ``data_hash`` with the points of ``classes``, named ``latest`` again; None when
    there is none or its file does not load or does not match (``compute hyperbolic`` then trains it again)."""
    path = Path(map_dir) / f"{map_key(config, data_hash)}.pt"
    if not path.is_file():
        return None
    try:
        record = _record(Path(map_dir), path.stem)
        model = HyperbolicMap(record["in_dim"], record["out_dim"], record["hidden"], record["max_radius"])
        model.load_state_dict(record["state_dict"])
        matches = (
            record["config"] == config
            and record["data_hash"] == data_hash
            and list(record["classes"]) == classes
            and record["points"] is not None
            and tuple(record["points"].shape) == (len(classes), model.out_dim)
        )
    except Exception as exc:  # a torn or foreign file raises whatever torch.load raises on it
        log.warning("saved h_θ %s ignored, training again: it does not load (%s: %s)", path, type(exc).__name__, exc)
        return None
    if not matches:
        log.warning("saved h_θ %s ignored, training again: its config, data or classes differ", path)
        return None
    write_atomic(Path(map_dir) / "latest", path.name + "\n")  # load_hyperbolic_map() gives the map of this data
    final_loss = record.get("final_loss")
    return SavedMap(model.eval(), record["points"].numpy(), float("nan") if final_loss is None else final_loss, path)


def _record(map_dir: Path, key: str | None) -> dict[str, Any]:
    folder = Path(map_dir)
    if key is None:
        latest = folder / "latest"
        if not latest.is_file():
            raise DataError(
                f"no hyperbolic map under {folder}; run `citegraph compute taxonomy` then `citegraph compute hyperbolic`"
            )
        path = folder / latest.read_text(encoding="utf-8").strip()
    else:
        path = folder / f"{key}.pt"
    if not path.is_file():
        raise DataError(f"{path} does not exist; rerun `citegraph compute hyperbolic`")
    record: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    if "max_radius" not in record:
        raise DataError(f"{path} was saved by an older h_θ (no radius bound); rerun `citegraph compute hyperbolic`")
    return record


def load_hyperbolic_map(map_dir: Path, key: str | None = None) -> HyperbolicMap:
    """h_θ saved by ``compute hyperbolic``: the one with ``key``, or the latest one written."""
    record = _record(map_dir, key)
    model = HyperbolicMap(record["in_dim"], record["out_dim"], record["hidden"], record["max_radius"])
    model.load_state_dict(record["state_dict"])
    model.eval()
    return model


def load_class_points(map_dir: Path, key: str | None = None) -> pd.Series:
    """The h_θ points of the classes h_θ was trained on (class id or code -> float64 [dim]), saved with it."""
    record = _record(map_dir, key)
    if record["points"] is None:
        raise DataError("this h_θ was saved without its class points; rerun `citegraph compute hyperbolic`")
    return pd.Series(list(record["points"].numpy()), index=record["classes"])


def data_hash(keys: list[str], *arrays: np.ndarray) -> str:
    """sha256 of the class keys and the float64 bytes of the arrays: what h_θ was trained on."""
    digest = hashlib.sha256("\n".join(keys).encode())
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return digest.hexdigest()


__all__ = [
    "INPUTS",
    "MAP_FORMAT",
    "HyperbolicMap",
    "MapSettings",
    "SavedMap",
    "TrainedMap",
    "data_hash",
    "load_class_points",
    "load_hyperbolic_map",
    "load_saved_map",
    "map_key",
    "path_vectors",
    "save_hyperbolic_map",
    "train_hyperbolic_map",
]
