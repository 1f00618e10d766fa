// Papers of each given author, newest first; the caller pages per author.
// parameters: $ids (list of Author ids)
// returns: author_id, paper_id, rank_key (year, 0 when unknown)
MATCH (a:Author)-[:WROTE]->(p:Paper)
WHERE a.id IN $ids
RETURN a.id AS author_id, p.id AS paper_id, coalesce(p.year, 0) AS rank_key
ORDER BY author_id, rank_key DESC, paper_id
