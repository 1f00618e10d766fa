// The documents behind a link of the COAUTHORS map: the papers both authors wrote, in the map's year window;
// newest first, then by id.
// parameters: $source, $target (Author ids: the link's ends), $windowed (true: only papers dated inside the window;
//   false: every one), $year_min, $year_max (the window, inclusive; ignored when $windowed is false)
// returns: id (the co-authored paper), year (null when unknown)
MATCH (a:Author {id: $source})-[:WROTE]->(p:Paper)<-[:WROTE]-(b:Author {id: $target})
WHERE NOT $windowed OR (p.year IS NOT NULL AND p.year >= $year_min AND p.year <= $year_max)
RETURN DISTINCT p.id AS id, p.year AS year
ORDER BY coalesce(year, 0) DESC, id
