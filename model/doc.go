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
// Besides the semantics, the model holds every rule the checkers share, so
// none is written twice: output equality (TBOutput.Equal, CrOutput.Equal),
// the defects of C12 (CrInput.Check, the predicate the model's own panics
// use), the over-admission bound of T5 (T5Bound), the one rendering of
// inputs and answers (the String and Answer methods), and the classifiers
// that name the invariant a differing answer breaks (TBDivergence,
// CrDivergence).
//
// Invariant IDs (C1…, T1…) in comments refer to the spec documents.
package model
