// The ACM classes nearest to one ACM class in the Poincaré ball, by the hyperbolic distance of their stored coordinates
// (AcmClass.poincare; null until the taxonomy embedding has been computed, and then this returns nothing):
//   d(u, v) = arcosh(1 + 2‖u − v‖² / ((1 − ‖u‖²)(1 − ‖v‖²))),  arcosh(z) = ln(z + √(z² − 1))   (curvature −1)
// Written for both backends: u[i - size(u)] counts from the end, the same element in Neo4j's 0-based and LadybugDB's
// 1-based lists; ln(x) = ln(10)·log10(x), because log() is natural in Neo4j but base 10 in LadybugDB.
// parameters: $class_id (e.g. "2012:10010147.10010178"), $limit
// returns: id, code, name, level, distance
// example: citegraph cypher --file cypher/explore/taxonomy_neighbours.cypher --param 'class_id="1998:I.2.7"' --param limit=10
MATCH (c:AcmClass {id: $class_id})
MATCH (o:AcmClass)
WHERE o.id <> c.id AND c.poincare IS NOT NULL AND o.poincare IS NOT NULL
UNWIND range(0, size(c.poincare) - 1) AS i
WITH o, c.poincare[i - size(c.poincare)] AS u, o.poincare[i - size(c.poincare)] AS v
WITH o, sum((u - v) ^ 2) AS diff2, sum(u ^ 2) AS uu, sum(v ^ 2) AS vv
WITH o, 1.0 + 2.0 * diff2 / ((1.0 - uu) * (1.0 - vv)) AS z
RETURN o.id AS id, o.code AS code, o.name AS name, o.level AS level,
       2.302585092994046 * log10(z + sqrt(z * z - 1.0)) AS distance
ORDER BY distance, id
LIMIT $limit
