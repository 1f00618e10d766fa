// A paper's ego network: the paper, every paper it cites or is cited by, and every citation among them.
// parameters: $paper_id, $limit (most edges returned)
// returns: source, source_title, target, target_title, n_contexts, touches_paper (true when the edge has $paper_id at one end)
// example: citegraph cypher --file cypher/explore/ego_network.cypher --param paper_id=A00-1031 --param limit=20
MATCH (p:Paper {id: $paper_id})-[:CITES]-(q:Paper)
WITH collect(q.id) AS neighbours
WITH neighbours + [$paper_id] AS members
MATCH (a:Paper)-[c:CITES]->(b:Paper)
WHERE a.id IN members AND b.id IN members
RETURN a.id AS source, a.title AS source_title, b.id AS target, b.title AS target_title, c.n_contexts AS n_contexts,
       (a.id = $paper_id OR b.id = $paper_id) AS touches_paper
ORDER BY touches_paper DESC, source, target
LIMIT $limit
