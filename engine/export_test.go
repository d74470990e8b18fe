package engine

// Offsets picks the journal offsets a corruption test changes (see
// offsets), for the tests outside the package.
var Offsets = offsets
