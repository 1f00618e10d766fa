// Every arXiv category (the flat arXiv taxonomy), by code.
// returns: code, name, description
MATCH (c:ArxivCategory)
RETURN c.code AS code, c.name AS name, c.description AS description
ORDER BY code
