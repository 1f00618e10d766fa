// Citation paths from one paper to another along CITES (each step: a paper cites the next), one to three hops, grouped by length.
// parameters: $from_id (the citing end), $to_id (the cited end), $limit (most paths per length)
// returns: hops, path (Paper ids from $from_id to $to_id), titles and labels (display labels: stored label, title, reference, venue volume:page, id; in the same order)
// example: citegraph cypher --file cypher/explore/citation_paths.cypher --param from_id=P05-1033 --param to_id=J93-2003 --param limit=5
// (three fixed-length patterns rather than [:CITES*1..3]: both backends then return the intermediate papers alike;
//  neither orders the parts of a UNION ALL, so sort the rows on hops to read the shortest first)
MATCH (a:Paper {id: $from_id})-[:CITES]->(b:Paper {id: $to_id})
RETURN 1 AS hops, [a.id, b.id] AS path, [a.title, b.title] AS titles,
       [coalesce(CASE WHEN a.label <> '' THEN a.label END, CASE WHEN a.title <> '' THEN a.title END, CASE WHEN a.reference <> '' THEN a.reference END, CASE WHEN a.venue <> '' THEN a.venue + CASE WHEN a.volume <> '' THEN ' ' + a.volume ELSE '' END + CASE WHEN a.first_page <> '' THEN ':' + a.first_page ELSE '' END END, a.id),
        coalesce(CASE WHEN b.label <> '' THEN b.label END, CASE WHEN b.title <> '' THEN b.title END, CASE WHEN b.reference <> '' THEN b.reference END, CASE WHEN b.venue <> '' THEN b.venue + CASE WHEN b.volume <> '' THEN ' ' + b.volume ELSE '' END + CASE WHEN b.first_page <> '' THEN ':' + b.first_page ELSE '' END END, b.id)] AS labels
UNION ALL
MATCH (a:Paper {id: $from_id})-[:CITES]->(x:Paper)-[:CITES]->(b:Paper {id: $to_id})
WHERE x.id <> a.id AND x.id <> b.id
RETURN 2 AS hops, [a.id, x.id, b.id] AS path, [a.title, x.title, b.title] AS titles,
       [coalesce(CASE WHEN a.label <> '' THEN a.label END, CASE WHEN a.title <> '' THEN a.title END, CASE WHEN a.reference <> '' THEN a.reference END, CASE WHEN a.venue <> '' THEN a.venue + CASE WHEN a.volume <> '' THEN ' ' + a.volume ELSE '' END + CASE WHEN a.first_page <> '' THEN ':' + a.first_page ELSE '' END END, a.id),
        coalesce(CASE WHEN x.label <> '' THEN x.label END, CASE WHEN x.title <> '' THEN x.title END, CASE WHEN x.reference <> '' THEN x.reference END, CASE WHEN x.venue <> '' THEN x.venue + CASE WHEN x.volume <> '' THEN ' ' + x.volume ELSE '' END + CASE WHEN x.first_page <> '' THEN ':' + x.first_page ELSE '' END END, x.id),
        coalesce(CASE WHEN b.label <> '' THEN b.label END, CASE WHEN b.title <> '' THEN b.title END, CASE WHEN b.reference <> '' THEN b.reference END, CASE WHEN b.venue <> '' THEN b.venue + CASE WHEN b.volume <> '' THEN ' ' + b.volume ELSE '' END + CASE WHEN b.first_page <> '' THEN ':' + b.first_page ELSE '' END END, b.id)] AS labels
ORDER BY x.id
LIMIT $limit
UNION ALL
MATCH (a:Paper {id: $from_id})-[:CITES]->(x:Paper)-[:CITES]->(y:Paper)-[:CITES]->(b:Paper {id: $to_id})
WHERE x.id <> y.id AND NOT x.id IN [a.id, b.id] AND NOT y.id IN [a.id, b.id]
RETURN 3 AS hops, [a.id, x.id, y.id, b.id] AS path, [a.title, x.title, y.title, b.title] AS titles,
       [coalesce(CASE WHEN a.label <> '' THEN a.label END, CASE WHEN a.title <> '' THEN a.title END, CASE WHEN a.reference <> '' THEN a.reference END, CASE WHEN a.venue <> '' THEN a.venue + CASE WHEN a.volume <> '' THEN ' ' + a.volume ELSE '' END + CASE WHEN a.first_page <> '' THEN ':' + a.first_page ELSE '' END END, a.id),
        coalesce(CASE WHEN x.label <> '' THEN x.label END, CASE WHEN x.title <> '' THEN x.title END, CASE WHEN x.reference <> '' THEN x.reference END, CASE WHEN x.venue <> '' THEN x.venue + CASE WHEN x.volume <> '' THEN ' ' + x.volume ELSE '' END + CASE WHEN x.first_page <> '' THEN ':' + x.first_page ELSE '' END END, x.id),
        coalesce(CASE WHEN y.label <> '' THEN y.label END, CASE WHEN y.title <> '' THEN y.title END, CASE WHEN y.reference <> '' THEN y.reference END, CASE WHEN y.venue <> '' THEN y.venue + CASE WHEN y.volume <> '' THEN ' ' + y.volume ELSE '' END + CASE WHEN y.first_page <> '' THEN ':' + y.first_page ELSE '' END END, y.id),
        coalesce(CASE WHEN b.label <> '' THEN b.label END, CASE WHEN b.title <> '' THEN b.title END, CASE WHEN b.reference <> '' THEN b.reference END, CASE WHEN b.venue <> '' THEN b.venue + CASE WHEN b.volume <> '' THEN ' ' + b.volume ELSE '' END + CASE WHEN b.first_page <> '' THEN ':' + b.first_page ELSE '' END END, b.id)] AS labels
ORDER BY x.id, y.id
LIMIT $limit
