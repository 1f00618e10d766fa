// Tables in the store.
// returns: name, type
CALL show_tables() RETURN name, type
