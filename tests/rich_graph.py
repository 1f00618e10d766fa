"""A small graph that uses every label, every relationship type and every kind of property.

:func:`tiny_batch` (conftest) plus sentences, citation links, co-citation strengths, taxonomy classes
with Poincaré coordinates, vectors and lists — and strings that CSV and Cypher must escape. Used by
the copy, bulk-export and cookbook tests; vector sizes are :data:`SIZES` (small on purpose).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from tiny_graph import tiny_batch

from graph import GraphBatch, GraphStore, ingest
from graph.schema import VectorSizes

SIZES = VectorSizes(embedding=4, taxonomy=4, poincare=3)

# Poincaré-ball coordinates (norm < 1) of the taxonomy classes, by id/code.
ACM_POINTS = {
    "1998:I": [0.0, 0.0, 0.0],
    "1998:I.2": [0.5, 0.1, 0.0],
    "1998:I.2.7": [0.7, 0.2, -0.1],
    "1998:H": [-0.6, 0.2, 0.3],
}
CATEGORY_POINTS = {"cs.CL": [0.65, 0.15, -0.05]}


def rich_batch() -> GraphBatch:
    base = tiny_batch()
    rng = np.random.default_rng(7)
    papers = base.nodes["Paper"].copy()
    papers["embedding"] = [rng.normal(size=4).astype(np.float32) for _ in range(4)] + [None]
    papers["venue"] = ['ACL, "main"', None, "Comput. Linguist.\nvol 19", "EMNLP", ""]  # quote, comma, newline, empty
    papers["stub"] = [False, False, True, None, False]
    papers["cocite_partners"] = [["p2", "p3"], ["p3"], [], None, None]
    papers["cocite_probs"] = [[0.25, 0.75], [1.0], [], None, None]
    papers["cocite_cluster"] = [0, 0, 1, 1, 2]
    papers["n_cited"] = [1, 2, 2, 1, 0]
    sentences = pd.DataFrame(
        {
            "id": ["p1#1", "p1#2", "p2#3", "p3#4"],
            "paper_id": ["p1", "p1", "p2", "p3"],
            "sid": [1, 2, 3, 4],
            "section": ["Introduction", None, "Model", "Résumé"],
            "text": ["Alignment follows [1].", "Tables [2]; see also [1].", "We align words.", "Phrases, tabulated."],
            "embedding": [rng.normal(size=4).astype(np.float32) for _ in range(4)],
        }
    )
    acm = pd.DataFrame(
        {
            "id": list(ACM_POINTS),
            "code": ["I", "I.2", "I.2.7", "H"],
            "name": [
                "Computing Methodologies",
                "Artificial Intelligence",
                "Natural Language Processing",
                "Information Systems",
            ],
            "scheme": ["1998"] * 4,
            "level": [0, 1, 2, 0],
            "poincare": list(ACM_POINTS.values()),
        }
    )
    categories = pd.DataFrame(
        {"code": ["cs.CL"], "name": ["Computation and Language"], "poincare": list(CATEGORY_POINTS.values())}
    )
    rels = dict(base.rels)
    rels["HAS_SENTENCE"] = pd.DataFrame({"source": ["p1", "p1", "p2", "p3"], "target": sentences["id"]})
    rels["MENTIONS"] = pd.DataFrame(
        {"source": ["p1#1", "p1#2", "p1#2"], "target": ["p2", "p3", "p2"], "marker": ["[1]", "[2]", "[1]"]}
    )
    rels["LINKS_TO"] = pd.DataFrame(
        {
            "source": ["p1#1", "p1#1", "p1#2"],
            "target": ["p2#3", "p2#3", "p3#4"],
            "method": ["gold", "silver", "gold"],
            "annotator": ["A", None, "B"],
            "score": [1.0, 0.62, None],
        }
    )
    rels["CO_CITED"] = pd.DataFrame(
        {
            "source": ["p2", "p1", "p1"],
            "target": ["p3", "p2", "p3"],
            "count": [2, 1, 1],
            "sentence_count": [1, None, 0],
            "association": [0.5, 0.125, 0.1],
            "cosine": [1.0, 0.5, 0.5],
        }
    )
    rels["IN_CATEGORY"] = pd.DataFrame(
        {"source": ["p1", "p4"], "target": ["cs.CL", "cs.CL"], "score": [1.0, 0.4], "inferred": [False, True]}
    )
    rels["MAPS_TO"] = pd.DataFrame({"source": ["cs.CL"], "target": ["1998:I.2.7"], "score": [0.9], "inferred": [False]})
    rels["BROADER"] = pd.DataFrame({"source": ["1998:I.2.7", "1998:I.2"], "target": ["1998:I.2", "1998:I"]})
    nodes = {**base.nodes, "Paper": papers, "Sentence": sentences, "AcmClass": acm, "ArxivCategory": categories}
    return GraphBatch("rich", nodes=nodes, rels=rels)


def fill(store: GraphStore) -> GraphStore:
    """``store`` (empty, built with :data:`SIZES`) with :func:`rich_batch` in it."""
    ingest(store, rich_batch())
    return store


def plain(value: object, digits: int | None = None) -> object:
    """A stored value as plain Python for equality checks: lists for vectors, None for NaN, floats
    rounded to ``digits`` when given (-0.0 becomes 0.0)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v, digits) for v in value]
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if digits is not None and isinstance(value, float):
        return round(value, digits) + 0.0
    return value


def snapshot(store: GraphStore) -> dict[str, list[dict[str, object]]]:
    """Every node and edge with every property, as plain sorted Python values (for equality checks)."""

    out: dict[str, list[dict[str, object]]] = {}
    for label in store.schema.nodes:
        rows = [r for f in store.iter_nodes(label, 3) for r in f.to_dict("records")]
        out[label] = [{k: plain(v) for k, v in row.items()} for row in rows]
    for rel in store.schema.rels:
        rows = [r for f in store.iter_edges(rel, 3) for r in f.to_dict("records")]
        out[rel] = sorted(({k: plain(v) for k, v in row.items()} for row in rows), key=repr)
    return out
