// Every authorship (WROTE): who wrote what, for the reranker's self-citation and author-history features.
// parameters: none
// Ordered: the reranker's example cache is keyed on a hash of these rows, and a parallel scan
// returns them in a different order from run to run.
// returns: author_id, paper_id
MATCH (a:Author)-[:WROTE]->(p:Paper)
RETURN a.id AS author_id, p.id AS paper_id
ORDER BY author_id, paper_id
