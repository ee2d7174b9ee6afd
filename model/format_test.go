package model

import (
	"math"
	"testing"
)

// TestStrings pins the one rendering of inputs and outputs every checker
// prints.
func TestStrings(t *testing.T) {
	lim := Limits{Capacity: 5, RefillPerSecond: 10}
	tok := Token{Slot: 4, Epoch: 7}
	for _, c := range []struct {
		got  string
		want string
	}{
		{TBInput[int]{Kind: TBTake, Key: 0, Limits: lim, Cost: 1, NowMs: 1000}.String(), "take k0 cost=1 at 1000ms [cap 5, 10/s]"},
		{TBInput[string]{Kind: TBRetryAfter, Key: "a b", Limits: lim, Cost: 0.5, NowMs: -3}.String(), `retry_after "a b" cost=0.5 at -3ms [cap 5, 10/s]`},
		{TBInput[string]{Kind: TBPeek, Key: "", Limits: lim, NowMs: 2}.String(), `peek "" at 2ms [cap 5, 10/s]`},
		{TBInput[int]{Kind: TBReset, Key: 3}.String(), "reset k3"},
		{TBInput[int]{Kind: TBResetAll}.String(), "reset_all"},
		{TBOutput{OK: true, Remaining: 4}.String(), "ok remaining=4"},
		{TBOutput{OK: true}.Answer(TBTake), "ok remaining=0"},
		{TBOutput{OK: true}.String(), "ok"},
		{TBOutput{OK: true, Remaining: math.Copysign(0, -1)}.String(), "ok remaining=-0"},
		{TBOutput{}.Answer(TBTake), "rate_limited"},
		{TBOutput{OK: true}.Answer(TBRetryAfter), "ok retry_after=0ms"},
		{TBOutput{OK: true, Tokens: 2.5}.Answer(TBPeek), "ok tokens=2.5"},
		{TBOutput{Invalid: FieldCost}.Answer(TBTake), "invalid cost"},
		{TBOutput{OK: true}.Answer(TBReset), "ok"},
		{CrInput[string]{Kind: CrEnqueue, Holder: 3, Token: tok, Payload: "p", NowMs: 2}.String(), `enqueue h3 slot 4 epoch 7 "p" at 2ms`},
		{CrInput[int]{Kind: CrEnqueue, Holder: 3, Token: tok, Payload: 9, NowMs: 2}.String(), "enqueue h3 slot 4 epoch 7 p9 at 2ms"},
		{CrInput[int]{Kind: CrReserve, Holder: 1, Class: Internal}.String(), "reserve h1 internal"},
		{CrInput[int]{Kind: CrTake, Token: tok}.String(), "take slot 4 epoch 7"},
		{CrInput[int]{Kind: CrRelease, Holder: 2, Token: tok}.String(), "release h2 slot 4 epoch 7"},
		{CrInput[int]{Kind: CrExit, Holder: 2}.String(), "exit h2"},
		{CrInput[int]{Kind: CrSweep}.String(), "sweep"},
		{CrOutput[int]{Token: tok}.Answer(CrReserve), "ok slot 4 epoch 7"},
		{CrOutput[int]{Result: Exhausted}.Answer(CrReserve), "exhausted"},
		{CrOutput[string]{OK: true, Payload: "p"}.Answer(CrTake), `ok "p"`},
		{CrOutput[string]{}.Answer(CrTake), "none"},
		{CrOutput[string]{OK: true}.Answer(CrFinish), "freed"},
		{CrOutput[string]{}.Answer(CrRelease), "not freed"},
		{CrOutput[string]{OK: true, Count: 2}.Answer(CrSweep), "freed 2"},
		{CrOutput[string]{OK: true, Entries: []Entry[string]{{Slot: 4, Epoch: 7, MarkedMs: 2, Payload: "p"}}}.Answer(CrEnqueued), `[slot 4 epoch 7 "p" at 2ms]`},
		{CrOutput[string]{OK: true, Snap: Snapshot{General: Counts{Free: 26}, Internal: Counts{Free: 5, Processing: 1}}}.Answer(CrSnapshot),
			"general {26 free, 0 reserved, 0 enqueued, 0 processing}, internal {5 free, 0 reserved, 0 enqueued, 1 processing}"},
		{CrOutput[string]{OK: true, Bounds: TableBounds}.Answer(CrBounds), "general 26, internal 6, total 32"},
		{CrOutput[string]{Result: Lost, OK: true, Count: 1}.String(), "result=lost ok=true count=1"},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}

// TestTBOutputEqual: floats bit for bit (T3).
func TestTBOutputEqual(t *testing.T) {
	nan := math.NaN()
	a := TBOutput{OK: true, Remaining: 0}
	if a.Equal(TBOutput{OK: true, Remaining: math.Copysign(0, -1)}) {
		t.Error("-0 equals 0")
	}
	if !(TBOutput{Tokens: nan}).Equal(TBOutput{Tokens: nan}) {
		t.Error("NaN does not equal the same NaN")
	}
	for _, b := range []TBOutput{{Invalid: "cost", OK: true}, {}, {OK: true, Tokens: 1}, {OK: true, RetryAfterMs: 1}} {
		if a.Equal(b) {
			t.Errorf("%v equals %v", a, b)
		}
	}
}

// TestCrInputCheck: C12, one field at a time, in the order of Check; the
// model's own panics carry the same message.
func TestCrInputCheck(t *testing.T) {
	tok := Token{Slot: 1, Epoch: 1}
	cases := []struct {
		in    CrInput[int]
		field string
		panic func()
	}{
		{CrInput[int]{Kind: 0}, FieldKind, func() { Credits[int]{}.Step(CrInput[int]{Kind: 0}) }},
		{CrInput[int]{Kind: CrReserve, Class: General}, FieldHolder, func() { Credits[int]{}.Reserve(0, General) }},
		{CrInput[int]{Kind: CrReserve, Holder: 1, Class: 3}, FieldClass, func() { Credits[int]{}.Reserve(1, 3) }},
		{CrInput[int]{Kind: CrRelease, Holder: 1, Token: Token{Slot: 33, Epoch: 1}}, FieldSlot, func() { Credits[int]{}.Release(1, Token{Slot: 33, Epoch: 1}) }},
		{CrInput[int]{Kind: CrFinish, Token: Token{Slot: 3}}, FieldEpoch, func() { Credits[int]{}.Finish(Token{Slot: 3}) }},
		{CrInput[int]{Kind: CrEnqueue, Token: Token{Slot: 0}}, FieldHolder, func() { Credits[int]{}.Enqueue(0, tok, 1, 0) }},
		{CrInput[int]{Kind: CrExit}, FieldHolder, func() { Credits[int]{}.Exit(0) }},
	}
	for _, c := range cases {
		d := c.in.Check()
		if d == nil || d.Field != c.field {
			t.Errorf("%v: Check() = %v, want field %s", c.in, d, c.field)
			continue
		}
		func() {
			defer func() {
				r := recover()
				if c.field != FieldKind && r != d.Error() {
					t.Errorf("%v: the model panicked with %v, want Check's %q", c.in, r, d.Error())
				}
				if r == nil {
					t.Errorf("%v: no panic", c.in)
				}
			}()
			c.panic()
		}()
	}
	for _, in := range []CrInput[int]{
		{Kind: CrReserve, Holder: 1, Class: Internal}, {Kind: CrTake, Token: Token{Slot: 32, Epoch: 9}},
		{Kind: CrSweep}, {Kind: CrClose, Holder: 0, Token: Token{Slot: 99}}, // unused fields are not looked at
	} {
		if d := in.Check(); d != nil {
			t.Errorf("%v: Check() = %v, want nil", in, d)
		}
	}
}

// TestT5Bound: the alternating clocks of spec T5 exceed the bound when
// commits store the caller's clock (the seed) and stay within it with
// T4; the tolerance is relative; Reset starts again.
func TestT5Bound(t *testing.T) {
	lim := Limits{Capacity: 10, RefillPerSecond: 10}
	run := func(step func(Bucket, TBInput[string]) (Bucket, TBOutput)) (T5Bound, int) {
		var b Bucket
		var bound T5Bound
		admitted := 0
		for i := range 200 {
			in := tTake("k", lim, 1, int64(1000*(1-i%2)))
			var out TBOutput
			b, out = step(b, in)
			if out.OK {
				bound.Commit(in.Limits, in.Cost, in.NowMs)
				admitted++
			}
		}
		return bound, admitted
	}
	if bound, n := run(stepStoresClock[string]); !bound.Exceeded() || n != 200 {
		t.Fatalf("the seed's rule: %d admitted, %v; want 200 and exceeded", n, &bound)
	}
	bound, n := run(StepBucket[string])
	if bound.Exceeded() || n != 10 || bound.Limit() != 10 || bound.SpanMs() != 0 {
		t.Fatalf("T4: %d admitted, %v; want 10 within 10", n, &bound)
	}
	if got := bound.String(); got != "admitted 10 in 10 takes since the bucket was created at 1000 ms, bound is 10 (capacity 10 + rate 10 × 0 ms)" {
		t.Errorf("String: %s", got)
	}
	var b T5Bound
	b.Commit(lim, 10, 0)
	b.Commit(lim, 10, 1000)
	if b.Exceeded() || b.Limit() != 20 {
		t.Fatalf("%v", &b)
	}
	b.Commit(lim, 1e-8, 1000) // 20 + 1e-8: inside the relative tolerance of 1e-9 × 20
	if b.Exceeded() {
		t.Fatalf("within tolerance: %v", &b)
	}
	b.Commit(lim, 1e-6, 1000)
	if !b.Exceeded() {
		t.Fatalf("beyond tolerance: %v", &b)
	}
	b.Reset()
	b.Commit(Limits{Capacity: 1, RefillPerSecond: 1}, 1, -5)
	if b.FirstMs != -5 || b.NewestMs != -5 || b.Admitted != 1 || b.Exceeded() {
		t.Fatalf("after Reset: %v", &b)
	}
}

// TestT5BoundAcrossReclaims: T12, T5. The case the differential machine
// found: a reclaim judged by a smaller capacity and a larger rate than the
// key's own forgets a bucket that was not full by its own limits, and the
// next take starts full. T5 counted across that reclaim is exceeded, so
// T5Bound.Reclaim starts the bound again there, as a reset does; with the
// key's own limits the reclaim forgets only a full bucket, and the bound
// holds across it with the reclaim's clock counted.
func TestT5BoundAcrossReclaims(t *testing.T) {
	lim := Limits{Capacity: 1, RefillPerSecond: 1}
	run := func(reclaimLim Limits, restart bool) (T5Bound, bool) {
		var tb TBTable[string]
		var bound T5Bound
		forgot := false
		for _, in := range []TBInput[string]{
			tTake("k", lim, 1, -4), tTake("k", lim, 1, -4),
			{Kind: TBReclaim, Limits: reclaimLim, NowMs: 0},
			tTake("k", lim, 1, 0),
		} {
			var out TBOutput
			tb, out = tb.Step(in)
			switch {
			case in.Kind == TBReclaim && restart:
				forgot = out.Reclaimed == 1
				bound.Reclaim(in.Limits, in.NowMs)
			case in.Kind == TBReclaim:
				forgot = out.Reclaimed == 1
				bound.NewestMs = max(bound.NewestMs, in.NowMs)
			case out.OK:
				bound.Commit(in.Limits, in.Cost, in.NowMs)
			}
		}
		return bound, forgot
	}
	other := Limits{Capacity: 0.01152587890625, RefillPerSecond: 3}
	if b, forgot := run(other, false); !forgot || !b.Exceeded() {
		t.Fatalf("other limits, bound not restarted: forgot %v, %v; want forgotten and exceeded", forgot, &b)
	}
	if b, forgot := run(other, true); !forgot || b.Exceeded() {
		t.Fatalf("other limits, T5Bound.Reclaim: forgot %v, %v; want forgotten and within", forgot, &b)
	}
	if b, forgot := run(lim, true); forgot || b.Exceeded() || b.NewestMs != 0 {
		t.Fatalf("the key's limits: forgot %v, %v; want kept (0.004 tokens), within, t_max 0", forgot, &b)
	}
	lim2 := Limits{Capacity: 1, RefillPerSecond: 1000}
	var tb TBTable[string]
	var bound T5Bound
	for _, in := range []TBInput[string]{
		tTake("k", lim2, 1, 0), {Kind: TBReclaim, Limits: lim2, NowMs: 5}, tTake("k", lim2, 1, 0), tTake("k", lim2, 1, 5),
	} {
		var out TBOutput
		tb, out = tb.Step(in)
		if in.Kind == TBReclaim {
			if out.Reclaimed != 1 {
				t.Fatalf("the full bucket was not forgotten: %v", out)
			}
			bound.Reclaim(in.Limits, in.NowMs)
		} else if out.OK {
			bound.Commit(in.Limits, in.Cost, in.NowMs)
		}
	}
	if bound.Exceeded() || bound.Takes != 2 || bound.NewestMs != 5 {
		t.Fatalf("the key's limits, forgotten when full at 5 ms: %v; want 2 takes within the bound to 5 ms", &bound)
	}
}
