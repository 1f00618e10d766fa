// Every authorship (WROTE): who wrote what, for the reranker's self-citation and author-history features.
// parameters: none
// returns: author_id, paper_id
MATCH (a:Author)-[:WROTE]->(p:Paper)
RETURN a.id AS author_id, p.id AS paper_id
