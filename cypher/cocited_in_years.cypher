// Co-cited partners of each given paper counting only citing papers published in [$year_min, $year_max] (from CITES).
// parameters: $ids (list of Paper ids), $year_min, $year_max (integers)
// returns: paper_id, other_id, count (citing papers in the range that cite both)
MATCH (p:Paper)<-[:CITES]-(x:Paper)-[:CITES]->(q:Paper)
WHERE p.id IN $ids AND q.id <> p.id AND x.year >= $year_min AND x.year <= $year_max
RETURN p.id AS paper_id, q.id AS other_id, count(*) AS count
