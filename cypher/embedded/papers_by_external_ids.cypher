// Stored papers whose doi or arxiv_id property is one of the given values (papers loaded before aliases).
// An equality join per list: LadybugDB tests `p.doi IN $dois` against the whole list for every paper
// (20k DOIs against 200k papers: 30 s, this form 0.1 s).
// parameters: $dois (lower-case DOIs without prefix), $arxiv_ids (arXiv ids without prefix or version)
// returns: key, doi, arxiv_id
UNWIND $dois AS wanted
MATCH (p:Paper)
WHERE p.doi = wanted
RETURN p.id AS key, p.doi AS doi, p.arxiv_id AS arxiv_id
UNION
UNWIND $arxiv_ids AS wanted
MATCH (p:Paper)
WHERE p.arxiv_id = wanted
RETURN p.id AS key, p.doi AS doi, p.arxiv_id AS arxiv_id
