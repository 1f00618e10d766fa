// The co-cited pairs of the whole store counting only citing papers published in [$year_min, $year_max] (from CITES),
// with at least $min_count of them, strongest first by $measure: 'count' ranks by that in-range count, the other
// measures by the stored all-years CO_CITED strength (0 where the pair has no CO_CITED edge); one page.
// parameters: $measure, $min_count (integer), $year_min, $year_max (integers), $skip, $limit
// returns: source, target, count (citing papers in the range), sentence_count, association, cosine, jaccard, inclusion
//          (the stored all-years values, null without CO_CITED), rank_key
// counted by: count_cocitations_in_years
MATCH (a:Paper)<-[:CITES]-(x:Paper)-[:CITES]->(b:Paper)
WHERE x.year >= $year_min AND x.year <= $year_max AND a.id < b.id
WITH a, b, count(*) AS in_years
WHERE in_years >= $min_count
OPTIONAL MATCH (a)-[c:CO_CITED]-(b)
WITH a, b, in_years, c,
     CASE $measure
       WHEN 'count' THEN in_years * 1.0
       WHEN 'sentence_count' THEN coalesce(c.sentence_count, 0) * 1.0
       WHEN 'association' THEN c.association
       WHEN 'cosine' THEN c.cosine
       WHEN 'jaccard' THEN c.jaccard
       ELSE c.inclusion
     END AS rank_key
RETURN a.id AS source, b.id AS target, in_years AS count, c.sentence_count AS sentence_count,
       c.association AS association, c.cosine AS cosine, c.jaccard AS jaccard, c.inclusion AS inclusion,
       coalesce(rank_key, 0.0) AS rank_key
ORDER BY rank_key DESC, count DESC, source, target
SKIP $skip
LIMIT $limit
