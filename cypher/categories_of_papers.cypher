// The arXiv categories of each given paper (IN_CATEGORY), highest score first.
// parameters: $ids (list of Paper ids)
// returns: paper_id, code, score, inferred
MATCH (p:Paper)-[r:IN_CATEGORY]->(c:ArxivCategory)
WHERE p.id IN $ids
RETURN p.id AS paper_id, c.code AS code, r.score AS score, r.inferred AS inferred
ORDER BY paper_id, score DESC, code
