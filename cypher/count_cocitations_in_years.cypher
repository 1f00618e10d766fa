// How many pairs top_cocitations_in_years finds without a limit: pairs co-cited by at least $min_count citing papers
// published in [$year_min, $year_max].
// parameters: $min_count (integer), $year_min, $year_max (integers)
// returns: n
MATCH (a:Paper)<-[:CITES]-(x:Paper)-[:CITES]->(b:Paper)
WHERE x.year >= $year_min AND x.year <= $year_max AND a.id < b.id
WITH a, b, count(*) AS in_years
WHERE in_years >= $min_count
RETURN count(*) AS n
