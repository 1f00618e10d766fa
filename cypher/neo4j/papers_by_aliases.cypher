// Stored papers named by other ids of theirs (Alias nodes), for re-keying a batch and for users' ids.
// parameters: $ids (list of ids in the prefixed form of loaders.ids: doi:10.1/x, openalex:W1, ...)
// returns: alias, key
MATCH (a:Alias)-[:ALIAS_OF]->(p:Paper)
WHERE a.id IN $ids
RETURN a.id AS alias, p.id AS key
