// Uniqueness constraint (and so an index) on a label's key; idempotent.
// identifiers: __NAME__, __LABEL__, __KEY__
// returns: nothing
CREATE CONSTRAINT __NAME__ IF NOT EXISTS FOR (n:__LABEL__) REQUIRE n.__KEY__ IS UNIQUE
