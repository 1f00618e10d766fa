// How many authors search_authors finds without a limit (authors of at least one paper).
// parameters: $text (lower-case)
// returns: n
MATCH (a:Author)-[:WROTE]->(p:Paper)
WHERE lower(a.name) CONTAINS $text
WITH DISTINCT a.id AS id
RETURN count(*) AS n
