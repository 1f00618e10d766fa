// Papers within two citation hops of a paper (either direction), nearest first.
// parameters: $paper_id, $limit
// returns: id, title, label (the display label: stored label, title, reference, venue volume:page, id), year, hops
MATCH path = (p:Paper {id: $paper_id})-[:CITES*1..2]-(q:Paper)
WHERE q.id <> $paper_id
WITH q, min(length(path)) AS hops
RETURN q.id AS id, q.title AS title,
       coalesce(CASE WHEN q.label <> '' THEN q.label END, CASE WHEN q.title <> '' THEN q.title END, CASE WHEN q.reference <> '' THEN q.reference END, CASE WHEN q.venue <> '' THEN q.venue + CASE WHEN q.volume <> '' THEN ' ' + q.volume ELSE '' END + CASE WHEN q.first_page <> '' THEN ':' + q.first_page ELSE '' END END, q.id) AS label, q.year AS year, hops
ORDER BY hops, id
LIMIT $limit
