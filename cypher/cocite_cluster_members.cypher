// The works of one co-citation cluster (Paper.cocite_cluster = $cluster), for a map cut to that cluster.
// parameters: $cluster (integer)
// returns: id
MATCH (p:Paper)
WHERE p.cocite_cluster = $cluster
RETURN p.id AS id
