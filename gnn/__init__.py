"""The compute: one sub-package per capability, each with a public face in its ``__init__``.

=================  ==========================================================================================
``text``           the sentence encoder (all-MiniLM-L6-v2 by default) and ``compute embeddings``
``cocitation``     co-citation and coupling counts, normalised strengths, noise distributions, clusters, exports
``taxonomy``       the joint arXiv + ACM graph, GNN fusion of class vectors, paper categories
``hyperbolic``     Poincaré geometry, the hierarchy embedding, the map h_θ from text to the ball
``retrieval``      the paper index, citation-context profiles, prefetch channels, the graph enricher
``rerank``         reranker features, the neural model, LambdaMART, the scorers (score + why)
``recommend``      the recommendation service, citance masking, training and evaluation
``linkage``        sentence-level citation linkage (CL-SciSumm Task 1A), its model and service
=================  ==========================================================================================

Capabilities depend downward in that order (``recommend`` on ``rerank`` on ``retrieval`` …), never in a
circle; ``device`` and ``metrics`` are shared by all. Importing one capability never drags in one above it.
Every compute step reads from the store and writes back, and is idempotent: running it twice leaves
the same graph.
"""
