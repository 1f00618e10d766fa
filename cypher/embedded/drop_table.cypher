// Drop a relationship table (inside a transaction, followed by its re-creation: a table swap).
// identifiers: __TABLE__
// returns: nothing
DROP TABLE __TABLE__
