// Columns of one table with their types, to check a store against the schema.
// identifiers: __TABLE__
// returns: name, type
CALL table_info('__TABLE__') RETURN name, type
