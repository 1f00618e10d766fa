// Sources (Paper.venue: journals, proceedings) whose name contains the given text (case-insensitive), most papers
// first; one page of $limit after $skip.
// parameters: $text (lower-case), $skip, $limit
// returns: name, papers (how many papers name it as their venue)
// counted by: count_sources_by_name
MATCH (p:Paper)
WHERE lower(p.venue) CONTAINS $text
RETURN p.venue AS name, count(*) AS papers
ORDER BY papers DESC, name
SKIP $skip
LIMIT $limit
