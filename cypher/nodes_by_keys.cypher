// The given nodes with their stored properties (one page of a label, for copies and bulk exports).
// identifiers: __LABEL__, __KEY__, __NODE_COLUMNS__ (", n.p AS p" per property other than the key, or empty)
// parameters: $keys (list of key values)
// returns: key, one column per property
UNWIND $keys AS k
MATCH (n:__LABEL__ {__KEY__: k})
RETURN n.__KEY__ AS key__NODE_COLUMNS__
