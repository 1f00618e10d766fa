// The most cited papers (by n_cited, computed by `citegraph compute cocitation`) in a year range.
// parameters: $year_min, $year_max (integers), $limit
// returns: id, title, label (the display label: stored label, title, reference, venue volume:page, id), year, venue, n_cited
MATCH (p:Paper)
WHERE p.year >= $year_min AND p.year <= $year_max AND p.n_cited > 0
RETURN p.id AS id, p.title AS title,
       coalesce(CASE WHEN p.label <> '' THEN p.label END, CASE WHEN p.title <> '' THEN p.title END, CASE WHEN p.reference <> '' THEN p.reference END, CASE WHEN p.venue <> '' THEN p.venue + CASE WHEN p.volume <> '' THEN ' ' + p.volume ELSE '' END + CASE WHEN p.first_page <> '' THEN ':' + p.first_page ELSE '' END END, p.id) AS label, p.year AS year, p.venue AS venue, p.n_cited AS n_cited
ORDER BY n_cited DESC, id
LIMIT $limit
