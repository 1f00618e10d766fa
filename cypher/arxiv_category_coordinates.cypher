// Fused taxonomy vectors and Poincaré coordinates of arXiv categories (null until computed).
// parameters: $codes (list of ArxivCategory codes)
// returns: key, fused, poincare
UNWIND $codes AS wanted
MATCH (c:ArxivCategory {code: wanted})
RETURN c.code AS key, c.fused AS fused, c.poincare AS poincare
