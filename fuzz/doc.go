// Package fuzz holds tollgate's native fuzz targets (in its tests) and their
// committed seed corpora under testdata/fuzz/<Target>/.
//
// The targets decode bytes into operation sequences with fuzz and
// run the same model-vs-implementation comparison as the rapid state
// machines:
//
//	FuzzCredits      the credit table (spec/credits.md)
//	FuzzTokenBucket  the token bucket (spec/tokenbucket.md)
//	FuzzHostile      the token bucket with limits, costs and clocks from raw
//	                 bit patterns (NaN payloads, ±Inf, subnormals, -0, huge
//	                 values, clocks near the int64 limits)
//
// go test ./fuzz runs every committed seed. To fuzz one target for a while:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzCredits$' -fuzztime 60s -fuzzminimizetime 2s
//
// (-fuzzminimizetime keeps the go command from spending up to a minute
// minimising each new interesting input, during which no new inputs run.)
// The decoders read at most fuzz.MaxInputBytes of an input.
//
// The seed files named kill-<mutant> are inputs that kill that mutant
// (regenerate them with go test ./fuzz -run TestWriteSeeds
// -fuzz.write-seeds); with -diff.fault=<mutant> the targets run against a
// mutant, so go test ./fuzz -diff.fault=tb-no-clamp must fail.
//
// Other seed files are regressions, kept by hand. FuzzHostile's
// t5-subnormal-limits (random input 65061 of the mutants command's fuzz
// hunt from seed 1) takes 2^-1074 three times at capacity = rate = 2^-1074
// with clocks near the int64 limit: the unmodified table failed T5 on it
// before the bound allowed for gradual underflow (spec/tokenbucket.md,
// "T5's rounding slack"), and the mutants command counted that failure as
// kills.
//
// A failing input is written by the go command under
// testdata/fuzz/<Target>/ and replays with
// go test ./fuzz -run '^<Target>$/^<file>$'.
//
// The package itself exports the corpus (Seeds), so the mutants command's
// fuzz layer can replay it from a built binary.
package fuzz
