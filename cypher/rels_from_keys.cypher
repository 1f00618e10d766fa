// Every relationship of one type leaving the given start nodes, with endpoint keys and stored properties.
// identifiers: __SOURCE__, __SOURCE_KEY__, __TYPE__, __TARGET__, __TARGET_KEY__, __COLUMNS__ (", r.p AS p" per property, or empty)
// parameters: $keys (list of start-node key values)
// returns: source, target, one column per property
UNWIND $keys AS k
MATCH (a:__SOURCE__ {__SOURCE_KEY__: k})-[r:__TYPE__]->(b:__TARGET__)
RETURN a.__SOURCE_KEY__ AS source, b.__TARGET_KEY__ AS target__COLUMNS__
