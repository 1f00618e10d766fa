r"""What the reranker's features read besides the index: the citation graph as of a cutoff year, and taxonomy places.

:class:`Knowledge` holds the citations made by papers published up to a cutoff year (a training
query of 2008 sees the graph of 2007, a served query the whole graph), so no query sees its own
citation in its co-citation, popularity, coupling or author features. :class:`TaxonomyPlaces`
holds where each paper sits in the taxonomy — its fused category vector and its Poincaré point,
the midpoints of its categories (:func:`gnn.hyperbolic.compute.paper_points`) — and infers the
place of a query text from its nearest categories.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch

from gnn.hyperbolic import poincare
from gnn.hyperbolic.compute import paper_points
from gnn.taxonomy.categories import paper_vectors, top_categories
from graph.store import GraphStore

log = logging.getLogger(__name__)

OPEN_YEAR = 9999  # "no cutoff": a year no paper reaches
RECENT_YEARS = 3  # window of ``recent_popularity``: the citing years until-2 .. until


# --- what was known when ---------------------------------------------------------------------


def known_citations(citations: pd.DataFrame, until: int | None) -> pd.DataFrame:
    """The distinct ``citing_id``, ``cited_id`` rows made by papers published up to ``until`` (None: all).

    An unknown citing year counts as :data:`OPEN_YEAR`: known to a served query, hidden behind any
    cutoff (the enricher's statements treat it alike).
    """
    cutoff = OPEN_YEAR if until is None else until
    year = pd.to_numeric(citations["citing_year"], errors="coerce").fillna(OPEN_YEAR)
    return citations[year <= cutoff].drop_duplicates(["citing_id", "cited_id"])


@dataclass
class Knowledge:
    r"""The citation graph as of a cutoff year: who cites whom, and how often each paper is cited.

    ``citers`` is the binary citing-paper × cited-paper matrix :math:`A` (CSC), so the co-citation
    count of two cited papers is :math:`(A^\top A)_{ij}` and :math:`s_i` the column sums.
    """

    until: int
    column_of: dict[str, int]  # cited paper id -> column
    citers: sp.csc_matrix  # (citing papers, cited papers), 1 where a paper up to `until` cites
    cited_count: np.ndarray  # (cited papers,) s_i: citing papers up to `until`
    cites: dict[str, frozenset[str]] = field(default_factory=dict)  # citing paper (up to `until`) -> cited
    recent_count: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (cited papers,) citing papers of
    #                                                 the RECENT_YEARS up to `until` (or the newest known year)

    @classmethod
    def from_citations(cls, citations: pd.DataFrame, until: int | None) -> Knowledge:
        """From ``citing_id``, ``citing_year``, ``cited_id`` rows."""
        cutoff = OPEN_YEAR if until is None else until
        kept = known_citations(citations, until)
        cited_ids = pd.Index(sorted(set(citations["cited_id"].astype(str))))
        citing_codes, _ = pd.factorize(kept["citing_id"].astype(str))
        columns = cited_ids.get_indexer(kept["cited_id"].astype(str))
        matrix = sp.csc_matrix(
            (np.ones(len(kept), dtype=np.float32), (citing_codes, columns)),
            shape=(max(int(citing_codes.max(initial=-1)) + 1, 1), len(cited_ids)),
        )
        counts = np.asarray(matrix.sum(axis=0)).ravel()
        year = pd.to_numeric(kept["citing_year"], errors="coerce")
        newest = min(cutoff, int(year.max())) if year.notna().any() else cutoff  # served queries: the newest year
        recent = (year > newest - RECENT_YEARS).to_numpy() & year.notna().to_numpy()
        recent_count = np.bincount(columns[recent], minlength=len(cited_ids)).astype(np.float32)
        cites = {
            str(citing): frozenset(group.astype(str))
            for citing, group in kept.groupby("citing_id", sort=False)["cited_id"]
        }
        return cls(cutoff, {p: i for i, p in enumerate(cited_ids)}, matrix, counts, cites, recent_count)

    def cocitation(self, cited: Sequence[str], candidates: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(counts, cosines)`` each ``(len(cited), len(candidates))``: :math:`c_{id}` and :math:`c_{id}/\\sqrt{s_i s_d}`."""
        counts = np.zeros((len(cited), len(candidates)), dtype=np.float32)
        rows = [(k, self.column_of[p]) for k, p in enumerate(cited) if p in self.column_of]
        cols = [(k, self.column_of[p]) for k, p in enumerate(candidates) if p in self.column_of]
        if not rows or not cols:
            return counts, counts.copy()
        left = self.citers[:, [c for _, c in rows]]
        right = self.citers[:, [c for _, c in cols]]
        product = (left.T @ right).toarray()  # (rows, cols) co-citation counts
        counts[np.ix_([k for k, _ in rows], [k for k, _ in cols])] = product
        s_rows = np.zeros(len(cited), dtype=np.float32)
        s_cols = np.zeros(len(candidates), dtype=np.float32)
        s_rows[[k for k, _ in rows]] = self.cited_count[[c for _, c in rows]]
        s_cols[[k for k, _ in cols]] = self.cited_count[[c for _, c in cols]]
        denominator = np.sqrt(np.outer(s_rows, s_cols))
        cosines = np.divide(counts, denominator, out=np.zeros_like(counts), where=denominator > 0)
        return counts, cosines

    def popularity(self, papers: Sequence[str], *, recent: bool = False) -> np.ndarray:
        """Citing papers of each paper up to the cutoff; ``recent``: of the last :data:`RECENT_YEARS` only."""
        counts = self.recent_count if recent else self.cited_count
        return np.asarray([counts[self.column_of[p]] if p in self.column_of else 0.0 for p in papers], dtype=np.float32)

    def coupling(self, cited: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """``(len(candidates),)``: :math:`|R_d \\cap I|`, how many of ``cited`` each candidate cites itself."""
        given = frozenset(cited)
        return np.asarray([len(self.cites.get(p, frozenset()) & given) for p in candidates], dtype=np.float32)


# --- where papers sit in the taxonomy ------------------------------------------------------------


@dataclass
class TaxonomyPlaces:
    """Taxonomy vectors and Poincaré points of papers (from their categories) and of query texts."""

    codes: list[str]  # arXiv categories with a fused vector and a point
    fused: np.ndarray  # (categories, f) unit fused vectors
    points: np.ndarray  # (categories, h) float64 Poincaré points
    row_of: dict[str, int] = field(default_factory=dict)  # paper id -> row of vectors/paper_points
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))  # (papers, f)
    paper_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (papers, h)

    @property
    def empty(self) -> bool:
        return not self.codes

    @classmethod
    def from_store(cls, store: GraphStore) -> TaxonomyPlaces:
        classes = [
            r for r in store.query("arxiv_category_points") if r["fused"] is not None and r["poincare"] is not None
        ]
        if not classes:
            log.info("taxonomy features off: no arXiv category has fused vectors and points yet")
            return cls([], np.zeros((0, 0), np.float32), np.zeros((0, 0)))
        codes = sorted(str(r["code"]) for r in classes)
        by_code = {str(r["code"]): r for r in classes}
        fused = np.stack([np.asarray(by_code[c]["fused"], dtype=np.float32) for c in codes])
        fused /= np.linalg.norm(fused, axis=1, keepdims=True).clip(min=1e-12)
        points = np.stack([np.asarray(by_code[c]["poincare"], dtype=np.float64) for c in codes])
        places = cls(codes, fused, points)
        edges = pd.DataFrame(store.query("paper_categories"), columns=["source", "target", "score", "inferred"])
        edges = edges[edges["target"].isin(set(codes))]
        if edges.empty:
            return places
        inferred = edges["inferred"].fillna(False).astype(bool)
        weighted = edges.assign(score=np.where(inferred, edges["score"].astype(float).fillna(1.0), 1.0))
        ids, vectors = paper_vectors(weighted, dict(zip(codes, fused)), weighted=True)
        point_frame = paper_points(edges, pd.Series(list(points), index=codes)).set_index("id")
        places.row_of = {paper: i for i, paper in enumerate(ids)}
        places.vectors = vectors
        places.paper_points = np.stack(point_frame.loc[list(ids), "poincare"].tolist())  # one lookup, not one a paper
        return places

    def infer(self, text_vector: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """Taxonomy vector and point of a text: its ``top_k`` categories by cosine, weighted by it."""
        top_rows, top_scores = top_categories(text_vector[None], self.fused, top_k)
        top = top_rows[0]
        weights = np.clip(top_scores[0], 1e-6, None).astype(np.float64)
        vector = (weights[:, None] * self.fused[top]).sum(0)
        vector /= max(float(np.linalg.norm(vector)), 1e-12)
        point = poincare.weighted_midpoint(torch.from_numpy(self.points[top])[None], torch.from_numpy(weights)[None])[
            0
        ].numpy()
        return vector.astype(np.float32), point

    def place(self, paper_id: str | None, text_vector: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        row = self.row_of.get(paper_id or "")
        if row is not None:
            return self.vectors[row], self.paper_points[row]
        return self.infer(text_vector, top_k)


__all__ = ["OPEN_YEAR", "RECENT_YEARS", "Knowledge", "TaxonomyPlaces", "known_citations"]
