// Which papers have a text embedding and which a taxonomy vector (compute taxonomy: what to infer, what to clear).
// parameters: none
// returns: id, has_embedding, has_taxonomy
MATCH (p:Paper)
RETURN p.id AS id, p.embedding IS NOT NULL AS has_embedding, p.taxonomy IS NOT NULL AS has_taxonomy
