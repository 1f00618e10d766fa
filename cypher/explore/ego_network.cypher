// A paper's ego network: the paper, every paper it cites or is cited by, and every citation among them.
// parameters: $paper_id, $limit (most edges returned)
// returns: source, source_title, source_label, target, target_title, target_label (display labels: stored label,
//          title, reference, venue volume:page, id), n_contexts, touches_paper (true when the edge has $paper_id at one end)
// example: citegraph cypher --file cypher/explore/ego_network.cypher --param paper_id=A00-1031 --param limit=20
MATCH (p:Paper {id: $paper_id})-[:CITES]-(q:Paper)
WITH collect(q.id) AS neighbours
WITH neighbours + [$paper_id] AS members
MATCH (a:Paper)-[c:CITES]->(b:Paper)
WHERE a.id IN members AND b.id IN members
RETURN a.id AS source, a.title AS source_title,
       coalesce(CASE WHEN a.label <> '' THEN a.label END, CASE WHEN a.title <> '' THEN a.title END, CASE WHEN a.reference <> '' THEN a.reference END, CASE WHEN a.venue <> '' THEN a.venue + CASE WHEN a.volume <> '' THEN ' ' + a.volume ELSE '' END + CASE WHEN a.first_page <> '' THEN ':' + a.first_page ELSE '' END END, a.id) AS source_label, b.id AS target, b.title AS target_title,
       coalesce(CASE WHEN b.label <> '' THEN b.label END, CASE WHEN b.title <> '' THEN b.title END, CASE WHEN b.reference <> '' THEN b.reference END, CASE WHEN b.venue <> '' THEN b.venue + CASE WHEN b.volume <> '' THEN ' ' + b.volume ELSE '' END + CASE WHEN b.first_page <> '' THEN ':' + b.first_page ELSE '' END END, b.id) AS target_label, c.n_contexts AS n_contexts,
       (a.id = $paper_id OR b.id = $paper_id) AS touches_paper
ORDER BY touches_paper DESC, source, target
LIMIT $limit
