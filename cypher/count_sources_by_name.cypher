// How many sources search_sources finds without a limit.
// parameters: $text (lower-case)
// returns: n
MATCH (p:Paper)
WHERE lower(p.venue) CONTAINS $text
WITH DISTINCT p.venue AS name
RETURN count(*) AS n
