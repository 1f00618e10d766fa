"""Text: the sentence encoder and the text embeddings of papers and sentences.

==============  =========================================================================================
``encoder``     :class:`TextEncoder` (all-MiniLM-L6-v2 by default, offline), with its cache by text hash
``embeddings``  ``citegraph compute embeddings``: paper and sentence vectors, written back incrementally
==============  =========================================================================================
"""

from __future__ import annotations

from gnn.text.embeddings import EmbeddingSettings, compute_embeddings, paper_texts
from gnn.text.encoder import EncoderSettings, TextEncoder

__all__ = [
    "EmbeddingSettings",
    "EncoderSettings",
    "TextEncoder",
    "compute_embeddings",
    "paper_texts",
]
