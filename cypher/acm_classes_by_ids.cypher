// ACM classes by id with their parent (BROADER), without vectors.
// parameters: $ids (list of AcmClass ids)
// returns: id, code, name, level, scheme, description, parent_id
MATCH (a:AcmClass)
WHERE a.id IN $ids
OPTIONAL MATCH (a)-[:BROADER]->(b:AcmClass)
RETURN a.id AS id, a.code AS code, a.name AS name, a.level AS level, a.scheme AS scheme,
       a.description AS description, b.id AS parent_id
