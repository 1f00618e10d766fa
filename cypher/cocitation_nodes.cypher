// The attributes a co-citation network shows for its papers (exports, cluster labels).
// parameters: $ids (list of Paper ids)
// returns: id, title, year, n_cited, cluster (Paper.cocite_cluster)
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id, p.title AS title, p.year AS year, p.n_cited AS n_cited, p.cocite_cluster AS cluster
