// Every class of one classification scheme (AcmClass.scheme, e.g. "2012") with its parent (BROADER).
// parameters: $scheme
// returns: id, code, name, level, description, parent_id (null for a root)
MATCH (a:AcmClass)
WHERE a.scheme = $scheme
OPTIONAL MATCH (a)-[:BROADER]->(b:AcmClass)
RETURN a.id AS id, a.code AS code, a.name AS name, a.level AS level, a.description AS description,
       b.id AS parent_id
ORDER BY level, code
