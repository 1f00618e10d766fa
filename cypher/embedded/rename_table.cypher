// Rename a table (replace_edges: the staging table takes the replaced table's name, in the swap's transaction).
// identifiers: __TABLE__, __NAME__
// returns: nothing
ALTER TABLE __TABLE__ RENAME TO __NAME__
