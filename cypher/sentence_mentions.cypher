// Every citing sentence with a paper it mentions: the incidence matrix behind sentence-level co-citation.
// returns: sentence_id, cited_id
MATCH (s:Sentence)-[:MENTIONS]->(p:Paper)
RETURN s.id AS sentence_id, p.id AS cited_id
