// Vector index (HNSW, Neo4j 5.13+) on a node property holding a fixed-size vector; idempotent.
// Cypher users query neighbours with db.index.vector.queryNodes('paper_embedding_vector', k, vector).
// identifiers: __NAME__, __LABEL__, __PROPERTY__
// parameters: $dimensions (the vector size the store was built with), $similarity ('cosine')
// returns: nothing
CREATE VECTOR INDEX __NAME__ IF NOT EXISTS
FOR (n:__LABEL__) ON (n.__PROPERTY__)
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: $similarity}}
