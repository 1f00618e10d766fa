// The citations among a set of papers (both ends in $ids): the edges of an ego network.
// parameters: $ids (list of Paper ids)
// returns: source, target, n_contexts
MATCH (a:Paper)-[c:CITES]->(b:Paper)
WHERE a.id IN $ids AND b.id IN $ids
RETURN a.id AS source, b.id AS target, c.n_contexts AS n_contexts
ORDER BY source, target
