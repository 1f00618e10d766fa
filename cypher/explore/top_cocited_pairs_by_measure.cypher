// The co-cited pairs of the whole store strongest first by one measure (CO_CITED, from `citegraph compute cocitation`):
// count, sentence_count, association (1 = chance), cosine, jaccard or inclusion; ties by count, then ids.
// parameters: $measure (e.g. "association"), $min_count (integer, at least 1), $limit
// returns: source, source_label, target, target_label (display labels: stored label, title, reference,
//          venue volume:page, id), count, sentence_count, association, cosine, jaccard, inclusion, strength (by $measure)
// example: citegraph cypher --file cypher/explore/top_cocited_pairs_by_measure.cypher --param 'measure="cosine"' --param min_count=3 --param limit=10
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
     END AS strength
RETURN a.id AS source,
       coalesce(CASE WHEN a.label <> '' THEN a.label END, CASE WHEN a.title <> '' THEN a.title END, CASE WHEN a.reference <> '' THEN a.reference END, CASE WHEN a.venue <> '' THEN a.venue + CASE WHEN a.volume <> '' THEN ' ' + a.volume ELSE '' END + CASE WHEN a.first_page <> '' THEN ':' + a.first_page ELSE '' END END, a.id) AS source_label,
       b.id AS target,
       coalesce(CASE WHEN b.label <> '' THEN b.label END, CASE WHEN b.title <> '' THEN b.title END, CASE WHEN b.reference <> '' THEN b.reference END, CASE WHEN b.venue <> '' THEN b.venue + CASE WHEN b.volume <> '' THEN ' ' + b.volume ELSE '' END + CASE WHEN b.first_page <> '' THEN ':' + b.first_page ELSE '' END END, b.id) AS target_label,
       c.count AS count, c.sentence_count AS sentence_count, c.association AS association,
       c.cosine AS cosine, c.jaccard AS jaccard, c.inclusion AS inclusion, coalesce(strength, 0.0) AS strength
ORDER BY strength DESC, count DESC, source, target
LIMIT $limit
