// Papers that carry Poincaré-ball coordinates, with them.
// returns: id, poincare
MATCH (p:Paper)
WHERE p.poincare IS NOT NULL
RETURN p.id AS id, p.poincare AS poincare
