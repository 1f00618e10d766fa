// Bulk-load a typed Arrow frame into a node or relationship table. Columns follow the table's order;
// for a relationship table the first two columns are the endpoint keys.
// identifiers: __TABLE__
// parameters: $frame (pyarrow.Table)
// returns: nothing
COPY __TABLE__ FROM $frame
