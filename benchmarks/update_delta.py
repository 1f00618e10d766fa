"""Co-citation by delta against co-citation from scratch, on the synthetic power-law graph, checked equal.

The graph is ``benchmarks/ingest_bench.py``'s ``generate(papers, edges, seed, alpha)``. The delta is
``--new-fraction`` of the papers added as new citing papers (their references drawn from the same
popularity law, as many per paper as the graph's mean), ``--merged`` works merged into a survivor
(their CITES in and out moved to it, the work removed) and ``--deleted`` works removed. Both sides run
in memory on one machine, on the CPU, without a store:

* **from scratch**: what ``compute cocitation`` computes before it clusters and writes — the ESC
  counts (:func:`gnn.cocitation.compute.count_cocitation`), the CO_CITED table with every strength
  (``cocitation_edges``), the noise distributions and each paper's top partners;
* **delta**: :func:`gnn.cocitation.delta.plan_delta` (the state diff and the changed papers' pairs) and
  :func:`gnn.cocitation.delta.updated_rows` (the edges and rows around the touched papers), given the
  previous CO_CITED edges incident to the touched papers (in the store, the ``cocited_with`` read; here
  taken from the previous table, and timed apart as "incident lookup").

Equality: the previous table with the delta applied (its other edges' association scaled by N'/N) equals
the from-scratch table — counts exactly, strengths within 1e-6 relative — and every paper's n_cited,
negative weight and top partners equal the from-scratch ones (the untouched papers' rows as they were).
Reading the store and writing back are not timed (they are the same Arrow reads as the full step's, and
the writes touch only the incident edges and touched papers). Clusters are not part of either side.

    nice .venv/bin/python benchmarks/update_delta.py --papers 100000 --edges 1000000 --out-json docs/results/update_delta.json
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest_bench import generate
from run_record import commit, run_record

from gnn.cocitation.basis import CitationState
from gnn.cocitation.compute import CocitationInput, CocitationSettings, cocitation_edges, count_cocitation
from gnn.cocitation.delta import plan_delta, updated_rows
from gnn.cocitation.noise import noise_distributions, top_partners

FLOATS = ["association", "cosine", "jaccard", "inclusion"]


def state_of(papers: pd.Index, cites: pd.DataFrame) -> CitationState:
    citing = papers.get_indexer(pd.Index(cites["source"])).astype(np.int64)
    cited = papers.get_indexer(pd.Index(cites["target"])).astype(np.int64)
    return CitationState(papers, citing, cited, pd.Index([], dtype=object), np.empty(0, dtype=np.int64))


def from_scratch(state: CitationState, settings: CocitationSettings) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """The CO_CITED table and the paper rows (n_cited, negative_weight, top partners), as the full step computes them."""
    empty = np.empty(0, dtype=np.int64)
    data = CocitationInput(state.papers, pa.array([], pa.string()), state.citing, state.cited, empty, empty)
    cocite, sentence = count_cocitation(data, device="cpu")
    edges = cocitation_edges(cocite, sentence)
    noise = noise_distributions(cocite, power=settings.power, device="cpu")
    head = top_partners(noise, settings.top_m)
    papers = pd.DataFrame(
        {"n_cited": cocite.occurrences, "negative_weight": noise.negative.numpy()},
        index=pd.Index(cocite.ids, name="id"),
    )
    return edges, papers, head


def delta_graph(
    papers: pd.Index, cites: pd.DataFrame, *, new_fraction: float, merged: int, deleted: int, seed: int, alpha: float
) -> tuple[pd.Index, pd.DataFrame, dict[str, int]]:
    rng = np.random.default_rng(seed + 1)
    n = len(papers)
    added = max(1, int(n * new_fraction))
    per_paper = max(1, round(len(cites) / max(cites["source"].nunique(), 1)))
    in_degree = cites["target"].value_counts()
    popular = in_degree.index.to_numpy()
    weights = np.arange(1, len(popular) + 1, dtype=np.float64) ** -alpha
    weights /= weights.sum()
    new_ids = [f"N{k:07d}" for k in range(added)]
    refs = popular[rng.choice(len(popular), size=added * per_paper, p=weights)]
    new_cites = pd.DataFrame({"source": np.repeat(new_ids, per_paper), "target": refs}).drop_duplicates()
    cites = pd.concat([cites[["source", "target"]], new_cites], ignore_index=True)
    chosen = rng.choice(n, size=2 * merged + deleted, replace=False)
    survivors, duplicates, gone = (
        papers[chosen[:merged]],
        papers[chosen[merged : 2 * merged]],
        papers[chosen[2 * merged :]],
    )
    to_survivor = dict(zip(duplicates, survivors))
    cites = cites.assign(source=cites["source"].replace(to_survivor), target=cites["target"].replace(to_survivor))
    cites = cites[(cites["source"] != cites["target"]) & ~cites["source"].isin(gone) & ~cites["target"].isin(gone)]
    cites = cites.drop_duplicates(ignore_index=True)
    removed = set(duplicates) | set(gone)
    kept = papers[~papers.isin(list(removed))]
    now = kept.append(pd.Index(new_ids)).sort_values()
    return now, cites, {"new_citing_papers": added, "references_each": per_paper, "merged": merged, "deleted": deleted}


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = CocitationSettings(device="cpu")
    paper_frame, cites, _ = generate(args.papers, args.edges, args.seed, args.alpha)
    papers = pd.Index(paper_frame["id"].astype(object)).sort_values()
    old = state_of(papers, cites)
    old_edges, old_papers, old_head = from_scratch(old, settings)
    now_papers, now_cites, delta_stats = delta_graph(
        papers,
        cites,
        new_fraction=args.new_fraction,
        merged=args.merged,
        deleted=args.deleted,
        seed=args.seed,
        alpha=args.alpha,
    )
    new = state_of(now_papers, now_cites)
    del paper_frame, cites, now_cites
    gc.collect()

    start = time.perf_counter()
    scratch_edges, scratch_papers, scratch_head = from_scratch(new, settings)
    full_seconds = time.perf_counter() - start

    start = time.perf_counter()
    plan = plan_delta(old, new)
    plan_seconds = time.perf_counter() - start
    start = time.perf_counter()
    touched_ids = set(plan.ids[plan.touched])
    incident_mask = old_edges["source"].isin(touched_ids) | old_edges["target"].isin(touched_ids)
    incident = old_edges.loc[incident_mask, ["source", "target", "count", "sentence_count"]]
    lookup_seconds = time.perf_counter() - start
    start = time.perf_counter()
    rows = updated_rows(plan, incident, settings)
    rows_seconds = time.perf_counter() - start

    equal = check_equal(
        old_edges, old_papers, old_head, plan, incident_mask, rows, scratch_edges, scratch_papers, scratch_head
    )
    delta_seconds = plan_seconds + rows_seconds
    return {
        "papers": args.papers,
        "citations": args.edges,
        **delta_stats,
        "changed_citing": plan.changed_citing,
        "touched_papers": int(plan.touched.sum()),
        "pairs": len(scratch_edges),
        "incident_edges": int(incident_mask.sum()),
        "edges_rewritten": len(rows.edges),
        "full_seconds": round(full_seconds, 2),
        "delta_seconds": round(delta_seconds, 2),
        "plan_seconds": round(plan_seconds, 2),
        "rows_seconds": round(rows_seconds, 2),
        "incident_lookup_seconds": round(lookup_seconds, 2),
        "delta_over_full": round(delta_seconds / full_seconds, 4),
        **equal,
    }


def check_equal(
    old_edges: pd.DataFrame,
    old_papers: pd.DataFrame,
    old_head: pd.DataFrame,
    plan: Any,
    incident_mask: pd.Series,
    rows: Any,
    scratch_edges: pd.DataFrame,
    scratch_papers: pd.DataFrame,
    scratch_head: pd.DataFrame,
) -> dict[str, Any]:
    kept = old_edges[~incident_mask].copy()
    kept["association"] = kept["association"] * rows.association_factor
    updated = pd.concat([kept, rows.edges], ignore_index=True).sort_values(["source", "target"], ignore_index=True)
    scratch = scratch_edges.sort_values(["source", "target"], ignore_index=True)
    counts_equal = bool(
        len(updated) == len(scratch)
        and (updated["source"].to_numpy() == scratch["source"].to_numpy()).all()
        and (updated["target"].to_numpy() == scratch["target"].to_numpy()).all()
        and (updated["count"].to_numpy() == scratch["count"].to_numpy()).all()
    )
    floats = updated[FLOATS].to_numpy() if counts_equal else None
    strength_error = float(np.max(np.abs(floats / scratch[FLOATS].to_numpy() - 1))) if floats is not None else None
    # papers: touched rows from the delta, the others as they were (negative weight scaled)
    touched = set(plan.ids[plan.touched])
    delta_rows = rows.papers.set_index("id")
    n_cited_equal, negative_error, partners_equal = True, 0.0, True
    scratch_partners = scratch_head.set_index("id")["cocite_partners"]
    old_partners = old_head.set_index("id")["cocite_partners"]
    for paper, row in scratch_papers.iterrows():
        if paper in touched:
            got_n, got_w = int(delta_rows.at[paper, "n_cited"]), float(delta_rows.at[paper, "negative_weight"])
            got_partners = delta_rows.at[paper, "cocite_partners"]
        else:
            got_n = int(old_papers.at[paper, "n_cited"])
            got_w = float(old_papers.at[paper, "negative_weight"]) * rows.negative_factor
            got_partners = old_partners.get(paper)
        n_cited_equal &= got_n == int(row["n_cited"])
        negative_error = max(negative_error, abs(got_w / row["negative_weight"] - 1))
        want_partners = scratch_partners.get(paper)
        partners_equal &= _as_list(got_partners) == _as_list(want_partners)
    return {
        "counts_equal": counts_equal,
        "max_relative_strength_error": strength_error,
        "n_cited_equal": bool(n_cited_equal),
        "max_relative_negative_weight_error": negative_error,
        "top_partners_equal": bool(partners_equal),
    }


def _as_list(value: Any) -> list[str] | None:
    return None if value is None or (not isinstance(value, list | np.ndarray) and pd.isna(value)) else list(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, nargs="+", default=[100_000])
    parser.add_argument("--edges-per-paper", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.8)
    parser.add_argument("--new-fraction", type=float, default=0.01, help="new citing papers, as a fraction of papers")
    parser.add_argument("--merged", type=int, default=5, help="works merged into a survivor")
    parser.add_argument("--deleted", type=int, default=5, help="works deleted")
    parser.add_argument("--out-json", type=Path, default=None)
    args = parser.parse_args(argv)
    results = []
    for papers in args.papers:
        one = argparse.Namespace(**vars(args), edges=papers * args.edges_per_paper)
        one.papers = papers
        result = run(one)
        print(json.dumps(result), flush=True)
        results.append(result)
    record = {
        "capability": "cocitation",
        "kind": "speed",
        "title": "Co-citation by delta (citegraph update) against from scratch: 1% new citing papers, merges, deletions",
        **run_record("benchmarks/update_delta.py", args),
        "commit": commit(short=True),
        "notes": [
            "Both sides in memory on the CPU: counts, strengths, noise distributions and top partners (the full "
            "step's work before clustering and writing); the store's reads and writes are not timed.",
            "Equality: the previous results with the delta applied equal the from-scratch results (counts and "
            "partner lists exactly; strengths and negative weights to the relative error shown).",
        ],
        "tables": [
            {
                "title": None,
                "row_header": "graph",
                "baselines": ["from scratch"],
                "served": "delta",
                "rows": [
                    row
                    for r in results
                    for row in (
                        {
                            "system": "from scratch",
                            "metric": f"{r['papers']:,} papers: seconds",
                            "value": r["full_seconds"],
                        },
                        {"system": "delta", "metric": f"{r['papers']:,} papers: seconds", "value": r["delta_seconds"]},
                        {
                            "system": "delta",
                            "metric": f"{r['papers']:,} papers: share of from scratch",
                            "value": r["delta_over_full"],
                        },
                    )
                ],
                "decimals": 3,
            }
        ],
        "results": results,
    }
    if args.out_json:
        args.out_json.parent.mkdir(parents=True, exist_ok=True)
        args.out_json.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["counts_equal"] and r["top_partners_equal"] and r["n_cited_equal"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
