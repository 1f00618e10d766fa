// Historiograph (Garfield; bibliometrix's histNetwork): the records most cited inside the loaded collection, by year.
// The $limit records with the highest local citation score (LCS: citations from other records; a stub, known only
// as somebody's cited reference, is no record), each with the listed works it cites; global_citations counts
// every citing paper.
// parameters: $limit (the number of works)
// returns: id, year, title, label (the display label: stored label, title, reference, venue volume:page, id), lcs,
//          global_citations, cites (ids of the listed works it cites)
// (UNWIND [work] is a barrier: without it LadybugDB collects before it orders and limits, keeping the wrong works.)
// example: citegraph cypher --file cypher/explore/historiograph.cypher --param limit=20
MATCH (c:Paper)-[:CITES]->(p:Paper)
WHERE coalesce(c.stub, false) = false AND coalesce(p.stub, false) = false AND c.id <> p.id
WITH p.id AS work, count(DISTINCT c) AS score
ORDER BY score DESC, work
LIMIT $limit
UNWIND [work] AS kept
WITH collect(kept) AS top
MATCH (c:Paper)-[:CITES]->(w:Paper)
WHERE w.id IN top AND c.id <> w.id
WITH top, w, count(DISTINCT c) AS global_citations,
     count(DISTINCT CASE WHEN coalesce(c.stub, false) = false THEN c.id END) AS lcs
OPTIONAL MATCH (w)-[:CITES]->(q:Paper)
WHERE q.id IN top AND q.id <> w.id
RETURN w.id AS id, w.year AS year, w.title AS title,
       coalesce(CASE WHEN w.label <> '' THEN w.label END, CASE WHEN w.title <> '' THEN w.title END, CASE WHEN w.reference <> '' THEN w.reference END, CASE WHEN w.venue <> '' THEN w.venue + CASE WHEN w.volume <> '' THEN ' ' + w.volume ELSE '' END + CASE WHEN w.first_page <> '' THEN ':' + w.first_page ELSE '' END END, w.id) AS label,
       lcs, global_citations, collect(q.id) AS cites
ORDER BY year, id
