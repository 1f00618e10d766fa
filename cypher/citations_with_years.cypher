// Every citation with the citing paper's year: what a reranker may know "as of" a year.
// parameters: none
// Ordered: the reranker's example cache is keyed on a hash of these rows, and a parallel scan
// returns them in a different order from run to run.
// returns: citing_id, citing_year (null when unknown), cited_id
MATCH (a:Paper)-[:CITES]->(b:Paper)
RETURN a.id AS citing_id, a.year AS citing_year, b.id AS cited_id
ORDER BY citing_id, cited_id
