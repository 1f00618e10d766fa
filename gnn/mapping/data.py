"""What the mapping analyses read from the store: every paper's year and record flag, and every citation.

One bulk read serves bursts, centrality's sigma and the historiograph: the citations come from
:func:`gnn.cocitation.compute.read_cocitation_input` (Arrow, integer node codes), the years and stub
flags from ``paper_years_stubs`` (Arrow), aligned to the same sorted paper ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from gnn.cocitation.compute import read_cocitation_input
from graph.store import GraphStore


@dataclass(frozen=True)
class MappingInput:
    """Citations as positions in ``papers``, with each paper's year and whether it is a record."""

    papers: pd.Index  # every Paper id, sorted ascending
    years: np.ndarray  # float64 [papers]: publication year, NaN where unknown
    record: np.ndarray  # bool [papers]: a record of the loaded collection (stub is not true)
    citing: np.ndarray  # int64 [citations]: position of the citing paper (-1: not found)
    cited: np.ndarray  # int64 [citations]: position of the cited paper


def read_mapping_input(store: GraphStore) -> MappingInput:
    """The citations, years and record flags of ``store`` (see :class:`MappingInput`)."""
    data = read_cocitation_input(store)
    table = store.query_arrow("paper_years_stubs")
    years = np.full(len(data.papers), np.nan)
    record = np.ones(len(data.papers), dtype=bool)
    if table.num_rows:
        at = data.papers.get_indexer(pd.Index(table.column("id").to_pandas()))
        found = at >= 0
        year = table.column("year").cast(pa.float64()).to_numpy(zero_copy_only=False)
        stub = table.column("stub").cast(pa.bool_()).fill_null(False).to_numpy(zero_copy_only=False)
        years[at[found]] = year[found]
        record[at[found]] = ~stub[found]
    return MappingInput(data.papers, years, record, data.citing, data.cited)


__all__ = ["MappingInput", "read_mapping_input"]
