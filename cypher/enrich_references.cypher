// Enricher (SymTax; citeomatic): the outgoing citations of the top prefetched papers, one batched read.
// Only citations made by papers published up to $known_until count (unknown years count as 9999), so an
// evaluation can hide citations made after its training period. `IN $ids`, not UNWIND: a batched lookup
// across a relationship scans it under UNWIND on the embedded engine (cypher/__init__.py).
// parameters: $ids (list of Paper ids: the top-m prefetched papers of every query in the batch), $known_until (int)
// returns: citing_id, cited_id
MATCH (p:Paper)-[:CITES]->(c:Paper)
WHERE p.id IN $ids AND coalesce(p.year, 9999) <= $known_until
RETURN p.id AS citing_id, c.id AS cited_id
