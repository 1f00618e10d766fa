// Drop a table when it exists (a staging table of replace_edges, left by a crash or a failed COPY).
// identifiers: __TABLE__
// returns: nothing
DROP TABLE IF EXISTS __TABLE__
