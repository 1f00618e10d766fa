// Number of nodes with one label.
// identifiers: __LABEL__
// returns: n
MATCH (n:__LABEL__) RETURN count(n) AS n
