// How many papers search_papers_in_category would find without a limit (a connection's totalCount).
// parameters: $category, $text (lower-case), $year_min, $year_max (integers)
// returns: n
MATCH (p:Paper)-[:IN_CATEGORY]->(c:ArxivCategory)
WHERE c.code = $category
  AND ($text = '' OR lower(p.title) CONTAINS $text)
  AND coalesce(p.year, 0) >= $year_min
  AND coalesce(p.year, 0) <= $year_max
RETURN count(p) AS n
