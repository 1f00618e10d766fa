// Every IN_CATEGORY edge (given and inferred): the papers' places in the taxonomy.
// parameters: none
// Ordered: each paper's taxonomy point is a weighted sum over its edges (its last bits depend on
// their order, which a parallel scan changes from run to run), and the reranker's example cache is
// keyed on those points.
// returns: source (Paper id), target (ArxivCategory code), score (null on given edges), inferred
MATCH (p:Paper)-[r:IN_CATEGORY]->(c:ArxivCategory)
RETURN p.id AS source, c.code AS target, r.score AS score, r.inferred AS inferred
ORDER BY source, target
