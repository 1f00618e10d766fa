// Every ArxivCategory with its taxonomy vectors (citegraph compute hyperbolic).
// returns: code, fused (null before `compute taxonomy`), poincare (null before `compute hyperbolic`)
MATCH (c:ArxivCategory)
RETURN c.code AS code, c.fused AS fused, c.poincare AS poincare
