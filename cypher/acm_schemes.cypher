// The classification schemes held as AcmClass nodes, with their sizes.
// returns: scheme, size
MATCH (a:AcmClass)
RETURN a.scheme AS scheme, count(*) AS size
ORDER BY scheme
