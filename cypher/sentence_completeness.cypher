// How many sentences have a text to embed (non-blank after trim()), and how many of those carry an embedding.
// parameters: none
// returns: with_text, embedding (counts of sentences)
MATCH (s:Sentence)
WHERE trim(s.text) <> ''
RETURN count(s) AS with_text, count(s.embedding) AS embedding
