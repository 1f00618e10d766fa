// The ACM classes an arXiv category maps to, with whether the mapping was inferred.
// parameters: $code (e.g. "cs.CL")
// returns: acm_id, acm_name, score, inferred
MATCH (c:ArxivCategory {code: $code})-[m:MAPS_TO]->(a:AcmClass)
RETURN a.id AS acm_id, a.name AS acm_name, m.score AS score, m.inferred AS inferred
ORDER BY acm_id
