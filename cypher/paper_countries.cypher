// Every country of a paper's affiliations in bulk, for country co-authorship maps (read as Arrow).
// parameters: none
// returns: paper_id, unit_id (Country.code), name
MATCH (p:Paper)-[:IN_COUNTRY]->(c:Country)
RETURN p.id AS paper_id, c.code AS unit_id, c.name AS name
