// Sentences of one section (e.g. "Abstract") of every full-text paper whose `abstract` property is empty.
// parameters: $section
// returns: paper_id, sid, text
MATCH (p:Paper)-[:HAS_SENTENCE]->(s:Sentence)
WHERE s.section = $section AND (p.abstract IS NULL OR p.abstract = '')
RETURN p.id AS paper_id, s.sid AS sid, s.text AS text
