// Enricher: co-citation partners of the papers a query already cites, counted from CITES made by papers
// published up to $known_until (unknown years count as 9999): the time-bounded twin of the stored
// CO_CITED edges (cocited_with), for evaluations whose later citations must stay unseen.
// parameters: $ids (list of Paper ids: the cited papers of every query in the batch), $known_until (int)
// returns: paper_id, other_id, count (papers citing both)
MATCH (a:Paper)<-[:CITES]-(c:Paper)-[:CITES]->(b:Paper)
WHERE a.id IN $ids AND coalesce(c.year, 9999) <= $known_until AND b.id <> a.id
RETURN a.id AS paper_id, b.id AS other_id, count(*) AS count
