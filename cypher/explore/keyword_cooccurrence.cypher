// Keyword co-occurrence (bibliometrix's co-occurrence network): the pairs of keywords of one kind that the most
// documents of a year range carry together, with each keyword's own documents in that range and the cluster
// `citegraph compute thematic-map` stored (null before it runs).
// parameters: $kind (author, plus, index, openalex_keyword, topic or field_of_study), $year_min, $year_max (integers), $min_count (integer, at least 1), $limit
// returns: keyword_a, keyword_b (names), documents (carrying both), documents_a, documents_b, cluster_a, cluster_b
// example: citegraph cypher --file cypher/explore/keyword_cooccurrence.cypher --param kind=author --param year_min=2000 --param year_max=2030 --param min_count=2 --param limit=10
MATCH (a:Keyword)<-[:HAS_KEYWORD]-(p:Paper)-[:HAS_KEYWORD]->(b:Keyword)
WHERE a.kind = $kind AND b.kind = $kind AND a.id < b.id AND p.year >= $year_min AND p.year <= $year_max
WITH a, b, count(DISTINCT p) AS documents
WHERE documents >= $min_count
MATCH (a)<-[:HAS_KEYWORD]-(pa:Paper)
WHERE pa.year >= $year_min AND pa.year <= $year_max
WITH a, b, documents, count(DISTINCT pa) AS documents_a
MATCH (b)<-[:HAS_KEYWORD]-(pb:Paper)
WHERE pb.year >= $year_min AND pb.year <= $year_max
RETURN a.name AS keyword_a, b.name AS keyword_b, documents, documents_a, count(DISTINCT pb) AS documents_b,
       a.cluster AS cluster_a, b.cluster AS cluster_b
ORDER BY documents DESC, keyword_a, keyword_b
LIMIT $limit
