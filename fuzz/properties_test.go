package fuzz

import (
	"slices"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/model"
)

// These tests watch every named property reject a wrong answer: either a
// real mutant from internal/fault with the model comparison switched off
// (PropertiesOnly), so the property alone must catch it, or a tampered
// answer for the properties no mutant breaks.

type crTamper = func(model.CrInput[int], model.CrOutput[int]) model.CrOutput[int]
type tbTamper = func(model.TBInput[int], model.TBOutput) model.TBOutput

func runCr(faults fault.Fault, opts Options, tamper crTamper, ins []model.CrInput[int]) *Failure {
	m := NewCrMachine(faults, opts)
	m.tamper = tamper
	for _, in := range ins {
		if f := m.Step(in); f != nil {
			return f
		}
		if f := m.Check(); f != nil {
			return f
		}
	}
	return nil
}

func runTB(faults fault.Fault, opts Options, tamper tbTamper, ins []model.TBInput[int]) *Failure {
	m := NewTBMachine(faults, opts)
	m.tamper = tamper
	for _, in := range ins {
		m.nowMs = in.NowMs
		if f := m.Step(in); f != nil {
			return f
		}
		if f := m.Check(); f != nil {
			return f
		}
	}
	return nil
}

var (
	tok1 = model.Token{Slot: 1, Epoch: 1}
	tok2 = model.Token{Slot: 2, Epoch: 2}
)

func reserve(h model.HolderID, c model.Class) model.CrInput[int] {
	return model.CrInput[int]{Kind: model.CrReserve, Holder: h, Class: c}
}

func enqueue(h model.HolderID, tok model.Token, p int, now int64) model.CrInput[int] {
	return model.CrInput[int]{Kind: model.CrEnqueue, Holder: h, Token: tok, Payload: p, NowMs: now}
}

func crOp(k model.CrKind, tok model.Token) model.CrInput[int] {
	return model.CrInput[int]{Kind: k, Token: tok}
}

var (
	lim1  = model.Limits{Capacity: 1, RefillPerSecond: 1}
	lim10 = model.Limits{Capacity: 10, RefillPerSecond: 10}
)

func take(lim model.Limits, cost float64, now int64) model.TBInput[int] {
	return model.TBInput[int]{Kind: model.TBTake, Limits: lim, Cost: cost, NowMs: now}
}

func TestPropertiesHaveTeeth(t *testing.T) {
	build.Need(t)
	propsOnly := Options{PropertiesOnly: true}
	alternating := make([]model.TBInput[int], 0, 200)
	for i := range 200 {
		alternating = append(alternating, take(lim10, 1, int64(1000*(1-i%2)))) // 1000, 0, 1000, 0, … (spec T5)
	}
	cases := []struct {
		name string
		want string
		run  func() *Failure
	}{
		{"C1/class-off-by-one", "C1", func() *Failure {
			ins := slices.Repeat([]model.CrInput[int]{reserve(1, model.General)}, 27)
			return runCr(fault.Named("cr-class-off-by-one"), propsOnly, nil, ins)
		}},
		{"C3/epoch-repeated", "C3", func() *Failure {
			return runCr(fault.None, Options{}, func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int] {
				if in.Kind == model.CrReserve {
					out.Token.Epoch = 1
				}
				return out
			}, []model.CrInput[int]{reserve(1, model.General), {Kind: model.CrRelease, Holder: 1, Token: tok1}, reserve(1, model.General)})
		}},
		{"C6/foreign-payload", "C6", func() *Failure {
			return runCr(fault.None, Options{}, func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int] {
				if in.Kind == model.CrTake {
					out.Payload = 99
				}
				return out
			}, []model.CrInput[int]{reserve(1, model.General), enqueue(1, tok1, 7, 0), crOp(model.CrTake, tok1)})
		}},
		{"C6/no-epoch-pin", "C6", func() *Failure { // a stale enqueue lands on the recycled slot
			return runCr(fault.Named("cr-no-epoch-pin"), propsOnly, nil, []model.CrInput[int]{
				reserve(1, model.General), {Kind: model.CrRelease, Holder: 1, Token: tok1},
				reserve(1, model.General), enqueue(1, tok1, 7, 0), crOp(model.CrTake, model.Token{Slot: 1, Epoch: 2})})
		}},
		{"C7/taken-twice", "C7", func() *Failure {
			return runCr(fault.None, Options{}, func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int] {
				if in.Kind == model.CrTake {
					out.OK, out.Payload = true, 7
				}
				return out
			}, []model.CrInput[int]{reserve(1, model.General), enqueue(1, tok1, 7, 0), crOp(model.CrTake, tok1), crOp(model.CrTake, tok1)})
		}},
		{"C7/sweep-all-loses-payload", "C7", func() *Failure {
			return runCr(fault.Named("cr-sweep-all"), propsOnly, nil, []model.CrInput[int]{
				reserve(1, model.General), enqueue(1, tok1, 7, 0), {Kind: model.CrExit, Holder: 1}, {Kind: model.CrSweep}})
		}},
		{"C8/finish-blind", "C8", func() *Failure {
			return runCr(fault.Named("cr-finish-blind"), propsOnly, nil, []model.CrInput[int]{
				reserve(1, model.General), enqueue(1, tok1, 7, 0), crOp(model.CrTake, tok1), crOp(model.CrFinish, tok1),
				reserve(2, model.General), crOp(model.CrFinish, tok1)})
		}},
		{"C11/closed-shows-rows", "C11", func() *Failure {
			closed := false
			return runCr(fault.None, Options{}, func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int] {
				closed = closed || in.Kind == model.CrClose
				if in.Kind == model.CrSnapshot && closed {
					out.Snap.General.Free = 1
				}
				return out
			}, []model.CrInput[int]{reserve(1, model.General), {Kind: model.CrClose}})
		}},
		{"C13/order", "C13", func() *Failure {
			return runCr(fault.None, Options{}, func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int] {
				if in.Kind == model.CrEnqueued {
					slices.Reverse(out.Entries)
				}
				return out
			}, []model.CrInput[int]{reserve(1, model.General), reserve(1, model.General), enqueue(1, tok1, 7, 5), enqueue(1, tok2, 8, 3)})
		}},
		{"C14/counts", "C14", func() *Failure {
			return runCr(fault.None, Options{}, func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int] {
				if in.Kind == model.CrSnapshot {
					out.Snap.Internal.Reserved++
				}
				return out
			}, []model.CrInput[int]{reserve(1, model.Internal)})
		}},
		{"divergence/bounds", "C1", func() *Failure { // an answer that differs from the model's is named by model.CrDivergence
			return runCr(fault.None, Options{}, func(in model.CrInput[int], out model.CrOutput[int]) model.CrOutput[int] {
				out.Bounds.Total++
				return out
			}, []model.CrInput[int]{{Kind: model.CrBounds}})
		}},
		{"T1/fraction-lost", "T1", func() *Failure {
			return runTB(fault.None, Options{}, func(in model.TBInput[int], out model.TBOutput) model.TBOutput {
				if in.Kind == model.TBTake && out.OK {
					out.Remaining = float64(int64(out.Remaining)) // truncates 0.75 to 0
				}
				return out
			}, []model.TBInput[int]{take(lim1, 0.25, 0)})
		}},
		{"T2/false-refusal", "T2", func() *Failure {
			return runTB(fault.None, Options{}, func(in model.TBInput[int], out model.TBOutput) model.TBOutput {
				if in.Kind == model.TBTake {
					out = model.TBOutput{}
				}
				return out
			}, []model.TBInput[int]{take(lim1, 1, 0)})
		}},
		{"T5/timestamp-regress", "T5", func() *Failure {
			return runTB(fault.Named("tb-timestamp-regress"), propsOnly, nil, alternating)
		}},
		{"T6/no-clamp", "T6", func() *Failure {
			return runTB(fault.Named("tb-no-clamp"), propsOnly, nil, []model.TBInput[int]{
				take(lim1, 1, 0), {Kind: model.TBPeek, Limits: lim1, NowMs: 10_000}})
		}},
		{"T7/seed-ceil-short", "T7", func() *Failure { // the clock behind the stored timestamp: the closed form ignores the gap
			return runTB(fault.Named("tb-seed-ceil"), propsOnly, nil, []model.TBInput[int]{
				take(lim1, 1, 1000), {Kind: model.TBRetryAfter, Limits: lim1, Cost: 1, NowMs: 0}})
		}},
		{"T7/not-smallest", "T7", func() *Failure {
			return runTB(fault.None, Options{}, func(in model.TBInput[int], out model.TBOutput) model.TBOutput {
				if in.Kind == model.TBRetryAfter {
					out.RetryAfterMs++
				}
				return out
			}, []model.TBInput[int]{take(lim1, 1, 0), {Kind: model.TBRetryAfter, Limits: lim1, Cost: 1, NowMs: 0}})
		}},
		{"T9/valid-refused", "T9", func() *Failure {
			return runTB(fault.None, Options{}, func(_ model.TBInput[int], out model.TBOutput) model.TBOutput {
				return model.TBOutput{Invalid: model.FieldCost}
			}, []model.TBInput[int]{take(lim1, 1, 0)})
		}},
		{"T12/negative-reclaim", "T12", func() *Failure {
			return runTB(fault.None, propsOnly, func(in model.TBInput[int], out model.TBOutput) model.TBOutput {
				if in.Kind == model.TBReclaim {
					out.Reclaimed = -1
				}
				return out
			}, []model.TBInput[int]{take(lim1, 1, 0), {Kind: model.TBReclaim, Limits: lim1, NowMs: 5000}})
		}},
		{"divergence/timestamp-regress", "T4", func() *Failure { // named by model.TBDivergence: the seed's stored clock reproduces the answer
			return runTB(fault.Named("tb-timestamp-regress"), Options{}, nil, alternating)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.run()
			if f == nil {
				t.Fatalf("no property failed; want %s", c.want)
			}
			if f.Property != c.want {
				t.Fatalf("property %s failed, want %s:\n%s", f.Property, c.want, f.Replay())
			}
			t.Log(f.Error())
		})
	}
}

// TestRealImplementationPassesScripts runs the scripts above without any
// fault or tampering: each must pass, so the failures above come from the
// fault or the tampering alone.
func TestRealImplementationPassesScripts(t *testing.T) {
	crScripts := [][]model.CrInput[int]{
		slices.Repeat([]model.CrInput[int]{reserve(1, model.General)}, 27),
		{reserve(1, model.General), {Kind: model.CrRelease, Holder: 1, Token: tok1}, reserve(1, model.General), enqueue(1, tok1, 7, 0), crOp(model.CrTake, model.Token{Slot: 1, Epoch: 2})},
		{reserve(1, model.General), enqueue(1, tok1, 7, 0), {Kind: model.CrExit, Holder: 1}, {Kind: model.CrSweep}},
		{reserve(1, model.General), enqueue(1, tok1, 7, 0), crOp(model.CrTake, tok1), crOp(model.CrFinish, tok1), reserve(2, model.General), crOp(model.CrFinish, tok1)},
	}
	for i, s := range crScripts {
		if f := runCr(fault.None, Options{}, nil, s); f != nil {
			t.Errorf("credits script %d: %s", i, f.Replay())
		}
	}
	alternating := make([]model.TBInput[int], 0, 200)
	for i := range 200 {
		alternating = append(alternating, take(lim10, 1, int64(1000*(1-i%2))))
	}
	tbScripts := [][]model.TBInput[int]{
		alternating,
		{take(lim1, 1, 0), {Kind: model.TBPeek, Limits: lim1, NowMs: 10_000}},
		{take(lim1, 1, 1000), {Kind: model.TBRetryAfter, Limits: lim1, Cost: 1, NowMs: 0}},
		{take(lim1, 0.25, 0)},
	}
	for i, s := range tbScripts {
		if f := runTB(fault.None, Options{}, nil, s); f != nil {
			t.Errorf("token-bucket script %d: %s", i, f.Replay())
		}
	}
}

// TestBytesOpsCounted: the byte runners report the operations an input
// applied, not its length and not the reads of the checks.
func TestBytesOpsCounted(t *testing.T) {
	build.Need(t)
	if n, f := RunCreditsBytesOps([]byte{1, 1}, fault.None, Options{}); f != nil || n != model.GeneralSlots+1 {
		t.Fatalf("fill general: %d operations (%v), want %d reserves and the refusal", n, f, model.GeneralSlots)
	}
	if n, f := RunCreditsBytesOps([]byte{1, 1}, fault.Named("cr-class-off-by-one"), Options{}); f == nil || n != f.Step || n != 27 {
		t.Fatalf("a failing input: %d operations, failure %v", n, f)
	}
	if n, f := RunTokenBucketBytesOps([]byte{0}, fault.None, Options{}); f != nil || n != 1 {
		t.Fatalf("one take: %d operations (%v)", n, f)
	}
}
