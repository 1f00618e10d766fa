// Papers that cite each given paper (incoming CITES), newest first; the caller caps per paper.
// parameters: $ids (list of Paper ids)
// returns: paper_id, citing_id
MATCH (c:Paper)-[:CITES]->(p:Paper)
WHERE p.id IN $ids
RETURN p.id AS paper_id, c.id AS citing_id, coalesce(c.year, 0) AS rank_key
ORDER BY paper_id, rank_key DESC, citing_id
