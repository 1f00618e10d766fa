"""Every compute step writes the same graph whatever store it runs on and whatever order rows come in.

One graph (the tiny citation graph, a small ACM/arXiv taxonomy, and two sentences with MENTIONS) is
loaded into two stores — the second one with every table's rows reversed, as another backend may
return them in another order — and ``compute embeddings``, ``cocitation``, ``taxonomy`` (GAT fusion)
and ``hyperbolic``, then ``compute linkage``, run on both with the same seeds. Every node and edge, with every property
(vectors compared to 1e-5), must then be the same.

The second store is another embedded store in the default run; in the ``neo4j`` run (``pytest -m
neo4j`` with ``NEO4J_URI`` set, a scratch database as in test_neo4j_e2e.py) it is the Neo4j server,
so the write-backs of every compute step are checked for parity with the embedded default.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from rich_graph import plain
from tiny_graph import tiny_batch

from gnn.cocitation.compute import compute_cocitation
from gnn.hyperbolic.compute import HyperbolicSettings, compute_hyperbolic
from gnn.hyperbolic.map import MapSettings
from gnn.linkage import compute_linkage, fixed_scorer
from gnn.taxonomy.categories import CategorySettings
from gnn.taxonomy.compute import TaxonomySettings, compute_taxonomy
from gnn.taxonomy.fusion import FusionSettings
from gnn.text.embeddings import compute_embeddings
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store

TAXONOMY = TaxonomySettings(
    fusion=FusionSettings(method="gat", max_epochs=5, patience=2, val_fraction=0.2, test_fraction=0.2, device="cpu"),
    categories=CategorySettings(top_k=2, min_score=0.0, infer_from="fused"),
    maps_to_min_score=0.0,
)
HYPERBOLIC = HyperbolicSettings(
    dim=2, epochs=30, burn_in=5, seed=0, device="cpu", map_settings=MapSettings(hidden=16, epochs=100, lr=1e-2)
)
# Test-only cleanup of the Neo4j scratch database (as in test_neo4j_e2e.py).
WIPE = "MATCH (n) WHERE any(label IN labels(n) WHERE label IN $labels) DETACH DELETE n"


def parity_batch() -> GraphBatch:
    """The tiny citation graph (p1..p5) with a taxonomy, a citing sentence of p1 that cites p2 and p3, and
    p2's full text (three sentences, for the linkage step)."""
    base = tiny_batch()
    codes = ["I", "I.2", "I.2.6", "I.2.7", "H", "H.3"]
    acm = pd.DataFrame(
        {
            "id": [f"1998:{c}" for c in codes],
            "code": codes,
            "name": [
                "Computing Methodologies",
                "Artificial Intelligence",
                "Learning",
                "Natural Language Processing",
                "Information Systems",
                "Information Storage and Retrieval",
            ],
            "scheme": "1998",
            "level": [c.count(".") + 1 for c in codes],
            "description": [
                None,
                None,
                "Concept learning; Induction",
                "Language parsing; Machine translation",
                None,
                None,
            ],
        }
    )
    broader = pd.DataFrame(
        {
            "source": ["1998:I.2", "1998:I.2.6", "1998:I.2.7", "1998:H.3"],
            "target": ["1998:I", "1998:I.2", "1998:I.2", "1998:H"],
        }
    )
    categories = pd.DataFrame(
        {
            "code": ["cs.CL", "cs.LG", "cs.IR"],
            "name": ["Computation and Language", "Machine Learning", "Information Retrieval"],
            "description": [
                "Covers natural language processing. Roughly includes material in ACM Subject Class I.2.7.",
                "Papers on all aspects of machine learning research.",
                "Covers indexing, dictionaries, retrieval, content and analysis. Roughly includes material in ACM "
                "Subject Classes H.3.0, H.3.1, H.3.2, H.3.3, and H.3.4.",
            ],
        }
    )
    maps_to = pd.DataFrame(
        {"source": ["cs.CL", "cs.IR"], "target": ["1998:I.2.7", "1998:H.3"], "score": [1.0, 1.0], "inferred": False}
    )
    in_category = pd.DataFrame(
        {"source": ["p1", "p2", "p4"], "target": ["cs.CL", "cs.CL", "cs.LG"], "score": 1.0, "inferred": False}
    )
    sentences = pd.DataFrame(
        {
            "id": ["p1#0", "p1#1", "p2#0", "p2#1", "p2#2"],
            "paper_id": ["p1", "p1", "p2", "p2", "p2"],
            "sid": [0, 1, 0, 1, 2],
            "text": [
                "We translate statistically.",
                "Alignment [1] and phrase tables [2] help translation.",
                "We present word alignment models.",
                "The models are trained with expectation maximisation.",
                "Alignment error rate measures their quality.",
            ],
        }
    )
    rels = {
        **base.rels,
        "BROADER": broader,
        "MAPS_TO": maps_to,
        "IN_CATEGORY": in_category,
        "HAS_SENTENCE": pd.DataFrame({"source": ["p1", "p1", "p2", "p2", "p2"], "target": sentences["id"]}),
        "MENTIONS": pd.DataFrame({"source": ["p1#1", "p1#1"], "target": ["p2", "p3"], "marker": ["[1]", "[2]"]}),
    }
    nodes = {**base.nodes, "AcmClass": acm, "ArxivCategory": categories, "Sentence": sentences}
    return GraphBatch("parity", nodes=nodes, rels=rels)


def reversed_rows(batch: GraphBatch) -> GraphBatch:
    """The same graph with every table's rows in reverse order."""
    flip = lambda frame: frame.iloc[::-1].reset_index(drop=True)  # noqa: E731
    return GraphBatch(
        batch.source + "-reversed",
        nodes={label: flip(frame) for label, frame in batch.nodes.items()},
        rels={rel: flip(frame) for rel, frame in batch.rels.items()},
    )


def compute_everything(store: GraphStore, encoder: object, models_dir: Path) -> None:
    """The ``compute all`` steps, in its order, with small fixed settings, then ``compute linkage``
    (with the cosine linker: a trained one would need the CL-SciSumm data)."""
    compute_embeddings(store, encoder)  # type: ignore[arg-type]
    compute_cocitation(store, clusters_path=models_dir / "clusters.json")
    compute_taxonomy(store, encoder, TAXONOMY)  # type: ignore[arg-type]
    compute_hyperbolic(store, HYPERBOLIC, map_dir=models_dir)
    compute_linkage(store, encoder, fixed_scorer("cosine", 1))  # type: ignore[arg-type]


def comparable(store: GraphStore) -> dict[str, list[dict[str, object]]]:
    """Every node and edge with every property, sorted, floats rounded to 5 decimals (vectors included)."""

    out: dict[str, list[dict[str, object]]] = {}
    for kind, names, read in (
        ("node", store.schema.nodes, store.iter_nodes),
        ("edge", store.schema.rels, store.iter_edges),
    ):
        for name in names:
            rows = [r for frame in read(name, 1_000) for r in frame.to_dict("records")]
            out[f"{kind}:{name}"] = sorted(({k: plain(v, 5) for k, v in row.items()} for row in rows), key=repr)
    return out


def differences(left: dict[str, list[dict[str, object]]], right: dict[str, list[dict[str, object]]]) -> list[str]:
    """Readable differences, one line per table whose rows differ (first differing row of each)."""
    lines = []
    for table in sorted(set(left) | set(right)):
        a, b = left.get(table, []), right.get(table, [])
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            lines.append(
                f"{table}: {len(a)} vs {len(b)} rows; first difference at row {first}: "
                f"{a[first] if first < len(a) else None} != {b[first] if first < len(b) else None}"
            )
    return lines


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def second_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    if request.param == "embedded":
        store = open_store(StoreConfig(db_path=tmp_path / "second.db"))
        yield store
        store.close()
        return
    if not os.environ.get("NEO4J_URI"):
        pytest.skip("NEO4J_URI is not set; this run needs a scratch Neo4j database (see test_neo4j_e2e.py)")
    store = open_store(dataclasses.replace(StoreConfig.from_env(backend="neo4j"), batch_size=2))
    if any(n for counts in store.stats().values() for n in counts.values()):
        store.close()
        pytest.skip(f"{store.describe()} is not empty; point NEO4J_DATABASE at a scratch database")
    try:
        yield store
    finally:
        store.driver.execute_query(WIPE, {"labels": list(store.schema.nodes)}, database_=store.database)  # type: ignore[attr-defined]
        store.close()


def test_compute_steps_write_the_same_graph(
    empty_store: GraphStore,
    second_store: GraphStore,
    encoder: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))  # trained models go here, not to ~/.cache
    batch = parity_batch()
    ingest(empty_store, batch)
    ingest(second_store, reversed_rows(batch))
    assert differences(comparable(empty_store), comparable(second_store)) == []  # the same graph before computing

    compute_everything(empty_store, encoder, tmp_path / "first")
    compute_everything(second_store, encoder, tmp_path / "second")
    first, second = comparable(empty_store), comparable(second_store)
    assert differences(first, second) == []

    # The comparison compared something: every step left its properties.
    papers = {row["id"]: row for row in first["node:Paper"]}
    assert papers["p2"]["embedding"] and papers["p2"]["n_cited"] == 2 and papers["p1"]["poincare"]
    assert first["edge:CO_CITED"] and all(row["fused"] for row in first["node:AcmClass"])
    assert [(row["source"], row["method"]) for row in first["edge:LINKS_TO"]] == [("p1#1", "model")]
