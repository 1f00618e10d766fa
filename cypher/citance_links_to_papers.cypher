// The stored sentence links (LINKS_TO) into each given paper's full text: which citances point at which of its sentences.
// parameters: $ids (list of Paper ids: the cited papers)
// returns: paper_id, cited_sentence_id, cited_sid, cited_text, citing_sentence_id, citing_paper_id (null when the
//          citance's paper is not recorded), citing_text, score (null for gold), method (gold, silver or model), annotator
MATCH (p:Paper)-[:HAS_SENTENCE]->(t:Sentence)<-[l:LINKS_TO]-(s:Sentence)
WHERE p.id IN $ids
RETURN p.id AS paper_id, t.id AS cited_sentence_id, t.sid AS cited_sid, t.text AS cited_text,
       s.id AS citing_sentence_id, s.paper_id AS citing_paper_id, s.text AS citing_text,
       l.score AS score, l.method AS method, l.annotator AS annotator
ORDER BY paper_id, cited_sid, citing_sentence_id, method, annotator
