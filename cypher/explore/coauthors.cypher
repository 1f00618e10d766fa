// The people an author has written with, by number of shared papers.
// parameters: $author_id (e.g. "author:kathleen mckeown"), $limit
// returns: coauthor_id, name, shared_papers
// (count(*), not count(DISTINCT p): one row per shared paper already, and see cypher/__init__.py's known traps)
MATCH (a:Author {id: $author_id})-[:WROTE]->(p:Paper)<-[:WROTE]-(other:Author)
WHERE other.id <> a.id
RETURN other.id AS coauthor_id, other.name AS name, count(*) AS shared_papers
ORDER BY shared_papers DESC, coauthor_id
LIMIT $limit
