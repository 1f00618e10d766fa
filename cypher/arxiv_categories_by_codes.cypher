// arXiv categories by code (without their vectors; see arxiv_category_coordinates).
// parameters: $codes (list of ArxivCategory codes)
// returns: code, name, description
UNWIND $codes AS wanted
MATCH (c:ArxivCategory {code: wanted})
RETURN c.code AS code, c.name AS name, c.description AS description
