// Create a node table if it is missing.
// identifiers: __LABEL__, __COLUMNS__ ("name TYPE, ..." from the schema), __KEY__
// returns: nothing
CREATE NODE TABLE IF NOT EXISTS __LABEL__(__COLUMNS__, PRIMARY KEY(__KEY__))
