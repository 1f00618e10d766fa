// Every ACM class of every scheme (1998, 2012, cora), by id: the nodes of the joint taxonomy graph.
// parameters: none
// returns: id, code, name, scheme, level, description
MATCH (a:AcmClass)
RETURN a.id AS id, a.code AS code, a.name AS name, a.scheme AS scheme, a.level AS level,
       a.description AS description
ORDER BY id
