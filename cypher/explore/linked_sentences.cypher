// Sentences linked to a sentence by LINKS_TO: the cited sentences a citance points at, and the citances pointing at it.
// parameters: $sentence_id (e.g. "C00-2123#17": paper id, '#', sentence number)
// returns: direction ('cites': $sentence_id is the citance; 'cited_by': it is the cited sentence), id, paper_id, sid,
//          section, text, score, method (gold, silver or model), annotator
// example: citegraph cypher --file cypher/explore/linked_sentences.cypher --param 'sentence_id="C02-1025#18"'
MATCH (s:Sentence {id: $sentence_id})-[l:LINKS_TO]->(t:Sentence)
RETURN 'cites' AS direction, t.id AS id, t.paper_id AS paper_id, t.sid AS sid, t.section AS section, t.text AS text,
       l.score AS score, l.method AS method, l.annotator AS annotator
ORDER BY id, method, annotator
UNION ALL
MATCH (t:Sentence)-[l:LINKS_TO]->(s:Sentence {id: $sentence_id})
RETURN 'cited_by' AS direction, t.id AS id, t.paper_id AS paper_id, t.sid AS sid, t.section AS section, t.text AS text,
       l.score AS score, l.method AS method, l.annotator AS annotator
ORDER BY id, method, annotator
