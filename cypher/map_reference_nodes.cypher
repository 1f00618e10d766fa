// What a reference co-citation map shows of its works: display label, year, co-citation cluster, strongest
// citation burst, betweenness and sigma (gnn/mapping/cited.py reads it for the nodes it keeps).
// parameters: $ids (list of Paper ids)
// returns: id, label (the display label, graph/labels.py), title, year, cluster (Paper.cocite_cluster),
//          burst_strength, burst_begin, burst_end, betweenness, sigma
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id,
       coalesce(CASE WHEN p.label <> '' THEN p.label END, CASE WHEN p.title <> '' THEN p.title END,
                CASE WHEN p.reference <> '' THEN p.reference END,
                CASE WHEN p.venue <> '' THEN p.venue + CASE WHEN p.volume <> '' THEN ' ' + p.volume ELSE '' END
                                          + CASE WHEN p.first_page <> '' THEN ':' + p.first_page ELSE '' END
                END, p.id) AS label,
       p.title AS title, p.year AS year, p.cocite_cluster AS cluster,
       p.burst_strength AS burst_strength, p.burst_begin AS burst_begin, p.burst_end AS burst_end,
       p.betweenness AS betweenness, p.sigma AS sigma
