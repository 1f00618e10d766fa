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
* ``historiograph``: ``historiograph_of`` (LCS over every citation, top ``--top`` records).

Each analysis runs in its own fresh process (``spawn``): wall time of the analysis and the process's peak
resident memory (``ru_maxrss``), with the resident memory after building the input for reference.
``--scan-betweenness`` instead times exact betweenness on small co-citation graphs and the sampled estimate's
error (the measurements behind ``gnn.mapping.centrality.EXACT_UP_TO`` and ``PIVOTS``)::

    nice python benchmarks/mapping_bench.py --papers 100000 --out docs/results/mapping_cost.json
    nice python benchmarks/mapping_bench.py --scan-betweenness

``--units references authors ...`` times the science maps of ``gnn.mapping`` (``build_network``: the store's
bulk reads, the sparse counting, the selection of the top nodes and the node attributes) on the store at
``--db`` (opened read-only), each unit in a fresh process, with the filters of ``--min-count``, ``--map-top``
and, for a second run per unit, the year window ``--year-min`` (the REFERENCES map then counts from CITES
instead of reading CO_CITED). ``--out`` adds its table to an existing record and keeps the other tables::

    nice python benchmarks/mapping_bench.py --units references authors sources coauthors institutions \
        countries --db var/citegraph.db --year-min 2015 --out docs/results/mapping_cost.json
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

ANALYSES = ("bursts", "network", "betweenness", "historiograph")
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
    else:
        nodes, edges = historiograph_of(data, top_n=options["top"])
        result.update(nodes=len(nodes), edges=len(edges))
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["peak_rss_mib"] = round(_peak_mib(), 1)
    return result


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
        for window in (None, args.year_min) if args.year_min is not None else (None,):
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
    parser.add_argument("--analyses", nargs="+", choices=ANALYSES, default=list(ANALYSES))
    parser.add_argument("--scan-betweenness", action="store_true", help="time exact betweenness on small graphs")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--units", nargs="+", help="time these science maps (gnn.mapping units) on the store --db")
    parser.add_argument("--db", default="var/citegraph.db", help="--units: the store (opened read-only)")
    parser.add_argument("--min-count", type=int, default=2, help="--units: least link count")
    parser.add_argument("--map-top", type=int, default=500, help="--units: nodes kept")
    parser.add_argument("--year-min", type=int, help="--units: also build each map over citing years from this one")
    parser.add_argument("--system", default="bundled store", help="--units: how the table names the store")
    args = parser.parse_args(argv)

    if args.units:
        results = unit_costs(args)
        if args.out:
            import json

            from benchmarks.run_record import write_json

            record = json.loads(Path(args.out).read_text(encoding="utf-8"))
            record["tables"] = [t for t in record["tables"] if t.get("row_header") != "map"]
            record["tables"].append(unit_table(results, args.system))
            record["results"]["units"] = results
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
