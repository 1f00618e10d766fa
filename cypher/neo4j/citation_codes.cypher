// Every citation as a pair of Paper codes, for bulk reads. Neo4j has no stable dense integer node code
// (id() is deprecated), so the code is the Paper key itself; the caller maps keys to positions.
// returns: citing, cited (Paper ids)
MATCH (a:Paper)-[:CITES]->(b:Paper)
RETURN a.id AS citing, b.id AS cited
