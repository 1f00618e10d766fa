// An author's papers, newest first, with their position in the author list.
// parameters: $author_id, $limit
// returns: id, title, label (the display label: stored label, title, reference, venue volume:page, id), year, venue, position
MATCH (a:Author {id: $author_id})-[w:WROTE]->(p:Paper)
RETURN p.id AS id, p.title AS title,
       coalesce(CASE WHEN p.label <> '' THEN p.label END, CASE WHEN p.title <> '' THEN p.title END, CASE WHEN p.reference <> '' THEN p.reference END, CASE WHEN p.venue <> '' THEN p.venue + CASE WHEN p.volume <> '' THEN ' ' + p.volume ELSE '' END + CASE WHEN p.first_page <> '' THEN ':' + p.first_page ELSE '' END END, p.id) AS label, p.year AS year, p.venue AS venue, w.position AS position
ORDER BY year DESC, id
LIMIT $limit
