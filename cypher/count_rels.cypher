// Number of relationships of one type.
// identifiers: __TYPE__
// returns: n
MATCH ()-[r:__TYPE__]->() RETURN count(r) AS n
