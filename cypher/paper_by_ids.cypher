// Papers by id, for the API's batched loaders.
// parameters: $ids (list of Paper ids)
// returns: id, title, abstract, year, venue, doi, arxiv_id, n_cited, stub, reference,
//          label (the display label, graph/labels.py), volume, first_page,
//          burst_strength, burst_begin, burst_end, betweenness, sigma (compute mapping; null before)
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id, p.title AS title, p.abstract AS abstract, p.year AS year, p.venue AS venue,
       p.doi AS doi, p.arxiv_id AS arxiv_id, p.n_cited AS n_cited, p.stub AS stub,
       p.reference AS reference,
       coalesce(CASE WHEN p.label <> '' THEN p.label END, CASE WHEN p.title <> '' THEN p.title END,
                CASE WHEN p.reference <> '' THEN p.reference END,
                CASE WHEN p.venue <> '' THEN p.venue + CASE WHEN p.volume <> '' THEN ' ' + p.volume ELSE '' END
                                          + CASE WHEN p.first_page <> '' THEN ':' + p.first_page ELSE '' END
                END, p.id) AS label,
       p.volume AS volume, p.first_page AS first_page,
       p.burst_strength AS burst_strength, p.burst_begin AS burst_begin, p.burst_end AS burst_end,
       p.betweenness AS betweenness, p.sigma AS sigma
