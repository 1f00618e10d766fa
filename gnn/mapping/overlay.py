r"""VOSviewer's overlay: the average year of the documents behind each node (``MapNode.avg_year``).

For a cited work :math:`w` with citing documents :math:`D_w` in the year window (each counted once,
undated ones left out),

.. math::
    \bar y_w = \frac{1}{|D_w|} \sum_{d \in D_w} \mathrm{year}(d)

(van Eck & Waltman, VOSviewer manual 1.6.20, "overlay visualization": the average publication year of the
documents in which an item occurs). A map coloured by :math:`\bar y_w` shows which references a field cites
now and which it cited once.

The REFERENCES builder calls it with the mapping input it has read and the filters' window::

    from gnn.mapping.overlay import average_citing_year
    avg = average_citing_year(data, year_min=filters.year_min, year_max=filters.year_max)
    MapNode(..., avg_year=avg.get(work_id))           # None for a work without a dated citer

or, without a :class:`~gnn.mapping.data.MappingInput` at hand, :func:`average_citing_years` (``store``, ids).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gnn.mapping.data import MappingInput, read_mapping_input
from graph.store import GraphStore


def dated_citations(
    data: MappingInput, *, year_min: int | None = None, year_max: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(citing, cited, year)`` of every distinct citation whose citing document has a year in the window."""
    known = (data.citing >= 0) & (data.cited >= 0)
    citing, cited = data.citing[known], data.cited[known]
    n = len(data.papers)
    pairs = np.unique(citing.astype(np.int64) * n + cited)  # a citation listed twice counts once
    citing, cited = pairs // n, pairs % n
    year = data.years[citing]
    keep = ~np.isnan(year)
    if year_min is not None:
        keep &= year >= year_min
    if year_max is not None:
        keep &= year <= year_max
    return citing[keep], cited[keep], year[keep].astype(np.int64)


def average_citing_year(data: MappingInput, *, year_min: int | None = None, year_max: int | None = None) -> pd.Series:
    r""":math:`\bar y_w` (module docstring) of every work cited in the window, by id (float64)."""
    _, cited, year = dated_citations(data, year_min=year_min, year_max=year_max)
    n = len(data.papers)
    sums = np.bincount(cited, weights=year.astype(np.float64), minlength=n)
    counts = np.bincount(cited, minlength=n)
    works = np.flatnonzero(counts)
    return pd.Series(sums[works] / counts[works], index=data.papers[works], name="avg_year")


def average_citing_years(
    store: GraphStore, ids: list[str], *, year_min: int | None = None, year_max: int | None = None
) -> dict[str, float]:
    r""":math:`\bar y_w` of the works ``ids`` (those without a dated citer in the window are left out)."""
    avg = average_citing_year(read_mapping_input(store), year_min=year_min, year_max=year_max)
    found = avg.reindex(ids).dropna()
    return {str(k): float(v) for k, v in found.items()}


__all__ = ["average_citing_year", "average_citing_years", "dated_citations"]
