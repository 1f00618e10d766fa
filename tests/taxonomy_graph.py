"""A tiny taxonomy store's content: ACM classes, arXiv categories and categorised papers (a plain module, so
every test folder can import it, as :mod:`tiny_graph`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from graph import GraphBatch, GraphStore


def taxonomy_batch() -> GraphBatch:
    """ACM I > I.2 > {I.2.6, I.2.7}, I.5 ; H > H.3 ; cs.CL -> I.2.7, cs.LG -> I.2.6 ; papers in categories."""
    ids = ["I", "I.2", "I.2.6", "I.2.7", "I.5", "H", "H.3"]
    acm = pd.DataFrame({"id": [f"1998:{c}" for c in ids], "code": ids, "scheme": "1998"})
    broader = pd.DataFrame(
        {
            "source": ["1998:I.2", "1998:I.2.6", "1998:I.2.7", "1998:I.5", "1998:H.3"],
            "target": ["1998:I", "1998:I.2", "1998:I.2", "1998:I", "1998:H"],
        }
    )
    arxiv = pd.DataFrame({"code": ["cs.CL", "cs.LG", "math.AG"]})
    maps_to = pd.DataFrame({"source": ["cs.CL", "cs.LG"], "target": ["1998:I.2.7", "1998:I.2.6"], "score": 1.0})
    papers = pd.DataFrame({"id": ["p1", "p2", "p3"], "title": ["One", "Two", "Three"]})
    in_category = pd.DataFrame(
        {
            "source": ["p1", "p2", "p2"],
            "target": ["cs.CL", "cs.CL", "cs.LG"],
            "score": [1.0, 0.9, 0.3],
            "inferred": [False, True, True],
        }
    )
    return GraphBatch(
        "tiny-taxonomy",
        nodes={"AcmClass": acm, "ArxivCategory": arxiv, "Paper": papers},
        rels={"BROADER": broader, "MAPS_TO": maps_to, "IN_CATEGORY": in_category},
    )


def write_fused(store: GraphStore, size: int, seed: int = 0) -> None:
    """Seeded random ``fused`` vectors on every class (made here for tests: fusion is another step)."""
    rng = np.random.default_rng(seed)
    acm_ids = sorted(r["id"] for r in store.query("acm_class_points"))
    codes = sorted(r["code"] for r in store.query("arxiv_category_points"))
    vectors = lambda n: [v.astype(np.float32) for v in rng.normal(size=(n, size))]  # noqa: E731
    store.write_node_properties("AcmClass", "id", pd.DataFrame({"id": acm_ids, "fused": vectors(len(acm_ids))}))
    store.write_node_properties("ArxivCategory", "code", pd.DataFrame({"code": codes, "fused": vectors(len(codes))}))
