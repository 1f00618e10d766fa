// The papers each given sentence cites (MENTIONS: the sentence is a citance), with the marker.
// parameters: $ids (list of Sentence ids)
// returns: sentence_id, paper_id, marker
MATCH (s:Sentence)-[m:MENTIONS]->(p:Paper)
WHERE s.id IN $ids
RETURN s.id AS sentence_id, p.id AS paper_id, m.marker AS marker
ORDER BY sentence_id, paper_id
