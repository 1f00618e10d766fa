r"""Citation-context profiles: a candidate described by the sentences in which it has been cited.

He et al. (2010, "Context-aware citation recommendation", WWW) rank candidates by how well a query
context matches the contexts in which each candidate was cited before. Here a candidate :math:`d`
with citing sentences :math:`C_d` (``(Sentence)-[:MENTIONS]->(d)``, each with the candidate's own
marker masked as ``[CIT]``) gets two scores:

.. math::
    s_\mathrm{profile\_bm25}(q, d) = \mathrm{BM25}\big(q, \textstyle\bigoplus_{c \in C_d} c\big)
    \qquad
    s_\mathrm{profile\_dense}(q, d) = \max_{c \in C_d} \; e(q)^\top e(c)

the first over the concatenation of its citing sentences (a field of its own, with its own BM25
statistics), the second the best cosine between the query's embedding and one citing sentence's
(nearest-context matching: a candidate cited for several different things is found by each).

**Time.** A profile may only hold citing sentences older than the query. :class:`ProfileSettings`
``until`` keeps the sentences of citing papers published up to that year (unknown years left out):
the evaluation builds its profiles from the training period only (citing years ≤ 2009) and asks
queries from 2010 on; the service, which recommends for new text, uses every citing sentence.

Masking needs the candidate's authors and year (:mod:`loaders.markers`), which the compute layer
does not import: the caller passes the citing sentences already masked.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gnn.retrieval.index import RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex, tokenize
from gnn.text.encoder import TextEncoder
from graph.files import publish_folder, staging_folder

log = logging.getLogger(__name__)

CITANCE_COLUMNS = ("sentence_id", "cited_id", "citing_year", "text")


@dataclass(frozen=True)
class ProfileSettings:
    # Only citing sentences of papers published up to this year enter a profile (None: all of them).
    # An evaluation sets it to the last year of its training period.
    until: int | None = None
    # BM25 parameters of the profile field (its documents are short concatenations of sentences).
    bm25_k1: float = 1.2
    bm25_b: float = 0.75


class ProfileIndex:
    """Profiles of the indexed papers that have been cited in a sentence (see the module docstring)."""

    def __init__(
        self, index: RetrievalIndex, citances: pd.DataFrame, vectors: np.ndarray, settings: ProfileSettings
    ) -> None:
        self.settings = settings
        self.citances = citances.reset_index(drop=True)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)  # (m, dim) one per citing sentence
        owner_rows = self.citances["cited_id"].map(index.row_of)
        self.owner = owner_rows.to_numpy(dtype=np.int64)  # (m,) index row of the cited paper
        self.rows = np.unique(self.owner)  # (p,) index rows that have a profile
        tokens_of: dict[int, list[str]] = {int(r): [] for r in self.rows}
        for row, text in zip(self.owner.tolist(), self.citances["text"].tolist()):
            tokens_of[row].extend(tokenize(text))
        # no citing sentence yet (an early cutoff): every profile score is 0, and bm25s cannot index nothing
        self.lexical = (
            LexicalIndex.build([tokens_of[int(r)] for r in self.rows], k1=settings.bm25_k1, b=settings.bm25_b)
            if len(self.rows)
            else None
        )
        self.size = len(index)
        # position of each citance's owner in self.rows, for the max-aggregation
        self._owner_pos = np.searchsorted(self.rows, self.owner)

    @property
    def papers(self) -> int:
        return len(self.rows)

    def bm25_scores(self, tokens: list[str]) -> np.ndarray:
        """``(n_rows,)`` profile BM25 score of every index row (0 without a profile)."""
        out = np.zeros(self.size, dtype=np.float32)
        if self.lexical is not None:
            out[self.rows] = self.lexical.scores(tokens)
        return out

    def dense_scores(self, query: np.ndarray) -> np.ndarray:
        """``(n_rows,)`` best cosine between ``query`` and a citing sentence (-inf without a profile)."""
        out = np.full(self.size, -np.inf, dtype=np.float32)
        if len(self.vectors) == 0:
            return out
        sims = self.vectors @ np.asarray(query, dtype=np.float32)  # (m,)
        best = np.full(len(self.rows), -np.inf, dtype=np.float32)
        np.maximum.at(best, self._owner_pos, sims)
        out[self.rows] = best
        return out

    # building -------------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        index: RetrievalIndex,
        citances: pd.DataFrame,
        encoder: TextEncoder,
        settings: ProfileSettings = ProfileSettings(),
        *,
        folder: Path | None = None,
        progress: bool = False,
        save: bool = True,
    ) -> ProfileIndex:
        """Profiles from masked ``citances`` (columns ``sentence_id, cited_id, citing_year, text``).

        Sentences of papers newer than ``settings.until`` (or of unknown year, when ``until`` is set)
        and sentences citing a paper outside the index are left out. With ``folder``, the sentence
        vectors are kept there and reused while the sentences are unchanged; they come from the
        encoder's disk cache otherwise. With ``save=False`` the folder is read, never written.
        """
        missing = set(CITANCE_COLUMNS) - set(citances.columns)
        if missing:
            raise ValueError(f"citances lack columns {sorted(missing)}")
        # astype(str): a store without citing sentences (an imported export) gives columns without a string dtype
        texts = citances["text"].fillna("").astype(str)
        kept = citances[citances["cited_id"].isin(index.row_of.keys()) & (texts.str.strip() != "")]
        if settings.until is not None:
            year = pd.to_numeric(kept["citing_year"], errors="coerce")
            kept = kept[year.notna() & (year <= settings.until)]
        kept = kept.sort_values(["sentence_id", "cited_id"], ignore_index=True)
        digest = hashlib.sha256(
            "\x1e".join(
                f"{s}\x1f{c}\x1f{t}" for s, c, t in zip(kept["sentence_id"], kept["cited_id"], kept["text"])
            ).encode()
        ).hexdigest()
        vectors = _load_vectors(folder, digest, encoder.dim) if folder is not None else None
        if vectors is None:
            vectors = encoder.encode(kept["text"].tolist(), progress=progress, desc="encode citing sentences")
            if folder is not None and save:
                _save_vectors(folder, digest, vectors)
        log.info(
            "profiles: %d citing sentences of %d papers (until %s)",
            len(kept),
            kept["cited_id"].nunique(),
            settings.until if settings.until is not None else "the latest year",
        )
        return cls(index, kept, vectors, settings)


def field_lexical_index(index: RetrievalIndex, citances: pd.DataFrame, until: int | None) -> LexicalIndex:
    """BM25 over one field per paper: its title and abstract plus its citing sentences up to ``until``.

    ``citances`` as :meth:`ProfileIndex.build` takes them (masked); None: every sentence. The BM25
    parameters are the index's own (tuned for title + abstract).
    """
    year = pd.to_numeric(citances["citing_year"], errors="coerce")
    known = year.notna() & (year <= until) if until is not None else pd.Series(True, index=citances.index)
    kept = citances[known & citances["cited_id"].isin(index.row_of.keys())]
    extra: dict[int, list[str]] = {}
    for cited, text in zip(kept["cited_id"], kept["text"]):
        extra.setdefault(index.row_of[cited], []).extend(tokenize(str(text)))
    tokens = [list(doc) + extra.get(row, []) for row, doc in enumerate(index.tokens)]
    return LexicalIndex.build(tokens, k1=index.settings.bm25_k1, b=index.settings.bm25_b)


def _load_vectors(folder: Path, digest: str, dim: int) -> np.ndarray | None:
    try:
        meta = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if meta.get("digest") != digest:
            return None
        vectors: np.ndarray = np.load(folder / "vectors.npy")
    except (OSError, ValueError):
        return None
    return vectors if vectors.ndim == 2 and vectors.shape[1] == dim else None


def _save_vectors(folder: Path, digest: str, vectors: np.ndarray) -> None:
    """The profile vectors in ``folder``, replaced as a whole (:func:`graph.files.publish_folder`)."""
    tmp = staging_folder(folder)
    np.save(tmp / "vectors.npy", vectors)
    (tmp / "manifest.json").write_text(json.dumps({"digest": digest, "rows": len(vectors)}), encoding="utf-8")
    publish_folder(tmp, folder)


__all__ = ["CITANCE_COLUMNS", "ProfileIndex", "ProfileSettings"]
