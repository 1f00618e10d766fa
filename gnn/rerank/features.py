r"""Features of a (query, candidate) pair for the reranker, from the index, the graph and the taxonomy.

Every feature is computed from what was known *as of* a cutoff year
(:class:`gnn.rerank.knowledge.Knowledge`): the
citations made by papers published up to that year. A training query of 2008 sees the graph of
2007, a validation query of 2010 the graph of 2009, and a served query the whole graph; without
that, a query's own citation would leak into its co-citation and popularity features.

For a query :math:`q` (context vector :math:`e_q`, the citing paper's vector :math:`g_q`, the
papers it already cites :math:`I`, its year :math:`y_q`) and a candidate :math:`d`:

========================  =====================================================================
``dense_context``         :math:`\cos(e_q, e_d)` (all-MiniLM-L6-v2 vectors of the index)
``dense_global``          :math:`\cos(g_q, e_d)`; 0 without a citing paper (``has_global`` = 0)
``bm25`` …                each prefetch channel's own score, and :math:`1/\mathrm{rank}` in it
                          (0 when the channel did not return :math:`d`; a missing score takes
                          the lowest score the channel returned)
``prefetch_rr``           :math:`1/\mathrm{rank}` in the fused prefetch list
``references_freq``       how many of the top-:math:`m` prefetched papers cite :math:`d` (enricher)
``cocite_max``/``_sum``   Salton's cosine :math:`c_{id}/\sqrt{s_i s_d}` with each :math:`i \in I`,
                          max and sum; ``cocite_count`` :math:`\log(1 + \sum_i c_{id})`
``hyperbolic``            :math:`d_\mathbb{B}(p_q, p_d) = 2\operatorname{artanh}\|(-p_q) \oplus p_d\|`,
                          the Poincaré distance of the query's and the candidate's taxonomy points
                          (the midpoints of their categories, :func:`gnn.hyperbolic.compute.paper_points`)
``taxonomy``              :math:`\cos(t_q, t_d)` of the taxonomy vectors (:mod:`gnn.taxonomy.categories`)
``popularity``            :math:`\log(1 + \mathrm{count}(d))`, citations up to the cutoff (the
                          negative-sampling weight :math:`\mathrm{count}^{3/4}` is monotone in it)
``recent_popularity``     :math:`\log(1 + \mathrm{count}_{3}(d))`, citations made in the
                          :data:`RECENT_YEARS` years up to the cutoff (what the field cites now,
                          besides what it has cited in all; citeomatic's popularity, windowed)
``coupling``              :math:`\log(1 + |R_d \cap I|)`, :math:`R_d` the papers :math:`d` cites:
                          bibliographic coupling of the candidate with the query's other citations
``year_gap``              :math:`(y_q - y_d) / 10`, clipped to [0, 5]
``overlap_idf``           :math:`\sum_{w \in W_q \cap W_d} \mathrm{idf}(w)` (citeomatic's
                          intersection feature) and ``overlap_share`` its share of the query's
``title_overlap_idf``     the same against the candidate's title words :math:`T_d` alone, and
                          ``title_coverage`` :math:`\sum_{w \in W_q \cap T_d} \mathrm{idf}(w) /
                          \sum_{w \in T_d} \mathrm{idf}(w)`, the share of the title the context
                          repeats (citeomatic computes its intersection per field; a context that
                          names the cited work mostly repeats its title); for a paper known only by
                          a reference string (a stub) that string is its title field
``names_in_title``        :math:`|N_q \cap N(\mathrm{title}_d)|`, :math:`N` the case-sensitive
                          system names and acronyms of a text (:func:`system_names`: "BLEU",
                          "WordNet", "GIZA++"), and ``names_in_abstract`` against the abstract
``field_bm25``            BM25 of the context plus the citing paper's title and abstract against
                          one field of title, abstract and citation-context profile (the strongest
                          lexical baseline of the evaluation, as a feature)
``shared_authors``        authors the citing paper and the candidate have in common (self-citation)
``author_cited_before``   :math:`\log(1 + n)`, :math:`n` the citing paper's authors' other papers
                          (up to the cutoff) that cite the candidate
``author_cited_authors``  :math:`\log(1 + \max_{a \in A_d} n_a)`, :math:`n_a` the citations
                          those papers made to any paper of author :math:`a` (people cite the
                          same people again, not only the same papers)
``coauthors``             authors of the candidate who wrote a paper with a citing author before
                          the cutoff (the citing authors themselves excluded)
``…_gap``                 for the scores of :data:`POOL_RELATIVE`: :math:`x_d - \max_{d' \in
                          \mathrm{pool}} x_{d'}`, the distance to the best candidate of the query
========================  =====================================================================

The query's taxonomy place is its citing paper's (given or inferred categories) when the graph has
it, else inferred from the query text like :mod:`gnn.taxonomy.categories` does for papers: the ``top_k``
categories by :math:`\cos(e_q, f_c)`, weighted by that score. SymTax (Goyal et al., 2024,
https://arxiv.org/abs/2406.01606) introduced the hyperbolic separation feature; citeomatic
(Bhagavatula et al., 2018) the popularity and intersection features.

Groups of features can be switched off (:data:`FEATURE_GROUPS`, ``disabled``): they are then
zero for every pair, which is how the ablation measures each group's contribution; ``euclidean``
replaces the Poincaré distance by the Euclidean distance of the same points.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from gnn.hyperbolic import poincare
from gnn.rerank.knowledge import Knowledge, TaxonomyPlaces
from gnn.retrieval.enricher import Candidate
from gnn.retrieval.index import UNKNOWN_YEAR, RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex, tokenize
from gnn.retrieval.prefetch import CHANNELS, PrefetchQuery
from graph.errors import ConfigError

log = logging.getLogger(__name__)


FEATURE_NAMES: tuple[str, ...] = (
    "dense_context",
    "dense_global",
    "has_global",
    *(f"score_{c}" for c in CHANNELS),
    *(f"rr_{c}" for c in CHANNELS),
    "prefetch_rr",
    "references_freq",
    "references_rr",
    "cocite_max",
    "cocite_sum",
    "cocite_count",
    "has_cited",
    "hyperbolic",
    "has_hyperbolic",
    "taxonomy",
    "popularity",
    "recent_popularity",
    "coupling",
    "year_gap",
    "has_year",
    "overlap_idf",
    "overlap_share",
    "title_overlap_idf",
    "title_coverage",
    "names_in_title",
    "names_in_abstract",
    "field_bm25",
    "shared_authors",
    "author_cited_before",
    "author_cited_authors",
    "coauthors",
)
# Scores compared within the query's pool: each also enters as its gap to the pool's best,
# x - max_pool(x), so the model sees "how far behind the leader" besides the raw value.
POOL_RELATIVE: tuple[str, ...] = (
    "dense_context",
    "dense_global",
    *(f"score_{c}" for c in CHANNELS),
    "overlap_idf",
    "field_bm25",
)
FEATURE_NAMES = (*FEATURE_NAMES, *(f"{name}_gap" for name in POOL_RELATIVE))

# What each ablation switches off (the ``− group`` rows of ``citegraph eval recommend --ablation``).
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "enricher": ("references_freq", "references_rr"),
    "cocitation": ("cocite_max", "cocite_sum", "cocite_count", "coupling"),
    "hyperbolic": ("hyperbolic", "has_hyperbolic"),
    "taxonomy": ("hyperbolic", "has_hyperbolic", "taxonomy"),
    "authors": ("shared_authors", "author_cited_before", "author_cited_authors", "coauthors"),
    "fields": ("title_overlap_idf", "title_coverage", "names_in_title", "names_in_abstract"),
}


@dataclass(frozen=True)
class FeatureSettings:
    """Which features the reranker sees."""

    disabled: tuple[str, ...] = ()  # groups of FEATURE_GROUPS switched off (their features are 0)
    euclidean: bool = False  # ablation: Euclidean instead of Poincaré distance between the same points
    infer_top_k: int = 3  # categories inferred for a query without a citing paper in the graph

    def __post_init__(self) -> None:
        unknown = set(self.disabled) - set(FEATURE_GROUPS)
        if unknown:
            raise ConfigError(f"unknown feature groups {sorted(unknown)}; known: {', '.join(FEATURE_GROUPS)}")

    def mask(self) -> np.ndarray:
        """``(F,)`` float32: 0 for the switched-off features, 1 for the others."""
        off = {name for group in self.disabled for name in FEATURE_GROUPS[group]}
        return np.asarray([0.0 if name in off else 1.0 for name in FEATURE_NAMES], dtype=np.float32)


# --- the features --------------------------------------------------------------------------------


@dataclass
class QueryInput:
    """One query as the features need it."""

    query: PrefetchQuery
    cited_ids: tuple[str, ...]
    context_vector: np.ndarray  # (dim,) unit
    global_vector: np.ndarray | None  # (dim,) or None without a citing paper / title+abstract


# (papers cited -> times, authors cited -> times, co-authors) of a citing paper's authors: FeatureBuilder._author_history
_AuthorContext = tuple[dict[str, int], dict[str, int], frozenset[str]]


class FeatureBuilder:
    """Computes :data:`FEATURE_NAMES` for every candidate of a query (module docstring)."""

    def __init__(
        self,
        index: RetrievalIndex,
        knowledge: Knowledge,
        places: TaxonomyPlaces,
        settings: FeatureSettings = FeatureSettings(),
    ) -> None:
        self.index, self.knowledge, self.places, self.settings = index, knowledge, places, settings
        self.field_lexical: LexicalIndex | None = None  # title + abstract + profile (``with_field_index``)
        self.authors_of: dict[str, frozenset[str]] = {}  # paper -> author ids (``with_authorships``)
        self.papers_of: dict[str, frozenset[str]] = {}  # author -> paper ids
        self.title_words: dict[str, frozenset[str]] = {}  # paper -> title tokens (``with_texts``)
        self.names_of: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # paper -> names in title, abstract
        self._mask = settings.mask()
        self._idf = _idf(index.tokens)
        self._token_sets: dict[int, frozenset[str]] = {}
        self._title_totals: dict[str, float] = {}  # paper -> idf mass of its title words (``with_texts``)
        # citing paper -> its authors' citation history under this knowledge (``_authors``): a citing paper's
        # sentences are many queries, and the history walks every other paper of its authors
        self._author_context: dict[str, _AuthorContext] = {}

    def with_settings(self, settings: FeatureSettings) -> FeatureBuilder:
        """The same data under other settings (ablations), without recomputing the IDF table."""
        other = FeatureBuilder.__new__(FeatureBuilder)
        other.__dict__.update(self.__dict__)
        other.settings, other._mask = settings, settings.mask()
        return other

    def with_knowledge(self, knowledge: Knowledge) -> FeatureBuilder:
        other = self.with_settings(self.settings)
        other.knowledge = knowledge
        other._author_context = {}
        return other

    def with_field_index(self, lexical: LexicalIndex | None) -> FeatureBuilder:
        """The same builder with the title+abstract+profile BM25 (:func:`gnn.retrieval.profiles.field_lexical_index`)."""
        other = self.with_settings(self.settings)
        other.field_lexical = lexical
        return other

    def with_authorships(self, authorships: pd.DataFrame) -> FeatureBuilder:
        """The same builder with ``author_id``, ``paper_id`` rows (``cypher/authorships.cypher``)."""
        other = self.with_settings(self.settings)
        # one pass over plain strings: a pandas group per paper and per author costs ~100x more (half a million rows)
        authors_of: dict[str, set[str]] = {}
        papers_of: dict[str, set[str]] = {}
        for author, paper in zip(
            authorships["author_id"].astype(str).tolist(), authorships["paper_id"].astype(str).tolist(), strict=True
        ):
            authors_of.setdefault(paper, set()).add(author)
            papers_of.setdefault(author, set()).add(paper)
        other.authors_of = {p: frozenset(a) for p, a in authors_of.items()}
        other.papers_of = {a: frozenset(p) for a, p in papers_of.items()}
        other._author_context = {}
        return other

    def with_texts(self, texts: pd.DataFrame) -> FeatureBuilder:
        """The same builder with ``id``, ``title``, ``abstract`` (and optionally ``reference``) rows
        (:func:`gnn.text.embeddings.titles_and_abstracts`), for the per-field overlap and the system names;
        rows of papers outside the index are ignored. A reference string is the title field of a paper
        that has neither title nor abstract: it holds the cited title's words."""
        other = self.with_settings(self.settings)
        other._title_totals = {}
        indexed = texts[texts["id"].isin(self.index.row_of)]
        title = indexed["title"].fillna("").astype(str)
        if "reference" in indexed:
            title = title.where(title != "", indexed["reference"].fillna("").astype(str))
        titles = title.tolist()
        abstracts = indexed["abstract"].fillna("").astype(str).tolist()
        ids = indexed["id"].astype(str).tolist()
        other.title_words = {p: frozenset(tokenize(t)) for p, t in zip(ids, titles)}
        other.names_of = {p: (system_names(t), system_names(a)) for p, t, a in zip(ids, titles, abstracts)}
        return other

    def pool_max(self, features: np.ndarray) -> np.ndarray:
        """``(len(POOL_RELATIVE),)``: the best raw value of each pool-relative score in a feature matrix."""
        columns = [FEATURE_NAMES.index(name) for name in POOL_RELATIVE]
        return features[:, columns].max(axis=0) if len(features) else np.zeros(len(columns), np.float32)

    def _tokens(self, row: int) -> frozenset[str]:
        found = self._token_sets.get(row)
        if found is None:
            found = self._token_sets[row] = frozenset(self.index.tokens[row])
        return found

    def features(
        self, q: QueryInput, candidates: Sequence[Candidate], *, pool_max: np.ndarray | None = None
    ) -> np.ndarray:
        """``(len(candidates), len(FEATURE_NAMES))`` float32.

        The ``…_gap`` features compare with the best of ``candidates``, or with ``pool_max``
        (:meth:`pool_max` of the query's pool) when scoring papers from outside the pool.
        """
        n = len(candidates)
        out = np.zeros((n, len(FEATURE_NAMES)), dtype=np.float32)
        if n == 0:
            return out
        column = {name: k for k, name in enumerate(FEATURE_NAMES)}
        ids = [c.paper_id for c in candidates]
        rows = np.asarray([self.index.row_of.get(p, -1) for p in ids])
        has_row = rows >= 0
        vectors = np.zeros((n, self.index.dim), dtype=np.float32)
        vectors[has_row] = self.index.vectors[rows[has_row]]
        out[:, column["dense_context"]] = vectors @ q.context_vector
        if q.global_vector is not None and np.any(q.global_vector):
            out[:, column["dense_global"]] = vectors @ q.global_vector
            out[:, column["has_global"]] = 1.0
        for channel in CHANNELS:
            scores = [c.channel_scores.get(channel) for c in candidates]
            known = [s for s in scores if s is not None]
            floor = min(known) if known else 0.0
            out[:, column[f"score_{channel}"]] = [floor if s is None else s for s in scores]
            out[:, column[f"rr_{channel}"]] = [
                1.0 / c.channel_ranks[channel] if channel in c.channel_ranks else 0.0 for c in candidates
            ]
        out[:, column["prefetch_rr"]] = [1.0 / c.prefetch_rank if c.prefetch_rank else 0.0 for c in candidates]
        out[:, column["references_freq"]] = [len(c.cited_by) for c in candidates]
        out[:, column["references_rr"]] = [1.0 / c.references_rank if c.references_rank else 0.0 for c in candidates]
        if q.cited_ids:
            counts, cosines = self.knowledge.cocitation(q.cited_ids, ids)
            out[:, column["cocite_max"]] = cosines.max(axis=0)
            out[:, column["cocite_sum"]] = cosines.sum(axis=0)
            out[:, column["cocite_count"]] = np.log1p(counts.sum(axis=0))
            out[:, column["has_cited"]] = 1.0
        out[:, column["popularity"]] = np.log1p(self.knowledge.popularity(ids))
        out[:, column["recent_popularity"]] = np.log1p(self.knowledge.popularity(ids, recent=True))
        if q.cited_ids:
            out[:, column["coupling"]] = np.log1p(self.knowledge.coupling(q.cited_ids, ids))
        self._taxonomy(q, ids, out, column)
        self._years(q, ids, rows, out, column)
        context_tokens = tokenize(q.query.context)  # stemmed once: overlap, per-field overlap, field BM25
        words = set(context_tokens)
        self._overlap(words, rows, out, column)
        self._fields(words, q, ids, out, column)
        if self.field_lexical is not None:
            tokens = context_tokens + tokenize(q.query.global_text)
            field_scores = self.field_lexical.scores(tokens)
            out[has_row, column["field_bm25"]] = field_scores[rows[has_row]]
        self._authors(q, ids, out, column)
        raw = [column[name] for name in POOL_RELATIVE]
        best = out[:, raw].max(axis=0) if pool_max is None else pool_max
        out[:, [column[f"{name}_gap"] for name in POOL_RELATIVE]] = out[:, raw] - best
        return out * self._mask

    def _taxonomy(self, q: QueryInput, ids: Sequence[str], out: np.ndarray, column: dict[str, int]) -> None:
        places = self.places
        if places.empty:
            return
        text = q.context_vector if q.global_vector is None else q.context_vector + q.global_vector
        vector, point = places.place(
            q.query.citing_id, text / max(float(np.linalg.norm(text)), 1e-12), self.settings.infer_top_k
        )
        found = [(k, places.row_of[p]) for k, p in enumerate(ids) if p in places.row_of]
        if not found:
            return
        at = np.asarray([k for k, _ in found])
        rows = np.asarray([r for _, r in found])
        out[at, column["taxonomy"]] = places.vectors[rows] @ vector
        candidate_points = places.paper_points[rows]
        if self.settings.euclidean:
            distance = np.linalg.norm(candidate_points - point[None], axis=1)
        else:
            distance = poincare.dist(torch.from_numpy(point)[None], torch.from_numpy(candidate_points)).numpy()
        out[at, column["hyperbolic"]] = distance
        out[at, column["has_hyperbolic"]] = 1.0

    def _authors(self, q: QueryInput, ids: Sequence[str], out: np.ndarray, column: dict[str, int]) -> None:
        citing = q.query.citing_id
        authors = self.authors_of.get(citing or "")
        if not authors:
            return
        out[:, column["shared_authors"]] = [len(authors & self.authors_of.get(p, frozenset())) for p in ids]
        context = self._author_context.get(citing or "")
        if context is None:
            context = self._author_context[citing or ""] = self._author_history(citing or "", authors)
        history, by_author, coauthors = context
        out[:, column["author_cited_before"]] = np.log1p([history.get(p, 0) for p in ids])
        out[:, column["author_cited_authors"]] = np.log1p(
            [max((by_author.get(a, 0) for a in self.authors_of.get(p, ())), default=0) for p in ids]
        )
        out[:, column["coauthors"]] = [len(coauthors & self.authors_of.get(p, frozenset())) for p in ids]

    def _author_history(self, citing: str, authors: frozenset[str]) -> _AuthorContext:
        """What the citing paper's authors did up to the knowledge cutoff: how often their other papers cite
        each paper, how often they cite each author, and their co-authors (the author features)."""
        their_other_papers = set().union(*(self.papers_of.get(a, frozenset()) for a in authors)) - {citing}
        history: dict[str, int] = {}
        for paper in their_other_papers:
            for cited in self.knowledge.cites.get(paper, ()):  # only papers up to the cutoff cite here
                history[cited] = history.get(cited, 0) + 1
        by_author: dict[str, int] = {}
        for cited, times in history.items():
            for author in self.authors_of.get(cited, ()):
                by_author[author] = by_author.get(author, 0) + times
        coauthors = set().union(
            *(self.authors_of.get(p, frozenset()) for p in their_other_papers if self._known_by_cutoff(p))
        )
        return history, by_author, frozenset(coauthors - authors)

    def _known_by_cutoff(self, paper: str) -> bool:
        """Whether ``paper`` was published by the knowledge cutoff (a paper of unknown date never is)."""
        row = self.index.row_of.get(paper)
        if row is None:
            return False
        year = int(self.index.years[row])
        return year != UNKNOWN_YEAR and year <= self.knowledge.until

    def _years(
        self, q: QueryInput, ids: Sequence[str], rows: np.ndarray, out: np.ndarray, column: dict[str, int]
    ) -> None:
        if q.query.year is None:
            return
        years = np.where(rows >= 0, self.index.years[np.maximum(rows, 0)], UNKNOWN_YEAR)
        known = years != UNKNOWN_YEAR
        out[known, column["year_gap"]] = np.clip((q.query.year - years[known]) / 10.0, 0.0, 5.0)
        out[known, column["has_year"]] = 1.0

    def _overlap(self, words: set[str], rows: np.ndarray, out: np.ndarray, column: dict[str, int]) -> None:
        total = sum(self._idf.get(w, 0.0) for w in words)
        if not words or total <= 0:
            return
        for k, row in enumerate(rows.tolist()):
            if row < 0:
                continue
            shared = sum(self._idf.get(w, 0.0) for w in words & self._tokens(row))
            out[k, column["overlap_idf"]] = shared
            out[k, column["overlap_share"]] = shared / total

    def _fields(
        self, words: set[str], q: QueryInput, ids: Sequence[str], out: np.ndarray, column: dict[str, int]
    ) -> None:
        if not self.title_words:
            return
        for k, paper in enumerate(ids):
            title = self.title_words.get(paper, frozenset())
            total = self._title_totals.get(paper)
            if total is None:
                total = self._title_totals[paper] = sum(self._idf.get(w, 0.0) for w in title)
            shared = sum(self._idf.get(w, 0.0) for w in words & title)
            out[k, column["title_overlap_idf"]] = shared
            out[k, column["title_coverage"]] = shared / total if total > 0 else 0.0
        names = system_names(q.query.context)
        if not names:
            return
        no_names: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        for k, paper in enumerate(ids):
            in_title, in_abstract = self.names_of.get(paper, no_names)
            out[k, column["names_in_title"]] = len(names & in_title)
            out[k, column["names_in_abstract"]] = len(names & in_abstract)


# A word that reads as a name rather than a plain word: a capital after the first letter ("BLEU",
# "WordNet", "LexRank") or a digit ("IBM-4", "word2vec"); "+" and "-" may belong to it ("GIZA++").
# Words are the maximal runs of letters, digits, "+" and "-" that start with a letter; the pattern matches
# exactly those of them with a capital or a digit after the first letter (the characters before that one are
# lower-case letters, "+" or "-"), so the engine skips plain words without handing them to Python; it starts
# no match right after a letter, where no word starts (a word that is no name holds none either).
_NAME = re.compile(r"(?<![A-Za-z])[A-Za-z][a-z+\-]*[A-Z0-9][A-Za-z0-9+\-]*")
_MASK_LEFTOVER = "CIT"  # what is left of the [CIT] mask


def system_names(text: str) -> frozenset[str]:
    """The case-sensitive system names and acronyms of ``text`` (``CIT``, what is left of the [CIT]
    mask, excluded): words with a capital after the first letter (so any with two capitals) or a digit,
    without trailing hyphens."""
    names = {word.rstrip("-") for word in _NAME.findall(text)}
    names.discard(_MASK_LEFTOVER)
    return frozenset(names)


def _idf(tokens: Sequence[Sequence[str]]) -> dict[str, float]:
    r""":math:`\mathrm{idf}(w) = \log\bigl(1 + (N - n_w + 0.5)/(n_w + 0.5)\bigr)` (BM25's, always positive)."""
    frequency: dict[str, int] = {}
    for doc in tokens:
        for word in set(doc):
            frequency[word] = frequency.get(word, 0) + 1
    n = len(tokens)
    return {w: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}


__all__ = [
    "FEATURE_GROUPS",
    "FEATURE_NAMES",
    "POOL_RELATIVE",
    "FeatureBuilder",
    "FeatureSettings",
    "QueryInput",
    "system_names",
]
