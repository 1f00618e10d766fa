// Stubs (works known only as citation targets) that only the given papers cite or mention: what those
// papers alone brought into the graph, removed with them (graph/works.py, delete_work).
// parameters: $ids (list of Paper ids)
// returns: id
MATCH (p:Paper)-[:CITES]->(s:Paper)
WHERE p.id IN $ids AND s.stub = true AND NOT s.id IN $ids
OPTIONAL MATCH (o:Paper)-[:CITES]->(s)
WHERE NOT o.id IN $ids
WITH s, count(o) AS others
WHERE others = 0
OPTIONAL MATCH (:Sentence)-[m:MENTIONS]->(s)
WITH s, count(m) AS mentions
WHERE mentions = 0
RETURN DISTINCT s.id AS id
