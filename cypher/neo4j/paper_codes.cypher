// Every Paper with its code (the key itself: Neo4j has no stable dense integer node code) and title.
// returns: code (Paper id), id, title
MATCH (p:Paper)
RETURN p.id AS code, p.id AS id, p.title AS title
