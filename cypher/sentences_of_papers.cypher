// The sentences of each given paper's full text, in reading order.
// parameters: $ids (list of Paper ids)
// returns: paper_id, id, sid, section, text
MATCH (p:Paper)-[:HAS_SENTENCE]->(s:Sentence)
WHERE p.id IN $ids
RETURN p.id AS paper_id, s.id AS id, s.sid AS sid, s.section AS section, s.text AS text
ORDER BY paper_id, sid
