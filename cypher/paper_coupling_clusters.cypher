// Every paper's bibliographic coupling cluster (Paper.coupling_cluster, written by `compute coupling`), read in bulk.
// parameters: none
// returns: id, cluster (only papers with one)
MATCH (p:Paper)
WHERE p.coupling_cluster IS NOT NULL
RETURN p.id AS id, p.coupling_cluster AS cluster
