// How often two papers were co-cited per year of the citing paper (papers citing both, by their year).
// parameters: $paper_a, $paper_b (Paper ids)
// returns: year, citing_papers
MATCH (a:Paper {id: $paper_a})<-[:CITES]-(c:Paper)-[:CITES]->(b:Paper {id: $paper_b})
RETURN c.year AS year, count(DISTINCT c) AS citing_papers
ORDER BY year
