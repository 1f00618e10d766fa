// Every citing sentence with its text and a paper it mentions: the inputs of `citegraph compute linkage`.
// parameters: none
// returns: sentence_id, text, paper_id
MATCH (s:Sentence)-[:MENTIONS]->(p:Paper)
RETURN s.id AS sentence_id, s.text AS text, p.id AS paper_id
