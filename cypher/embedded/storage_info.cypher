// The storage of one node or relationship table, column chunk by column chunk: how each chunk is compressed.
// identifiers: __TABLE__
// returns: column_name, compression
CALL storage_info('__TABLE__') RETURN column_name, compression
