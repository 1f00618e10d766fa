// The most co-cited pairs of papers (CO_CITED, computed by `citegraph compute cocitation`), with every strength.
// parameters: $min_count (integer, at least 1), $limit
// returns: source, source_title, target, target_title, count, sentence_count, association, cosine, jaccard, inclusion
MATCH (a:Paper)-[c:CO_CITED]->(b:Paper)
WHERE c.count >= $min_count
RETURN a.id AS source, a.title AS source_title, b.id AS target, b.title AS target_title,
       c.count AS count, c.sentence_count AS sentence_count, c.association AS association,
       c.cosine AS cosine, c.jaccard AS jaccard, c.inclusion AS inclusion
ORDER BY count DESC, association DESC, source, target
LIMIT $limit
