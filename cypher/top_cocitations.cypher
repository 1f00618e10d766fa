// The co-cited pairs of the whole store (CO_CITED, stored once per pair), strongest first by $measure
// (count, sentence_count, association, cosine, jaccard or inclusion); one page of $limit after $skip.
// parameters: $measure, $min_count (integer), $skip, $limit
// returns: source, target, count, sentence_count, association, cosine, jaccard, inclusion, rank_key
// counted by: count_cocitations
MATCH (a:Paper)-[c:CO_CITED]->(b:Paper)
WHERE c.count >= $min_count
WITH a, b, c,
     CASE $measure
       WHEN 'count' THEN c.count * 1.0
       WHEN 'sentence_count' THEN coalesce(c.sentence_count, 0) * 1.0
       WHEN 'association' THEN c.association
       WHEN 'cosine' THEN c.cosine
       WHEN 'jaccard' THEN c.jaccard
       ELSE c.inclusion
     END AS rank_key
RETURN a.id AS source, b.id AS target, c.count AS count, c.sentence_count AS sentence_count,
       c.association AS association, c.cosine AS cosine, c.jaccard AS jaccard, c.inclusion AS inclusion,
       coalesce(rank_key, 0.0) AS rank_key
ORDER BY rank_key DESC, count DESC, source, target
SKIP $skip
LIMIT $limit
