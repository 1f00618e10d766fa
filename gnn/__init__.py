"""Compute steps: each reads from the store, computes (PyTorch where it pays off), writes back.

Every step is idempotent: running it twice leaves the same graph.
"""

from __future__ import annotations

from gnn.citation_counts import compute_citation_counts

__all__ = ["compute_citation_counts"]
