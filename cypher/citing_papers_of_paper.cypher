// Papers that cite one paper (incoming CITES), newest first: the rows citing_papers gives for one id,
// looked up by key (the embedded store's fast path, GraphStore.query_keys).
// parameters: $id (a Paper id)
// returns: paper_id, citing_id
MATCH (c:Paper)-[:CITES]->(p:Paper)
WHERE p.id = $id
RETURN p.id AS paper_id, c.id AS citing_id, coalesce(c.year, 0) AS rank_key
ORDER BY paper_id, rank_key DESC, citing_id
