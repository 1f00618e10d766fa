// The papers co-cited with a paper by citing papers published in a year range (counted from CITES), with the stored
// all-years strengths beside (null where `citegraph compute cocitation` stored no CO_CITED edge for the pair).
// parameters: $paper_id (e.g. "P05-1053"), $year_min, $year_max (integers), $min_count (integer, at least 1), $limit
// returns: id, label (the display label: stored label, title, reference, venue volume:page, id), year,
//          citing_papers (in the range), all_years (CO_CITED.count), association
// example: citegraph cypher --file cypher/explore/cocitation_neighbourhood_in_years.cypher --param paper_id=P05-1053 --param year_min=2006 --param year_max=2010 --param min_count=2 --param limit=10
MATCH (p:Paper {id: $paper_id})<-[:CITES]-(x:Paper)-[:CITES]->(q:Paper)
WHERE q.id <> p.id AND x.year >= $year_min AND x.year <= $year_max
WITH p, q, count(*) AS citing_papers
WHERE citing_papers >= $min_count
OPTIONAL MATCH (p)-[c:CO_CITED]-(q)
RETURN q.id AS id,
       coalesce(CASE WHEN q.label <> '' THEN q.label END, CASE WHEN q.title <> '' THEN q.title END, CASE WHEN q.reference <> '' THEN q.reference END, CASE WHEN q.venue <> '' THEN q.venue + CASE WHEN q.volume <> '' THEN ' ' + q.volume ELSE '' END + CASE WHEN q.first_page <> '' THEN ':' + q.first_page ELSE '' END END, q.id) AS label,
       q.year AS year, citing_papers, c.count AS all_years, c.association AS association
ORDER BY citing_papers DESC, id
LIMIT $limit
