// Every class below an ACM (or other scheme's) class, up to three levels down.
// parameters: $class_id (e.g. "1998:I.2"), $limit
// returns: id, code, name, level
MATCH (child:AcmClass)-[:BROADER*1..3]->(root:AcmClass {id: $class_id})
RETURN DISTINCT child.id AS id, child.code AS code, child.name AS name, child.level AS level
ORDER BY level, code
LIMIT $limit
