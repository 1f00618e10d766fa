// Taxonomy vectors and Poincaré coordinates of papers (null until computed).
// parameters: $ids (list of Paper ids)
// returns: key, taxonomy, poincare
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS key, p.taxonomy AS taxonomy, p.poincare AS poincare
