// Sources (the venue papers name: journals, proceedings) whose name contains a text (case-insensitive), most papers
// first, with how often their papers are cited.
// parameters: $text (e.g. "linguistics"), $limit
// returns: source, papers, citations (their n_cited summed), first_year, last_year
// example: citegraph cypher --file cypher/explore/sources_by_name.cypher --param 'text="linguistics"' --param limit=10
MATCH (p:Paper)
WHERE $text <> '' AND lower(p.venue) CONTAINS lower($text)
RETURN p.venue AS source, count(*) AS papers, sum(coalesce(p.n_cited, 0)) AS citations,
       min(p.year) AS first_year, max(p.year) AS last_year
ORDER BY papers DESC, source
LIMIT $limit
