// Papers whose title contains the given text (case-insensitive) within a year range, most cited
// first; one page of $limit after $skip.
// parameters: $text (lower-case), $year_min, $year_max (integers; pass wide bounds for open ends), $skip, $limit
// returns: id
// counted by: count_papers_by_title
MATCH (p:Paper)
WHERE lower(p.title) CONTAINS $text
  AND coalesce(p.year, 0) >= $year_min
  AND coalesce(p.year, 0) <= $year_max
RETURN p.id AS id, coalesce(p.n_cited, 0) AS rank_key
ORDER BY rank_key DESC, id
SKIP $skip
LIMIT $limit
