// The most co-cited pairs counting only citing papers published in a year range (counted from CITES in the query),
// with the all-years CO_CITED count next to it when `citegraph compute cocitation` has run.
// parameters: $year_min, $year_max (integers), $min_count (integer, at least 1), $limit
// returns: source, source_title, target, target_title, citing_papers (in the range), all_years (CO_CITED.count or null)
// example: citegraph cypher --file cypher/explore/top_cocited_pairs_in_years.cypher --param year_min=2000 --param year_max=2005 --param min_count=2 --param limit=10
MATCH (a:Paper)<-[:CITES]-(c:Paper)-[:CITES]->(b:Paper)
WHERE c.year >= $year_min AND c.year <= $year_max AND a.id < b.id
WITH a, b, count(*) AS citing_papers
WHERE citing_papers >= $min_count
OPTIONAL MATCH (a)-[s:CO_CITED]-(b)
RETURN a.id AS source, a.title AS source_title, b.id AS target, b.title AS target_title, citing_papers,
       s.count AS all_years
ORDER BY citing_papers DESC, source, target
LIMIT $limit
