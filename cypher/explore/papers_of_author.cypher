// An author's papers, newest first, with their position in the author list.
// parameters: $author_id, $limit
// returns: id, title, year, venue, position
MATCH (a:Author {id: $author_id})-[w:WROTE]->(p:Paper)
RETURN p.id AS id, p.title AS title, p.year AS year, p.venue AS venue, w.position AS position
ORDER BY year DESC, id
LIMIT $limit
