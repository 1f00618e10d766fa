// The papers co-cited with a paper (either end of CO_CITED), most often co-cited first.
// parameters: $paper_id, $limit
// returns: id, title, label (the display label: stored label, title, reference, venue volume:page, id), year, cluster, count, sentence_count, association, cosine, jaccard, inclusion
MATCH (p:Paper {id: $paper_id})-[c:CO_CITED]-(q:Paper)
RETURN q.id AS id, q.title AS title,
       coalesce(CASE WHEN q.label <> '' THEN q.label END, CASE WHEN q.title <> '' THEN q.title END, CASE WHEN q.reference <> '' THEN q.reference END, CASE WHEN q.venue <> '' THEN q.venue + CASE WHEN q.volume <> '' THEN ' ' + q.volume ELSE '' END + CASE WHEN q.first_page <> '' THEN ':' + q.first_page ELSE '' END END, q.id) AS label, q.year AS year, q.cocite_cluster AS cluster,
       c.count AS count, c.sentence_count AS sentence_count, c.association AS association,
       c.cosine AS cosine, c.jaccard AS jaccard, c.inclusion AS inclusion
ORDER BY count DESC, association DESC, id
LIMIT $limit
