// The co-citations among a set of papers (both ends in $ids; CO_CITED is stored once per pair).
// parameters: $ids (list of Paper ids)
// returns: source, target, count, association
MATCH (a:Paper)-[c:CO_CITED]->(b:Paper)
WHERE a.id IN $ids AND b.id IN $ids
RETURN a.id AS source, b.id AS target, c.count AS count, c.association AS association
ORDER BY source, target
