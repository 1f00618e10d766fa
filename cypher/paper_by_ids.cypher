// Papers by id, for the API's batched loaders.
// parameters: $ids (list of Paper ids)
// returns: id, title, abstract, year, venue, doi, arxiv_id, n_cited, stub, reference
UNWIND $ids AS wanted
MATCH (p:Paper {id: wanted})
RETURN p.id AS id, p.title AS title, p.abstract AS abstract, p.year AS year, p.venue AS venue,
       p.doi AS doi, p.arxiv_id AS arxiv_id, p.n_cited AS n_cited, p.stub AS stub,
       p.reference AS reference
