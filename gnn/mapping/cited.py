r"""Co-citation maps of cited works, of their authors and of their sources (bibliometrix's ``biblioNetwork``
with ``analysis = "co-citation"`` and ``network = "references" | "authors" | "sources"``).

Let :math:`A` be the citing-document × cited-work incidence (:math:`A_{dw} = 1` when document :math:`d` of the
year window cites work :math:`w`) and :math:`W` a work × unit incidence: the identity for references, the
work's first (or every) author for authors, the work's normalised source for sources. The document × unit
incidence is :math:`B = [A W > 0]` (a document that cites two papers of one author counts that author
once), and the co-citation of units :math:`i \ne j` is

.. math::

    C = B^\top B, \qquad c_{ij} = \#\{d : d \text{ cites works of both } i \text{ and } j\},

counted by :func:`gnn.cocitation.counts.count_pairs` (expand–sort–compress of the upper triangle); the
diagonal :math:`s_i = C_{ii}` is the node's weight, the citing documents of the window that cite it.
bibliometrix counts documents the same way (``crossprod`` of its binary document × unit matrix).

* **REFERENCES**: a node is a cited work. Without a year window the links are the stored ``CO_CITED`` edges
  (``citegraph compute cocitation``: their counts and strengths); with one they are counted from the CITES of
  citing documents in the window. Nodes carry the work's label, year, ``cocite_cluster`` and its label, its
  strongest burst, betweenness and sigma (``citegraph compute mapping``); ``avg_year`` is the mean year of
  the documents citing it.
* **AUTHORS**: a node is an author of cited works, as reference lists print one ("Small H"): the
  authors of a work are its WROTE authors (first by position by default, every one with ``all_authors``);
  a cited-reference stub has none and gives the first author of its label ("Goos F, 1947, ..."), the
  only author a reference string names.
* **SOURCES**: a node is a cited work's venue, normalised as :func:`loaders.refmatch.source_tokens` does
  ("J. Informetr." = "J INFORMETR"; accents, case and stopwords of full titles dropped), labelled by the
  spelling most of its cited works use. An abbreviation that records of the store give beside their full title
  (``Paper.venue_abbrev``: WoS ``J9``/``JI``, Scopus's abbreviated source title) is joined to that title
  (:func:`abbreviation_joins`): "PHYS REV D" in cited references and "PHYSICAL REVIEW D" in records are one
  node, labelled by the full title.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from gnn.cocitation.clusters import read_cluster_labels
from gnn.cocitation.counts import count_pairs
from gnn.mapping.assemble import first_years, map_edges, map_nodes, mean_years, pair_frame, select, weights_of
from gnn.mapping.data import MappingInput, read_mapping_input
from gnn.mapping.networks import MapNetwork, MapUnit, NetworkFilters, register
from graph.files import StoreFiles
from graph.labels import author_label, complete_labels
from graph.store import GraphStore
from loaders.refmatch import source_tokens

log = logging.getLogger(__name__)
_YEAR_PART = re.compile(r"\d{4}[a-z]?")


@dataclass(frozen=True)
class Citations:
    """The distinct (citing document, cited work) pairs of a year window, as positions in ``data.papers``."""

    data: MappingInput
    citing: np.ndarray  # int64 [pairs]
    cited: np.ndarray  # int64 [pairs]


def window_citations(data: MappingInput, filters: NetworkFilters) -> Citations:
    """The citations whose citing document lies in the filters' year window (every one without a window;
    with one, documents without a year are out), each (document, work) pair once."""
    known = (data.citing >= 0) & (data.cited >= 0)
    citing, cited = data.citing[known], data.cited[known]
    if filters.year_min is not None or filters.year_max is not None:
        year = data.years[citing]
        inside = ~np.isnan(year)
        if filters.year_min is not None:
            inside &= year >= filters.year_min
        if filters.year_max is not None:
            inside &= year <= filters.year_max
        citing, cited = citing[inside], cited[inside]
    n = max(len(data.papers), 1)
    codes = np.unique(citing * n + cited)
    return Citations(data, codes // n, codes % n)


def _windowed(filters: NetworkFilters) -> bool:
    return filters.year_min is not None or filters.year_max is not None


# references ----------------------------------------------------------------------------------------


@register(MapUnit.REFERENCES)
def reference_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """Reference co-citation: cited works linked by the documents citing both (module docstring)."""
    citations = window_citations(read_mapping_input(store), filters)
    papers = citations.data.papers
    weight_all = np.bincount(citations.cited, minlength=len(papers))
    cited = weight_all > 0
    weight = pd.Series(weight_all[cited], index=papers[cited], dtype=np.int64)
    avg_year = pd.Series(
        mean_years(citations.citing, citations.cited, citations.data.years, len(papers))[cited], index=papers[cited]
    )
    first_year = pd.Series(
        first_years(citations.citing, citations.cited, citations.data.years, len(papers))[cited], index=papers[cited]
    )
    if _windowed(filters):
        pairs = count_pairs(citations.citing, citations.cited, papers, device="cpu")
        edges = pair_frame(pairs, filters.measure, min_count=filters.min_count)
    else:
        stored = store.read_edges("CO_CITED")
        stored = stored[stored["count"] >= filters.min_count]
        column = filters.measure.value
        value = stored["count"] if column == "count" else stored[column]
        edges = pd.DataFrame(
            {
                "source": stored["source"].astype(str),
                "target": stored["target"].astype(str),
                "count": stored["count"].astype(np.int64),
                "strength": pd.to_numeric(value, errors="coerce").fillna(0.0).astype(np.float64),
            }
        )
    members = None
    if filters.cluster is not None:
        members = {row["id"] for row in store.query("cocite_cluster_members", {"cluster": filters.cluster})}
    chosen = select(MapUnit.REFERENCES, filters, weight, edges, members=members)
    ids = [str(i) for i in chosen.nodes.index]
    rows = complete_labels(store.query("map_reference_nodes", {"ids": ids}), store.query) if ids else []
    attributes = pd.DataFrame.from_records(rows, columns=["id", "label", "title", "year", "cluster", *_STORED])
    attributes = attributes.set_index("id")
    attributes["avg_year"] = avg_year.reindex(attributes.index)
    attributes["first_year"] = first_year.reindex(attributes.index)
    labels = _cluster_labels(store)
    attributes["cluster_label"] = [None if pd.isna(c) else labels.get(int(c)) for c in attributes["cluster"]]
    return MapNetwork(
        MapUnit.REFERENCES, filters, map_nodes(chosen, attributes), map_edges(chosen.edges), chosen.truncated
    )


_STORED = ["burst_strength", "burst_begin", "burst_end", "betweenness", "sigma"]


def _cluster_labels(store: GraphStore) -> dict[int, str]:
    """Cluster number -> label, from the labels ``compute cocitation`` wrote beside the store (none on Neo4j)."""
    path = StoreFiles.of(store).clusters
    if path is None or not path.is_file():
        return {}
    return {c.cluster: c.label for c in read_cluster_labels(path)}


# authors and sources -------------------------------------------------------------------------------


def stub_first_author(label: str | None) -> str | None:
    """The first author at the head of a cited reference's label (``"Goos F, 1947, Ann Phys 1:333"`` ->
    ``"Goos F"``): the head counts as an author only when a year follows it (labels without an author
    start with the year, and a source alone is no author)."""
    if not isinstance(label, str):
        return None
    parts = [p.strip() for p in label.split(", ")]
    if len(parts) < 2 or not _YEAR_PART.fullmatch(parts[1]) or not parts[0] or parts[0].isdigit():
        return None
    return parts[0]


def author_id(label: str) -> str:
    """The node id of an author as printed ("Small H"): upper case, one space between words ("SMALL H"),
    as Web of Science prints cited authors, so "Small H" and "SMALL H" are one node."""
    return " ".join(label.upper().replace(".", " ").split())


def source_id(venue: str | None) -> str | None:
    """The node id of a source: :func:`loaders.refmatch.source_tokens` joined by spaces; None without words."""
    tokens = source_tokens(venue) if isinstance(venue, str) else ()
    return " ".join(tokens) or None


def _work_units(works: pd.DataFrame, papers: pd.Index) -> tuple[np.ndarray, np.ndarray, pd.Index, pd.Series]:
    """``works`` (``paper_id``, ``unit``, ``label``) as work positions, unit codes, the sorted unit ids and each
    unit's label (the most frequent among its rows, ties by the first in order)."""
    works = works[works["unit"].notna()]
    position = papers.get_indexer(pd.Index(works["paper_id"]))
    works = works[position >= 0].assign(position=position[position >= 0])
    codes, ids = pd.factorize(works["unit"], sort=True)
    labels = (
        works.groupby(["unit", "label"], sort=False)
        .size()
        .rename("n")
        .reset_index()
        .sort_values(["unit", "n"], ascending=[True, False], kind="stable")
        .drop_duplicates("unit")
        .set_index("unit")["label"]
    )
    return works["position"].to_numpy(np.int64), codes.astype(np.int64), pd.Index(ids), labels


def _unit_network(
    unit: MapUnit,
    filters: NetworkFilters,
    citations: Citations,
    work: np.ndarray,
    unit_code: np.ndarray,
    ids: pd.Index,
    labels: pd.Series,
) -> MapNetwork:
    r"""Co-citation of the units of cited works: :math:`B = [A W > 0]`, :math:`C = B^\top B` (module docstring)."""
    n_docs = len(citations.data.papers)
    a = sp.csr_matrix(
        (np.ones(len(citations.citing), dtype=np.int32), (citations.citing, citations.cited)),
        shape=(n_docs, n_docs),
    )
    w = sp.csr_matrix((np.ones(len(work), dtype=np.int32), (work, unit_code)), shape=(n_docs, len(ids)))
    b = (a @ w).tocoo()  # documents × units; > 0 where the document cites some work of the unit
    docs, items = b.row.astype(np.int64), b.col.astype(np.int64)
    pairs = count_pairs(docs, items, ids, device="cpu")
    edges = pair_frame(pairs, filters.measure, min_count=filters.min_count)
    chosen = select(unit, filters, weights_of(pairs), edges)
    attributes = pd.DataFrame(
        {
            "label": labels.reindex(ids).to_numpy(),
            "avg_year": mean_years(docs, items, citations.data.years, len(ids)),
            "first_year": first_years(docs, items, citations.data.years, len(ids)),
        },
        index=ids,
    )
    return MapNetwork(
        unit, filters, map_nodes(chosen, attributes.loc[chosen.nodes.index]), map_edges(chosen.edges), chosen.truncated
    )


def _cited_rows(store: GraphStore, name: str, key: str, citations: Citations) -> pd.DataFrame:
    """The rows of statement ``name`` (read as Arrow) whose ``key`` column names a work cited in the window: only
    those need an author or a source, and the per-row string work below stays small."""
    return _of_cited(store.query_arrow(name).to_pandas(), key, citations)


def _of_cited(frame: pd.DataFrame, key: str, citations: Citations) -> pd.DataFrame:
    """The rows of ``frame`` whose ``key`` column names a work cited in the window."""
    cited = np.zeros(len(citations.data.papers), dtype=bool)
    cited[citations.cited] = True
    position = citations.data.papers.get_indexer(pd.Index(frame[key].astype(object)))
    keep = position >= 0
    keep[keep] = cited[position[keep]]
    return frame[keep].reset_index(drop=True)


def _each(values: pd.Series, function: Callable[[Any], str | None]) -> list[str | None]:
    """``function`` of every value, computed once per distinct value (names and venues repeat)."""
    done = {value: function(value) for value in pd.unique(values)}
    return [done[value] for value in values]


def author_rows(store: GraphStore, citations: Citations, *, all_authors: bool = False) -> pd.DataFrame:
    """The cited works of the window and their author nodes: ``paper_id``, ``label`` (as printed), ``unit`` (the
    node id, :func:`author_id`); the first author of each work unless ``all_authors`` (module docstring)."""
    wrote = _cited_rows(store, "work_authors", "paper_id", citations)
    wrote = wrote.assign(label=_each(wrote["name"], author_label)).dropna(subset=["label"])
    if not all_authors:  # the lowest position; a work without positions keeps its first row by name
        wrote = wrote.sort_values(["paper_id", "position", "label"], na_position="last", kind="stable")
        wrote = wrote.drop_duplicates("paper_id")
    works = _cited_rows(store, "work_sources", "id", citations)
    stubs = works[~works["id"].isin(set(wrote["paper_id"]))]
    heads = _each(stubs["label"], stub_first_author)
    rows = pd.concat(
        [
            pd.DataFrame({"paper_id": wrote["paper_id"], "label": wrote["label"]}),
            pd.DataFrame({"paper_id": stubs["id"], "label": heads}).dropna(subset=["label"]),
        ],
        ignore_index=True,
    )
    rows["unit"] = _each(rows["label"], author_id)
    return rows


def abbreviation_joins(works: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Source id of an abbreviation -> (source id, label) of the full title it abbreviates, from the records that
    give both (``venue`` and ``venue_abbrev``: WoS ``SO`` with ``J9``/``JI``, Scopus's source title with its
    abbreviation). Cited references name sources by abbreviation ("PHYS REV D") where records give the full title
    ("PHYSICAL REVIEW D"); without the join one journal is two nodes. An abbreviation that records give to two
    different full titles is ambiguous and joins nothing (it is logged)."""
    if "venue_abbrev" not in works.columns:
        return {}
    both = works.dropna(subset=["venue", "venue_abbrev"]).drop_duplicates(["venue", "venue_abbrev"])
    targets: dict[str, set[tuple[str, str]]] = {}
    for venue, abbrev in zip(both["venue"], both["venue_abbrev"]):
        short, full = source_id(abbrev), source_id(venue)
        if short is not None and full is not None and short != full:
            targets.setdefault(short, set()).add((full, " ".join(str(venue).split())))
    joins: dict[str, tuple[str, str]] = {}
    for short, found in targets.items():
        if len({full for full, _ in found}) == 1:
            joins[short] = min(found)
        else:
            log.info("source abbreviation %r names %d full titles; left apart", short, len(found))
    return joins


def source_rows(store: GraphStore, citations: Citations) -> pd.DataFrame:
    """The cited works of the window and their source nodes: ``paper_id``, ``label`` (the venue as spelled, or the
    full title an abbreviation joins, :func:`abbreviation_joins`), ``unit`` (the node id, :func:`source_id`)."""
    every = store.query_arrow("work_sources").to_pandas()  # read once: the joins need every record's titles
    full_titles = abbreviation_joins(every)
    works = _of_cited(every, "id", citations)
    units = _each(works["venue"], source_id)
    joined = [full_titles.get(u) if u is not None else None for u in units]
    rows = pd.DataFrame(
        {
            "paper_id": works["id"],
            "label": [
                j[1] if j is not None else label
                for j, label in zip(
                    joined, _each(works["venue"], lambda v: " ".join(v.split()) if isinstance(v, str) else None)
                )
            ],
            "unit": [j[0] if j is not None else u for j, u in zip(joined, units)],
        }
    )
    return rows.dropna(subset=["label"])


@register(MapUnit.AUTHORS)
def author_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """Author co-citation: authors of cited works linked by the documents citing works of both."""
    citations = window_citations(read_mapping_input(store), filters)
    rows = author_rows(store, citations, all_authors=filters.all_authors)
    work, code, ids, labels = _work_units(rows, citations.data.papers)
    return _unit_network(MapUnit.AUTHORS, filters, citations, work, code, ids, labels)


@register(MapUnit.SOURCES)
def source_network(store: GraphStore, filters: NetworkFilters) -> MapNetwork:
    """Source co-citation: venues of cited works linked by the documents citing works of both."""
    citations = window_citations(read_mapping_input(store), filters)
    work, code, ids, labels = _work_units(source_rows(store, citations), citations.data.papers)
    return _unit_network(MapUnit.SOURCES, filters, citations, work, code, ids, labels)


__all__ = [
    "Citations",
    "author_id",
    "author_network",
    "author_rows",
    "reference_network",
    "source_id",
    "source_network",
    "source_rows",
    "stub_first_author",
    "window_citations",
]
