r"""``citegraph compute hyperbolic``: taxonomy classes and papers in the Poincaré ball, and the map h_θ.

What it writes (curvature :math:`-1`, float64):

* ``poincare`` on every AcmClass and ArxivCategory: a Poincaré embedding (Nickel & Kiela, 2017)
  of the joint taxonomy of :func:`gnn.hyperbolic.hierarchy.taxonomy_hierarchy` (ACM schemes via BROADER,
  arXiv categories under their archive and, via MAPS_TO, under the ACM classes they map to,
  everything under one root), trained by :func:`gnn.hyperbolic.embedding.train_embedding` from
  Sarkar's tree embedding, for at most ``epochs`` epochs: it stops once the loss has stopped improving
  (``tolerance``, ``window``). The layout depends on the taxonomy and the settings alone, not on the
  papers, so it is saved under ``<classes_dir>/`` (:data:`HYPERBOLIC_CLASSES`) by a hash of the
  hierarchy and the settings, and a later run on the same taxonomy with the same settings loads it
  instead of training (:func:`gnn.hyperbolic.embedding.cached_embedding`; the report says which).
  Trained in ``dim`` dimensions and written in the store's size
  (``CITEGRAPH_POINCARE_DIM``, default 16), zero-padded: :math:`\mathbb{D}^{dim}` sits
  isometrically in :math:`\mathbb{D}^{16}` as the points whose last coordinates are 0, so
  every distance is unchanged;
* ``poincare`` on every paper with categories: the weighted Möbius gyromidpoint
  (:func:`gnn.hyperbolic.poincare.weighted_midpoint`) of its categories' points,

  .. math::
      p = m\bigl(x_{c_1}, \ldots, x_{c_k};\ \alpha_1, \ldots, \alpha_k\bigr), \qquad
      \alpha_i = \begin{cases} \mathrm{score}_i & \text{IN\_CATEGORY inferred} \\ 1 & \text{otherwise} \end{cases}

  so a paper in one category sits on it, and a paper in two sits on the geodesic between them,
  nearer the one with the higher score;
* ``poincare`` on every other paper with a text embedding (its inferred categories all fell below
  the calibrated threshold, so it has no IN_CATEGORY edge): the same midpoint over its
  ``place_top_k`` categories nearest by cosine between its ``embedding`` and their ``fused``
  vectors, weighted by that cosine — where the reranker places such a paper
  (:meth:`gnn.rerank.knowledge.TaxonomyPlaces.infer`). No category edge is written for it, and the
  report counts these papers apart. Papers that had coordinates and now have neither a category
  nor an embedding get null (a rerun leaves the same graph). A paper that holds its new coordinates
  already, bit for bit, is not written again (a rerun on a saved layout writes no paper);
* a learned map :math:`h_\theta` (:mod:`gnn.hyperbolic.map`) from fused class vectors
  (``fused``, written by ``compute taxonomy``) into the ball,
  :math:`h_\theta(f) = \exp_0(\text{bounded } \mathrm{MLP}_\theta(f))`, trained with Nickel &
  Kiela's ranking loss on its *own* points over the hierarchy of the classes that have ``fused``
  (the joint hierarchy without its virtual nodes), from each class's path vector (its fused
  vector averaged with its ancestors'). SymTax (Goyal et al., 2024) uses Poincaré distances
  between projected class vectors as a reranker feature. The model is saved under
  ``<map_dir>/`` (:data:`HYPERBOLIC_MAP`) with its config, a hash of its training data and the classes'
  h_θ points; :func:`gnn.hyperbolic.map.load_hyperbolic_map` gives it back
  (:meth:`~gnn.hyperbolic.map.HyperbolicMap.to_ball` maps any fused-size vector). A saved map with
  the same config and data hash is loaded instead of trained (the report says so). Without
  ``fused`` in the store (taxonomy fusion not run) h_θ is skipped, said so in the report, and
  the coordinates are still written. Nothing that recommends or serves reads h_θ (benchmarks
  do), so ``fit_map=False`` (``--no-map``) writes the coordinates alone and leaves h_θ to a later run.

The report gives the counts written, whether the class layout and h_θ were trained or loaded
from the cache (and for how many epochs the layout trained), and the reconstruction of the ACM
1998 tree (mean rank, MAP; :func:`gnn.hyperbolic.hierarchy.reconstruction`) computed from the
coordinates *read back* from the store, and from h_θ's points of the ACM 1998 classes.

This module is about 550 lines: the step's reads, the placement of classes and papers and the
write-back share the store's row layout, so they stay together; the geometry, the hierarchy
embedding and h_θ are in their own modules.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from gnn.device import on_device, select_device
from gnn.hyperbolic import poincare
from gnn.hyperbolic.embedding import PoincareEmbeddingSettings, cached_embedding
from gnn.hyperbolic.hierarchy import Hierarchy, Reconstruction, reconstruction, taxonomy_hierarchy
from gnn.hyperbolic.map import (
    HyperbolicMap,
    MapSettings,
    data_hash,
    load_hyperbolic_map,
    load_saved_map,
    save_hyperbolic_map,
    train_hyperbolic_map,
)
from gnn.taxonomy.categories import top_categories
from graph.errors import ConfigError, SchemaError
from graph.files import ModelFile
from graph.store import GraphStore

log = logging.getLogger(__name__)

# The Poincaré layouts of the taxonomy classes, one file per hash of the hierarchy and the settings:
# <cache>/models/hyperbolic_classes/.
HYPERBOLIC_CLASSES = ModelFile("hyperbolic_classes", "hyperbolic_classes")
# The map h_θ, one file per config and data hash: <cache>/models/hyperbolic_map/.
HYPERBOLIC_MAP = ModelFile("hyperbolic_map", "hyperbolic_map")

ACM1998 = "1998"


@dataclass(frozen=True)
class HyperbolicSettings:
    """Settings of ``citegraph compute hyperbolic``."""

    # Dimension trained in; None: the store's poincare size (CITEGRAPH_POINCARE_DIM, default 16). Smaller
    # values are written zero-padded (an isometric copy), so benchmarks can train dim 2/5/10 into one store.
    dim: int | None = field(
        default=None,
        metadata={"help": "dimension of the Poincaré embedding (default: the store's, CITEGRAPH_POINCARE_DIM=16)"},
    )
    # Epochs of the Nickel & Kiela refinement after the tree initialisation, at most (300 reach MAP 0.999 at dim 5
    # on the ACM 1998 tree; see docs/results.md).
    epochs: int = field(
        default=300,
        metadata={
            "help": "Nickel & Kiela refinement epochs after the tree init, at most: training stops earlier once the "
            "loss has stopped improving"
        },
    )
    # Burn-in epochs at a tenth of the learning rate before them.
    burn_in: int = 20
    # Stop the refinement before `epochs` once the mean loss of the last `window` epochs is less than this fraction
    # below the mean of the `window` before (gnn/hyperbolic/embedding.py); 0: always run `epochs`. On the joint
    # taxonomy (dim 16) 1e-2 stops after 214 of 300 epochs: ACM 1998 MAP 0.9994 (0.9996 at 300), joint hierarchy
    # MAP 0.848 (0.883 at 300, still rising); 2e-2 stops after 93 (joint 0.764), 5e-3 after 285 (joint 0.882).
    # benchmarks/hyperbolic_convergence.py, docs/results.md.
    tolerance: float = field(
        default=1e-2,
        metadata={
            "help": "stop the class layout's training once 10 epochs lower the loss by less than this fraction "
            "(0: run every --epochs epoch)"
        },
    )
    window: int = 10
    # Edge length τ of Sarkar's tree initialisation; depth h starts at distance hτ from the origin.
    tree_scale: float = 3.0
    # Seed of the initialisation, the negatives and h_θ.
    seed: int = 0
    # "cpu", "cuda", "cuda:N", or None for CUDA when available.
    device: str | None = None
    # How h_θ trains (gnn/hyperbolic/map.py); its seed and device are taken from the two fields above.
    map_settings: MapSettings = field(default_factory=MapSettings)
    # Fit h_θ in this run. Nothing served reads it (benchmarks do), so a build may write the coordinates first
    # and fit h_θ in a later run.
    fit_map: bool = field(
        default=True,
        metadata={
            "help": "fit h_θ (nothing served reads it; --no-map writes the coordinates alone, a later --map run fits it)"
        },
    )
    # Papers without categories but with an embedding sit at the midpoint of this many nearest categories
    # (by cosine to their fused vectors); 0 leaves them without coordinates.
    place_top_k: int = 3

    def __post_init__(self) -> None:
        if self.dim is not None and self.dim < 2:
            raise ConfigError(f"--dim is {self.dim}; the ball needs at least 2 dimensions (default: the store's size)")
        if self.epochs < 0:
            raise ConfigError(f"epochs is {self.epochs}; use >= 0 (default 300)")
        if self.tolerance < 0:
            raise ConfigError(f"--tolerance is {self.tolerance}; use >= 0 (default 1e-2, 0: run every epoch)")
        if self.place_top_k < 0:
            raise ConfigError(f"place_top_k is {self.place_top_k}; use >= 0 (default 3, 0: off)")

    def embedding(self, dim: int) -> PoincareEmbeddingSettings:
        return PoincareEmbeddingSettings(
            dim=dim,
            epochs=self.epochs,
            burn_in=self.burn_in,
            tolerance=self.tolerance,
            window=self.window,
            init="tree",
            tree_scale=self.tree_scale,
            seed=self.seed,
            device=self.device,
        )


# h_θ -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapFit:
    """How well h_θ's own points keep the hierarchy of the classes it was trained on."""

    classes: int
    inputs: str  # "path" or "fused" (MapSettings.inputs)
    hierarchy: Reconstruction  # the hierarchy of the classes with `fused`, from h_θ's points
    acm1998: Reconstruction | None  # the ACM 1998 tree reconstructed from h_θ's points
    final_loss: float  # mean loss of the last 100 steps (of the run that trained it, when loaded)
    path: Path
    from_cache: bool = False  # loaded from `path` (same config and data), not trained


# reading the store -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TaxonomyTables:
    acm: pd.DataFrame  # id, scheme, fused, poincare
    arxiv: pd.DataFrame  # code, fused, poincare
    broader: pd.DataFrame  # source, target
    maps_to: pd.DataFrame  # source, target, ...
    in_category: pd.DataFrame  # source (paper id), target (code), score, inferred


def read_taxonomy(store: GraphStore) -> TaxonomyTables:
    """The taxonomy tables, each sorted by its keys: node order decides the initial layout and the
    training batches, so sorting makes the trained points independent of the order a backend
    returns rows in (Neo4j and the embedded store give the same coordinates)."""

    def by_keys(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        return frame.sort_values(keys, kind="stable").reset_index(drop=True) if len(frame) else frame

    acm = pd.DataFrame.from_records(store.query("acm_class_points"), columns=["id", "scheme", "fused", "poincare"])
    arxiv = pd.DataFrame.from_records(store.query("arxiv_category_points"), columns=["code", "fused", "poincare"])
    edge_keys = ["source", "target"]
    return TaxonomyTables(
        acm=by_keys(acm, ["id"]),
        arxiv=by_keys(arxiv, ["code"]),
        broader=by_keys(store.read_edges("BROADER"), edge_keys),
        maps_to=by_keys(store.read_edges("MAPS_TO"), edge_keys),
        in_category=by_keys(store.read_edges("IN_CATEGORY"), edge_keys),
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


def text_placed_points(
    store: GraphStore, tables: TaxonomyTables, class_points: pd.Series, placed: set[str], top_k: int
) -> pd.DataFrame:
    """``id``, ``poincare`` of the papers with an ``embedding`` and not in ``placed`` (module docstring):
    the cosine-weighted midpoint of their ``top_k`` nearest categories by ``fused`` vector. Empty when
    no category has a fused vector (``compute taxonomy`` not run) or no such paper has an embedding."""
    empty = pd.DataFrame({"id": pd.Series(dtype=object), "poincare": pd.Series(dtype=object)})
    arxiv = tables.arxiv[tables.arxiv["fused"].notna()]
    arxiv = arxiv[arxiv["code"].isin(class_points.index)]
    if arxiv.empty:
        return empty
    fused = np.stack([np.asarray(v, dtype=np.float32) for v in arxiv["fused"]])
    fused /= np.linalg.norm(fused, axis=1, keepdims=True).clip(min=1e-12)
    table = store.query_arrow("node_embeddings", identifiers={"LABEL": "Paper"})  # bulk: 100k+ vectors
    if table.num_rows == 0:
        return empty
    all_ids = np.asarray(table.column("id").to_pylist(), dtype=object)
    keep = np.asarray([pid not in placed for pid in all_ids], dtype=bool)
    if not keep.any():
        return empty
    flat = table.column("embedding").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    matrix = np.asarray(flat, dtype=np.float32).reshape(table.num_rows, -1)
    if matrix.shape[1] != fused.shape[1]:
        log.warning(
            "papers not placed by text: fused vectors are %d-d, embeddings %d-d", fused.shape[1], matrix.shape[1]
        )
        return empty
    order = np.argsort(all_ids[keep].astype(str), kind="stable")  # the same rows in any backend's order
    ids, vectors = all_ids[keep][order].tolist(), matrix[keep][order]
    top, scores = top_categories(vectors, fused, top_k)
    weights = np.clip(scores, 1e-6, None).astype(np.float64)
    coords = np.stack([np.asarray(class_points[c], dtype=np.float64) for c in arxiv["code"]])
    midpoints = poincare.weighted_midpoint(torch.from_numpy(coords[top]), torch.from_numpy(weights))
    return pd.DataFrame({"id": ids, "poincare": list(midpoints.numpy())})


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
    papers_written: int  # papers that have coordinates now
    papers_unchanged: int  # of papers_written: already held these very coordinates, so not written again
    papers_cleared: int  # papers whose old coordinates were removed (no category any more)
    papers_placed_by_text: int  # of papers_written: no category, placed by their embedding
    joint: Reconstruction  # the whole joint hierarchy (in-memory points)
    epochs: int  # refinement epochs the class layout was trained for (fewer than the cap when the loss converged)
    classes_from_cache: bool  # the class layout was loaded from classes_path, not trained
    classes_path: Path | None  # where the class layout is saved; None: not saved (no folder given)
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
            f"{self.papers_written} Paper nodes ({self.papers_placed_by_text} of them placed by their text, "
            f"without categories; {self.papers_unchanged} already held them and were not rewritten; "
            f"{self.papers_cleared} papers cleared)",
            f"  class layout {self._classes_origin()}",
            f"  joint hierarchy: {self.joint}",
        ]
        if self.acm1998 is not None:
            lines.append(f"  ACM 1998 tree from the stored coordinates: {self.acm1998}")
        if self.map_fit is not None:
            fit = self.map_fit
            origin = f"loaded from cache {fit.path}" if fit.from_cache else f"saved to {fit.path}"
            lines.append(
                f"  h_θ on {fit.classes} classes ({fit.inputs} vectors), final loss {fit.final_loss:.3f}; {origin}"
            )
            lines.append(f"  class hierarchy from h_θ's points: {fit.hierarchy}")
            if fit.acm1998 is not None:
                lines.append(f"  ACM 1998 tree from h_θ's points: {fit.acm1998}")
        else:
            lines.append(f"  h_θ not trained: {self.map_note}")
        lines.append("  " + ", ".join(f"{stage} {s:.1f}s" for stage, s in self.seconds.items()))
        return "\n".join(lines)

    def _classes_origin(self) -> str:
        trained = f"{self.epochs} epochs after the burn-in"
        if self.classes_from_cache:
            return f"loaded from cache {self.classes_path} (trained for {trained})"
        saved = f"; saved to {self.classes_path}" if self.classes_path is not None else ""
        return f"trained for {trained}{saved}"


def compute_hyperbolic(
    store: GraphStore,
    settings: HyperbolicSettings | None = None,
    *,
    map_dir: Path | None = None,
    classes_dir: Path | None = None,
) -> HyperbolicReport:
    """Embed the taxonomy, place the papers, fit h_θ; write ``poincare`` back (module docstring).

    ``map_dir`` is where h_θ is saved (the CLI passes ``$CITEGRAPH_CACHE/models/hyperbolic_map``); None: not saved,
    not fitted. ``classes_dir`` is where the class layout is saved and looked up (the CLI passes
    ``$CITEGRAPH_CACHE/models/hyperbolic_classes``); None: trained every run, not saved.
    """
    settings = settings or HyperbolicSettings()
    stored_dim = store.schema.sizes.poincare
    dim = _trained_dim(settings, stored_dim)
    device = select_device(settings.device)
    laps = _Laps()

    tables = read_taxonomy(store)
    if tables.acm.empty and tables.arxiv.empty:
        raise SchemaError(f"{store.describe()} has no AcmClass or ArxivCategory nodes; run `citegraph ingest taxonomy`")
    hierarchy = taxonomy_hierarchy(
        tables.acm[["id", "scheme"]], tables.arxiv["code"].tolist(), tables.broader, tables.maps_to
    )
    laps.lap("read")
    with on_device(device):
        layout = cached_embedding(hierarchy, replace(settings.embedding(dim), device=str(device)), classes_dir)
    embedding = layout.embedding
    joint = reconstruction(embedding.distances(), hierarchy)
    laps.lap("load" if layout.from_cache else "train")

    padded = np.zeros((len(hierarchy), stored_dim))
    padded[:, :dim] = embedding.points.numpy()  # zero padding: an isometric copy of the trained ball
    points = pd.Series(list(padded), index=list(hierarchy.names))
    acm_written, arxiv_written = _write_class_points(store, tables, points)
    papers = _write_paper_points(store, tables, points, settings.place_top_k)
    laps.lap("write")

    stored = read_taxonomy(store)  # verify from what the store now holds
    acm1998 = acm1998_reconstruction(stored, stored.acm.set_index("id")["poincare"])
    laps.lap("verify")

    if settings.fit_map:
        with on_device(device):
            map_fit, note = _map_if_possible(stored, hierarchy, settings, map_dir, dim=dim, device=str(device))
        laps.lap("h_theta")
    else:
        map_fit, note = None, "not asked for (--no-map); `citegraph compute hyperbolic --map` fits it"

    report = HyperbolicReport(
        dim=dim,
        stored_dim=stored_dim,
        hierarchy_nodes=len(hierarchy),
        closure_pairs=len(hierarchy.closure),
        acm_written=acm_written,
        arxiv_written=arxiv_written,
        papers_written=papers.written,
        papers_unchanged=papers.unchanged,
        papers_cleared=papers.cleared,
        papers_placed_by_text=papers.placed_by_text,
        joint=joint,
        epochs=embedding.epochs,
        classes_from_cache=layout.from_cache,
        classes_path=layout.path,
        acm1998=acm1998,
        map_fit=map_fit,
        map_note=note,
        device=str(device),
        seconds=laps.seconds,
    )
    log.debug("%s", report.summary())  # the caller prints it (the CLI does)
    return report


class _Laps:
    """Seconds per stage of the step, each measured from the end of the one before."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._clock = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = now - self._clock
        self._clock = now


def _trained_dim(settings: HyperbolicSettings, stored_dim: int) -> int:
    """The dimension to train in: ``settings.dim``, or the store's, never more than the store holds."""
    dim = settings.dim or stored_dim
    if dim > stored_dim:
        raise ConfigError(
            f"--dim {dim} is larger than the store's poincare size {stored_dim}; "
            f"use --dim <= {stored_dim} or a store created with CITEGRAPH_POINCARE_DIM={dim}"
        )
    return dim


def _write_class_points(store: GraphStore, tables: TaxonomyTables, points: pd.Series) -> tuple[int, int]:
    """``poincare`` on every AcmClass and ArxivCategory; how many of each were written."""
    acm_frame = pd.DataFrame({"id": tables.acm["id"], "poincare": list(points[tables.acm["id"]])})
    arxiv_frame = pd.DataFrame({"code": tables.arxiv["code"], "poincare": list(points[tables.arxiv["code"]])})
    return (
        store.write_node_properties("AcmClass", "id", acm_frame),
        store.write_node_properties("ArxivCategory", "code", arxiv_frame),
    )


@dataclass(frozen=True)
class _PaperWrites:
    written: int  # papers given coordinates
    unchanged: int  # of written: the store held the same coordinates already (not rewritten)
    cleared: int  # papers whose old coordinates were removed
    placed_by_text: int  # of written: no category, placed by their embedding


def _write_paper_points(store: GraphStore, tables: TaxonomyTables, points: pd.Series, top_k: int) -> _PaperWrites:
    """``poincare`` on papers from their categories, else (``top_k`` > 0) from their text; null on stale ones.

    Papers whose stored coordinates are already these, bit for bit (a rerun on the same layout), are not
    written again: a rerun writes only what changed.
    """
    papers = paper_points(tables.in_category, points[tables.arxiv["code"]])
    by_text = text_placed_points(store, tables, points, set(papers["id"]), top_k) if top_k else papers.iloc[:0]
    papers = pd.concat([papers, by_text], ignore_index=True) if len(by_text) else papers
    previous = pd.DataFrame.from_records(store.query("papers_with_poincare"), columns=["id", "poincare"])
    stale = previous.loc[~previous["id"].isin(papers["id"]), ["id"]].assign(poincare=None)
    stored = dict(zip(previous["id"], previous["poincare"]))
    unchanged = np.fromiter(
        (
            pid in stored and np.array_equal(np.asarray(stored[pid], dtype=np.float64), new)
            for pid, new in zip(papers["id"], papers["poincare"])
        ),
        dtype=bool,
        count=len(papers),
    )
    changed = papers[~unchanged]
    if len(changed):
        store.write_node_properties("Paper", "id", changed)
    cleared = store.write_node_properties("Paper", "id", stale) if len(stale) else 0
    return _PaperWrites(len(papers), int(unchanged.sum()), cleared, len(by_text))


def _map_if_possible(
    tables: TaxonomyTables,
    hierarchy: Hierarchy,
    settings: HyperbolicSettings,
    map_dir: Path | None,
    *,
    dim: int,
    device: str,
) -> tuple[MapFit | None, str]:
    """h_θ fitted on the classes with ``fused`` (:func:`_fit_map`), or None and why it was not trained."""
    classes, fused = fused_class_hierarchy(tables, hierarchy)
    if len(classes) == 0:
        note = "no class has `fused` yet; run `citegraph compute taxonomy` first, then rerun this step for h_θ"
        log.warning("h_θ not trained: %s", note)
        return None, note
    if len(classes.closure) == 0:
        note = "no class with `fused` has an ancestor or descendant with one (check the BROADER and MAPS_TO edges)"
        log.warning("h_θ not trained: %s", note)
        return None, note
    if map_dir is None:
        return None, "no models folder given (the CLI uses $CITEGRAPH_CACHE/models)"
    return _fit_map(tables, classes, fused, settings, map_dir, dim=dim, device=device), ""


def fused_class_hierarchy(tables: TaxonomyTables, hierarchy: Hierarchy) -> tuple[Hierarchy, np.ndarray]:
    """What h_θ trains on: ``hierarchy`` restricted to the classes with ``fused``, and their vectors [n, f].

    Virtual nodes have no vector, so they drop out, and classes that reached each other only through
    them (the ACM top classes through their scheme node) become unrelated.
    """
    frames = [tables.acm[["id", "fused"]], tables.arxiv.rename(columns={"code": "id"})[["id", "fused"]]]
    classes = pd.concat(frames, ignore_index=True)
    classes = classes[classes["fused"].notna()]
    fused_by = dict(zip(classes["id"], classes["fused"]))
    sub, _ = hierarchy.subset(np.array([name in fused_by for name in hierarchy.names]))
    if len(sub) == 0:
        return sub, np.empty((0, 0))
    return sub, np.stack([np.asarray(fused_by[name], dtype=np.float64) for name in sub.names])


def _fit_map(
    tables: TaxonomyTables,
    classes: Hierarchy,
    fused: np.ndarray,
    settings: HyperbolicSettings,
    map_dir: Path,
    *,
    dim: int,
    device: str,
) -> MapFit:
    """Train h_θ on ``classes`` (:func:`fused_class_hierarchy`) and save it, or load the one saved for the same
    config and data; rank its points."""
    keys = list(classes.names)
    map_settings = replace(settings.map_settings, seed=settings.seed, device=device)
    config = {"dim": dim, **{k: v for k, v in asdict(map_settings).items() if k != "device"}}
    digest = data_hash(keys, fused, classes.edges)
    saved = load_saved_map(map_dir, config=config, data_hash=digest, classes=keys)
    if saved is not None:
        log.info("h_θ loaded from %s", saved.path)
        points, final_loss, path = saved.points, saved.final_loss, saved.path
    else:
        trained = train_hyperbolic_map(fused, classes, dim, map_settings)
        points = trained.points
        final_loss = float(np.mean(trained.losses[-100:])) if trained.losses else float("nan")
        path = save_hyperbolic_map(
            trained.model, map_dir, config=config, data_hash=digest, classes=keys, points=points, final_loss=final_loss
        )
    mapped = pd.Series(list(points), index=keys)
    tree_ids = tables.acm.loc[tables.acm["scheme"] == ACM1998, "id"]
    acm1998 = acm1998_reconstruction(tables, mapped) if len(tree_ids) and tree_ids.isin(mapped.index).all() else None
    distances = poincare.pairwise_dist(torch.from_numpy(points), torch.from_numpy(points)).numpy()
    fit = reconstruction(distances, classes)
    return MapFit(len(keys), map_settings.inputs, fit, acm1998, final_loss, path, saved is not None)


__all__ = [
    "HYPERBOLIC_CLASSES",
    "HYPERBOLIC_MAP",
    "HyperbolicMap",
    "HyperbolicReport",
    "HyperbolicSettings",
    "MapFit",
    "MapSettings",
    "acm1998_hierarchy",
    "acm1998_reconstruction",
    "compute_hyperbolic",
    "data_hash",
    "fused_class_hierarchy",
    "load_hyperbolic_map",
    "paper_points",
    "read_taxonomy",
    "save_hyperbolic_map",
    "train_hyperbolic_map",
]
