"""``citegraph compute mapping``: citation bursts, betweenness and sigma, written back onto every Paper.

:func:`compute_mapping` reads the citations with their citing years (:mod:`gnn.mapping.data`), counts each
cited work's citations per year (:func:`yearly_citations`), finds its strongest Kleinberg burst
(:mod:`gnn.mapping.bursts`), computes betweenness on the stored CO_CITED network
(:mod:`gnn.mapping.centrality`; run ``citegraph compute cocitation`` first) and sigma, and writes
``burst_strength``, ``burst_begin``, ``burst_end``, ``betweenness`` and ``sigma`` on every Paper (null
where a work has none: a recomputation replaces old values). Rerunning gives the same graph.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm import tqdm

from gnn.mapping.bursts import BurstSettings, detect_bursts, strongest_bursts
from gnn.mapping.centrality import CentralitySettings, betweenness, cocitation_network, sigma
from gnn.mapping.data import MappingInput, read_mapping_input
from gnn.progress import StageTimer
from graph.store import GraphStore

log = logging.getLogger(__name__)

PAPER_PROPERTIES = ["burst_strength", "burst_begin", "burst_end", "betweenness", "sigma"]


@dataclass(frozen=True)
class MappingSettings:
    """Settings of ``citegraph compute mapping`` (each part's own settings, with CiteSpace's defaults)."""

    bursts: BurstSettings = field(default_factory=BurstSettings)
    centrality: CentralitySettings = field(default_factory=CentralitySettings)


@dataclass(frozen=True)
class YearlyCitations:
    """Citations per cited work and year: ``r[w, t]`` of ``works[w]`` in ``first_year + t``, ``d[t]`` citing papers."""

    works: pd.Index  # ids of the works cited at least once by a paper with a known year, sorted
    r: sp.csr_matrix  # int64 [works, years]: distinct citing papers of the work in each year
    d: np.ndarray  # int64 [years]: distinct citing papers (with at least one reference) in each year
    first_year: int  # the year of column 0 (0 when there is no dated citation)


def yearly_citations(data: MappingInput) -> YearlyCitations:
    """:math:`r_t` and :math:`d_t` of Kleinberg's batched model, one column per year from the first citing year
    to the last (years without citing papers included, with :math:`d_t = 0`); undated citing papers are left out."""
    known = (data.citing >= 0) & (data.cited >= 0)
    citing, cited = data.citing[known], data.cited[known]
    year = data.years[citing]
    dated = ~np.isnan(year)
    citing, cited, year = citing[dated], cited[dated], year[dated].astype(np.int64)
    if len(citing) == 0:
        return YearlyCitations(
            pd.Index([], dtype="str"), sp.csr_matrix((0, 0), dtype=np.int64), np.zeros(0, np.int64), 0
        )
    first = int(year.min())
    span = int(year.max()) - first + 1
    n = len(data.papers)
    pairs = np.unique(citing * n + cited)  # one per citing paper and work, whatever the store repeats
    citing, cited = pairs // n, pairs % n
    column = data.years[citing].astype(np.int64) - first
    works, row = np.unique(cited, return_inverse=True)
    r = sp.csr_matrix(
        (np.ones(len(row), dtype=np.int64), (row, column)), shape=(len(works), span), dtype=np.int64
    )  # duplicates summed: citing papers of the work in that year
    citing_papers = np.unique(citing)
    d = np.bincount(data.years[citing_papers].astype(np.int64) - first, minlength=span).astype(np.int64)
    return YearlyCitations(data.papers[works], r, d, first)


def burst_table(citations: YearlyCitations, settings: BurstSettings | None = None) -> pd.DataFrame:
    """Each cited work's strongest burst: ``id``, ``burst_strength``, ``burst_begin``, ``burst_end`` (years)."""
    bursts = strongest_bursts(detect_bursts(citations.r, citations.d, settings))
    return pd.DataFrame(
        {
            "id": citations.works[bursts["row"].to_numpy()].array,
            "burst_strength": bursts["strength"].to_numpy(dtype=np.float64),
            "burst_begin": bursts["begin"].to_numpy(dtype=np.int64) + citations.first_year,
            "burst_end": bursts["end"].to_numpy(dtype=np.int64) + citations.first_year,
        }
    )


@dataclass(frozen=True)
class MappingReport:
    """What :func:`compute_mapping` computed and wrote."""

    years: tuple[int, int] | None  # first and last citing year (None: no dated citation)
    cited_works: int  # works cited by a dated paper (the series bursts are looked for in)
    bursts: pd.DataFrame  # every work's strongest burst, strongest first (burst_table's columns)
    network_works: int  # works in the co-citation network betweenness ran on
    network_links: int
    sampled: bool  # betweenness from sampled pivots (the network exceeded exact_up_to)
    papers_written: int
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self, top: int = 10) -> str:
        span = f"{self.years[0]}-{self.years[1]}" if self.years else "no dated citation"
        lines = [
            f"mapping: {self.cited_works} cited works over {span}; {len(self.bursts)} with a citation burst",
            f"  betweenness on {self.network_works} works / {self.network_links} co-citation links"
            + (" (sampled pivots)" if self.sampled else "")
            + ("" if self.network_works else ": no CO_CITED edges, run `citegraph compute cocitation` first"),
            f"  {self.papers_written} papers updated",
        ]
        for row in self.bursts.head(top).itertuples(index=False):
            lines.append(f"    {row.burst_strength:8.2f}  {row.burst_begin}-{row.burst_end}  {row.id}")
        lines.append("  " + ", ".join(f"{stage} {s:.2f}s" for stage, s in self.seconds.items()))
        return "\n".join(lines)


def compute_mapping(store: GraphStore, settings: MappingSettings | None = None) -> MappingReport:
    """Compute bursts, betweenness and sigma from the store and write them onto every Paper."""
    settings = settings or MappingSettings()
    with tqdm(total=5, desc="mapping", unit="step", disable=None) as bar:
        stage = StageTimer(bar)
        seconds = stage.seconds
        with stage("read"):
            data = read_mapping_input(store)
            edges = store.read_edges("CO_CITED")
        with stage("bursts"):
            citations = yearly_citations(data)
            bursts = burst_table(citations, settings.bursts)
        with stage("betweenness"):
            network = cocitation_network(edges, settings.centrality.min_count)
            central, sampled = betweenness(network, settings.centrality)
        with stage("sigma"):
            strength = pd.Series(bursts["burst_strength"].to_numpy(), index=pd.Index(bursts["id"]))
            sigmas = sigma(central, strength)
        with stage("write"):
            papers = _paper_frame(data.papers, bursts, central, sigmas)
            written = store.write_node_properties("Paper", "id", papers)

    ordered = bursts.sort_values(["burst_strength", "id"], ascending=[False, True], kind="stable")
    span = citations.r.shape[1]
    return MappingReport(
        years=(citations.first_year, citations.first_year + span - 1) if span else None,
        cited_works=len(citations.works),
        bursts=ordered.reset_index(drop=True),
        network_works=network.number_of_nodes(),
        network_links=network.number_of_edges(),
        sampled=sampled,
        papers_written=written,
        seconds=seconds,
    )


def _paper_frame(papers: pd.Index, bursts: pd.DataFrame, central: pd.Series, sigmas: pd.Series) -> pd.DataFrame:
    """One row per Paper with every mapping property, null where a work has none."""
    by_id = bursts.set_index("id")
    return pd.DataFrame(
        {
            "id": papers.array,
            "burst_strength": by_id["burst_strength"].reindex(papers).to_numpy(dtype=np.float64),
            "burst_begin": by_id["burst_begin"].reindex(papers).astype("Int64").array,
            "burst_end": by_id["burst_end"].reindex(papers).astype("Int64").array,
            "betweenness": central.reindex(papers).to_numpy(dtype=np.float64),
            "sigma": sigmas.reindex(papers).to_numpy(dtype=np.float64),
        }
    )


__all__ = [
    "PAPER_PROPERTIES",
    "MappingReport",
    "MappingSettings",
    "YearlyCitations",
    "burst_table",
    "compute_mapping",
    "yearly_citations",
]
