package mutants

import "embed"

// Patches holds patches/*.patch, the mutants: internal/fault reads the
// faults, their names and the mutant matrix from the patches' headers when
// a program starts, so the matrix is written once, in the patches.
//
//go:embed patches/*.patch
var Patches embed.FS
