// Every Paper with its integer node code (row offset in the Paper table, as citation_codes returns it) and title.
// returns: code (INT64), id, title
MATCH (p:Paper)
RETURN offset(id(p)) AS code, p.id AS id, p.title AS title
