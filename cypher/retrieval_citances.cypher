// Every citing sentence (MENTIONS) with its citing paper and the paper it cites: the citation contexts
// behind citation-context profiles and the recommendation evaluation.
// parameters: none
// returns: sentence_id, text, citing_id, citing_year (null when unknown), cited_id, cited_year, marker
MATCH (c:Paper)-[:HAS_SENTENCE]->(s:Sentence)-[m:MENTIONS]->(p:Paper)
RETURN s.id AS sentence_id, s.text AS text, c.id AS citing_id, c.year AS citing_year,
       p.id AS cited_id, p.year AS cited_year, m.marker AS marker
ORDER BY sentence_id, cited_id
