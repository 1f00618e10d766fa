// A paper's co-citation cluster (Paper.cocite_cluster, from `citegraph compute cocitation`) and its bridges: the
// cluster's members ranked by their co-citation links inside it, then papers of other clusters co-cited with members.
// parameters: $paper_id, $limit
// returns: id, title, label (the display label: stored label, title, reference, venue volume:page, id), cluster, role ('member' or 'bridge'), partners (members it is co-cited with), cocitations (their CO_CITED counts summed, as a float)
// example: citegraph cypher --file cypher/explore/cocitation_cluster.cypher --param paper_id=J93-2003 --param limit=15
MATCH (p:Paper {id: $paper_id})
MATCH (m:Paper)-[c:CO_CITED]-(x:Paper)
WHERE m.cocite_cluster = p.cocite_cluster
WITH p.cocite_cluster AS home, x, count(*) AS partners, sum(1.0 * c.count) AS cocitations
RETURN x.id AS id, x.title AS title,
       coalesce(CASE WHEN x.label <> '' THEN x.label END, CASE WHEN x.title <> '' THEN x.title END, CASE WHEN x.reference <> '' THEN x.reference END, CASE WHEN x.venue <> '' THEN x.venue + CASE WHEN x.volume <> '' THEN ' ' + x.volume ELSE '' END + CASE WHEN x.first_page <> '' THEN ':' + x.first_page ELSE '' END END, x.id) AS label, x.cocite_cluster AS cluster,
       CASE WHEN x.cocite_cluster = home THEN 'member' ELSE 'bridge' END AS role, partners, cocitations
ORDER BY role DESC, partners DESC, cocitations DESC, id
LIMIT $limit
