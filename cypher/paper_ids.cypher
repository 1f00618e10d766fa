// Every Paper id.
// returns: id
MATCH (p:Paper) RETURN p.id AS id
