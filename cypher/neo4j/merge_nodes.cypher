// Upsert a batch of nodes; row.props holds only non-null values, so a missing value keeps the stored one.
// identifiers: __LABEL__, __KEY__
// parameters: $rows (list of {key, props})
// returns: nothing (counters tell created nodes)
UNWIND $rows AS row
MERGE (n:__LABEL__ {__KEY__: row.key})
SET n += row.props
