// Every affiliation of a paper with an institution in bulk, for institution co-authorship maps (read as Arrow).
// parameters: none
// returns: paper_id, unit_id (Institution.id), name
MATCH (p:Paper)-[:AFFILIATION]->(i:Institution)
RETURN p.id AS paper_id, i.id AS unit_id, i.name AS name
