// Stored papers named by other ids of theirs (Alias nodes), for re-keying a batch and for users' ids.
// One key lookup per id: LadybugDB tests `a.id IN $ids` against the whole list for every alias (50k ids
// against 200k aliases: 31 s, this form 0.3 s), which made each batch of a large load slower than the last.
// parameters: $ids (list of ids in the prefixed form of loaders.ids: doi:10.1/x, openalex:W1, ...)
// returns: alias, key
UNWIND $ids AS wanted
MATCH (a:Alias {id: wanted})-[:ALIAS_OF]->(p:Paper)
RETURN a.id AS alias, p.id AS key
