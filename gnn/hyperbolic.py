r"""``citegraph compute hyperbolic``: taxonomy classes and papers in the Poincaré ball, and the map h_θ.

What it writes (curvature :math:`-1`, float64):

* ``poincare`` on every AcmClass and ArxivCategory: a Poincaré embedding (Nickel & Kiela, 2017)
  of the joint taxonomy of :func:`gnn.hierarchy.taxonomy_hierarchy` (ACM schemes via BROADER,
  arXiv categories under their archive and, via MAPS_TO, under the ACM classes they map to,
  everything under one root), trained by :func:`gnn.poincare_embedding.train_embedding` from
  Sarkar's tree embedding. Trained in ``dim`` dimensions and written in the store's size
  (``CITEGRAPH_POINCARE_DIM``, default 16), zero-padded: :math:`\mathbb{D}^{dim}` sits
  isometrically in :math:`\mathbb{D}^{16}` as the points whose last coordinates are 0, so
  every distance is unchanged;
* ``poincare`` on every paper with categories: the weighted Möbius gyromidpoint
  (:func:`gnn.poincare.weighted_midpoint`) of its categories' points,

  .. math::
      p = m\bigl(x_{c_1}, \ldots, x_{c_k};\ \alpha_1, \ldots, \alpha_k\bigr), \qquad
      \alpha_i = \begin{cases} \mathrm{score}_i & \text{IN\_CATEGORY inferred} \\ 1 & \text{otherwise} \end{cases}

  so a paper in one category sits on it, and a paper in two sits on the geodesic between them,
  nearer the one with the higher score. Papers that had coordinates and no longer have a
  category get null (a rerun leaves the same graph);
* a learned map :math:`h_\theta` from fused class vectors (``fused``, written by
  ``compute taxonomy``) into the ball, :math:`h_\theta(f) = \exp_0(\mathrm{MLP}_\theta(f))`,
  trained so that :math:`h_\theta(f_c)` lands on the class's embedded point and pairwise ball
  distances match the embedding's:

  .. math::
      \mathcal{L}(\theta) = \frac1n \sum_c d\bigl(h_\theta(f_c), x_c\bigr)^2
        + \frac{1}{|P|} \sum_{(a,b) \in P} \bigl(d(h_\theta(f_a), h_\theta(f_b)) - d(x_a, x_b)\bigr)^2,

  with :math:`P` a seeded sample of class pairs. SymTax (Goyal et al., 2024) uses the
  Poincaré distance between a query's and a candidate's projected class vectors as a reranker
  feature; the correct distance is :math:`2\operatorname{artanh}\|(-q) \oplus c\|`, not its
  printed :math:`2\tan^{-1}` form. The model is saved under ``<models_dir>/hyperbolic_map/``
  with its config and a hash of its training data; :func:`load_hyperbolic_map` gives it back
  for the reranker (:meth:`HyperbolicMap.to_ball` maps any fused-size vector). Without
  ``fused`` in the store (taxonomy fusion not run) h_θ is skipped, said so in the report, and
  the coordinates are still written.

The report gives the counts written and the reconstruction of the ACM 1998 tree (mean rank,
MAP; :func:`gnn.hierarchy.reconstruction`) computed from the coordinates *read back* from the
store.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from gnn import poincare
from gnn.device import select_device
from gnn.hierarchy import Hierarchy, Reconstruction, reconstruction, taxonomy_hierarchy
from gnn.poincare_embedding import EmbeddingSettings, train_embedding
from graph.errors import ConfigError, SchemaError
from graph.store import GraphStore

log = logging.getLogger(__name__)

MODEL_FOLDER = "hyperbolic_map"
ACM1998 = "1998"


@dataclass(frozen=True)
class HyperbolicSettings:
    """Settings of ``citegraph compute hyperbolic``."""

    # Dimension trained in; None: the store's poincare size (CITEGRAPH_POINCARE_DIM, default 16). Smaller
    # values are written zero-padded (an isometric copy), so benchmarks can train dim 2/5/10 into one store.
    dim: int | None = None
    # Epochs of the Nickel & Kiela refinement after the tree initialisation (300 reach MAP 0.999 at dim 5
    # on the ACM 1998 tree; see docs/quality.md).
    epochs: int = 300
    # Burn-in epochs at a tenth of the learning rate before them.
    burn_in: int = 20
    # Edge length τ of Sarkar's tree initialisation; depth h starts at distance hτ from the origin.
    tree_scale: float = 3.0
    # Seed of the initialisation, the negatives and h_θ.
    seed: int = 0
    # "cpu", "cuda", "cuda:N", or None for CUDA when available.
    device: str | None = None
    # Hidden width of h_θ's MLP (one hidden layer): small, as there are only a few thousand classes.
    map_hidden: int = 256
    # Epochs of full-batch Adam for h_θ.
    map_epochs: int = 2000
    # Class pairs sampled for h_θ's distance term.
    map_pairs: int = 20_000

    def __post_init__(self) -> None:
        if self.dim is not None and self.dim < 2:
            raise ConfigError(f"--dim is {self.dim}; the ball needs at least 2 dimensions (default: the store's size)")
        if self.epochs < 0 or self.map_epochs < 0:
            raise ConfigError(f"epochs ({self.epochs}) and map_epochs ({self.map_epochs}) must be >= 0")

    def embedding(self, dim: int) -> EmbeddingSettings:
        return EmbeddingSettings(
            dim=dim,
            epochs=self.epochs,
            burn_in=self.burn_in,
            init="tree",
            tree_scale=self.tree_scale,
            seed=self.seed,
            device=self.device,
        )


# h_θ -------------------------------------------------------------------------------------------


class HyperbolicMap(nn.Module):
    r"""h_θ: a fused (or text) vector to a point of the Poincaré ball, :math:`\exp_0(W_2\,\mathrm{GELU}(W_1 f))`.

    Args:
        in_dim: size of the input vectors (the fused taxonomy size, 384 with MiniLM).
        out_dim: dimension of the ball (the store's poincare size).
        hidden: width of the hidden layer (default: 256).

    Shapes: input [..., in_dim] -> output [..., out_dim], float64, norm < 1.
    """

    def __init__(self, in_dim: int, out_dim: int, hidden: int = 256) -> None:
        super().__init__()
        self.in_dim, self.out_dim, self.hidden = in_dim, out_dim, hidden
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, out_dim))
        self.double()

    def forward(self, vectors: torch.Tensor) -> torch.Tensor:
        return poincare.project(poincare.expmap0(self.mlp(vectors.to(torch.float64))))

    def to_ball(self, vectors: np.ndarray | torch.Tensor) -> np.ndarray:
        """Ball points (float64 [n, out_dim]) of ``vectors`` [n, in_dim] or [in_dim]."""
        x = torch.as_tensor(np.asarray(vectors), dtype=torch.float64)
        if x.shape[-1] != self.in_dim:
            raise ConfigError(f"h_θ maps {self.in_dim}-d vectors, got {x.shape[-1]}-d ones")
        device = next(self.parameters()).device
        with torch.no_grad():
            return self(x.to(device)).cpu().numpy()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.in_dim}, {self.out_dim}, hidden={self.hidden})"


@dataclass(frozen=True)
class MapFit:
    """How well h_θ reproduces the embedding on the classes it was trained on."""

    classes: int
    mean_point_error: float  # mean d(h(f_c), x_c)
    mean_pair_error: float  # mean |d(h(f_a), h(f_b)) - d(x_a, x_b)| over the sampled pairs
    acm1998: Reconstruction | None  # the ACM 1998 tree reconstructed from h_θ's points
    path: Path


def train_hyperbolic_map(
    fused: np.ndarray, targets: np.ndarray, settings: HyperbolicSettings
) -> tuple[HyperbolicMap, float, float]:
    """Fit h_θ (module docstring) on ``fused`` [n, f] -> ``targets`` [n, d]; returns it and its two mean errors."""
    device = select_device(settings.device)
    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    x = torch.as_tensor(fused, dtype=torch.float64, device=device)
    y = torch.as_tensor(targets, dtype=torch.float64, device=device)
    model = HyperbolicMap(x.shape[1], y.shape[1], settings.map_hidden).to(device)
    n = len(x)
    a = torch.randint(n, (settings.map_pairs,), generator=generator).to(device)
    b = torch.randint(n, (settings.map_pairs,), generator=generator).to(device)
    target_pairs = poincare.dist(y[a], y[b])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(settings.map_epochs):
        optimizer.zero_grad()
        h = model(x)
        loss = poincare.dist(h, y).pow(2).mean() + (poincare.dist(h[a], h[b]) - target_pairs).pow(2).mean()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        h = model(x)
        point_error = float(poincare.dist(h, y).mean())
        pair_error = float((poincare.dist(h[a], h[b]) - target_pairs).abs().mean())
    return model.cpu(), point_error, pair_error


def save_hyperbolic_map(
    model: HyperbolicMap, models_dir: Path, *, config: dict[str, Any], data_hash: str, classes: list[str]
) -> Path:
    """Save h_θ as ``<models_dir>/hyperbolic_map/<key>.pt`` (key: hash of config and data); returns the path."""
    key = hashlib.sha256(json.dumps({"config": config, "data": data_hash}, sort_keys=True).encode()).hexdigest()[:16]
    folder = Path(models_dir) / MODEL_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.pt"
    record = {
        "state_dict": model.state_dict(),
        "in_dim": model.in_dim,
        "out_dim": model.out_dim,
        "hidden": model.hidden,
        "config": config,
        "data_hash": data_hash,
        "classes": classes,
    }
    torch.save(record, path)
    (folder / "latest").write_text(path.name + "\n", encoding="utf-8")
    return path


def load_hyperbolic_map(models_dir: Path, key: str | None = None) -> HyperbolicMap:
    """h_θ saved by ``compute hyperbolic``: the one with ``key``, or the latest one written."""
    folder = Path(models_dir) / MODEL_FOLDER
    if key is None:
        latest = folder / "latest"
        if not latest.is_file():
            raise ConfigError(
                f"no hyperbolic map under {folder}; run `citegraph compute taxonomy` then `citegraph compute hyperbolic`"
            )
        path = folder / latest.read_text(encoding="utf-8").strip()
    else:
        path = folder / f"{key}.pt"
    if not path.is_file():
        raise ConfigError(f"{path} does not exist; rerun `citegraph compute hyperbolic`")
    record = torch.load(path, map_location="cpu", weights_only=True)
    model = HyperbolicMap(record["in_dim"], record["out_dim"], record["hidden"])
    model.load_state_dict(record["state_dict"])
    model.eval()
    return model


def data_hash(keys: list[str], *arrays: np.ndarray) -> str:
    """sha256 of the class keys and the float64 bytes of the arrays: what h_θ was trained on."""
    digest = hashlib.sha256("\n".join(keys).encode())
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return digest.hexdigest()


# reading the store -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TaxonomyTables:
    acm: pd.DataFrame  # id, scheme, fused, poincare
    arxiv: pd.DataFrame  # code, fused, poincare
    broader: pd.DataFrame  # source, target
    maps_to: pd.DataFrame  # source, target, ...
    in_category: pd.DataFrame  # source (paper id), target (code), score, inferred


def read_taxonomy(store: GraphStore) -> TaxonomyTables:
    acm = pd.DataFrame.from_records(store.query("acm_class_points"), columns=["id", "scheme", "fused", "poincare"])
    arxiv = pd.DataFrame.from_records(store.query("arxiv_category_points"), columns=["code", "fused", "poincare"])
    return TaxonomyTables(
        acm=acm,
        arxiv=arxiv,
        broader=store.read_edges("BROADER"),
        maps_to=store.read_edges("MAPS_TO"),
        in_category=store.read_edges("IN_CATEGORY"),
    )


def acm1998_reconstruction(tables: TaxonomyTables, points: pd.Series) -> Reconstruction | None:
    """Mean rank and MAP of the ACM 1998 tree from ``points`` (class id -> coordinates); None without the tree."""
    acm = tables.acm[tables.acm["scheme"] == ACM1998]
    if acm.empty:
        return None
    tree = acm1998_hierarchy(tables)
    coords = np.stack([np.asarray(points[name], dtype=np.float64) for name in tree.names])
    distances = poincare.pairwise_dist(torch.from_numpy(coords), torch.from_numpy(coords)).numpy()
    return reconstruction(distances, tree)


def acm1998_hierarchy(tables: TaxonomyTables) -> Hierarchy:
    """The ACM 1998 classes and their BROADER edges alone (no virtual nodes): the tree the quality figures rank."""
    ids = tables.acm.loc[tables.acm["scheme"] == ACM1998, "id"].tolist()
    index = {name: i for i, name in enumerate(ids)}
    edges = [
        (index[s], index[t])
        for s, t in zip(tables.broader["source"], tables.broader["target"])
        if s in index and t in index
    ]
    return Hierarchy(tuple(ids), np.asarray(edges, dtype=np.int64).reshape(-1, 2), np.zeros(len(ids), dtype=bool))


# papers ----------------------------------------------------------------------------------------


def paper_points(in_category: pd.DataFrame, class_points: pd.Series) -> pd.DataFrame:
    """``id``, ``poincare``: the weighted gyromidpoint of each paper's categories (module docstring).

    Weights: ``score`` on inferred edges (a missing score counts 1), 1 on given ones. Edges to
    categories without a point are ignored; a paper with none left gets no row.
    """
    edges = in_category[in_category["target"].isin(class_points.index)]
    if edges.empty:
        return pd.DataFrame({"id": pd.Series(dtype=object), "poincare": pd.Series(dtype=object)})
    inferred = edges["inferred"].fillna(False).astype(bool) if "inferred" in edges else False
    score = edges["score"].astype(float).fillna(1.0) if "score" in edges else 1.0
    weight = np.where(inferred, score, 1.0)
    codes, papers = pd.factorize(edges["source"])
    counts = np.bincount(codes)
    width = int(counts.max())
    dim = len(class_points.iloc[0])
    points = torch.zeros(len(papers), width, dim, dtype=torch.float64)
    weights = torch.zeros(len(papers), width, dtype=torch.float64)  # 0 weight: padding slots count nothing
    order = np.argsort(codes, kind="stable")
    slot = np.arange(len(codes)) - np.repeat(np.cumsum(counts) - counts, counts)  # position within each paper
    rows = codes[order]
    coords = np.stack([np.asarray(class_points[c], dtype=np.float64) for c in edges["target"].to_numpy()[order]])
    points[rows, slot] = torch.from_numpy(coords)
    weights[rows, slot] = torch.as_tensor(weight[order], dtype=torch.float64)
    midpoints = poincare.weighted_midpoint(points, weights)  # [papers, dim]
    return pd.DataFrame({"id": list(papers), "poincare": list(midpoints.numpy())})


# the compute step ------------------------------------------------------------------------------


@dataclass(frozen=True)
class HyperbolicReport:
    """What :func:`compute_hyperbolic` computed and wrote."""

    dim: int  # dimension trained in
    stored_dim: int  # dimension written (the store's poincare size)
    hierarchy_nodes: int  # nodes of the joint hierarchy, virtual ones included
    closure_pairs: int
    acm_written: int
    arxiv_written: int
    papers_written: int
    papers_cleared: int  # papers whose old coordinates were removed (no category any more)
    joint: Reconstruction  # the whole joint hierarchy (in-memory points)
    acm1998: Reconstruction | None  # ACM 1998 tree from the coordinates read back from the store
    map_fit: MapFit | None
    map_note: str  # why h_θ was not trained, or ""
    device: str
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [
            f"hyperbolic on {self.device}: {self.hierarchy_nodes} hierarchy nodes, {self.closure_pairs} closure pairs, "
            f"trained in {self.dim}-d, written as {self.stored_dim}-d",
            f"  poincare written on {self.acm_written} AcmClass, {self.arxiv_written} ArxivCategory, "
            f"{self.papers_written} Paper nodes ({self.papers_cleared} papers cleared)",
            f"  joint hierarchy: {self.joint}",
        ]
        if self.acm1998 is not None:
            lines.append(f"  ACM 1998 tree from the stored coordinates: {self.acm1998}")
        if self.map_fit is not None:
            fit = self.map_fit
            lines.append(
                f"  h_θ on {fit.classes} classes: mean point error {fit.mean_point_error:.3f}, "
                f"mean pair-distance error {fit.mean_pair_error:.3f}; saved to {fit.path}"
            )
            if fit.acm1998 is not None:
                lines.append(f"  ACM 1998 tree from h_θ(fused): {fit.acm1998}")
        else:
            lines.append(f"  h_θ not trained: {self.map_note}")
        lines.append("  " + ", ".join(f"{stage} {s:.1f}s" for stage, s in self.seconds.items()))
        return "\n".join(lines)


def compute_hyperbolic(
    store: GraphStore, settings: HyperbolicSettings | None = None, *, models_dir: Path | None = None
) -> HyperbolicReport:
    """Embed the taxonomy, place the papers, fit h_θ; write ``poincare`` back (module docstring).

    ``models_dir`` is where h_θ is saved (the CLI passes ``$CITEGRAPH_CACHE/models``); None: not saved.
    """
    settings = settings or HyperbolicSettings()
    stored_dim = store.schema.sizes.poincare
    dim = settings.dim or stored_dim
    if dim > stored_dim:
        raise ConfigError(
            f"--dim {dim} is larger than the store's poincare size {stored_dim}; "
            f"use --dim <= {stored_dim} or a store created with CITEGRAPH_POINCARE_DIM={dim}"
        )
    device = select_device(settings.device)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = now - clock
        clock = now

    tables = read_taxonomy(store)
    if tables.acm.empty and tables.arxiv.empty:
        raise SchemaError(f"{store.describe()} has no AcmClass or ArxivCategory nodes; run `citegraph ingest taxonomy`")
    hierarchy = taxonomy_hierarchy(
        tables.acm[["id", "scheme"]], tables.arxiv["code"].tolist(), tables.broader, tables.maps_to
    )
    lap("read")
    embedding = train_embedding(hierarchy, replace(settings.embedding(dim), device=str(device)))
    joint = reconstruction(embedding.distances(), hierarchy)
    lap("train")

    padded = np.zeros((len(hierarchy), stored_dim))
    padded[:, :dim] = embedding.points.numpy()  # zero padding: an isometric copy of the trained ball
    points = pd.Series(list(padded), index=list(hierarchy.names))
    acm_frame = pd.DataFrame({"id": tables.acm["id"], "poincare": list(points[tables.acm["id"]])})
    arxiv_frame = pd.DataFrame({"code": tables.arxiv["code"], "poincare": list(points[tables.arxiv["code"]])})
    acm_written = store.write_node_properties("AcmClass", "id", acm_frame)
    arxiv_written = store.write_node_properties("ArxivCategory", "code", arxiv_frame)
    papers = paper_points(tables.in_category, points[tables.arxiv["code"]])
    previous = pd.DataFrame.from_records(store.query("papers_with_poincare"), columns=["id", "poincare"])
    stale = previous.loc[~previous["id"].isin(papers["id"]), ["id"]].assign(poincare=None)
    papers_written = store.write_node_properties("Paper", "id", papers) if len(papers) else 0
    papers_cleared = store.write_node_properties("Paper", "id", stale) if len(stale) else 0
    lap("write")

    stored = read_taxonomy(store)  # verify from what the store now holds
    acm1998 = acm1998_reconstruction(stored, stored.acm.set_index("id")["poincare"])
    lap("verify")

    map_fit, note = None, ""
    classes = pd.concat(
        [stored.acm[["id", "fused"]], stored.arxiv.rename(columns={"code": "id"})[["id", "fused"]]], ignore_index=True
    )
    classes = classes[classes["fused"].notna()]
    if classes.empty:
        note = "no class has `fused` yet; run `citegraph compute taxonomy` first, then rerun this step for h_θ"
        log.warning("h_θ not trained: %s", note)
    elif models_dir is None:
        note = "no models folder given (the CLI uses $CITEGRAPH_CACHE/models)"
    else:
        map_fit = _fit_map(stored, classes, points, settings, models_dir, dim=dim)
    lap("h_theta")

    report = HyperbolicReport(
        dim=dim,
        stored_dim=stored_dim,
        hierarchy_nodes=len(hierarchy),
        closure_pairs=len(hierarchy.closure),
        acm_written=acm_written,
        arxiv_written=arxiv_written,
        papers_written=papers_written,
        papers_cleared=papers_cleared,
        joint=joint,
        acm1998=acm1998,
        map_fit=map_fit,
        map_note=note,
        device=str(device),
        seconds=seconds,
    )
    log.info("%s", report.summary())
    return report


def _fit_map(
    tables: TaxonomyTables,
    classes: pd.DataFrame,
    points: pd.Series,
    settings: HyperbolicSettings,
    models_dir: Path,
    *,
    dim: int,
) -> MapFit:
    keys = classes["id"].tolist()
    fused = np.stack([np.asarray(v, dtype=np.float64) for v in classes["fused"]])
    targets = np.stack([points[k] for k in keys])
    model, point_error, pair_error = train_hyperbolic_map(fused, targets, settings)
    config = {"trained_dim": dim, **{k: v for k, v in asdict(settings).items() if k != "device"}}
    path = save_hyperbolic_map(
        model, models_dir, config=config, data_hash=data_hash(keys, fused, targets), classes=keys
    )
    mapped = pd.Series(list(model.to_ball(fused)), index=keys)
    tree_ids = tables.acm.loc[tables.acm["scheme"] == ACM1998, "id"]
    acm1998 = acm1998_reconstruction(tables, mapped) if tree_ids.isin(mapped.index).all() and len(tree_ids) else None
    return MapFit(len(keys), point_error, pair_error, acm1998, path)


__all__ = [
    "HyperbolicMap",
    "HyperbolicReport",
    "HyperbolicSettings",
    "MapFit",
    "acm1998_hierarchy",
    "acm1998_reconstruction",
    "compute_hyperbolic",
    "data_hash",
    "load_hyperbolic_map",
    "paper_points",
    "read_taxonomy",
    "save_hyperbolic_map",
    "train_hyperbolic_map",
]
