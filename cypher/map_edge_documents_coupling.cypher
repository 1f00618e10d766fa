// The documents behind a link of the COUPLING map: the works both coupled papers cite (their shared references);
// newest first, then by id. The map's year window bounds the coupled papers themselves, not what they cite.
// parameters: $source, $target (Paper ids: the coupled papers)
// returns: id (a work both cite), year (null when unknown)
MATCH (a:Paper {id: $source})-[:CITES]->(w:Paper)<-[:CITES]-(b:Paper {id: $target})
RETURN DISTINCT w.id AS id, w.year AS year
ORDER BY coalesce(year, 0) DESC, id
