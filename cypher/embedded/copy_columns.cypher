// Bulk-load a typed Arrow frame into some columns of a table; the others are null. For a
// relationship table the frame's first two columns are the endpoint keys and are not listed.
// Loading only the given columns keeps absent ones (e.g. 384-d vectors) out of the write entirely.
// identifiers: __TABLE__, __COLUMNS__ ("id, title" — may be empty for a relationship table)
// parameters: $frame (pyarrow.Table)
// returns: nothing
COPY __TABLE__(__COLUMNS__) FROM $frame
