// Create a relationship table if it is missing.
// identifiers: __TYPE__, __SOURCE__, __TARGET__, __COLUMNS__ (", name TYPE" per property, or empty)
// returns: nothing
CREATE REL TABLE IF NOT EXISTS __TYPE__(FROM __SOURCE__ TO __TARGET____COLUMNS__)
