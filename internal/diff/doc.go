// Package diff is tollgate's differential checker: it drives an
// implementation table (through internal/sut) and the sequential model side
// by side, compares every answer, and checks the spec's invariants after
// every step.
//
// One comparison routine per primitive, the Machine types CrMachine and
// TBMachine, is shared by three front ends:
//
//   - rapid state machines (CreditsProp, TokenBucketProp), run by the tests
//     in this package and by the mutants command;
//   - byte decoders (RunCreditsBytes, RunTokenBucketBytes, RunHostileBytes),
//     run by the native fuzz targets in fuzz/ and by the mutants command's
//     fuzz layer;
//   - the two mutant layers "rapid" and "fuzz" registered with
//     internal/mutant from this package's init.
//
// Every failure is a *Failure naming the property (a spec invariant ID such
// as "C7" or "T5", or "agree/<op>" for an answer that differs from the
// model), the step, and the operations applied so far, so it can be replayed
// by hand.
//
// Each machine checks named properties on the implementation's own answers
// first (C1, C3, C6, C7, C8, C11, C13, C14; T1, T2, T5, T6, T7, T9), then
// compares the answer with the model's; Options.PropertiesOnly switches the
// comparison off, so tests can show each property catching a fault alone.
//
// Flags of the tests in this package (besides rapid's -rapid.checks,
// -rapid.steps, -rapid.seed, -rapid.failfile):
//
//	-diff.fault=<name>   run the rapid machines against that mutant (replays a kill)
//	-diff.props-only     check the named properties only, not the model's answers
//
// Deeper runs: go test ./internal/diff -run TestRapid -rapid.checks=100000.
package diff
