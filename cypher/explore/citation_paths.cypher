// Citation paths from one paper to another along CITES (each step: a paper cites the next), one to three hops, grouped by length.
// parameters: $from_id (the citing end), $to_id (the cited end), $limit (most paths per length)
// returns: hops, path (Paper ids from $from_id to $to_id), titles (in the same order)
// example: citegraph cypher --file cypher/explore/citation_paths.cypher --param from_id=P05-1033 --param to_id=J93-2003 --param limit=5
// (three fixed-length patterns rather than [:CITES*1..3]: both backends then return the intermediate papers alike;
//  neither orders the parts of a UNION ALL, so sort the rows on hops to read the shortest first)
MATCH (a:Paper {id: $from_id})-[:CITES]->(b:Paper {id: $to_id})
RETURN 1 AS hops, [a.id, b.id] AS path, [a.title, b.title] AS titles
UNION ALL
MATCH (a:Paper {id: $from_id})-[:CITES]->(x:Paper)-[:CITES]->(b:Paper {id: $to_id})
WHERE x.id <> a.id AND x.id <> b.id
RETURN 2 AS hops, [a.id, x.id, b.id] AS path, [a.title, x.title, b.title] AS titles
ORDER BY x.id
LIMIT $limit
UNION ALL
MATCH (a:Paper {id: $from_id})-[:CITES]->(x:Paper)-[:CITES]->(y:Paper)-[:CITES]->(b:Paper {id: $to_id})
WHERE x.id <> y.id AND NOT x.id IN [a.id, b.id] AND NOT y.id IN [a.id, b.id]
RETURN 3 AS hops, [a.id, x.id, y.id, b.id] AS path, [a.title, x.title, y.title, b.title] AS titles
ORDER BY x.id, y.id
LIMIT $limit
