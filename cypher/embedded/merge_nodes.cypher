// Upsert nodes that already exist from a typed Arrow frame; a null in the frame keeps the stored value.
// identifiers: __LABEL__, __KEY__, __ASSIGNMENTS__ ("n.p = coalesce(p, n.p), ..." from the schema)
// parameters: $frame (pyarrow.Table with the key column and the properties to set)
// returns: nothing
LOAD FROM $frame
MERGE (n:__LABEL__ {__KEY__: __KEY__})
SET __ASSIGNMENTS__
