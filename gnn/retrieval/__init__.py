"""Retrieval, the recall-oriented first stages of recommendation (citeomatic; SymTax).

==============  =========================================================================================
``lexical``     BM25 tokens (stop words, S-stemmer) and the Okapi BM25 index (bm25s)
``index``       the paper index beside the store: dense (faiss) and lexical (BM25), filtered by year
``profiles``    citation-context profiles: what citing sentences said about each paper
``prefetch``    the prefetch channels (dense, BM25, profiles) and their fusion
``manuscript``  manuscript mode: a draft's query context, candidates with sampled body sentences
``enricher``    the graph enricher: papers that the top prefetched papers cite
==============  =========================================================================================
"""

from __future__ import annotations

from gnn.retrieval.enricher import Candidate, CitationLists, Enricher, EnricherSettings, EnrichQuery
from gnn.retrieval.index import DenseIndex, IndexSettings, RetrievalIndex
from gnn.retrieval.lexical import LexicalIndex, tokenize
from gnn.retrieval.manuscript import body_sampled_text, body_sampled_vectors, manuscript_context
from gnn.retrieval.prefetch import CHANNELS, ChannelList, Prefetched, Prefetcher, PrefetchQuery, PrefetchSettings
from gnn.retrieval.profiles import ProfileIndex, ProfileSettings

__all__ = [
    "CHANNELS",
    "Candidate",
    "ChannelList",
    "CitationLists",
    "DenseIndex",
    "EnrichQuery",
    "Enricher",
    "EnricherSettings",
    "IndexSettings",
    "LexicalIndex",
    "PrefetchQuery",
    "PrefetchSettings",
    "Prefetched",
    "Prefetcher",
    "ProfileIndex",
    "ProfileSettings",
    "RetrievalIndex",
    "body_sampled_text",
    "body_sampled_vectors",
    "manuscript_context",
    "tokenize",
]
