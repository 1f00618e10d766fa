// Authors of each given paper, in author order (two spellings of one author at a position: by id).
// parameters: $ids (list of Paper ids)
// returns: paper_id, author_id, name, position
MATCH (a:Author)-[w:WROTE]->(p:Paper)
WHERE p.id IN $ids
RETURN p.id AS paper_id, a.id AS author_id, a.name AS name, w.position AS position
ORDER BY paper_id, position, author_id
