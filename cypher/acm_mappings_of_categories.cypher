// The ACM classes each given arXiv category maps to (MAPS_TO), highest score first.
// parameters: $codes (list of ArxivCategory codes)
// returns: code, acm_id, score, inferred
MATCH (c:ArxivCategory)-[m:MAPS_TO]->(a:AcmClass)
WHERE c.code IN $codes
RETURN c.code AS code, a.id AS acm_id, m.score AS score, m.inferred AS inferred
ORDER BY code, score DESC, acm_id
