// Stored text embeddings of the given papers (papers without one are left out).
// parameters: $ids (list of Paper ids)
// returns: id, embedding
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
WHERE p.embedding IS NOT NULL
RETURN p.id AS id, p.embedding AS embedding
