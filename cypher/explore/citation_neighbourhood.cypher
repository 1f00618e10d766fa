// Papers within two citation hops of a paper (either direction), nearest first.
// parameters: $paper_id, $limit
// returns: id, title, year, hops
MATCH path = (p:Paper {id: $paper_id})-[:CITES*1..2]-(q:Paper)
WHERE q.id <> $paper_id
WITH q, min(length(path)) AS hops
RETURN q.id AS id, q.title AS title, q.year AS year, hops
ORDER BY hops, id
LIMIT $limit
