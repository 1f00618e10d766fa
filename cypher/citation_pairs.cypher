// Every citation as a (citing, cited) pair of Paper ids: the incidence matrix behind co-citation and coupling.
// returns: citing_id, cited_id
MATCH (a:Paper)-[:CITES]->(b:Paper)
RETURN a.id AS citing_id, b.id AS cited_id
