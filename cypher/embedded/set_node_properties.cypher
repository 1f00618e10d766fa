// Write computed properties onto existing nodes; nulls in the frame are written as nulls.
// identifiers: __LABEL__, __KEY__, __ASSIGNMENTS__ ("n.p = p, ..." from the schema)
// parameters: $frame (pyarrow.Table with the key column and the properties to set)
// returns: nothing
LOAD FROM $frame
MATCH (n:__LABEL__ {__KEY__: __KEY__})
SET __ASSIGNMENTS__
