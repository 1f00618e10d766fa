// Every relationship of one type arriving at the given end nodes, with endpoint keys and stored properties
// (the other half of rels_from_keys: what graph/works.py moves from a merged work's incoming edges).
// identifiers: __SOURCE__, __SOURCE_KEY__, __TYPE__, __TARGET__, __TARGET_KEY__, __COLUMNS__ (", r.p AS p" per property, or empty)
// parameters: $keys (list of end-node key values)
// returns: source, target, one column per property
UNWIND $keys AS k
MATCH (a:__SOURCE__)-[r:__TYPE__]->(b:__TARGET__ {__TARGET_KEY__: k})
RETURN a.__SOURCE_KEY__ AS source, b.__TARGET_KEY__ AS target__COLUMNS__
