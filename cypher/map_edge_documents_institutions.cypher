// The documents behind a link of the INSTITUTIONS map: the papers with authors at both institutions, in the map's
// year window; newest first, then by id.
// parameters: $source, $target (Institution ids: the link's ends), $windowed (true: only papers dated inside the
//   window; false: every one), $year_min, $year_max (the window, inclusive; ignored when $windowed is false)
// returns: id (the paper), year (null when unknown)
MATCH (a:Institution {id: $source})<-[:AFFILIATION]-(p:Paper)-[:AFFILIATION]->(b:Institution {id: $target})
WHERE NOT $windowed OR (p.year IS NOT NULL AND p.year >= $year_min AND p.year <= $year_max)
RETURN DISTINCT p.id AS id, p.year AS year
ORDER BY coalesce(year, 0) DESC, id
