// Write computed properties onto existing nodes; a null in row.props removes the property.
// identifiers: __LABEL__, __KEY__
// parameters: $rows (list of {key, props})
// returns: matched
UNWIND $rows AS row
MATCH (n:__LABEL__ {__KEY__: row.key})
SET n += row.props
RETURN count(n) AS matched
