// The documents behind a link of the REFERENCES map: the papers citing both works (co-citation), in the map's
// year window of citing documents; newest first, then by id.
// parameters: $source, $target (Paper ids: the link's ends), $windowed (true: only papers dated inside the window;
//   false: every one), $year_min, $year_max (the window, inclusive; ignored when $windowed is false)
// returns: id (the citing paper), year (null when unknown)
MATCH (a:Paper {id: $source})<-[:CITES]-(x:Paper)-[:CITES]->(b:Paper {id: $target})
WHERE NOT $windowed OR (x.year IS NOT NULL AND x.year >= $year_min AND x.year <= $year_max)
RETURN DISTINCT x.id AS id, x.year AS year
ORDER BY coalesce(year, 0) DESC, id
