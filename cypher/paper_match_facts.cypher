// What a join through a reference's key is checked against (graph/aliases.py): the stored paper's year and
// stored label ("Goos F, 1947, Ann Phys-Berlin 1:333": its first author), and whether it is a stub.
// parameters: $ids (list of Paper ids)
// returns: id, year, label, stub
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id, p.year AS year, p.label AS label, p.stub AS stub
