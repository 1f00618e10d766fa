// Authors of each given paper, in author order.
// parameters: $ids (list of Paper ids)
// returns: paper_id, author_id, name, position
UNWIND $ids AS wanted
MATCH (a:Author)-[w:WROTE]->(p:Paper {id: wanted})
RETURN p.id AS paper_id, a.id AS author_id, a.name AS name, w.position AS position
ORDER BY paper_id, position
