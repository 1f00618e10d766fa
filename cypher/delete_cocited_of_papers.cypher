// Delete every CO_CITED edge that touches one of the given papers, before an update writes them again
// (gnn/cocitation/delta.py); each edge once, whichever end is given.
// parameters: $ids (list of Paper ids)
// returns: nothing
MATCH (a:Paper)-[r:CO_CITED]->(b:Paper)
WHERE a.id IN $ids OR b.id IN $ids
DELETE r
