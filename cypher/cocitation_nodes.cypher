// The attributes a co-citation network shows for its papers (exports, network views, cluster labels).
// parameters: $ids (list of Paper ids)
// returns: id, label (the display label, graph/labels.py), title, year, n_cited, cluster (Paper.cocite_cluster)
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id,
       coalesce(CASE WHEN p.label <> '' THEN p.label END, CASE WHEN p.title <> '' THEN p.title END,
                CASE WHEN p.reference <> '' THEN p.reference END,
                CASE WHEN p.venue <> '' THEN p.venue + CASE WHEN p.volume <> '' THEN ' ' + p.volume ELSE '' END
                                          + CASE WHEN p.first_page <> '' THEN ':' + p.first_page ELSE '' END
                END, p.id) AS label,
       p.title AS title, p.year AS year, p.n_cited AS n_cited, p.cocite_cluster AS cluster
