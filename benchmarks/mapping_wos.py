"""The science-mapping analyses on the Web of Science sample, written into docs/cocitation.md.

Ingests ``$CITEGRAPH_DATA/formats/wos/savedrecs.txt`` (32 records, 958 cited references) into a fresh
temporary store, runs ``compute cocitation`` and ``compute mapping`` with their defaults (CiteSpace's
s = 2, γ = 1, minimum burst duration 2 years), and rewrites the part of docs/cocitation.md between the
``mapping-wos`` markers: the strongest bursts with their betweenness and sigma, and the historiograph's
top records. ``--check`` exits 1 when the page differs from what this run would write::

    python benchmarks/mapping_wos.py            # rewrite the section
    python benchmarks/mapping_wos.py --check
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project package must import
    sys.path.insert(0, str(ROOT))

PAGE = ROOT / "docs" / "cocitation.md"
BEGIN, END = "<!-- mapping-wos:begin (benchmarks/mapping_wos.py) -->", "<!-- mapping-wos:end -->"


def section(sample: Path, top: int) -> str:
    """The Markdown of the generated section, from a fresh store holding ``sample``."""
    from gnn.cocitation.compute import CocitationSettings, compute_cocitation
    from gnn.mapping.compute import compute_mapping
    from gnn.mapping.historiograph import historiograph
    from graph import StoreConfig, ingest, open_store
    from loaders import wos

    with tempfile.TemporaryDirectory() as folder, open_store(StoreConfig(db_path=Path(folder) / "wos.db")) as store:
        ingest(store, wos.load(sample))
        compute_cocitation(store, CocitationSettings(device="cpu"), clusters_path=Path(folder) / "clusters.json")
        report = compute_mapping(store)
        papers = pd.concat(list(store.iter_nodes("Paper", 10_000))).set_index("id")
        history = historiograph(store, top_n=top)
    lines = [
        f"`citegraph ingest wos {sample.name}`, `compute cocitation`, `compute mapping` (defaults), "
        f"`export historiograph --top {top}`: {report.cited_works} cited works, citing years "
        f"{report.years[0]}-{report.years[1]}; {len(report.bursts)} with a burst; betweenness on "
        f"{report.network_works} works / {report.network_links} co-citation links"
        + (" (sampled)." if report.sampled else " (exact)."),
        "",
        "| work | strength | begin | end | betweenness | sigma |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in report.bursts.head(top).itertuples(index=False):
        name = _name(papers, row.id)
        paper = papers.loc[row.id]
        lines.append(
            f"| {name} | {row.burst_strength:.2f} | {row.burst_begin} | {row.burst_end} "
            f"| {paper['betweenness']:.4f} | {paper['sigma']:.3f} |"
        )
    lines += ["", "Historiograph (the records most cited inside the export, by year):", ""]
    lines += ["| year | record | LCS | GCS |", "|---:|---|---:|---:|"]
    for node in history.nodes.itertuples(index=False):
        lines.append(f"| {node.year} | {_cell(str(node.label))} | {node.lcs} | {node.gcs} |")
    lines += ["", f"{len(history.edges)} citations among them."]
    return "\n".join(lines)


def _name(papers: pd.DataFrame, work: str) -> str:
    paper = papers.loc[work]
    for column in ("label", "title", "reference"):
        if column in paper and isinstance(paper[column], str) and paper[column]:
            return _cell(paper[column])
    return _cell(work)


def _cell(text: str, width: int = 70) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= width else text[: width - 1] + "…"


def render(page: str, generated: str) -> str:
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{PAGE}: add the markers {BEGIN} and {END} where the section goes")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{generated}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    data = Path(os.environ.get("CITEGRAPH_DATA", "/work/shared/data"))
    parser.add_argument("--sample", type=Path, default=data / "formats" / "wos" / "savedrecs.txt")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/cocitation.md differs")
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    updated = render(page, section(args.sample, args.top))
    if args.check:
        if updated != page:
            print(f"{PAGE} differs: run python benchmarks/mapping_wos.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(updated, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
