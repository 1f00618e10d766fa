// The most cited papers (by n_cited, computed by `citegraph compute cocitation`) in a year range.
// parameters: $year_min, $year_max (integers), $limit
// returns: id, title, year, venue, n_cited
MATCH (p:Paper)
WHERE p.year >= $year_min AND p.year <= $year_max AND p.n_cited > 0
RETURN p.id AS id, p.title AS title, p.year AS year, p.venue AS venue, p.n_cited AS n_cited
ORDER BY n_cited DESC, id
LIMIT $limit
