// Co-cited partners of each given paper with every stored strength (CO_CITED is stored once per
// pair, so the pattern is undirected); the caller ranks by the measure it was asked for.
// parameters: $ids (list of Paper ids)
// returns: paper_id, other_id, count, sentence_count, association, cosine, jaccard, inclusion
MATCH (p:Paper)-[c:CO_CITED]-(q:Paper)
WHERE p.id IN $ids
RETURN p.id AS paper_id, q.id AS other_id, c.count AS count, c.sentence_count AS sentence_count,
       c.association AS association, c.cosine AS cosine, c.jaccard AS jaccard, c.inclusion AS inclusion
