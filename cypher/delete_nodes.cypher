// Delete the given nodes of one label with every relationship they have (graph/works.py: a merged or
// withdrawn work, the sentences and aliases only it had).
// identifiers: __LABEL__, __KEY__
// parameters: $keys (list of key values)
// returns: nothing
UNWIND $keys AS k
MATCH (n:__LABEL__ {__KEY__: k})
DETACH DELETE n
