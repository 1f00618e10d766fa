// The texts a paper embedding is computed from, and the hash of the text its stored embedding came from.
// parameters: none
// returns: id, title, abstract, reference (a stub's reference string), embedding_hash (null until embedded)
MATCH (p:Paper)
RETURN p.id AS id, p.title AS title, p.abstract AS abstract, p.reference AS reference,
       p.embedding_hash AS embedding_hash
