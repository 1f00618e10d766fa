// Every authorship (WROTE) in bulk, for author co-citation and co-authorship maps (read as Arrow).
// parameters: none
// returns: paper_id, author_id, name, position (1-based; null where the source gives none)
MATCH (a:Author)-[w:WROTE]->(p:Paper)
RETURN p.id AS paper_id, a.id AS author_id, a.name AS name, w.position AS position
