// Every paper's co-citation cluster (Paper.cocite_cluster, written by `compute cocitation`), read in bulk.
// parameters: none
// returns: id, cluster (only papers with one)
MATCH (p:Paper)
WHERE p.cocite_cluster IS NOT NULL
RETURN p.id AS id, p.cocite_cluster AS cluster
