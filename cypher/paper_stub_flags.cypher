// Which of the given papers are stored as full papers (stub false or null) rather than stubs.
// parameters: $ids (list of Paper ids)
// returns: id, stub
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id, p.stub AS stub
