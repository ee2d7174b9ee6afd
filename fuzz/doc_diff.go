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
// Both machines also run against a Redis-backed table (NewRedisTBMachine
// over a RemoteTB, NewRedisCrMachine over a RemoteCr: backends/redissut's
// adapters, which only the tests import, so this package links no Redis
// client): RedisTokenBucketProp, RunRedisTokenBucketBytes,
// RunRedisHostileBytes, RedisCreditsProp and RunRedisCreditsBytes are the
// same front ends with a server behind them, for the tests that start one
// (redisserver).
//
// Every failure is a *Failure naming the property by its spec invariant ID
// ("C7", "T5", …), the step, and the operations applied so far (rendered by
// the model's String methods), so it can be replayed by hand.
//
// Each machine checks named properties on the implementation's own answers
// first (C1, C3, C6, C7, C8, C11, C13, C14; T1, T2, T5, T6, T7, T9; T5 with
// model.T5Bound), then compares the answer with the model's
// (model.TBOutput.Equal, model.CrOutput.Equal). An answer that differs is
// reported under the invariant model.TBDivergence or model.CrDivergence
// names for it, the same classification the conformance harness prints.
// Options.PropertiesOnly switches the comparison off, so tests can show each
// property catching a fault alone.
//
// Flags of the tests in this package (besides rapid's -rapid.checks,
// -rapid.steps, -rapid.seed, -rapid.failfile):
//
//	-diff.fault=<name>   run the rapid machines against that mutant (replays a kill)
//	-diff.props-only     check the named properties only, not the model's answers
//
// Deeper runs: go test ./fuzz -run TestRapid -rapid.checks=100000.
package fuzz
