// Upsert a batch of relationships between existing nodes.
// identifiers: __SOURCE__, __SOURCE_KEY__, __TARGET__, __TARGET_KEY__, __TYPE__,
//              __IDENTITY__ (" {p: row.identity.p, ...}" for types whose identity includes properties, or empty)
// parameters: $rows (list of {source, target, identity, props})
// returns: nothing (counters tell created relationships)
UNWIND $rows AS row
MATCH (a:__SOURCE__ {__SOURCE_KEY__: row.source})
MATCH (b:__TARGET__ {__TARGET_KEY__: row.target})
MERGE (a)-[r:__TYPE____IDENTITY__]->(b)
SET r += row.props
