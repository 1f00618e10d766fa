// The ACM classes nearest to an arXiv category in the shared Poincaré ball (SymTax's taxonomy feature), by the
// hyperbolic distance of the stored coordinates (ArxivCategory.poincare, AcmClass.poincare; null until computed):
//   d(u, v) = arcosh(1 + 2‖u − v‖² / ((1 − ‖u‖²)(1 − ‖v‖²)));  see taxonomy_neighbours.cypher for how it is written.
// parameters: $code (e.g. "cs.CL"), $limit
// returns: id, code, name, level, distance, mapped (true when a MAPS_TO edge links the two already)
// example: citegraph cypher --file cypher/explore/category_acm_neighbours.cypher --param code=cs.CL --param limit=10
MATCH (c:ArxivCategory {code: $code})
MATCH (o:AcmClass)
WHERE c.poincare IS NOT NULL AND o.poincare IS NOT NULL
UNWIND range(0, size(c.poincare) - 1) AS i
WITH c, o, c.poincare[i - size(c.poincare)] AS u, o.poincare[i - size(c.poincare)] AS v
WITH c, o, sum((u - v) ^ 2) AS diff2, sum(u ^ 2) AS uu, sum(v ^ 2) AS vv
WITH c, o, 1.0 + 2.0 * diff2 / ((1.0 - uu) * (1.0 - vv)) AS z
OPTIONAL MATCH (c)-[m:MAPS_TO]->(o)
RETURN o.id AS id, o.code AS code, o.name AS name, o.level AS level,
       2.302585092994046 * log10(z + sqrt(z * z - 1.0)) AS distance, m IS NOT NULL AS mapped
ORDER BY distance, id
LIMIT $limit
