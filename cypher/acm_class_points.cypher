// Every AcmClass with its scheme and its taxonomy vectors (citegraph compute hyperbolic).
// returns: id, scheme, fused (null before `compute taxonomy`), poincare (null before `compute hyperbolic`)
MATCH (c:AcmClass)
RETURN c.id AS id, c.scheme AS scheme, c.fused AS fused, c.poincare AS poincare
