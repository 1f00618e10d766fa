// Add a property the schema gained since the store was created.
// identifiers: __TABLE__, __COLUMN__, __DATATYPE__
// returns: nothing
ALTER TABLE __TABLE__ ADD IF NOT EXISTS __COLUMN__ __DATATYPE__
