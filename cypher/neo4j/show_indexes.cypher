// Indexes with the given names, with their type and configuration (to check vector dimensions).
// parameters: $names (list of index names)
// returns: name, type, labels, properties, options
SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options
WHERE name IN $names
RETURN name, type, labelsOrTypes AS labels, properties, options
