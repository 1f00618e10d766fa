// Authors whose name contains a text (case-insensitive), most papers first: the ids the author recipes take.
// parameters: $text (e.g. "mckeown"), $limit
// returns: id, name, papers (how many they wrote), first_year, last_year
// example: citegraph cypher --file cypher/explore/authors_by_name.cypher --param 'text="mckeown"' --param limit=10
MATCH (a:Author)-[:WROTE]->(p:Paper)
WHERE $text <> '' AND lower(a.name) CONTAINS lower($text)
RETURN a.id AS id, a.name AS name, count(*) AS papers, min(p.year) AS first_year, max(p.year) AS last_year
ORDER BY papers DESC, id
LIMIT $limit
