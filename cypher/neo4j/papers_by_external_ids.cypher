// Stored papers whose doi or arxiv_id property is one of the given values (papers loaded before aliases).
// parameters: $dois (lower-case DOIs without prefix), $arxiv_ids (arXiv ids without prefix or version)
// returns: key, doi, arxiv_id
MATCH (p:Paper)
WHERE p.doi IN $dois OR p.arxiv_id IN $arxiv_ids
RETURN p.id AS key, p.doi AS doi, p.arxiv_id AS arxiv_id
