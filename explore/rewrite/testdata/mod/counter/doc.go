package counter

// Version is a file with nothing to rewrite.
const Version = 1
