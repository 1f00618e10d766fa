// Every paper's display label and venue in bulk, for author and source co-citation maps (read as Arrow):
// a cited-reference stub's first author is the head of its label ("Goos F, 1947, ..."), its source the venue.
// parameters: none
// returns: id, label (null where none), venue (null where none)
MATCH (p:Paper)
RETURN p.id AS id, p.label AS label, p.venue AS venue
