"""The cost of the science-mapping analyses (``gnn.mapping``) on a synthetic network of configurable size.

The network: ``--papers`` papers spread evenly over the years 1990-2025 (ids in publication order),
each citing ``--refs`` distinct earlier papers drawn Zipf-like (``rank ** -alpha`` over a random
popularity ranking, as ``benchmarks/ingest_bench.py``), seeded. It is built in memory as the
:class:`gnn.mapping.data.MappingInput` the compute step reads from a store (the store read is the
co-citation step's, measured by ``benchmarks/cocitation_bench.py``), so each analysis is timed alone:

* ``bursts``: ``yearly_citations`` + ``burst_table`` (Kleinberg's automaton over every cited work);
* ``network``: the co-citation pairs (``gnn.cocitation.counts.count_pairs``, what ``compute cocitation``
  stores as CO_CITED) with ``count >= --centrality-min-count``, and the networkx graph of them;
* ``betweenness``: ``gnn.mapping.centrality.betweenness`` with ``--pivots`` sampled sources (exact at or
  below ``--exact-up-to`` works), ``sigma`` included;
* ``historiograph``: ``historiograph_of`` (LCS over every citation, top ``--top`` records);
* ``clusters``: what ``compute cocitation`` adds for its clusters: the co-citation pairs, each work's
  ``--top-k`` strongest links, Leiden, modularity and silhouette (``gnn.cocitation.quality``) and the LLR and
  c-TF-IDF labels from the citing papers' titles (``gnn.cocitation.terms``; synthetic titles: six words of
  the paper's topic vocabulary, one of 200 topics);
* ``coupling``: ``compute coupling`` without the store: coupling counts (``gnn.mapping.coupling.coupling_counts``),
  top-k links, Leiden, quality, labels from the documents' own titles. Its cost is
  Σ_w c_w² expanded pairs (c_w the citers of work w), reported as
  ``expansions`` before it runs; above ``--max-expansions`` it is not run;
* ``slices``: the co-citation pairs of every ``--slice-years`` slice of the citing years (what ``export
  slices`` builds per slice for references), plus the overlay's average citing year.

Keyword analyses (``--keywords``), on a synthetic corpus of ``--papers`` papers each carrying
``--keywords-per-paper`` distinct keywords drawn Zipf-like from ``--vocabulary`` terms, built in memory as the
:class:`gnn.mapping.keywords.KeywordUses` the KEYWORDS unit reads from a store (``keyword_uses``):

* ``keywords``: the co-occurrence network of the ``--keyword-top`` (500) heaviest keywords (``BᵀB``,
  ``cooccurrence``) and its edges by association strength, what ``mapNetwork(unit: KEYWORDS)`` returns;
* ``thematic``: the thematic map of the 250 heaviest (``cooccurrence`` + Leiden + Callon, ``thematic_map_of``).

``--keyword-samples`` ingests the real Web of Science and Scopus samples (``$CITEGRAPH_DATA/formats``) into
fresh stores and times the ingest, the KEYWORDS network and the thematic map read from each store. With
``--merge-into RECORD`` the keyword figures replace the keyword tables of an existing record (docs/results/
mapping_cost.json), its other tables kept.

Each analysis runs in its own fresh process (``spawn``): wall time of the analysis and the process's peak
resident memory (``ru_maxrss``), with the resident memory after building the input for reference.
``--scan-betweenness`` instead times exact betweenness on small co-citation graphs and the sampled estimate's
error (the measurements behind ``gnn.mapping.centrality.EXACT_UP_TO`` and ``PIVOTS``)::

    nice python benchmarks/mapping_bench.py --papers 100000 --out docs/results/mapping_cost.json
    nice python benchmarks/mapping_bench.py --scan-betweenness
    nice python benchmarks/mapping_bench.py --keywords --papers 130000 --merge-into docs/results/mapping_cost.json
    nice python benchmarks/mapping_bench.py --keyword-samples --merge-into docs/results/mapping_cost.json

``--units references authors ...`` times the science maps of ``gnn.mapping`` (``build_network``: the store's
bulk reads, the sparse counting, the selection of the top nodes and the node attributes) on the store at
``--db`` (opened read-only), each unit in a fresh process, with the filters of ``--min-count``, ``--map-top``
and, for a second run per unit, the year window ``--year-min`` (the REFERENCES map then counts from CITES
instead of reading CO_CITED). ``--out`` adds its table to an existing record and keeps the other tables::

    nice python benchmarks/mapping_bench.py --units references authors sources coauthors institutions \
        countries --db var/citegraph.db --year-min 2015 --out docs/results/mapping_cost.json

``--build-store PATH`` first writes the synthetic network (``--papers``, ``--refs``) into a fresh store with
what every unit reads (venues, authors, author keywords, institutions in countries: ``synthetic_store_batch``),
then times the ``--units`` maps on it; ``--window-only`` builds only the ``--year-min`` window (that store has no
CO_CITED, so its all-years REFERENCES map would be empty)::

    nice python benchmarks/mapping_bench.py --build-store var/syn1m.db --papers 1000000 --refs 20 \
        --units references authors sources coauthors keywords institutions countries --year-min 1990 \
        --window-only --system "synthetic 1M papers" --out docs/results/mapping_cost.json

``coupling`` cuts the references cited by more than ``--coupling-max-share`` of the citing papers (default: the
automatic cut of ``gnn.mapping.coupling.coupling_cut``) and keeps pairs sharing ``--coupling-min-count``;
``--coupling-agreement S ...`` clusters the coupling network of the store ``--db`` (or the synthetic network)
exactly and with each share cut, and reports NMI and ARI to the exact clusters (and Leiden's seed-to-seed spread).
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project package must import
    sys.path.insert(0, str(ROOT))

ANALYSES = ("bursts", "network", "betweenness", "historiograph", "clusters", "coupling", "slices")
TOPICS, TOPIC_WORDS = 200, 30  # synthetic titles: six words of the paper's topic's vocabulary
KEYWORD_ANALYSES = ("keywords", "thematic")
KEYWORD_TABLE = (
    "Keyword co-occurrence and thematic map (gnn.mapping.keywords, gnn.mapping.thematic): time and peak memory"
)
SAMPLES_TABLE = "Keywords on the real WoS and Scopus samples: ingest, KEYWORDS network, thematic map (seconds)"
SAMPLE_FILES = (
    ("wos", "wos/wos_sample.txt"),
    ("wos", "wos/savedrecs.txt"),
    ("wos", "wos/wos.txt"),
    ("wos", "wos/wos_2026_04_02_4071.txt"),
    ("scopus", "scopus/scopus_sample.csv"),
    ("scopus", "scopus/scopus_testing.csv.scopus"),
)
FIRST_YEAR, LAST_YEAR = 1990, 2025


def synthetic_input(papers: int, refs: int, seed: int, alpha: float) -> Any:
    """A :class:`~gnn.mapping.data.MappingInput` of ``papers`` papers each citing up to ``refs`` earlier ones."""
    from gnn.mapping.data import MappingInput

    rng = np.random.default_rng(seed)
    width = max(7, len(str(papers - 1)))
    ids = pd.Index([f"P{i:0{width}d}" for i in range(papers)], dtype="str")  # sorted = publication order
    years = (FIRST_YEAR + np.arange(papers) * (LAST_YEAR - FIRST_YEAR + 1) // papers).astype(np.float64)
    rank = rng.permutation(papers)
    cdf = np.cumsum(np.arange(1, papers + 1, dtype=np.float64) ** -alpha)
    cdf /= cdf[-1]
    citing = np.repeat(np.arange(papers, dtype=np.int64), refs)
    cited = rank[np.minimum(np.searchsorted(cdf, rng.random(len(citing)), side="right"), papers - 1)]
    earlier = cited < citing  # a paper cites older ones only; the rest of the draws are dropped
    codes = np.unique(citing[earlier] * papers + cited[earlier])
    record = rng.random(papers) < 0.5  # half the papers are records of the collection, half cited stubs
    return MappingInput(ids, years, record, codes // papers, codes % papers)


def synthetic_titles(papers: int, seed: int) -> list[str]:
    """Six words per paper from its topic's vocabulary (topic = a seeded random one of :data:`TOPICS`)."""
    rng = np.random.default_rng(seed + 1)
    topic = rng.integers(0, TOPICS, papers)
    words = rng.integers(0, TOPIC_WORDS, (papers, 6))
    return [" ".join(f"topic{t}word{w}" for w in row) for t, row in zip(topic.tolist(), words.tolist())]


def _zipf_draws(rng: np.random.Generator, n: int, size: int, alpha: float) -> np.ndarray:
    """``size`` draws from ``range(n)``, item ``k`` with probability ∝ ``(k + 1) ** -alpha``."""
    cdf = np.cumsum(np.arange(1, n + 1, dtype=np.float64) ** -alpha)
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), n - 1)


def synthetic_store_batch(papers: int, refs: int, seed: int, alpha: float) -> Any:
    """The network of :func:`synthetic_input` as a store batch, with what every unit map reads.

    Per paper: its year and title (:func:`synthetic_titles`), a venue of 5,000 (Zipf-like), 1-5 authors
    from a pool of ``papers // 4`` (positions 1..k, Zipf-like productivity), five author keywords of
    50,000 (as ``--keywords``), 1-3 institutions of 20,000, each in one of 60 countries (the paper is
    IN_COUNTRY of its institutions' countries). Half the papers are records, half cited stubs (``stub``),
    as :func:`synthetic_input`; every paper carries authors, as a full-coverage corpus (OpenAlex) does.
    """
    from graph import GraphBatch

    data = synthetic_input(papers, refs, seed, alpha)
    rng = np.random.default_rng(seed + 2)
    ids = np.asarray(data.papers, dtype=object)
    venues = np.array([f"Journal of Synthetic Studies {v}" for v in range(5_000)], dtype=object)
    paper_frame = pd.DataFrame(
        {
            "id": ids,
            "title": synthetic_titles(papers, seed),
            "year": data.years.astype(np.int64),
            "venue": venues[_zipf_draws(rng, len(venues), papers, alpha)],
            "stub": ~data.record,
        }
    )
    ids_of = pd.Series(ids)
    cites = pd.DataFrame({"source": ids_of.take(data.citing).array, "target": ids_of.take(data.cited).array})

    def incidence(per_paper: np.ndarray, pool: int) -> tuple[np.ndarray, np.ndarray]:
        doc = np.repeat(np.arange(papers, dtype=np.int64), per_paper)
        codes = np.unique(doc * pool + _zipf_draws(rng, pool, len(doc), alpha))  # a repeated draw is one
        return codes // pool, codes % pool

    pool = max(papers // 4, 10)
    doc, author = incidence(rng.integers(1, 6, papers), pool)
    position = np.arange(len(doc)) - np.searchsorted(doc, doc) + 1  # 1.. within each paper
    authors = pd.DataFrame({"id": [f"A{a}" for a in range(pool)], "name": [f"Author{a}, X" for a in range(pool)]})
    wrote = pd.DataFrame(
        {"source": authors["id"].take(author).array, "target": ids_of.take(doc).array, "position": position}
    )
    doc_k, term = incidence(np.full(papers, 5), 50_000)
    keywords = pd.DataFrame(
        {"id": [f"author:k{k:05d}" for k in range(50_000)], "name": [f"k{k:05d}" for k in range(50_000)]}
    ).assign(kind="author")
    has_keyword = pd.DataFrame({"source": ids_of.take(doc_k).array, "target": keywords["id"].take(term).array})
    codes = np.array([f"{chr(65 + c // 26)}{chr(65 + c % 26)}" for c in range(60)], dtype=object)
    countries = pd.DataFrame({"code": codes, "name": [f"Country {c}" for c in codes]})
    institution_country = rng.integers(0, len(codes), 20_000)
    institutions = pd.DataFrame(
        {
            "id": [f"inst:i{i}|{codes[c]}" for i, c in enumerate(institution_country.tolist())],
            "name": [f"University {i}" for i in range(20_000)],
            "country": codes[institution_country],
        }
    )
    doc_i, inst = incidence(rng.integers(1, 4, papers), 20_000)
    affiliation = pd.DataFrame({"source": ids_of.take(doc_i).array, "target": institutions["id"].take(inst).array})
    in_country = np.unique(doc_i * len(codes) + institution_country[inst])
    country_rows = pd.DataFrame(
        {"source": ids_of.take(in_country // len(codes)).array, "target": codes[in_country % len(codes)]}
    )
    return GraphBatch(
        "synthetic",
        nodes={
            "Paper": paper_frame,
            "Author": authors,
            "Keyword": keywords,
            "Institution": institutions,
            "Country": countries,
        },
        rels={
            "CITES": cites,
            "WROTE": wrote,
            "HAS_KEYWORD": has_keyword,
            "AFFILIATION": affiliation,
            "IN_COUNTRY": country_rows,
        },
    )


def build_synthetic_store(path: Path, papers: int, refs: int, seed: int, alpha: float) -> dict[str, Any]:
    """Write :func:`synthetic_store_batch` into a fresh embedded store at ``path``: its sizes and seconds."""
    from graph import StoreConfig, ingest, open_store

    if path.exists():
        raise SystemExit(f"{path} exists; give --build-store a new path (the store is built fresh)")
    started = time.perf_counter()
    batch = synthetic_store_batch(papers, refs, seed, alpha)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    with open_store(StoreConfig(db_path=path)) as store:
        report = ingest(store, batch, merge_known_ids=False)
    sizes = {name: len(frame) for name, frame in {**batch.nodes, **batch.rels}.items()}
    return {**sizes, "generate_seconds": round(generated, 1), "ingest_seconds": round(report.seconds, 1)}


def _leiden_quality_labels(
    i: np.ndarray, j: np.ndarray, count: np.ndarray, occurrences: np.ndarray, n: int, top_k: int
) -> tuple[Any, Any, np.ndarray]:
    """Each node's top_k strongest links, Leiden, and the clustering's quality (as the compute steps)."""
    from gnn.cocitation.clusters import leiden_membership, prune_pairs
    from gnn.cocitation.quality import clustering_quality

    rows = np.concatenate([i, j])
    partners = np.concatenate([j, i])
    freq = np.concatenate([count, count])
    order = np.lexsort((partners, -freq, rows))
    a, b, w = prune_pairs(rows[order], partners[order], freq[order], n, top_k=top_k)
    del rows, partners, freq, order
    membership = leiden_membership(a, b, w, n, seed=0)
    s = occurrences.astype(np.float64)
    quality = clustering_quality(a, b, w, w / np.sqrt(s[a] * s[b]), membership)
    return quality, (a, b, w), membership


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def run_analysis(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """One analysis in this (fresh) process: seconds, peak RSS, RSS after the input was built, sizes."""
    from gnn.cocitation.counts import count_pairs
    from gnn.mapping.centrality import CentralitySettings, betweenness, cocitation_network, sigma
    from gnn.mapping.compute import burst_table, yearly_citations
    from gnn.mapping.historiograph import historiograph_of

    data = synthetic_input(options["papers"], options["refs"], options["seed"], options["alpha"])
    result: dict[str, Any] = {"citations": len(data.citing), "input_rss_mib": round(_rss_mib(), 1)}

    def network() -> Any:
        pairs = count_pairs(data.citing, data.cited, data.papers, device="cpu")
        keep = pairs.count >= options["centrality_min_count"]
        edges = pd.DataFrame(
            {"source": data.papers[pairs.i[keep]], "target": data.papers[pairs.j[keep]], "count": pairs.count[keep]}
        )
        result["pairs"] = len(pairs)
        return cocitation_network(edges, options["centrality_min_count"])

    started = time.perf_counter()
    if name == "bursts":
        citations = yearly_citations(data)
        bursts = burst_table(citations)
        result.update(cited_works=len(citations.works), years=int(citations.r.shape[1]), bursts=len(bursts))
    elif name == "network":
        graph = network()
        result.update(works=graph.number_of_nodes(), links=graph.number_of_edges())
    elif name == "betweenness":
        graph = network()
        result.update(works=graph.number_of_nodes(), links=graph.number_of_edges())
        result["network_seconds"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()  # betweenness alone, the network built above
        settings = CentralitySettings(
            min_count=options["centrality_min_count"], exact_up_to=options["exact_up_to"], pivots=options["pivots"]
        )
        values, sampled = betweenness(graph, settings)
        sigma(values, pd.Series(dtype="float64"))
        result.update(sampled=sampled, pivots=options["pivots"] if sampled else None)
    elif name == "historiograph":
        nodes, edges = historiograph_of(data, top_n=options["top"])
        result.update(nodes=len(nodes), edges=len(edges))
    elif name == "clusters":
        from gnn.cocitation.terms import class_term_counts, rank_labels, term_matrix

        titles = synthetic_titles(options["papers"], options["seed"])
        started = time.perf_counter()  # the titles stand in for the store read
        pairs = count_pairs(data.citing, data.cited, data.papers, device="cpu")
        result.update(pairs=len(pairs), count_seconds=round(time.perf_counter() - started, 2))
        quality, (a, _, _), membership = _leiden_quality_labels(
            pairs.i, pairs.j, pairs.count, pairs.occurrences, len(pairs.ids), options["top_k"]
        )
        result.update(links=len(a), clusters=int(membership.max()) + 1, modularity=round(quality.modularity, 3))
        result.update(silhouette=None if quality.silhouette is None else round(quality.silhouette, 3))
        result["cluster_seconds"] = round(time.perf_counter() - started, 2)
        position = np.searchsorted(data.papers, pairs.ids)  # cited works' positions among the papers
        cluster_of = np.full(len(data.papers), -1, dtype=np.int64)
        cluster_of[position] = membership
        del pairs
        cluster = cluster_of[data.cited]
        citing = data.citing[cluster >= 0]
        cluster = cluster[cluster >= 0]
        citers, document = np.unique(citing, return_inverse=True)
        doc_terms, terms = term_matrix([titles[k] for k in citers.tolist()])
        llr, _ = rank_labels(class_term_counts(cluster, document, doc_terms, int(membership.max()) + 1), terms, 5)
        result.update(terms=len(terms), labelled=sum(1 for t in llr if t))
    elif name == "coupling":
        from gnn.cocitation.terms import class_term_counts, rank_labels, term_matrix
        from gnn.mapping.coupling import coupling_counts, coupling_cut

        citers = np.bincount(data.cited, minlength=len(data.papers))
        cut = coupling_cut(citers, len(np.unique(data.citing)), max_share=options["coupling_max_share"])
        result.update(
            expansions=cut.exact_expansions,
            expansions_after_cut=cut.expansions,
            max_citers=cut.max_citers,
            references_cut=cut.references_cut,
            citations_cut=cut.citations_cut,
        )
        if cut.expansions > options["max_expansions"]:
            result["skipped"] = f"over --max-expansions {options['max_expansions']:,}"
        else:
            titles = synthetic_titles(options["papers"], options["seed"])
            started = time.perf_counter()
            pairs = coupling_counts(
                data, max_share=options["coupling_max_share"], min_count=options["coupling_min_count"]
            )
            result.update(pairs=len(pairs), count_seconds=round(time.perf_counter() - started, 2))
            result["count_peak_rss_mib"] = round(_peak_mib(), 1)
            quality, (a, _, _), membership = _leiden_quality_labels(
                pairs.i, pairs.j, pairs.count, pairs.occurrences, len(pairs.ids), options["top_k"]
            )
            result.update(links=len(a), clusters=int(membership.max()) + 1, modularity=round(quality.modularity, 3))
            clustered = np.flatnonzero(membership >= 0)
            position = np.searchsorted(data.papers, pairs.ids[clustered])
            doc_terms, terms = term_matrix([titles[k] for k in position.tolist()])
            counts = class_term_counts(membership[clustered], np.arange(len(clustered)), doc_terms, result["clusters"])
            rank_labels(counts, terms, 5)
    else:  # slices
        from gnn.mapping.overlay import average_citing_year
        from gnn.mapping.slices import time_slices

        sizes = []
        for first, last in time_slices(FIRST_YEAR, LAST_YEAR, options["slice_years"]):
            year = data.years[data.citing]
            inside = (year >= first) & (year <= last)
            pairs = count_pairs(data.citing[inside], data.cited[inside], data.papers, device="cpu")
            sizes.append(len(pairs))
            del pairs
        average_citing_year(data)
        result.update(slices=len(sizes), largest_slice_pairs=max(sizes), pairs=sum(sizes))
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["peak_rss_mib"] = round(_peak_mib(), 1)
    return result


def synthetic_keyword_uses(papers: int, per_paper: int, vocabulary: int, seed: int, alpha: float) -> Any:
    """A :class:`~gnn.mapping.keywords.KeywordUses` of ``papers`` papers with up to ``per_paper`` distinct
    author keywords each, drawn Zipf-like (``rank ** -alpha``) from ``vocabulary`` terms, years 1990-2025."""
    from gnn.mapping.keywords import KeywordUses

    rng = np.random.default_rng(seed)
    width = max(7, len(str(papers - 1)))
    ids = pd.Index([f"P{i:0{width}d}" for i in range(papers)], dtype="str")
    years = (FIRST_YEAR + np.arange(papers) * (LAST_YEAR - FIRST_YEAR + 1) // papers).astype(np.float64)
    cdf = np.cumsum(np.arange(1, vocabulary + 1, dtype=np.float64) ** -alpha)
    cdf /= cdf[-1]
    doc = np.repeat(np.arange(papers, dtype=np.int64), per_paper)
    term = np.minimum(np.searchsorted(cdf, rng.random(len(doc)), side="right"), vocabulary - 1)
    codes = np.unique(doc * vocabulary + term)  # a keyword drawn twice for one paper is one use
    terms = pd.Index([f"author:k{i:06d}" for i in range(vocabulary)], dtype="str")
    kinds = np.full(vocabulary, "author", dtype=object)
    return KeywordUses(ids, years, terms, kinds, codes // vocabulary, codes % vocabulary)


def run_keyword_analysis(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """One keyword analysis in this (fresh) process: seconds, peak RSS, RSS after the input was built, sizes."""
    import scipy.sparse as sp

    from gnn.mapping.keywords import cooccurrence, strengths
    from gnn.mapping.networks import Measure, NetworkFilters
    from gnn.mapping.thematic import DEFAULT_TOP, thematic_map_of

    uses = synthetic_keyword_uses(
        options["papers"], options["keywords_per_paper"], options["vocabulary"], options["seed"], options["alpha"]
    )
    result: dict[str, Any] = {"uses": len(uses.doc), "input_rss_mib": round(_rss_mib(), 1)}
    started = time.perf_counter()
    if name == "keywords":
        co = cooccurrence(uses, NetworkFilters(min_count=2, top=options["keyword_top"]))
        upper = sp.triu(co.counts, k=1).tocoo()
        weight = strengths(upper.data, co.weights[upper.row], co.weights[upper.col], co.documents, Measure.ASSOCIATION)
        result.update(keywords=len(co.keywords), links=len(weight), documents=co.documents)
    else:
        co = cooccurrence(uses, NetworkFilters(min_count=2, top=DEFAULT_TOP))
        themes = thematic_map_of(co, [str(k) for k in co.keywords], NetworkFilters(min_count=2, top=DEFAULT_TOP))
        result.update(keywords=len(co.keywords), links=int(co.counts.nnz // 2), themes=len(themes.themes))
    result["seconds"] = round(time.perf_counter() - started, 3)
    result["peak_rss_mib"] = round(_peak_mib(), 1)
    return result


def keyword_samples(data: Path) -> list[dict[str, Any]]:
    """Ingest each real sample into a fresh store, then the KEYWORDS network and the thematic map from it."""
    import tempfile

    import gnn.mapping  # noqa: F401  (registers the KEYWORDS builder)
    from gnn.mapping.networks import MapUnit, NetworkFilters, build_network
    from gnn.mapping.thematic import thematic_map
    from graph import StoreConfig, ingest, open_store
    from loaders import SOURCES

    rows = []
    for source, name in SAMPLE_FILES:
        path = data / "formats" / name
        with tempfile.TemporaryDirectory() as folder, open_store(StoreConfig(db_path=Path(folder) / "s.db")) as store:
            started = time.perf_counter()
            report = ingest(store, SOURCES[source].load(path))
            ingested = time.perf_counter() - started
            started = time.perf_counter()
            net = build_network(store, MapUnit.KEYWORDS, NetworkFilters(min_count=1, top=500))
            network = time.perf_counter() - started
            started = time.perf_counter()
            themes = thematic_map(store, NetworkFilters(min_count=1))
            thematic = time.perf_counter() - started
            keywords = report.tables["Keyword"].records if "Keyword" in report.tables else 0
        rows.append(
            {
                "sample": f"{name} ({keywords} keywords, {len(net.nodes)} in the map of {', '.join(themes.kinds)})",
                "ingest_seconds": round(ingested, 2),
                "network_seconds": round(network, 3),
                "thematic_seconds": round(thematic, 3),
                "links": len(net.edges),
                "themes": len(themes.themes),
            }
        )
        print(rows[-1], flush=True)
    return rows


def merge_tables(record_path: Path, title: str, rows: list[dict[str, Any]], command: str, note: str) -> None:
    """Replace (or add) the table ``title`` of the record at ``record_path``; its other tables stay."""
    import json

    record = json.loads(record_path.read_text(encoding="utf-8"))
    table = {"title": title, "row_header": "corpus", "baselines": [], "served": None, "rows": rows}
    record["tables"] = [t for t in record["tables"] if t["title"] != title] + [table]
    if command not in record["command"]:
        record["command"] += f"; {command}"
    record.setdefault("notes", [])
    record["notes"] = [n for n in record["notes"] if not n.startswith(note.split(":")[0] + ":")] + [note]
    record_path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def run_unit(unit: str, options: dict[str, Any]) -> dict[str, Any]:
    """One unit's map built in this (fresh) process from the store at ``options["db"]``: seconds, peak RSS, sizes."""
    import gnn.mapping  # noqa: F401  (registers the builders)
    from gnn.mapping.networks import MapUnit, NetworkFilters, build_network
    from graph import StoreConfig, open_store

    filters = NetworkFilters(min_count=options["min_count"], top=options["map_top"], year_min=options["year_min"])
    with open_store(StoreConfig(db_path=Path(options["db"]), read_only=True)) as store:
        started = time.perf_counter()
        network = build_network(store, MapUnit(unit), filters)
        seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(_peak_mib(), 1),
        "nodes": len(network.nodes),
        "edges": len(network.edges),
        "truncated": network.truncated,
    }


def unit_costs(args: argparse.Namespace) -> dict[str, Any]:
    """Every ``--units`` map, all years and in the ``--year-min`` window, each in a fresh process."""
    results: dict[str, Any] = {}
    context = mp.get_context("spawn")
    for unit in args.units:
        windows: tuple[int | None, ...] = (None,) if args.year_min is None else (None, args.year_min)
        if args.window_only:
            windows = (args.year_min,)
        for window in windows:
            options = {"db": args.db, "min_count": args.min_count, "map_top": args.map_top, "year_min": window}
            with context.Pool(1) as pool:
                found = pool.apply(run_unit, (unit, options))
            key = unit if window is None else f"{unit} {window}-"
            results[key] = found
            print(key, found, flush=True)
    return results


def unit_table(results: dict[str, Any], system: str) -> dict[str, Any]:
    """The record table of :func:`unit_costs`."""
    rows = []
    for key, found in results.items():
        for metric, value in (
            ("seconds", found["seconds"]),
            ("peak RSS MiB", found["peak_rss_mib"]),
            ("nodes", found["nodes"]),
            ("links", found["edges"]),
        ):
            rows.append({"system": f"{system}: {key}", "metric": metric, "value": value})
    return {
        "title": "Science maps by unit (gnn.mapping build_network: bulk read, sparse count, top nodes) on a store",
        "row_header": "map",
        "baselines": [],
        "served": None,
        "decimals": 1,
        "rows": rows,
    }


def coupling_agreement(data: Any, shares: list[float], top_k: int) -> list[dict[str, Any]]:
    """Coupling clusters (``compute coupling``'s: top-k links, Leiden, seed 0) with each share of citers cut,
    against the exact clusters: references cut, pairs, clusters, and NMI and ARI over the documents both
    cluster (sklearn), each with its counting seconds."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    from gnn.cocitation.clusters import leiden_membership
    from gnn.mapping.coupling import _cluster_graph, coupling_counts, coupling_cut

    known = (data.citing >= 0) & (data.cited >= 0)
    codes = np.unique(data.citing[known] * len(data.papers) + data.cited[known])
    citers = np.bincount(codes % len(data.papers), minlength=len(data.papers))
    documents = len(np.unique(codes // len(data.papers)))
    rows, exact = [], None
    for share in [None, *shares]:
        cut = coupling_cut(citers, documents, max_share=share)
        started = time.perf_counter()
        pairs = coupling_counts(data, max_share=share) if share is not None or cut.max_citers is None else None
        if pairs is None:  # the exact count does not fit: nothing to compare with
            rows.append({"share": None, "skipped": cut.summary()})
            continue
        seconds = time.perf_counter() - started
        i, j, w = _cluster_graph(pairs, top_k=top_k, min_count=1)
        membership = pd.Series(leiden_membership(i, j, w, len(pairs.ids), seed=0), index=pairs.ids)
        membership = membership[membership >= 0]
        row = {
            "share": share,
            "max_citers": cut.max_citers,
            "references_cut": cut.references_cut,
            "citations_cut": cut.citations_cut,
            "expansions": cut.expansions,
            "pairs": len(pairs),
            "documents_clustered": len(membership),
            "clusters": int(membership.nunique()),
            "count_seconds": round(seconds, 2),
        }
        if exact is None:
            exact = membership
            # Leiden's own spread: the exact graph clustered with another seed, against seed 0
            other = pd.Series(leiden_membership(i, j, w, len(pairs.ids), seed=1), index=pairs.ids)
            other = other[other >= 0]
            both = exact.index.intersection(other.index)
            row["seed_1_nmi"] = round(float(normalized_mutual_info_score(exact[both], other[both])), 4)
            row["seed_1_ari"] = round(float(adjusted_rand_score(exact[both], other[both])), 4)
        else:
            both = exact.index.intersection(membership.index)
            row["nmi"] = round(float(normalized_mutual_info_score(exact[both], membership[both])), 4)
            row["ari"] = round(float(adjusted_rand_score(exact[both], membership[both])), 4)
            row["documents_compared"] = len(both)
        rows.append(row)
        print(row, flush=True)
    return rows


def scan_betweenness(sizes: list[int], refs: int, seed: int) -> list[dict[str, Any]]:
    """Exact betweenness (:func:`gnn.mapping.centrality.betweenness`) on co-citation graphs of ``sizes`` cited works (8-reference citing papers),
    and on the largest the sampled estimate (100 and 300 pivots): its time, Spearman's rho to the exact values,
    how many of the exact top 20 it ranks in its top 20, and its largest absolute error."""
    import networkx as nx
    from scipy.stats import spearmanr

    from gnn.mapping.centrality import CentralitySettings, betweenness

    rows = []
    for size in sizes:
        rng = np.random.default_rng(seed)
        weights = 1 / np.arange(1, size + 1) ** 0.8
        weights /= weights.sum()
        graph = nx.Graph()
        for _ in range(size // 2):  # half as many citing papers as cited works
            references = np.unique(rng.choice(size, refs, p=weights))
            graph.add_edges_from(itertools.combinations(references.tolist(), 2))
        started = time.perf_counter()
        exact = betweenness(graph, CentralitySettings(exact_up_to=size + 1))[0].to_dict()
        seconds = time.perf_counter() - started
        row = {"works": graph.number_of_nodes(), "links": graph.number_of_edges(), "pivots": None}
        rows.append({**row, "seconds": round(seconds, 2)})
        print(rows[-1], flush=True)
        if size != sizes[-1]:
            continue
        # on the largest graph: the sampled estimate against the exact values
        works = list(graph)
        truth = np.array([exact[w] for w in works])
        top = set(sorted(works, key=lambda w: -exact[w])[:20])
        for pivots in (100, 300):
            started = time.perf_counter()
            sampled = betweenness(graph, CentralitySettings(exact_up_to=0, pivots=pivots, seed=0))[0].to_dict()
            seconds = time.perf_counter() - started
            estimate = np.array([sampled[w] for w in works])
            found = set(sorted(works, key=lambda w: -sampled[w])[:20])
            rows.append(
                {
                    **row,
                    "pivots": pivots,
                    "seconds": round(seconds, 2),
                    "spearman": round(float(spearmanr(truth, estimate).statistic), 3),
                    "top20_overlap": len(top & found),
                    "max_abs_error": round(float(np.abs(truth - estimate).max()), 4),
                }
            )
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--refs", type=int, default=10, help="references drawn per paper (earlier papers kept)")
    parser.add_argument("--alpha", type=float, default=0.8, help="Zipf exponent of the cited papers' popularity")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=20, help="historiograph size")
    parser.add_argument("--centrality-min-count", type=int, default=1, help="co-citation links kept for betweenness")
    parser.add_argument("--exact-up-to", type=int, default=1000)
    parser.add_argument("--pivots", type=int, default=100)
    parser.add_argument("--top-k", type=int, default=10, help="clusters, coupling: links kept per node for Leiden")
    parser.add_argument("--slice-years", type=int, default=2, help="slices: years per slice")
    parser.add_argument(
        "--max-expansions",
        type=int,
        default=2_000_000_000,
        help="coupling: skip it when its sum of squared citer counts is above this (it would not fit in memory)",
    )
    parser.add_argument(
        "--coupling-max-share",
        type=float,
        help="coupling: cut references cited by more than this share of the citing papers (default: the automatic cut)",
    )
    parser.add_argument("--coupling-min-count", type=int, default=1, help="coupling: least shared references kept")
    parser.add_argument(
        "--coupling-agreement",
        nargs="*",
        type=float,
        help="on the store --db: coupling clusters with each of these shares cut against the exact clusters (NMI, ARI)",
    )
    parser.add_argument("--analyses", nargs="+", choices=ANALYSES, default=list(ANALYSES))
    parser.add_argument("--scan-betweenness", action="store_true", help="time exact betweenness on small graphs")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--keywords", action="store_true", help="time the keyword analyses instead")
    parser.add_argument("--keywords-per-paper", type=int, default=5)
    parser.add_argument("--vocabulary", type=int, default=50_000, help="distinct keywords of the synthetic corpus")
    parser.add_argument("--keyword-top", type=int, default=500, help="keywords of the KEYWORDS network")
    parser.add_argument("--keyword-samples", action="store_true", help="the keyword steps on the real samples")
    parser.add_argument("--merge-into", help="a record whose keyword table the figures replace")
    parser.add_argument("--units", nargs="+", help="time these science maps (gnn.mapping units) on the store --db")
    parser.add_argument("--db", default="var/citegraph.db", help="--units: the store (opened read-only)")
    parser.add_argument("--min-count", type=int, default=2, help="--units: least link count")
    parser.add_argument("--map-top", type=int, default=500, help="--units: nodes kept")
    parser.add_argument("--year-min", type=int, help="--units: also build each map over citing years from this one")
    parser.add_argument("--system", default="bundled store", help="--units: how the table names the store")
    parser.add_argument(
        "--window-only",
        action="store_true",
        help="--units: only the --year-min window (a store without CO_CITED has no all-years REFERENCES map)",
    )
    parser.add_argument(
        "--build-store",
        help="build the synthetic network (--papers, --refs) with authors, venues, keywords and affiliations "
        "into a fresh store here first (then --units run on it)",
    )
    args = parser.parse_args(argv)

    if args.keyword_samples:
        from api.settings import AppSettings

        rows = keyword_samples(AppSettings.from_env().data_dir)
        if args.merge_into:
            table_rows = [
                {"system": row["sample"], "metric": metric, "value": row[key]}
                for row in rows
                for metric, key in (
                    ("ingest: seconds", "ingest_seconds"),
                    ("KEYWORDS network: seconds", "network_seconds"),
                    ("thematic map: seconds", "thematic_seconds"),
                    ("links", "links"),
                    ("themes", "themes"),
                )
            ]
            note = (
                "Keyword samples: each file ingested into a fresh embedded store (the ingest includes the records, "
                "references and keywords); the network (min count 1, top 500) and the thematic map (min count 1, "
                "top 250) are read from the store, keyword names included."
            )
            merge_tables(
                Path(args.merge_into),
                SAMPLES_TABLE,
                table_rows,
                "python benchmarks/mapping_bench.py --keyword-samples",
                note,
            )
        return 0
    if args.keywords:
        results = {}
        context = mp.get_context("spawn")
        options = {
            k: v for k, v in vars(args).items() if k not in ("analyses", "out", "scan_betweenness", "merge_into")
        }
        for name in KEYWORD_ANALYSES:
            with context.Pool(1) as pool:
                results[name] = pool.apply(run_keyword_analysis, (name, options))
            print(name, results[name], flush=True)
        if args.merge_into:
            system = f"{args.papers:,} papers, {results['keywords']['uses']:,} keyword uses"
            rows = [
                {"system": system, "metric": f"{label}: {metric}", "value": results[name][key]}
                for name, label in (
                    ("keywords", f"KEYWORDS network (top {args.keyword_top}, association)"),
                    ("thematic", "thematic map (top 250, Leiden + Callon)"),
                )
                for metric, key in (("seconds", "seconds"), ("peak RSS MiB", "peak_rss_mib"))
            ]
            record = Path(args.merge_into)
            import json

            old = json.loads(record.read_text(encoding="utf-8"))
            kept: list[dict[str, Any]] = next((t["rows"] for t in old["tables"] if t["title"] == KEYWORD_TABLE), [])
            rows = [r for r in kept if r["system"] != system] + rows
            note = (
                f"Keyword corpus: {args.keywords_per_paper} keywords drawn per paper, Zipf-like (alpha {args.alpha}) "
                f"from {args.vocabulary:,} terms; the input (KeywordUses, what the store read `keyword_uses` returns) "
                "is built before the clock starts, and peak RSS includes it and the imported libraries. The bundled "
                "store's corpora (ACL Anthology, ScisummNet, CL-SciSumm, unarXive, CoRA) carry no keywords, so its "
                "size (about 130k papers) is stood in by this synthetic corpus."
            )
            merge_tables(
                record,
                KEYWORD_TABLE,
                rows,
                f"python benchmarks/mapping_bench.py --keywords --papers {args.papers}",
                note,
            )
        return 0

    if args.build_store:
        built = build_synthetic_store(Path(args.build_store), args.papers, args.refs, args.seed, args.alpha)
        print("built", args.build_store, built, flush=True)
        if not args.units:
            return 0
        args.db = args.build_store
    if args.units:
        if args.window_only and args.year_min is None:
            parser.error("--window-only needs --year-min")
        results = unit_costs(args)
        if args.out:
            import json

            from benchmarks.run_record import write_json

            record = json.loads(Path(args.out).read_text(encoding="utf-8"))
            table = unit_table(results, args.system)
            old = next((t for t in record["tables"] if t.get("row_header") == "map"), None)
            if old is not None:  # the other stores' rows stay; this store's are replaced
                kept = [r for r in old["rows"] if not r["system"].startswith(f"{args.system}: ")]
                table["rows"] = kept + table["rows"]
            record["tables"] = [t for t in record["tables"] if t.get("row_header") != "map"] + [table]
            record.setdefault("results", {}).setdefault("units", {})[args.system] = results
            write_json(args.out, record)
        return 0

    if args.coupling_agreement is not None:
        if args.build_store is None and Path(args.db).exists() and args.system != "synthetic":
            from gnn.mapping.data import read_mapping_input
            from graph import StoreConfig, open_store

            with open_store(StoreConfig(db_path=Path(args.db), read_only=True)) as store:
                data = read_mapping_input(store)
        else:
            data = synthetic_input(args.papers, args.refs, args.seed, args.alpha)
        rows = coupling_agreement(data, args.coupling_agreement, args.top_k)
        if args.out:
            import json

            from benchmarks.run_record import write_json

            record = json.loads(Path(args.out).read_text(encoding="utf-8"))
            record.setdefault("results", {}).setdefault("coupling_agreement", {})[args.system] = rows
            write_json(args.out, record)
        return 0
    if args.scan_betweenness:
        rows = scan_betweenness([250, 500, 1000, 2000, 4000], refs=8, seed=args.seed)
        print(pd.DataFrame(rows).to_string(index=False))
        return 0
    options = {k: v for k, v in vars(args).items() if k not in ("analyses", "out", "scan_betweenness")}
    results = {}
    context = mp.get_context("spawn")
    for name in args.analyses:
        with context.Pool(1) as pool:  # a fresh process per analysis: its own peak memory
            results[name] = pool.apply(run_analysis, (name, options))
        print(name, results[name], flush=True)
    if args.out:
        from benchmarks.run_record import run_record, write_json

        write_json(args.out, {**run_record("benchmarks/mapping_bench.py", args), "results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
