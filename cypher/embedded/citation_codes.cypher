// Every citation as a pair of integer node codes (the engine's row offsets in the Paper table), for bulk reads as Arrow.
// Map codes to Paper ids with paper_codes. LadybugDB's offset(id(n)) is dense per node table.
// returns: citing, cited (INT64 codes)
MATCH (a:Paper)-[:CITES]->(b:Paper)
RETURN offset(id(a)) AS citing, offset(id(b)) AS cited
