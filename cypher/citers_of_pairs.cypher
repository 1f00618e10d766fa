// The papers citing both papers of pairs among the given ones (the documents behind a co-citation), for the API's
// batched pair loaders; the caller keeps the pairs it asked for.
// parameters: $ids (list of Paper ids: both ends of every pair)
// returns: low, high (the pair, low < high), citing_id, year (of the citing paper; null when unknown)
MATCH (a:Paper)<-[:CITES]-(x:Paper)-[:CITES]->(b:Paper)
WHERE a.id IN $ids AND b.id IN $ids AND a.id < b.id
RETURN a.id AS low, b.id AS high, x.id AS citing_id, x.year AS year
ORDER BY low, high, coalesce(year, 0) DESC, citing_id
