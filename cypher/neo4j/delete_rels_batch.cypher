// Delete up to $batch relationships of one type (called until it returns 0).
// identifiers: __TYPE__
// parameters: $batch
// returns: deleted
MATCH ()-[r:__TYPE__]->()
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
