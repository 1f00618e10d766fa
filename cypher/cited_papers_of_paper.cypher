// Papers that one paper cites (outgoing CITES), most cited first: the rows cited_papers gives for one id,
// looked up by key (the embedded store's fast path, GraphStore.query_keys).
// parameters: $id (a Paper id)
// returns: paper_id, cited_id
MATCH (p:Paper)-[:CITES]->(c:Paper)
WHERE p.id = $id
RETURN p.id AS paper_id, c.id AS cited_id, coalesce(c.n_cited, 0) AS rank_key
ORDER BY paper_id, rank_key DESC, cited_id
