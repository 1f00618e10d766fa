// Every use of a keyword by a work, with the work's year and the keyword's kind: the incidence matrix of
// the keyword co-occurrence network (gnn.mapping.keywords), read in bulk (as Arrow).
// parameters: none
// returns: paper, year (null when unknown), keyword, kind
MATCH (p:Paper)-[:HAS_KEYWORD]->(k:Keyword)
RETURN p.id AS paper, p.year AS year, k.id AS keyword, k.kind AS kind
