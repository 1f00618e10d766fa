// Papers that each given paper cites (outgoing CITES), most cited first; the caller caps per paper.
// parameters: $ids (list of Paper ids)
// returns: paper_id, cited_id
MATCH (p:Paper)-[:CITES]->(c:Paper)
WHERE p.id IN $ids
RETURN p.id AS paper_id, c.id AS cited_id, coalesce(c.n_cited, 0) AS rank_key
ORDER BY paper_id, rank_key DESC, cited_id
