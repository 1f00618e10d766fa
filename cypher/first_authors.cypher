// The first author (lowest WROTE.position) of each given paper, for the display label of papers known by their
// authors only (graph/labels.py, step 5).
// parameters: $ids (list of Paper ids)
// returns: paper_id, name, position
MATCH (a:Author)-[w:WROTE]->(p:Paper)
WHERE p.id IN $ids
RETURN p.id AS paper_id, a.name AS name, w.position AS position
ORDER BY paper_id, position, name
