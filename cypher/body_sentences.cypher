// The body sentences (every section but the abstract) of every paper with full text, in reading order:
// the candidate side of manuscript mode samples a few of them per paper.
// parameters: $section (the abstract's section name, left out)
// returns: paper_id, sid, text
MATCH (p:Paper)-[:HAS_SENTENCE]->(s:Sentence)
WHERE s.section IS NULL OR s.section <> $section
RETURN p.id AS paper_id, s.sid AS sid, s.text AS text
ORDER BY paper_id, sid
