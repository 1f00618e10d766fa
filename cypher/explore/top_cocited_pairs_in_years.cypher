// The most co-cited pairs counting only citing papers published in a year range (counted from CITES in the query),
// with the all-years CO_CITED count next to it when `citegraph compute cocitation` has run.
// parameters: $year_min, $year_max (integers), $min_count (integer, at least 1), $limit
// returns: source, source_title, source_label, target, target_title, target_label (display labels: stored label,
//          title, reference, venue volume:page, id), citing_papers (in the range), all_years (CO_CITED.count or null)
// example: citegraph cypher --file cypher/explore/top_cocited_pairs_in_years.cypher --param year_min=2000 --param year_max=2005 --param min_count=2 --param limit=10
MATCH (a:Paper)<-[:CITES]-(c:Paper)-[:CITES]->(b:Paper)
WHERE c.year >= $year_min AND c.year <= $year_max AND a.id < b.id
WITH a, b, count(*) AS citing_papers
WHERE citing_papers >= $min_count
OPTIONAL MATCH (a)-[s:CO_CITED]-(b)
RETURN a.id AS source, a.title AS source_title,
       coalesce(CASE WHEN a.label <> '' THEN a.label END, CASE WHEN a.title <> '' THEN a.title END, CASE WHEN a.reference <> '' THEN a.reference END, CASE WHEN a.venue <> '' THEN a.venue + CASE WHEN a.volume <> '' THEN ' ' + a.volume ELSE '' END + CASE WHEN a.first_page <> '' THEN ':' + a.first_page ELSE '' END END, a.id) AS source_label, b.id AS target, b.title AS target_title,
       coalesce(CASE WHEN b.label <> '' THEN b.label END, CASE WHEN b.title <> '' THEN b.title END, CASE WHEN b.reference <> '' THEN b.reference END, CASE WHEN b.venue <> '' THEN b.venue + CASE WHEN b.volume <> '' THEN ' ' + b.volume ELSE '' END + CASE WHEN b.first_page <> '' THEN ':' + b.first_page ELSE '' END END, b.id) AS target_label, citing_papers,
       s.count AS all_years
ORDER BY citing_papers DESC, source, target
LIMIT $limit
