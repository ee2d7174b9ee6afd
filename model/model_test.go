package model

import (
	"math"
	"testing"
)

// TestTBStepIsPure: a table is a value; Step returns a new one and leaves
// the receiver as it was (porcupine and rapid rely on it).
func TestTBStepIsPure(t *testing.T) {
	lim := Limits{Capacity: 5, RefillPerSecond: 1}
	var t0 TBTable[string]
	t1, _ := t0.Step(TBInput[string]{Kind: TBTake, Key: "a", Limits: lim, Cost: 2, NowMs: 10})
	t2, _ := t1.Step(TBInput[string]{Kind: TBTake, Key: "a", Limits: lim, Cost: 2, NowMs: 10})
	if t0.Len() != 0 || t1.Bucket("a").Tokens != 3 || t2.Bucket("a").Tokens != 1 {
		t.Fatalf("states shared: %v %v %v", t0.Len(), t1.Bucket("a"), t2.Bucket("a"))
	}
	t3, _ := t2.Step(TBInput[string]{Kind: TBReset, Key: "a"})
	if t3.Len() != 0 || t2.Bucket("a").Tokens != 1 || t3.Equal(t2) || !t3.Equal(t0) {
		t.Fatal("reset changed its receiver or kept the bucket")
	}
}

// TestCreditsStepIsPure: the same for the credit table, including the
// copy-on-write list of exited holders.
func TestCreditsStepIsPure(t *testing.T) {
	var s0 Credits[int]
	s1, tok, _ := s0.Reserve(1, General)
	s2 := s1.Exit(1)
	s3, n := s2.Sweep()
	if s0.Row(1).State != Free || s1.Row(1).State != Reserved || !s1.Alive(1) || s2.Alive(1) || n != 1 || s3.Row(tok.Slot).State != Free {
		t.Fatal("a step changed an earlier state")
	}
	if s1.Equal(s2) || !s2.Equal(s2.Exit(1)) {
		t.Fatal("Equal is wrong about holder liveness")
	}
}

// TestReserveSlot: C2, C3 as the concurrent checker uses them.
func TestReserveSlot(t *testing.T) {
	var s Credits[int]
	s, ok := s.ReserveSlot(1, Token{Slot: 5, Epoch: 9})
	if !ok || s.LastEpoch() != 9 || s.Row(5).Holder != 1 {
		t.Fatalf("claim refused or misrecorded: %v %+v", ok, s.Row(5))
	}
	if _, ok := s.ReserveSlot(2, Token{Slot: 5, Epoch: 10}); ok {
		t.Fatal("claimed a slot in use")
	}
	if _, ok := s.ReserveSlot(2, Token{Slot: 6, Epoch: 9}); ok {
		t.Fatal("claimed with an epoch another row carries")
	}
	if s2, ok := s.ReserveSlot(2, Token{Slot: 6, Epoch: 3}); !ok || s2.LastEpoch() != 9 {
		t.Fatal("an older unused epoch must be accepted (draw order need not match commit order)")
	}
	if next, tok, r := s.Reserve(3, General); r != OK || tok != (Token{Slot: 1, Epoch: 10}) || next.Row(1).Epoch != 10 {
		t.Fatalf("sequential reserve after a claim: %v %v", tok, r)
	}
}

// TestReserveUnseen: a reservation under an epoch nobody learned holds its
// slot against reserves (C2), is out of reach of every pinned transition
// (C3), leaves the last epoch alone, and is freed by a sweep once its holder
// has exited (C10).
func TestReserveUnseen(t *testing.T) {
	var s Credits[int]
	s, ok := s.ReserveUnseen(1, 1)
	if !ok || s.Row(1).State != Reserved || s.Row(1).Holder != 1 || s.LastEpoch() != 0 {
		t.Fatalf("unseen claim refused or misrecorded: %v %+v last epoch %d", ok, s.Row(1), s.LastEpoch())
	}
	if _, ok := s.ReserveUnseen(2, 1); ok {
		t.Fatal("an unseen claim of a slot in use")
	}
	if _, ok := s.ReserveSlot(2, Token{Slot: 1, Epoch: 1}); ok {
		t.Fatal("ReserveSlot claimed a slot an unseen reservation holds")
	}
	if _, tok, r := s.Reserve(2, General); r != OK || tok.Slot != 2 {
		t.Fatalf("reserve beside an unseen reservation: %v %v, want slot 2", tok, r)
	}
	for e := uint64(1); e <= 3; e++ {
		tok := Token{Slot: 1, Epoch: e}
		if _, r := s.Enqueue(1, tok, 7, 0); r != Lost {
			t.Fatalf("enqueue with epoch %d into the unseen row: %v, want lost", e, r)
		}
		if _, ok := s.Release(1, tok); ok {
			t.Fatalf("release with epoch %d freed the unseen row", e)
		}
	}
	if _, n := s.Sweep(); n != 0 {
		t.Fatal("swept the row of a live holder")
	}
	s2, n := s.Exit(1).Sweep()
	if n != 1 || s2.Row(1).State != Free || !s2.Equal(Credits[int]{}.Exit(1)) {
		t.Fatalf("the sweep after the exit freed %d rows, leaving %+v", n, s2.Row(1))
	}
	if _, ok := s.Close().ReserveUnseen(3, 2); ok {
		t.Fatal("an unseen claim on a closed table")
	}
}

// TestModelDefectsPanic: C12 in the model.
func TestModelDefectsPanic(t *testing.T) {
	var s Credits[int]
	for name, f := range map[string]func(){
		"class 0":   func() { s.Reserve(1, 0) },
		"holder 0":  func() { s.Reserve(0, General) },
		"slot 33":   func() { s.Take(Token{Slot: 33, Epoch: 1}) },
		"epoch 0":   func() { s.Finish(Token{Slot: 1}) },
		"unknown":   func() { s.Step(CrInput[int]{Kind: 99}) },
		"tb kind 0": func() { StepBucket(Bucket{}, TBInput[int]{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestCheckLimitsOrder: T9 reports the first bad field in spec order.
func TestCheckLimitsOrder(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		lim  Limits
		cost float64
		with bool
		want string
	}{
		{Limits{nan, nan}, nan, true, FieldCapacity},
		{Limits{1, -1}, nan, true, FieldRefillPerSecond},
		{Limits{1, 1}, 0, true, FieldCost},
		{Limits{1, 1}, 2, true, FieldCost},
		{Limits{1, 1}, 2, false, ""},
		{Limits{math.SmallestNonzeroFloat64, math.MaxFloat64}, math.SmallestNonzeroFloat64, true, ""},
	}
	for _, c := range cases {
		got := ""
		if err := CheckLimits(c.lim, c.cost, c.with); err != nil {
			got = err.Field
		}
		if got != c.want {
			t.Errorf("CheckLimits(%v, %v, %v) = %q, want %q", c.lim, c.cost, c.with, got, c.want)
		}
	}
}

// TestRetryAfterNeverUnambiguous: T7. A bucket that first covers the cost
// exactly 2^63-1 ms after now (possible only when now ≤ 0) is reported as
// Never, and Never is never a real wait: real waits stop at 2^63-2. The
// checks once read Never as a real wait here and reported a false kill.
func TestRetryAfterNeverUnambiguous(t *testing.T) {
	lim := Limits{Capacity: math.SmallestNonzeroFloat64, RefillPerSecond: 2.225073858507201e-308}
	b, ok, _ := Take(Bucket{}, lim, math.SmallestNonzeroFloat64, -1) // empty at -1; refills at 0
	if !ok {
		t.Fatal("setup take refused")
	}
	if w := RetryAfter(b, lim, math.SmallestNonzeroFloat64, math.MinInt64+1); w != Never {
		t.Fatalf("wait of exactly 2^63-1 answered %d, want Never", w)
	}
	if w := RetryAfter(b, lim, math.SmallestNonzeroFloat64, math.MinInt64+2); w != Never-1 {
		t.Fatalf("wait of 2^63-2 answered %d", w)
	}
}
