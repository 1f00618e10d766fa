// Every paper's display label and venue in bulk, for author and source co-citation maps (read as Arrow):
// a cited-reference stub's first author is the head of its label ("Goos F, 1947, ..."), its source the venue;
// a record's venue_abbrev (WoS J9/JI, Scopus) joins the abbreviations cited references give to its full title.
// parameters: none
// returns: id, label (null where none), venue (null where none), venue_abbrev (null where none)
MATCH (p:Paper)
RETURN p.id AS id, p.label AS label, p.venue AS venue, p.venue_abbrev AS venue_abbrev
