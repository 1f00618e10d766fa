// Every citing sentence with a paper it mentions, as integer node codes (row offsets in the Sentence
// and Paper tables), for bulk reads as Arrow. Map Paper codes to ids with paper_codes.
// returns: sentence (INT64 Sentence code), cited (INT64 Paper code)
MATCH (s:Sentence)-[:MENTIONS]->(p:Paper)
RETURN offset(id(s)) AS sentence, offset(id(p)) AS cited
