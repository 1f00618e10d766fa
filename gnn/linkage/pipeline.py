"""A cited paper as the linker reads it: its sentences encoded once and indexed (:class:`CitedPaper`).

Every text goes through the project's one encoder (:class:`gnn.text.encoder.TextEncoder`), whose disk
cache makes a second run (or the graph's own ``compute embeddings``) reuse the vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gnn.linkage.features import CitedPaper
from gnn.text.encoder import TextEncoder


def cited_paper(
    paper_id: str, sids: Sequence[int], texts: Sequence[str], sections: Sequence[str | None], encoder: TextEncoder
) -> CitedPaper:
    """Encode and index one paper's sentences."""
    vectors = encoder.encode(list(texts)) if texts else np.zeros((0, encoder.dim), np.float32)
    return CitedPaper.build(paper_id, sids, texts, sections, vectors)


__all__ = ["cited_paper"]
