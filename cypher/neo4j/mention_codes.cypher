// Every citing sentence with a paper it mentions, as codes for bulk reads. Neo4j has no stable dense
// integer node code, so the codes are the keys themselves.
// returns: sentence (Sentence id), cited (Paper id)
MATCH (s:Sentence)-[:MENTIONS]->(p:Paper)
RETURN s.id AS sentence, p.id AS cited
