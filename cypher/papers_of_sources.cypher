// Papers of each given source (Paper.venue), most cited first; the caller pages per source.
// parameters: $names (list of venue names, exactly as stored)
// returns: name, paper_id, rank_key (n_cited, 0 when unknown)
MATCH (p:Paper)
WHERE p.venue IN $names
RETURN p.venue AS name, p.id AS paper_id, coalesce(p.n_cited, 0) AS rank_key
ORDER BY name, rank_key DESC, paper_id
