// Every key of one label (to page through the label in key order: see nodes_by_keys).
// identifiers: __LABEL__, __KEY__
// returns: key
MATCH (n:__LABEL__) RETURN n.__KEY__ AS key
