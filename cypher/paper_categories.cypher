// Every IN_CATEGORY edge (given and inferred): the papers' places in the taxonomy.
// parameters: none
// returns: source (Paper id), target (ArxivCategory code), score (null on given edges), inferred
MATCH (p:Paper)-[r:IN_CATEGORY]->(c:ArxivCategory)
RETURN p.id AS source, c.code AS target, r.score AS score, r.inferred AS inferred
