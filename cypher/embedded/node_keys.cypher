// Keys of the given nodes that exist in the store (the embedded store scans the key column, which is fast).
// identifiers: __LABEL__, __KEY__
// parameters: $keys (ignored here: the caller intersects)
// returns: key
MATCH (n:__LABEL__) RETURN n.__KEY__ AS key
