// Number of citing papers per cited paper (incoming CITES), for papers cited at least once.
// returns: id, n_cited
MATCH (:Paper)-[:CITES]->(p:Paper)
RETURN p.id AS id, count(*) AS n_cited
