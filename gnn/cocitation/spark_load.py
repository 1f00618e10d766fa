"""Load the output of the Spark co-citation job into a store: ``citegraph ingest cocitation DIR``.

For one-machine users who ran :mod:`gnn.cocitation.spark` locally (or fetched its output from a
cluster): the Parquet tables it wrote are read with pyarrow (no Spark, no Java) and written the way
``citegraph compute cocitation`` writes its results, so the graph is the one that step gives:

* ``DIR/CO_CITED`` → every CO_CITED edge, replaced as a whole (``GraphStore.replace_edges``):
  ``source``, ``target`` (source id < target id), ``count``, ``sentence_count``, ``association``,
  ``cosine``, ``jaccard``, ``inclusion``;
* ``DIR/papers`` → on *every* Paper of the store: ``n_cited``, ``negative_weight``,
  ``cocite_partners``, ``cocite_probs``, ``cocite_tail``; a paper the job did not see (nobody cites
  it) gets ``n_cited`` 0, ``negative_weight`` 0 and null lists, as the compute step writes.
  ``cocite_cluster`` is left as it is: the clusters are the compute step's (Leiden on one machine).

Loading the same folder twice gives the same graph (replace, never add). Every paper the output
names must be a Paper of the store: run the job on ``citegraph export tables`` of this store, or
ingest the papers first; otherwise nothing is written and the error names a few missing ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from gnn.cocitation.basis import basis_folder, mark_pending
from graph.errors import ConfigError, DataError
from graph.store import GraphStore

EDGE_COLUMNS = ["source", "target", "count", "sentence_count", "association", "cosine", "jaccard", "inclusion"]
PAPER_COLUMNS = ["id", "n_cited", "negative_weight", "cocite_partners", "cocite_probs", "cocite_tail"]


@dataclass(frozen=True)
class SparkLoadReport:
    folder: Path
    edges: int  # CO_CITED edges written
    papers: int  # Paper nodes whose co-citation properties were written
    with_partners: int  # of those, papers with at least one co-citation partner
    manifest: dict[str, object]  # the job's manifest.json ({} when absent)

    def summary(self) -> str:
        settings = self.manifest.get("settings", {})
        return (
            f"cocitation from {self.folder}: {self.edges:,} CO_CITED edges, co-citation properties on "
            f"{self.papers:,} papers ({self.with_partners:,} with partners)"
            + (f"; job settings {settings}" if settings else "")
        )


def _read(folder: Path, name: str, columns: list[str]) -> pa.Table:
    path = folder / name
    if not path.exists():
        raise ConfigError(
            f"{path} does not exist; pass the --out folder of `citegraph spark cocitation` (it holds CO_CITED/ and papers/)"
        )
    table = ds.dataset(str(path), format="parquet").to_table()  # part files; _SUCCESS and .crc are skipped
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise DataError(f"{path}: columns {missing} missing; rerun `citegraph spark cocitation` with this version")
    return table.select(columns)


def load_spark_output(store: GraphStore, folder: Path | str) -> SparkLoadReport:
    """Write ``folder``'s CO_CITED edges and Paper properties into ``store`` (see the module docstring)."""
    folder = Path(folder)
    edges = _read(folder, "CO_CITED", EDGE_COLUMNS).to_pandas().sort_values(["source", "target"], ignore_index=True)
    papers = _read(folder, "papers", PAPER_COLUMNS)
    papers = papers.take(pc.sort_indices(papers, [("id", "ascending")]))
    stored = pd.Index(
        sorted(row["id"] for row in store.query("paper_ids")), dtype="str"
    )  # every Paper: each one is written
    output_ids = pd.Index(papers.column("id").to_pandas()).union(pd.Index(edges["source"])).union(edges["target"])
    unknown = output_ids.difference(stored)
    if len(unknown):
        raise DataError(
            f"{len(unknown):,} papers of {folder} are not in {store.describe()}, e.g. {list(unknown[:3])}; nothing was "
            "written. Run the job on `citegraph export tables` of this store, or ingest those papers first"
        )
    at = pd.Index(papers.column("id").to_pandas()).get_indexer(stored)  # -1: nobody cites the paper
    seen = at >= 0
    take = pa.array(at, mask=~seen)
    n_cited = papers.column("n_cited").to_numpy()
    negative = papers.column("negative_weight").to_numpy()
    tail = papers.column("cocite_tail").to_pandas().to_numpy(dtype=np.float64, na_value=np.nan)
    frame = pd.DataFrame(
        {
            "id": stored.array,
            "n_cited": np.where(seen, n_cited[np.maximum(at, 0)] if len(n_cited) else 0, 0).astype(np.int64),
            "negative_weight": np.where(seen, negative[np.maximum(at, 0)] if len(negative) else 0.0, 0.0),
            "cocite_partners": pd.arrays.ArrowExtensionArray(_column(papers, "cocite_partners").take(take)),
            "cocite_probs": pd.arrays.ArrowExtensionArray(_column(papers, "cocite_probs").take(take)),
            "cocite_tail": np.where(seen, tail[np.maximum(at, 0)] if len(tail) else np.nan, np.nan),
        }
    )
    # counts made elsewhere: the basis of an earlier `compute cocitation` no longer describes them
    mark_pending(basis_folder(store), "`ingest cocitation` wrote counts made by a Spark job")
    written_edges = store.replace_edges("CO_CITED", edges)
    written_papers = store.write_node_properties("Paper", "id", frame)
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    with_partners = int(pd.Series(frame["cocite_partners"]).notna().sum())
    return SparkLoadReport(folder, written_edges, written_papers, with_partners, manifest)


def _column(table: pa.Table, name: str) -> pa.Array:
    column = table.column(name)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


__all__ = ["SparkLoadReport", "load_spark_output"]
