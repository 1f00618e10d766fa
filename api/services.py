"""Read services over the store: batched lookups the GraphQL loaders call.

One lock admits calls to the store, as many at once as the store runs statements at once (one
connection: one; a read-only embedded store: ``CITEGRAPH_READ_CONNECTIONS``): a
:class:`api.scheduling.StoreLock`, which serves light requests' calls first, keeps a place for them
that heavy calls never take, and refuses a call whose request's time budget is spent; every function takes many ids at once so a nested GraphQL query costs one
store round trip per level, not one per object.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from api.paper_ids import resolve_paper_ids
from api.scheduling import StoreLock
from gnn.cocitation.clusters import ClusterLabel, StoredQuality, read_cluster_labels, read_cluster_quality
from gnn.mapping.documents import EdgeDocument, edge_documents
from gnn.mapping.networks import MapNetwork, MapUnit, NetworkFilters, build_network
from gnn.mapping.timeline import ClusterTimeline, cluster_timeline
from gnn.mapping.units import UnitStatus, unit_status
from graph.files import StoreFiles
from graph.labels import complete_labels, complete_result_labels, paper_label
from graph.store import Completeness, GraphStore

YEAR_MIN, YEAR_MAX = 0, 9999  # open bounds for year filters (statements take integers)


@dataclass(frozen=True)
class PaperRecord:
    id: str
    title: str | None
    abstract: str | None
    year: int | None
    venue: str | None
    doi: str | None
    arxiv_id: str | None
    n_cited: int | None
    stub: bool | None
    reference: str | None = None  # a stub's reference string, as a citing paper printed it
    label: str | None = None  # the display label (graph.labels: stored label, title, reference, source, id)
    volume: str | None = None  # a cited work's volume and first page as its source prints them
    first_page: str | None = None
    # science mapping (gnn.mapping.compute): the strongest citation burst, betweenness, sigma; None before
    burst_strength: float | None = None
    burst_begin: int | None = None
    burst_end: int | None = None
    betweenness: float | None = None
    sigma: float | None = None

    @property
    def display_label(self) -> str:
        """The paper's display label (:func:`graph.labels.paper_label`), whether or not the row carried one."""
        return self.label or paper_label(
            self.id,
            title=self.title,
            reference=self.reference,
            venue=self.venue,
            volume=self.volume,
            first_page=self.first_page,
        )


@dataclass(frozen=True)
class CoCitation:
    other_id: str
    count: int
    sentence_count: int | None
    association: float | None
    cosine: float | None
    jaccard: float | None
    inclusion: float | None


@dataclass(frozen=True)
class AuthorRecord:
    id: str
    name: str | None


@dataclass(frozen=True)
class SourceRecord:
    name: str  # Paper.venue as stored
    papers: int  # papers naming it


@dataclass(frozen=True)
class CoCitationPair:
    source_id: str
    cocitation: CoCitation  # other_id is the pair's second paper


@dataclass(frozen=True)
class SentenceRecord:
    id: str  # "<paper_id>#<sid>"
    sid: int | None
    section: str | None
    text: str | None


@dataclass(frozen=True)
class CitanceLinkRecord:
    """A stored LINKS_TO edge: a citance (citing sentence) pointing at a sentence of the cited paper."""

    cited_sentence_id: str
    cited_sid: int | None
    cited_text: str | None
    citing_sentence_id: str
    citing_paper_id: str | None
    citing_text: str | None
    score: float | None
    method: str  # gold, silver or model
    annotator: str | None


@dataclass(frozen=True)
class CategoryRecord:
    code: str
    name: str | None
    description: str | None


@dataclass(frozen=True)
class CategoryAssignment:
    code: str  # ArxivCategory code (IN_CATEGORY) or AcmClass id (MAPS_TO)
    score: float | None
    inferred: bool | None  # True: predicted by a model, False: given by the source


@dataclass(frozen=True)
class TaxonomyClassRecord:
    id: str
    code: str | None
    name: str | None
    level: int | None
    scheme: str | None
    description: str | None
    parent_id: str | None  # BROADER; None for a root


@dataclass(frozen=True)
class Coordinates:
    vector: list[float] | None  # Paper.taxonomy, or a class's fused vector; None until computed
    poincare: list[float] | None  # Poincaré-ball coordinates; None until computed


@dataclass(frozen=True)
class NetworkNode:
    id: str
    label: str  # the display label (graph.labels)
    title: str | None
    year: int | None
    n_cited: int | None
    cluster: int | None  # Paper.cocite_cluster


class GraphService:
    """The read side of the API over one store."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._lock = StoreLock(store.read_concurrency)
        self.round_trips = 0  # store queries issued; tests assert on it (no N+1)
        self._labels_cache: tuple[int, list[ClusterLabel]] | None = None  # (file mtime, labels)

    def _query(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        with self._lock:
            self.round_trips += 1
            return self.store.query(name, params)

    def _query_keys(self, name: str, each: str, ids: Sequence[str]) -> list[dict[str, Any]]:
        """Rows of ``name`` for ``ids``, read the way the backend reads keys fastest
        (:meth:`graph.store.GraphStore.query_keys`); one round trip, as :meth:`_query`."""
        with self._lock:
            self.round_trips += 1
            return self.store.query_keys(name, each, ids)

    @property
    def lock(self) -> threading.Lock:
        """The lock that admits store access; services sharing the store (linkage) take it too.

        A :class:`~api.scheduling.StoreLock`, typed as the :class:`threading.Lock` it stands in for
        (the services in ``gnn/`` take any lock, and know nothing of ``api``)."""
        return cast(threading.Lock, self._lock)

    def papers(self, ids: Sequence[str]) -> list[PaperRecord | None]:
        """The paper each id names, or None. An id that is not a key is read as a user types ids
        (:func:`api.paper_ids.resolve_paper_ids`: ``0708.3686`` -> ``arxiv:0708.3686``, ``W2741809807`` ->
        ``openalex:W2741809807``) and looked up as a key and as an ``Alias``; the record carries the key."""
        rows = {row["id"]: PaperRecord(**row) for row in self._paper_rows(list(ids))}
        missing = [i for i in ids if i not in rows]
        if missing:  # only ids that are not keys cost more round trips
            with self._lock:
                self.round_trips += 1
                keys = resolve_paper_ids(self.store, missing)
            wanted = sorted({k for k in keys.values() if k is not None})
            found = {row["id"]: PaperRecord(**row) for row in self._paper_rows(wanted)} if wanted else {}
            rows.update({raw: found[key] for raw, key in keys.items() if key in found})
        return [rows.get(i) for i in ids]

    def _paper_rows(self, keys: list[str]) -> list[dict[str, Any]]:
        """``paper_by_ids`` rows with their display labels complete (:func:`graph.labels.complete_labels`)."""
        return complete_labels(self._query("paper_by_ids", {"ids": keys}), self._query)

    def authors(self, paper_ids: Sequence[str]) -> list[list[AuthorRecord]]:
        grouped: dict[str, list[AuthorRecord]] = defaultdict(list)
        for row in self._query_keys("authors_of_papers", "authors_of_paper", paper_ids):
            grouped[row["paper_id"]].append(AuthorRecord(row["author_id"], row["name"]))
        return [grouped.get(i, []) for i in paper_ids]

    def neighbours(self, paper_ids: Sequence[str], *, direction: str, limit: int) -> list[list[str]]:
        """Cited (``out``) or citing (``in``) paper ids per paper, at most ``limit`` each."""
        name, each, column = (
            ("cited_papers", "cited_papers_of_paper", "cited_id")
            if direction == "out"
            else ("citing_papers", "citing_papers_of_paper", "citing_id")
        )
        grouped: dict[str, list[str]] = defaultdict(list)
        for row in self._query_keys(name, each, paper_ids):
            bucket = grouped[row["paper_id"]]
            if len(bucket) < limit:
                bucket.append(row[column])
        return [grouped.get(i, []) for i in paper_ids]

    def cocited(self, paper_ids: Sequence[str]) -> list[list[CoCitation]]:
        """Every co-cited partner of each paper with the stored strengths (CO_CITED, both directions)."""
        grouped: dict[str, list[CoCitation]] = defaultdict(list)
        for row in self._query("cocited_with", {"ids": list(paper_ids)}):
            paper_id = row.pop("paper_id")
            grouped[paper_id].append(CoCitation(**row))
        return [grouped.get(i, []) for i in paper_ids]

    def search(
        self,
        text: str,
        *,
        year_min: int | None,
        year_max: int | None,
        limit: int,
        skip: int = 0,
        category: str | None = None,
    ) -> list[str]:
        """Ids of papers whose title contains ``text`` (and in ``category``), most cited first; one page."""
        params = self._search_params(text, year_min, year_max, category)
        name = "search_papers_in_category" if category else "search_papers_by_title"
        return [row["id"] for row in self._query(name, {**params, "skip": skip, "limit": limit})]

    def count_search(self, text: str, *, year_min: int | None, year_max: int | None, category: str | None) -> int:
        """How many papers :meth:`search` finds without a limit."""
        params = self._search_params(text, year_min, year_max, category)
        name = "count_papers_in_category" if category else "count_papers_by_title"
        return int(self._query(name, params)[0]["n"])

    @staticmethod
    def _search_params(text: str, year_min: int | None, year_max: int | None, category: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {
            "text": text.lower(),
            "year_min": YEAR_MIN if year_min is None else year_min,
            "year_max": YEAR_MAX if year_max is None else year_max,
        }
        if category:
            params["category"] = category
        return params

    def stats(self) -> dict[str, dict[str, int]]:
        with self._lock:
            self.round_trips += 1
            return self.store.stats()

    def completeness(self) -> list[Completeness]:
        """How complete each computed property is (:meth:`graph.store.GraphStore.completeness`)."""
        with self._lock:
            self.round_trips += 2  # two count statements: papers and sentences
            return self.store.completeness()

    # authors, sentences, categories, taxonomies -----------------------------------------------
    def author_records(self, ids: Sequence[str]) -> list[AuthorRecord | None]:
        rows = {
            row["id"]: AuthorRecord(row["id"], row["name"]) for row in self._query("author_by_ids", {"ids": list(ids)})
        }
        return [rows.get(i) for i in ids]

    def papers_of_authors(self, author_ids: Sequence[str]) -> list[list[str]]:
        """Paper ids per author, newest first."""
        grouped: dict[str, list[str]] = defaultdict(list)
        for row in self._query("papers_of_authors", {"ids": list(author_ids)}):
            grouped[row["author_id"]].append(row["paper_id"])
        return [grouped.get(i, []) for i in author_ids]

    def sentences(self, paper_ids: Sequence[str]) -> list[list[SentenceRecord]]:
        """The full-text sentences of each paper, in reading order (empty without full text)."""
        grouped: dict[str, list[SentenceRecord]] = defaultdict(list)
        for row in self._query("sentences_of_papers", {"ids": list(paper_ids)}):
            grouped[row.pop("paper_id")].append(SentenceRecord(**row))
        return [grouped.get(i, []) for i in paper_ids]

    def citance_links(self, paper_ids: Sequence[str]) -> list[list[CitanceLinkRecord]]:
        """The stored LINKS_TO edges into each paper's sentences, by cited sentence (reading order)."""
        grouped: dict[str, list[CitanceLinkRecord]] = defaultdict(list)
        for row in self._query("citance_links_to_papers", {"ids": list(paper_ids)}):
            grouped[row.pop("paper_id")].append(CitanceLinkRecord(**row))
        return [grouped.get(i, []) for i in paper_ids]

    def mentions(self, sentence_ids: Sequence[str]) -> list[list[tuple[str, str | None]]]:
        """(cited paper id, marker) per citing sentence (MENTIONS)."""
        grouped: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
        for row in self._query("papers_mentioned_by_sentences", {"ids": list(sentence_ids)}):
            grouped[row["sentence_id"]].append((row["paper_id"], row["marker"]))
        return [grouped.get(i, []) for i in sentence_ids]

    def categories_of_papers(self, paper_ids: Sequence[str]) -> list[list[CategoryAssignment]]:
        grouped: dict[str, list[CategoryAssignment]] = defaultdict(list)
        for row in self._query("categories_of_papers", {"ids": list(paper_ids)}):
            grouped[row["paper_id"]].append(CategoryAssignment(row["code"], row["score"], row["inferred"]))
        return [grouped.get(i, []) for i in paper_ids]

    def categories(self, codes: Sequence[str]) -> list[CategoryRecord | None]:
        rows = {
            r["code"]: CategoryRecord(**r) for r in self._query("arxiv_categories_by_codes", {"codes": list(codes)})
        }
        return [rows.get(c) for c in codes]

    def all_categories(self) -> list[CategoryRecord]:
        return [CategoryRecord(**row) for row in self._query("arxiv_categories")]

    def category_mappings(self, codes: Sequence[str]) -> list[list[CategoryAssignment]]:
        """The ACM classes (``code`` holds the AcmClass id) each arXiv category maps to."""
        grouped: dict[str, list[CategoryAssignment]] = defaultdict(list)
        for row in self._query("acm_mappings_of_categories", {"codes": list(codes)}):
            grouped[row["code"]].append(CategoryAssignment(row["acm_id"], row["score"], row["inferred"]))
        return [grouped.get(c, []) for c in codes]

    def acm_classes(self, ids: Sequence[str]) -> list[TaxonomyClassRecord | None]:
        rows = {r["id"]: TaxonomyClassRecord(**r) for r in self._query("acm_classes_by_ids", {"ids": list(ids)})}
        return [rows.get(i) for i in ids]

    def acm_schemes(self) -> dict[str, int]:
        """Size per classification scheme held as AcmClass nodes (e.g. 1998, 2012)."""
        return {row["scheme"]: int(row["size"]) for row in self._query("acm_schemes")}

    def acm_scheme(self, scheme: str) -> list[TaxonomyClassRecord]:
        """Every class of a scheme with its parent, roots first."""
        return [
            TaxonomyClassRecord(scheme=scheme, **row)
            for row in self._query("acm_classes_of_scheme", {"scheme": scheme})
        ]

    def coordinates(self, kind: str, keys: Sequence[str]) -> list[Coordinates]:
        """Stored vectors per node: ``kind`` is ``paper`` (taxonomy, poincare), ``category`` or ``acm`` (fused, poincare)."""
        name, param, vector = {
            "paper": ("paper_coordinates", "ids", "taxonomy"),
            "category": ("arxiv_category_coordinates", "codes", "fused"),
            "acm": ("acm_class_coordinates", "ids", "fused"),
        }[kind]
        rows = {row["key"]: Coordinates(row[vector], row["poincare"]) for row in self._query(name, {param: list(keys)})}
        return [rows.get(k, Coordinates(None, None)) for k in keys]

    # co-citation network ------------------------------------------------------------------------
    def cluster_pairs(self, cluster: int, *, measure: str, min_count: int, limit: int) -> list[CoCitationPair]:
        """The strongest co-cited pairs inside one co-citation cluster."""
        params = {"cluster": cluster, "measure": measure, "min_count": min_count, "limit": limit}
        pairs = []
        for row in self._query("cocitation_pairs_of_cluster", params):
            row.pop("rank_key")
            source, target = row.pop("source"), row.pop("target")
            pairs.append(CoCitationPair(source, CoCitation(other_id=target, **row)))
        return pairs

    def citations_among(self, ids: Sequence[str]) -> list[tuple[str, str, int | None]]:
        """(citing, cited, n_contexts) for every citation with both ends in ``ids``."""
        rows = self._query("citations_among", {"ids": list(ids)})
        return [(r["source"], r["target"], r["n_contexts"]) for r in rows]

    def cocitations_among(self, ids: Sequence[str]) -> list[tuple[str, str, int, float | None]]:
        """(source, target, count, association) for every co-cited pair with both ends in ``ids``."""
        rows = self._query("cocitations_among", {"ids": list(ids)})
        return [(r["source"], r["target"], int(r["count"]), r["association"]) for r in rows]

    def network_nodes(self, ids: Sequence[str]) -> list[NetworkNode | None]:
        """Title, year, citation count and co-citation cluster per paper, for network views."""
        found = complete_labels(self._query("cocitation_nodes", {"ids": list(ids)}), self._query)
        rows = {r["id"]: NetworkNode(**r) for r in found}
        return [rows.get(i) for i in ids]

    def cluster_quality(self) -> StoredQuality | None:
        """The co-citation clustering's modularity and silhouette `compute cocitation` wrote (None before)."""
        path = StoreFiles.of(self.store).clusters
        return read_cluster_quality(path) if path is not None else None

    def cluster_timeline(self, *, first: int, year_min: int | None, year_max: int | None) -> list[ClusterTimeline]:
        """The ``first`` largest co-citation clusters' citations per year (:func:`gnn.mapping.timeline.cluster_timeline`)."""
        with self._lock:
            self.round_trips += 1
            return cluster_timeline(self.store, first=first, year_min=year_min, year_max=year_max)

    def cluster_labels(self) -> list[ClusterLabel]:
        """The labels `compute cocitation` wrote beside the store (empty before, or on Neo4j)."""
        path = StoreFiles.of(self.store).clusters
        if path is None or not path.is_file():
            return []
        stamp = path.stat().st_mtime_ns
        cached = self._labels_cache
        if cached is None or cached[0] != stamp:
            cached = (stamp, read_cluster_labels(path))
            self._labels_cache = cached
        return cached[1]

    def top_cocitations(
        self,
        *,
        measure: str,
        min_count: int,
        year_min: int | None,
        year_max: int | None,
        skip: int,
        limit: int,
    ) -> list[CoCitationPair]:
        """One page of the store's co-cited pairs, strongest first by ``measure``. With a year bound the pairs are
        counted from CITES over citing papers of those years (``count`` is that count; strengths stay all-years)."""
        params: dict[str, Any] = {"measure": measure, "min_count": min_count, "skip": skip, "limit": limit}
        if year_min is None and year_max is None:
            rows = self._query("top_cocitations", params)
        else:
            years = {
                "year_min": YEAR_MIN if year_min is None else year_min,
                "year_max": YEAR_MAX if year_max is None else year_max,
            }
            rows = self._query("top_cocitations_in_years", {**params, **years})
        pairs = []
        for row in rows:
            row.pop("rank_key")
            source, target = row.pop("source"), row.pop("target")
            pairs.append(CoCitationPair(source, CoCitation(other_id=target, **row)))
        return pairs

    def map_network(self, unit: MapUnit, filters: NetworkFilters) -> MapNetwork:
        """``unit``'s science map under ``filters`` (:func:`gnn.mapping.networks.build_network`): its bulk reads and
        the counting run holding the store lock, as one call (the builder reads the store several times)."""
        with self._lock:
            self.round_trips += 1
            return build_network(self.store, unit, filters)

    def map_edge_documents(
        self, unit: MapUnit, source: str, target: str, filters: NetworkFilters
    ) -> list[EdgeDocument]:
        """The documents behind one link of ``unit``'s map (:func:`gnn.mapping.documents.edge_documents`), newest
        first: one statement for the units linked through two hops, the map's own bulk read for authors and
        sources (held under the store lock as one call)."""
        with self._lock:
            self.round_trips += 1
            return edge_documents(self.store, unit, source, target, filters)

    def map_unit_status(self) -> list[UnitStatus]:
        """Which units this store can map (:func:`gnn.mapping.units.unit_status`)."""
        with self._lock:
            self.round_trips += 1
            return unit_status(self.store)

    def count_cocitations(self, *, min_count: int, year_min: int | None, year_max: int | None) -> int:
        """How many pairs :meth:`top_cocitations` pages through."""
        if year_min is None and year_max is None:
            return int(self._query("count_cocitations", {"min_count": min_count})[0]["n"])
        years = {
            "year_min": YEAR_MIN if year_min is None else year_min,
            "year_max": YEAR_MAX if year_max is None else year_max,
        }
        return int(self._query("count_cocitations_in_years", {"min_count": min_count, **years})[0]["n"])

    def pair_citers(self, pairs: Sequence[tuple[str, str]]) -> list[list[tuple[str, int | None]]]:
        """(citing paper id, its year) of the papers citing both papers of each pair, newest first (one round trip)."""
        ids = sorted({paper for pair in pairs for paper in pair})
        grouped: dict[tuple[str, str], list[tuple[str, int | None]]] = defaultdict(list)
        for row in self._query("citers_of_pairs", {"ids": ids}):
            grouped[(row["low"], row["high"])].append((row["citing_id"], row["year"]))
        return [grouped.get((min(a, b), max(a, b)), []) for a, b in pairs]

    def cocited_in_years(self, keys: Sequence[tuple[str, int, int]]) -> list[dict[str, int]]:
        """Per (paper id, first year, last year): partner id -> citing papers of those years that cite both."""
        found: dict[tuple[str, int, int], dict[str, int]] = defaultdict(dict)
        for year_min, year_max in sorted({(k[1], k[2]) for k in keys}):
            ids = sorted({k[0] for k in keys if (k[1], k[2]) == (year_min, year_max)})
            params = {"ids": ids, "year_min": year_min, "year_max": year_max}
            for row in self._query("cocited_in_years", params):
                found[(row["paper_id"], year_min, year_max)][row["other_id"]] = int(row["count"])
        return [found.get((k[0], k[1], k[2]), {}) for k in keys]

    def search_authors(self, text: str, *, skip: int, limit: int) -> list[AuthorRecord]:
        """Authors whose name contains ``text`` (case-insensitive), most papers first; one page."""
        rows = self._query("search_authors", {"text": text.lower(), "skip": skip, "limit": limit})
        return [AuthorRecord(row["id"], row["name"]) for row in rows]

    def count_authors(self, text: str) -> int:
        return int(self._query("count_authors_by_name", {"text": text.lower()})[0]["n"])

    def search_sources(self, text: str, *, skip: int, limit: int) -> list[SourceRecord]:
        """Sources (venues) whose name contains ``text`` (case-insensitive), most papers first; one page."""
        rows = self._query("search_sources", {"text": text.lower(), "skip": skip, "limit": limit})
        return [SourceRecord(row["name"], int(row["papers"])) for row in rows]

    def count_sources(self, text: str) -> int:
        return int(self._query("count_sources_by_name", {"text": text.lower()})[0]["n"])

    def papers_of_sources(self, names: Sequence[str]) -> list[list[str]]:
        """Paper ids per source (venue, exactly as stored), most cited first."""
        grouped: dict[str, list[str]] = defaultdict(list)
        for row in self._query("papers_of_sources", {"names": list(names)}):
            grouped[row["name"]].append(row["paper_id"])
        return [grouped.get(name, []) for name in names]

    # explore --------------------------------------------------------------------------------------
    def explore(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of one named read-only query of ``cypher/explore`` (the caller validated ``params``); a paper known
        by its authors only is labelled by its first author and year (:func:`graph.labels.complete_result_labels`)."""
        return complete_result_labels(self._query(f"explore/{name}", params), self._query)
