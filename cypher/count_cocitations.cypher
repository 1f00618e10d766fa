// How many co-cited pairs of the whole store have CO_CITED.count >= $min_count (top_cocitations without a limit).
// parameters: $min_count (integer)
// returns: n
MATCH (a:Paper)-[c:CO_CITED]->(b:Paper)
WHERE c.count >= $min_count
RETURN count(*) AS n
