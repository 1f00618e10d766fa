// Authors by id, for the API's batched loaders.
// parameters: $ids (list of Author ids)
// returns: id, name
UNWIND $ids AS wanted
MATCH (a:Author {id: wanted})
RETURN a.id AS id, a.name AS name
