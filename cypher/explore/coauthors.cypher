// The people an author has written with, by number of shared papers.
// parameters: $author_id (e.g. "author:kathleen mckeown"), $limit
// returns: coauthor_id, name, shared_papers
MATCH (a:Author {id: $author_id})-[:WROTE]->(p:Paper)<-[:WROTE]-(other:Author)
WHERE other.id <> a.id
RETURN other.id AS coauthor_id, other.name AS name, count(DISTINCT p) AS shared_papers
ORDER BY shared_papers DESC, coauthor_id
LIMIT $limit
