// Keys of the given nodes that exist in the store (index lookups on the key constraint).
// identifiers: __LABEL__, __KEY__
// parameters: $keys (list of key values)
// returns: key
UNWIND $keys AS k
MATCH (n:__LABEL__ {__KEY__: k})
RETURN n.__KEY__ AS key
