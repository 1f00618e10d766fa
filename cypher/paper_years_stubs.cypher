// Every paper's year and stub flag: which works are records of the loaded collection (stub not true) and
// when each was published; citation bursts and the historiograph read it in bulk (as Arrow).
// parameters: none
// returns: id, year (null when unknown), stub (null for loaders that do not set it)
MATCH (p:Paper)
RETURN p.id AS id, p.year AS year, p.stub AS stub
