"""``citegraph compute taxonomy``: taxonomy fusion written back to the graph (SymTax, §3).

Steps, each reading from the store and writing back:

1. the joint taxonomy graph (:mod:`gnn.taxonomy.graph`): every ArxivCategory and AcmClass with
   text features; **MAPS_TO** inferred for the cs categories whose description names no ACM class
   (``score``, ``inferred: true``), replacing earlier inferred ones;
2. fusion (:mod:`gnn.taxonomy.fusion`): ``vector``, ``gat`` or ``appnp``; **fused** on every class node;
3. papers (:mod:`gnn.taxonomy.categories`): **IN_CATEGORY** ``{score, inferred: true}`` for papers without
   given categories that have a text embedding, replacing earlier inferred ones (given edges, with
   ``inferred`` false or null, are written back unchanged); **taxonomy** on every paper with
   categories, given or inferred (the mean of their fused vectors, inferred ones weighted by score),
   and on every other paper with an embedding — its categories all scored below the threshold, so
   it gets no edge — from its ``top_k`` nearest categories weighted by their cosine; cleared on
   papers with neither.

Running it twice with the same settings leaves the same graph: the split, the negatives and the
training are seeded, a trained model is loaded from ``$CITEGRAPH_CACHE/models`` by the hash of its
settings and data, and inferred edges are replaced, never added to.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from gnn.device import on_device
from gnn.taxonomy.categories import (
    Calibration,
    CategorySettings,
    calibrate,
    candidate_categories,
    canonical_codes,
    infer_categories,
    paper_vectors,
)
from gnn.taxonomy.fusion import FusionResult, FusionSettings, fuse
from gnn.taxonomy.graph import (
    ACM,
    ARXIV,
    JointTaxonomy,
    MapsToInference,
    apply_maps_to,
    encode_classes,
    infer_maps_to,
    read_taxonomy,
    write_maps_to,
)
from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError, DataError
from graph.schema import SOURCE_COLUMN, TARGET_COLUMN
from graph.store import GraphStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaxonomySettings:
    """Settings of ``citegraph compute taxonomy``."""

    fusion: FusionSettings = field(default_factory=FusionSettings)
    categories: CategorySettings = field(default_factory=CategorySettings)
    # Inferred MAPS_TO per unmapped cs category at most, and a fixed minimum cosine (None: the lower
    # quartile of the given mappings' cosines, see gnn.taxonomy.graph).
    maps_to_top_k: int = 3
    maps_to_min_score: float | None = None
    # Papers per read / write batch: bounds memory (a 384-d vector is 1.5 kB) and shows progress.
    batch_size: int = 20_000


@dataclass(frozen=True)
class TaxonomyReport:
    categories: int  # ArxivCategory nodes given `fused`
    classes: int  # AcmClass nodes given `fused`
    maps_to: MapsToInference
    fusion: FusionResult
    calibration: Calibration | None  # None when no paper needed inference
    papers_given: int  # papers with given categories (taxonomy from them)
    papers_inferred: int  # papers with inferred categories (taxonomy from them)
    inferred_edges: int  # IN_CATEGORY {inferred: true} written
    papers_uncategorised: int  # papers with an embedding whose every category scored below the threshold
    # (no IN_CATEGORY edge; their taxonomy vector comes from their nearest categories)
    papers_without_embedding: int  # papers without given categories and without an embedding: skipped
    cleared: int  # papers whose earlier taxonomy vector was removed
    seconds: float

    def summary(self) -> str:
        f = self.fusion
        test = f.metrics["test"]
        lines = [
            f"taxonomy: {self.categories} arXiv categories + {self.classes} ACM classes fused with `{f.method}` "
            f"({'model loaded from cache' if f.from_cache else f'{f.seconds:.1f}s training'}"
            f"{f', {f.epochs} epochs, best {f.best_epoch}' if f.method != 'vector' else ''})",
            f"  link prediction on {f.held_out['test']} held-out taxonomy edges: AUC {test['auc']:.4f} AP {test['ap']:.4f}"
            f" (text only: AUC {f.baseline['test']['auc']:.4f} AP {f.baseline['test']['ap']:.4f})",
            f"  inferred MAPS_TO: {len(self.maps_to.edges)} edges for {', '.join(self.maps_to.categories) or 'no category'}"
            f" (threshold {self.maps_to.threshold:.3f})",
        ]
        for row in self.maps_to.edges.itertuples(index=False):
            lines.append(f"    {row.source} -> {row.target} ({row.score:.3f})")
        if self.calibration is not None:
            c = self.calibration
            held = c.held_out[c.infer_from]
            lines.append(
                f"  categories inferred from {c.infer_from} class vectors, threshold {c.threshold:.3f}; on {held.papers} "
                f"held-out papers with known categories: P@1 {held.precision_at_1:.3f}, P@3 {held.precision_at_3:.3f}, "
                f"precision {held.precision:.3f}, recall {held.recall:.3f}"
            )
        lines.append(
            f"  papers: {self.papers_given} with given categories, {self.papers_inferred} with inferred ones "
            f"({self.inferred_edges} IN_CATEGORY edges), {self.papers_uncategorised} below the threshold "
            "(taxonomy vector from their nearest categories, no edge), "
            f"{self.papers_without_embedding} without embedding; {self.cleared} stale vectors cleared; {self.seconds:.1f}s"
        )
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        c = self.calibration
        return {
            "fusion": self.fusion.method,
            "link_prediction": self.fusion.metrics,
            "link_prediction_text": self.fusion.baseline,
            "fusion_seconds": self.fusion.seconds,
            "maps_to": self.maps_to.edges.to_dict("records"),
            "maps_to_threshold": self.maps_to.threshold,
            "infer_from": c.infer_from if c else None,
            "category_threshold": c.threshold if c else None,
            "held_out": {k: v.as_dict() for k, v in c.held_out.items()} if c else None,
            "papers_given": self.papers_given,
            "papers_inferred": self.papers_inferred,
            "inferred_edges": self.inferred_edges,
            "papers_uncategorised": self.papers_uncategorised,
            "seconds": self.seconds,
        }


def read_paper_embeddings(store: GraphStore, ids: list[str], batch_size: int, *, progress: bool = False) -> np.ndarray:
    """float32 [len(ids), d]: the stored ``embedding`` of each paper (ids must have one), read in pages."""
    dim = store.schema.sizes.embedding
    out = np.zeros((len(ids), dim), dtype=np.float32)
    position = {paper: i for i, paper in enumerate(ids)}
    bar = tqdm(total=len(ids), desc="read embeddings", unit="paper", disable=not progress)
    for start in range(0, len(ids), batch_size):
        rows = store.query("paper_embeddings_by_ids", {"ids": ids[start : start + batch_size]})
        for row in rows:  # papers without an embedding are not returned: their row stays zero
            out[position[row["id"]]] = row["embedding"]
        bar.update(min(batch_size, len(ids) - start))
    bar.close()
    return out


def _write_vectors(
    store: GraphStore, ids: list[str], vectors: np.ndarray | None, batch_size: int, desc: str, progress: bool
) -> None:
    """Write ``taxonomy`` (or null when ``vectors`` is None) on the given papers, in batches."""
    bar = tqdm(total=len(ids), desc=desc, unit="paper", disable=not progress or not ids)
    for start in range(0, len(ids), batch_size):
        part = ids[start : start + batch_size]
        column = list(vectors[start : start + batch_size]) if vectors is not None else [None] * len(part)
        store.write_node_properties("Paper", "id", pd.DataFrame({"id": part, "taxonomy": column}))
        bar.update(len(part))
    bar.close()


@dataclass(frozen=True)
class _Papers:
    """Which papers step 3 works on, read once from the store."""

    ids: np.ndarray  # every paper id (str)
    has_taxonomy: np.ndarray  # bool per id: a taxonomy vector is stored (maybe stale)
    given: pd.DataFrame  # the given IN_CATEGORY edges (inferred false or null)
    targets: list[str]  # papers with an embedding and no given category: categories to infer
    known_ids: list[str]  # papers with an embedding and given categories, sorted: calibration
    without_embedding: int  # papers with neither an embedding nor a given category: skipped


@dataclass(frozen=True)
class _Inference:
    """Step 3's inferred categories."""

    calibration: Calibration | None  # None when no paper needed inference
    inferred: pd.DataFrame  # IN_CATEGORY {score, inferred: true} at or above the threshold
    nearest: pd.DataFrame  # the top-k categories of papers with none above it (weights for their vector)


def compute_taxonomy(
    store: GraphStore,
    encoder: TextEncoder,
    settings: TaxonomySettings = TaxonomySettings(),
    *,
    progress: bool = False,
) -> TaxonomyReport:
    """Run the three steps of the module docstring on ``store``."""
    start = time.perf_counter()
    sizes = store.schema.sizes
    _check_sizes(store, encoder)
    papers = _read_papers(store)
    with on_device(settings.fusion.device):
        # 1. joint graph, inferred MAPS_TO
        taxonomy = read_taxonomy(store)
        features = encode_classes(taxonomy, encoder, progress=progress)
        maps_to = infer_maps_to(taxonomy, features, top_k=settings.maps_to_top_k, min_score=settings.maps_to_min_score)
        write_maps_to(store, maps_to.edges)
        taxonomy = apply_maps_to(taxonomy, maps_to.edges)
        # 2. fusion, `fused` on every class node
        result = fuse(taxonomy, features, settings.fusion, out_channels=sizes.taxonomy, progress=progress)
    arxiv, acm = taxonomy.nodes_of(ARXIV), taxonomy.nodes_of(ACM)
    _write_fused(store, taxonomy, result.fused, arxiv, acm)
    # 3. papers: given categories, inferred categories, taxonomy vectors
    inference = _infer_categories(store, papers, taxonomy, result.fused, features, settings, progress)
    columns = [SOURCE_COLUMN, TARGET_COLUMN, "score", "inferred"]
    store.replace_edges(
        "IN_CATEGORY", pd.concat([papers.given[columns], inference.inferred[columns]], ignore_index=True)
    )
    fused_by_code = {taxonomy.keys[i]: result.fused[i] for i in arxiv}
    given_ids, inferred_ids, cleared = _write_paper_vectors(store, papers, inference, fused_by_code, settings, progress)

    return TaxonomyReport(
        categories=len(arxiv),
        classes=len(acm),
        maps_to=maps_to,
        fusion=result,
        calibration=inference.calibration,
        papers_given=len(given_ids),
        papers_inferred=len(inferred_ids),
        inferred_edges=len(inference.inferred),
        papers_uncategorised=len(papers.targets) - len(inferred_ids),
        papers_without_embedding=papers.without_embedding,
        cleared=cleared,
        seconds=time.perf_counter() - start,
    )


def _check_sizes(store: GraphStore, encoder: TextEncoder) -> None:
    """Category inference compares text embeddings with fused class vectors: the three sizes must agree."""
    sizes = store.schema.sizes
    if encoder.dim != sizes.embedding or sizes.taxonomy != sizes.embedding:
        raise ConfigError(
            f"the encoder gives {encoder.dim}-d vectors, {store.describe()} stores {sizes.embedding}-d embeddings and "
            f"{sizes.taxonomy}-d taxonomy vectors; category inference compares them, so all three must agree "
            "(set CITEGRAPH_EMBEDDING_DIM / CITEGRAPH_TAXONOMY_DIM for a new store, or pick a matching encoder)"
        )


def _read_papers(store: GraphStore) -> _Papers:
    """Every paper's vector status and given categories; :class:`DataError` when no paper has an embedding."""
    status = pd.DataFrame(store.query("paper_vector_status"), columns=["id", "has_embedding", "has_taxonomy"])
    edges = store.read_edges("IN_CATEGORY")
    given = edges[~edges["inferred"].fillna(False).astype(bool)].reset_index(drop=True)
    given_papers = set(given[SOURCE_COLUMN].astype(str))
    with_embedding = status["has_embedding"].fillna(False).astype(bool).to_numpy()
    ids = status["id"].astype(str).to_numpy()
    targets = [p for p, has in zip(ids, with_embedding) if has and p not in given_papers]
    known_ids = sorted(p for p, has in zip(ids, with_embedding) if has and p in given_papers)
    without_embedding = sum(1 for p, has in zip(ids, with_embedding) if not has and p not in given_papers)
    if not with_embedding.any() and without_embedding:
        raise DataError(
            f"no paper in {store.describe()} has a text embedding, so categories cannot be inferred; "
            "run `citegraph compute embeddings --embed papers` first"
        )
    has_taxonomy = status["has_taxonomy"].fillna(False).astype(bool).to_numpy()
    return _Papers(ids, has_taxonomy, given, targets, known_ids, without_embedding)


def _write_fused(
    store: GraphStore, taxonomy: JointTaxonomy, fused: np.ndarray, arxiv: np.ndarray, acm: np.ndarray
) -> None:
    """``fused`` on every ArxivCategory (keyed by code) and AcmClass (keyed by id)."""
    for label, key, nodes in ((ARXIV, "code", arxiv), (ACM, "id", acm)):
        frame = pd.DataFrame({key: [taxonomy.keys[i] for i in nodes], "fused": list(fused[nodes])})
        store.write_node_properties(label, key, frame)


def _infer_categories(
    store: GraphStore,
    papers: _Papers,
    taxonomy: JointTaxonomy,
    fused: np.ndarray,
    features: np.ndarray,
    settings: TaxonomySettings,
    progress: bool,
) -> _Inference:
    """Calibrate on the papers with given categories, then score every target paper's top-k categories."""
    empty = pd.DataFrame({SOURCE_COLUMN: [], TARGET_COLUMN: [], "score": [], "inferred": []})
    if not papers.targets:
        return _Inference(None, empty, empty)
    given = papers.given
    codes_of = given.groupby(SOURCE_COLUMN)[TARGET_COLUMN].agg(list)
    known = pd.DataFrame({"id": papers.known_ids, "codes": [codes_of[p] for p in papers.known_ids]})
    candidates = candidate_categories(taxonomy, fused, features, given[TARGET_COLUMN].astype(str).unique().tolist())
    known_vectors = read_paper_embeddings(store, papers.known_ids, settings.batch_size)
    calibration = calibrate(candidates, known, known_vectors, canonical_codes(taxonomy), settings.categories)
    parts = []
    bar = tqdm(total=len(papers.targets), desc="infer categories", unit="paper", disable=not progress)
    for begin in range(0, len(papers.targets), settings.batch_size):
        batch = papers.targets[begin : begin + settings.batch_size]
        vectors = read_paper_embeddings(store, batch, settings.batch_size)
        parts.append(  # every paper's top-k, thresholded below
            infer_categories(
                candidates,
                batch,
                vectors,
                kind=calibration.infer_from,
                top_k=settings.categories.top_k,
                threshold=-np.inf,
            )
        )
        bar.update(len(batch))
    bar.close()
    nearest = pd.concat(parts, ignore_index=True)
    inferred = nearest[nearest["score"] >= calibration.threshold].reset_index(drop=True)
    # papers whose every category is below the threshold: no edge, but a taxonomy vector from their
    # nearest categories (weights clipped at 0: an opposite category must not push the vector away)
    below = nearest[~nearest[SOURCE_COLUMN].isin(set(inferred[SOURCE_COLUMN]))]
    return _Inference(calibration, inferred, below.assign(score=below["score"].clip(lower=1e-6)))


def _write_paper_vectors(
    store: GraphStore,
    papers: _Papers,
    inference: _Inference,
    fused_by_code: dict[str, np.ndarray],
    settings: TaxonomySettings,
    progress: bool,
) -> tuple[list[str], list[str], int]:
    """``taxonomy`` from given, inferred and nearest categories; cleared elsewhere.

    Returns the papers placed by given and by inferred categories, and how many stale vectors were cleared.
    """
    given_ids, given_vectors = paper_vectors(papers.given, fused_by_code, weighted=False)
    inferred_ids, inferred_vectors = paper_vectors(inference.inferred, fused_by_code, weighted=True)
    _write_vectors(store, given_ids, given_vectors, settings.batch_size, "taxonomy (given)", progress)
    _write_vectors(store, inferred_ids, inferred_vectors, settings.batch_size, "taxonomy (inferred)", progress)
    nearest_ids, nearest_vectors = paper_vectors(inference.nearest, fused_by_code, weighted=True)
    _write_vectors(store, nearest_ids, nearest_vectors, settings.batch_size, "taxonomy (nearest)", progress)
    placed = set(given_ids) | set(inferred_ids) | set(nearest_ids)
    stale = [p for p, has in zip(papers.ids, papers.has_taxonomy) if has and p not in placed]
    _write_vectors(store, stale, None, settings.batch_size, "clear stale taxonomy", progress)
    return given_ids, inferred_ids, len(stale)


__all__ = ["TaxonomyReport", "TaxonomySettings", "compute_taxonomy", "read_paper_embeddings"]
