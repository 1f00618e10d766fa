"""The evaluation harness end to end on the tiny graph: every system runs, the report is complete."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gnn import reports
from gnn.recommend.evaluate import RecommendEvalSettings, report_markdown, run_evaluation
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import GraphBatch, GraphStore, ingest


def _citances() -> GraphBatch:
    """ScisummNet-style citing sentences: two of 2004 (training period), two of 2005 (evaluation)."""
    rows = [
        ("p4#c00000000000a", "p4", "We extract phrase tables as Smith (1999) did.", ["p3"]),
        ("p4#c00000000000b", "p4", "Alignment models (Turing, 1993) give word links.", ["p2"]),
        ("p5#c00000000000c", "p5", "Phrase tables (Smith, 1999) and alignments (Turing, 1993) help.", ["p3", "p2"]),
        ("p5#c00000000000d", "p5", "Neural translation (Lovelace, 2004) attends.", ["p4"]),
    ]
    sentences = pd.DataFrame(
        {"id": [r[0] for r in rows], "paper_id": [r[1] for r in rows], "text": [r[2] for r in rows]}
    )
    mentions = [(r[0], t) for r in rows for t in r[3]]
    return GraphBatch(
        "citances",
        nodes={"Sentence": sentences, "Author": pd.DataFrame({"id": ["a3"], "name": ["John Smith"]})},
        rels={
            "HAS_SENTENCE": pd.DataFrame({"source": sentences["paper_id"], "target": sentences["id"]}),
            "MENTIONS": pd.DataFrame({"source": [m[0] for m in mentions], "target": [m[1] for m in mentions]}),
            "WROTE": pd.DataFrame({"source": ["a3", "a2"], "target": ["p3", "p2"], "position": [1, 1]}),
        },
    )


def test_harness_runs_every_system_on_a_tiny_split(store: GraphStore, encoder: TextEncoder, tmp_path: Path) -> None:
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    settings = RecommendEvalSettings(
        train_until=2004,
        validation=(2005, 2005),
        test=(2005, 2005),
        n=3,
        tune_queries=2,
        k1_grid=(1.2,),
        b_grid=(0.75,),
        global_grid=(0.0, 0.5),
    )
    report = run_evaluation(store, encoder, settings, index=None)
    names = [s["name"] for s in report["systems"]]
    assert names[:3] == ["BM25 (default)", "BM25 (tuned)", "dense"] and len(names) == 9
    assert report["queries"]["validation"] == 2 and report["queries"]["multi-citation validation"] == 1
    assert report["pool"]["profile sentences"] == 2  # only the 2004 sentences: the 2005 ones are the queries
    for system in report["systems"]:
        for split in ("validation", "test"):
            metrics = system[split]
            assert 0.0 <= metrics["R@5"] <= metrics["R@10"] <= metrics["R@50"] <= 1.0
            assert 0.0 <= metrics["MRR"] <= 1.0
    markdown = report_markdown(report)
    assert markdown.count("| validation |") == 9 and "Masking" in markdown
    json_path, md_path = reports.write_report(report, tmp_path / "r.json", report_markdown)
    assert json_path.is_file() and md_path.read_text(encoding="utf-8").startswith("| system |")
