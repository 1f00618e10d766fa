// A source's papers (Paper.venue exactly as stored; sources_by_name finds the spelling), most cited first.
// parameters: $venue (e.g. "Computational Linguistics, Volume 29, Number 1, March 2003"), $limit
// returns: id, label (the display label: stored label, title, reference, venue volume:page, id), title, year, n_cited
// example: citegraph cypher --file cypher/explore/papers_in_source.cypher --param 'venue="Computational Linguistics, Volume 29, Number 1, March 2003"' --param limit=10
MATCH (p:Paper)
WHERE p.venue = $venue
RETURN p.id AS id,
       coalesce(CASE WHEN p.label <> '' THEN p.label END, CASE WHEN p.title <> '' THEN p.title END, CASE WHEN p.reference <> '' THEN p.reference END, CASE WHEN p.venue <> '' THEN p.venue + CASE WHEN p.volume <> '' THEN ' ' + p.volume ELSE '' END + CASE WHEN p.first_page <> '' THEN ':' + p.first_page ELSE '' END END, p.id) AS label,
       p.title AS title, p.year AS year, coalesce(p.n_cited, 0) AS n_cited
ORDER BY n_cited DESC, id
LIMIT $limit
