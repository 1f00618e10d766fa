// How a historiograph names its works: the title, and the label a cited reference carries.
// parameters: $ids (list of Paper ids)
// returns: id, title, label
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id, p.title AS title, p.label AS label
