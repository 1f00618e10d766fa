// Fused taxonomy vectors and Poincaré coordinates of ACM classes (null until computed).
// parameters: $ids (list of AcmClass ids)
// returns: key, fused, poincare
UNWIND $ids AS wanted
MATCH (a:AcmClass {id: wanted})
RETURN a.id AS key, a.fused AS fused, a.poincare AS poincare
