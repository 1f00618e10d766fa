// The stored noise distributions of `citegraph compute cocitation`, for the reranker's samplers.
// returns: id, negative_weight, cocite_partners, cocite_probs, cocite_tail
MATCH (p:Paper)
WHERE p.negative_weight > 0 OR p.cocite_partners IS NOT NULL
RETURN p.id AS id, p.negative_weight AS negative_weight, p.cocite_partners AS cocite_partners,
       p.cocite_probs AS cocite_probs, p.cocite_tail AS cocite_tail
