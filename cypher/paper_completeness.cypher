// How many papers have a text to embed, and how many of those carry each computed vector.
// A paper's text is gnn/text/embeddings.py's: a non-blank title, abstract or reference, or else (abstract
// null or '') a non-blank sentence of the $section section. Two disjoint parts, one row each, summed by the
// caller: papers with text of their own, then papers whose only text is the abstract rebuilt from sentences
// (WITH DISTINCT p: once, however many sentences). Blank: what trim() removes (white space). Papers are
// filtered before the join: the embedded engine then follows HAS_SENTENCE from a few papers, not all.
// parameters: $section (Sentence.section of abstract sentences)
// returns: with_text, embedding, taxonomy, poincare (counts of papers; two rows)
MATCH (p:Paper)
WHERE trim(p.title) <> '' OR trim(p.abstract) <> '' OR trim(p.reference) <> ''
RETURN count(p) AS with_text, count(p.embedding) AS embedding, count(p.taxonomy) AS taxonomy,
       count(p.poincare) AS poincare
UNION ALL
MATCH (p:Paper)
WHERE (p.abstract IS NULL OR p.abstract = '') AND coalesce(trim(p.title), '') = ''
  AND coalesce(trim(p.reference), '') = ''
WITH p
MATCH (p)-[:HAS_SENTENCE]->(s:Sentence)
WHERE s.section = $section AND trim(s.text) <> ''
WITH DISTINCT p
RETURN count(p) AS with_text, count(p.embedding) AS embedding, count(p.taxonomy) AS taxonomy,
       count(p.poincare) AS poincare
