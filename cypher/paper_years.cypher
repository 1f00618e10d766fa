// Every paper's publication year (null when unknown): the time filter of the retrieval index.
// parameters: none
// returns: id, year
MATCH (p:Paper)
RETURN p.id AS id, p.year AS year
