// Papers of one arXiv category whose title contains the given text (case-insensitive; '' matches
// every title) within a year range, most cited first; one page of $limit after $skip.
// parameters: $category (ArxivCategory code), $text (lower-case), $year_min, $year_max (integers), $skip, $limit
// returns: id, rank_key
// counted by: count_papers_in_category
MATCH (p:Paper)-[:IN_CATEGORY]->(c:ArxivCategory)
WHERE c.code = $category
  AND ($text = '' OR lower(p.title) CONTAINS $text)
  AND coalesce(p.year, 0) >= $year_min
  AND coalesce(p.year, 0) <= $year_max
RETURN p.id AS id, coalesce(p.n_cited, 0) AS rank_key
ORDER BY rank_key DESC, id
SKIP $skip
LIMIT $limit
