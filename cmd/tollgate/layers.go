package main

// The checking layers register themselves with internal/mutant from their
// init functions; importing them here puts them in the mutants table.
// One import per layer package, one line each.
import (
	_ "github.com/tollgate/tollgate/conform"
	_ "github.com/tollgate/tollgate/fuzz"
	_ "github.com/tollgate/tollgate/internal/interleave"
	_ "github.com/tollgate/tollgate/linearizability"
)
