// How many papers search_papers_by_title would find without a limit (a connection's totalCount).
// parameters: $text (lower-case), $year_min, $year_max (integers)
// returns: n
MATCH (p:Paper)
WHERE lower(p.title) CONTAINS $text
  AND coalesce(p.year, 0) >= $year_min
  AND coalesce(p.year, 0) <= $year_max
RETURN count(p) AS n
