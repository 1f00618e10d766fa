// Every sentence's text and the hash of the text its stored embedding came from.
// parameters: none
// returns: id, text, embedding_hash (null until embedded)
MATCH (s:Sentence)
RETURN s.id AS id, s.text AS text, s.embedding_hash AS embedding_hash
