// The keywords named: their display name, kind and stored co-occurrence cluster (gnn.mapping.keywords).
// parameters: ids (list of Keyword ids)
// returns: id, name, kind, cluster (null before `citegraph compute thematic-map`), cluster_label
MATCH (k:Keyword)
WHERE k.id IN $ids
RETURN k.id AS id, k.name AS name, k.kind AS kind, k.cluster AS cluster, k.cluster_label AS cluster_label
