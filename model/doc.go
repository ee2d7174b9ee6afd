// Package model is the pure sequential reference for tollgate's two admission
// primitives: the 32-slot credit table (spec/credits.md) and the keyed token
// bucket (spec/tokenbucket.md).
//
// Every operation is a pure function from a state and an input to a new state
// and an output. States are values: copying one with assignment gives an
// independent state (slices inside are never mutated in place), and Equal
// compares two states. Nothing here reads a clock, starts a goroutine, touches
// an atomic or iterates a map in an order that could change between runs, so
// every function is deterministic and may be called from porcupine's Step,
// rapid's state machines, fuzz targets and the conformance harness alike.
//
// The model is the single statement of the semantics. The lock-free code in
// impl/ is written independently and checked against it; the checkers import
// this package instead of restating any rule.
//
// Invariant IDs (C1…, T1…) in comments refer to the spec documents.
package model
