// The most co-cited pairs of papers (CO_CITED, computed by `citegraph compute cocitation`), with every strength.
// parameters: $min_count (integer, at least 1), $limit
// returns: source, source_title, source_label, target, target_title, target_label (display labels: stored label,
//          title, reference, venue volume:page, id), count, sentence_count, association, cosine, jaccard, inclusion
MATCH (a:Paper)-[c:CO_CITED]->(b:Paper)
WHERE c.count >= $min_count
RETURN a.id AS source, a.title AS source_title,
       coalesce(CASE WHEN a.label <> '' THEN a.label END, CASE WHEN a.title <> '' THEN a.title END, CASE WHEN a.reference <> '' THEN a.reference END, CASE WHEN a.venue <> '' THEN a.venue + CASE WHEN a.volume <> '' THEN ' ' + a.volume ELSE '' END + CASE WHEN a.first_page <> '' THEN ':' + a.first_page ELSE '' END END, a.id) AS source_label, b.id AS target, b.title AS target_title,
       coalesce(CASE WHEN b.label <> '' THEN b.label END, CASE WHEN b.title <> '' THEN b.title END, CASE WHEN b.reference <> '' THEN b.reference END, CASE WHEN b.venue <> '' THEN b.venue + CASE WHEN b.volume <> '' THEN ' ' + b.volume ELSE '' END + CASE WHEN b.first_page <> '' THEN ':' + b.first_page ELSE '' END END, b.id) AS target_label,
       c.count AS count, c.sentence_count AS sentence_count, c.association AS association,
       c.cosine AS cosine, c.jaccard AS jaccard, c.inclusion AS inclusion
ORDER BY count DESC, association DESC, source, target
LIMIT $limit
