// Papers co-cited with papers of two co-citation clusters (Paper.cocite_cluster), strongest bridges first.
// A bridge's strength is the smaller of its co-citation counts into either cluster; it may belong to either or neither.
// parameters: $cluster_a, $cluster_b (integers), $limit
// returns: id, title, label (the display label: stored label, title, reference, venue volume:page, id), cluster, partners_a, partners_b, cocitations_a, cocitations_b, strength
MATCH (x:Paper)-[ca:CO_CITED]-(a:Paper)
WHERE a.cocite_cluster = $cluster_a
WITH x, count(DISTINCT a) AS partners_a, sum(ca.count) AS cocitations_a
MATCH (x)-[cb:CO_CITED]-(b:Paper)
WHERE b.cocite_cluster = $cluster_b
WITH x, partners_a, cocitations_a, count(DISTINCT b) AS partners_b, sum(cb.count) AS cocitations_b
RETURN x.id AS id, x.title AS title,
       coalesce(CASE WHEN x.label <> '' THEN x.label END, CASE WHEN x.title <> '' THEN x.title END, CASE WHEN x.reference <> '' THEN x.reference END, CASE WHEN x.venue <> '' THEN x.venue + CASE WHEN x.volume <> '' THEN ' ' + x.volume ELSE '' END + CASE WHEN x.first_page <> '' THEN ':' + x.first_page ELSE '' END END, x.id) AS label, x.cocite_cluster AS cluster, partners_a, partners_b,
       cocitations_a, cocitations_b,
       CASE WHEN cocitations_a < cocitations_b THEN cocitations_a ELSE cocitations_b END AS strength
ORDER BY strength DESC, id
LIMIT $limit
