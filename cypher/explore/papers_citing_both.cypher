// Papers that cite both of two papers (the citing papers behind a co-citation), newest first.
// parameters: $paper_a, $paper_b (Paper ids), $limit
// returns: id, title, label (the display label: stored label, title, reference, venue volume:page, id), year, venue
// example: citegraph cypher --file cypher/explore/papers_citing_both.cypher --param paper_a=J93-2003 --param paper_b=J03-1002 --param limit=10
MATCH (a:Paper {id: $paper_a})<-[:CITES]-(c:Paper)-[:CITES]->(b:Paper {id: $paper_b})
RETURN c.id AS id, c.title AS title,
       coalesce(CASE WHEN c.label <> '' THEN c.label END, CASE WHEN c.title <> '' THEN c.title END, CASE WHEN c.reference <> '' THEN c.reference END, CASE WHEN c.venue <> '' THEN c.venue + CASE WHEN c.volume <> '' THEN ' ' + c.volume ELSE '' END + CASE WHEN c.first_page <> '' THEN ':' + c.first_page ELSE '' END END, c.id) AS label, c.year AS year, c.venue AS venue
ORDER BY coalesce(year, 0) DESC, id
LIMIT $limit
