// Authors of one paper, in author order (two spellings of one author at a position: by id): the rows
// authors_of_papers gives for one id, looked up by key (the embedded store's fast path, GraphStore.query_keys).
// parameters: $id (a Paper id)
// returns: paper_id, author_id, name, position
MATCH (a:Author)-[w:WROTE]->(p:Paper)
WHERE p.id = $id
RETURN p.id AS paper_id, a.id AS author_id, a.name AS name, w.position AS position
ORDER BY paper_id, position, author_id
