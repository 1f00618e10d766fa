// Authors whose name contains the given text (case-insensitive), most papers first; one page of $limit after $skip.
// parameters: $text (lower-case), $skip, $limit
// returns: id, name, papers (how many papers they wrote)
// counted by: count_authors_by_name
MATCH (a:Author)-[:WROTE]->(p:Paper)
WHERE lower(a.name) CONTAINS $text
RETURN a.id AS id, a.name AS name, count(*) AS papers
ORDER BY papers DESC, id
SKIP $skip
LIMIT $limit
