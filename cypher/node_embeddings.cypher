// Every node of one label that has a text embedding, with the vector.
// identifiers: __LABEL__ (Paper or Sentence)
// parameters: none
// returns: id, embedding
MATCH (n:__LABEL__)
WHERE n.embedding IS NOT NULL
RETURN n.id AS id, n.embedding AS embedding
