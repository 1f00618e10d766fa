// Aliases whose every ALIAS_OF names one of the given papers: what a deletion of those papers leaves
// naming nothing (graph/works.py).
// parameters: $ids (list of Paper ids)
// returns: id
MATCH (a:Alias)-[:ALIAS_OF]->(p:Paper)
WHERE p.id IN $ids
OPTIONAL MATCH (a)-[:ALIAS_OF]->(o:Paper)
WHERE NOT o.id IN $ids
WITH a, count(o) AS others
WHERE others = 0
RETURN DISTINCT a.id AS id
