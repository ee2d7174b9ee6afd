package linearizability

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/model"
)

var lim = model.Limits{Capacity: 10, RefillPerSecond: 1}

func take(client int, key string, now int64, call, ret int64, ok bool, rem float64) TBOp {
	return TBOp{Client: client, Input: model.TBInput[string]{Kind: model.TBTake, Key: key, Limits: lim, Cost: 1, NowMs: now},
		Output: model.TBOutput{OK: ok, Remaining: rem}, Call: call, Return: ret}
}

// TestTokenBucketModelHandHistories pins the model adapter on histories small
// enough to judge by hand (T1, T4, T11).
func TestTokenBucketModelHandHistories(t *testing.T) {
	cases := []struct {
		name string
		ops  []TBOp
		want Result
	}{
		{"T1 sequential takes", []TBOp{take(0, "a", 0, 1, 2, true, 9), take(1, "a", 0, 3, 4, true, 8)}, Ok},
		{"T11 overlapping takes in either order", []TBOp{take(0, "a", 0, 1, 4, true, 8), take(1, "a", 0, 2, 3, true, 9)}, Ok},
		{"T11 lost update: both saw a full bucket", []TBOp{take(0, "a", 0, 1, 4, true, 9), take(1, "a", 0, 2, 3, true, 9)}, Illegal},
		{"T11 real-time order respected", []TBOp{take(0, "a", 0, 1, 2, true, 8), take(1, "a", 0, 3, 4, true, 9)}, Illegal},
		{"T8 keys independent", []TBOp{take(0, "a", 0, 1, 2, true, 9), take(1, "b", 0, 3, 4, true, 9)}, Ok},
		// A stale reading (0 ms) committing after a newer one (1000 ms) keeps
		// last at 1000 (T4), so a take at 1000 accrues nothing more.
		{"T4 stale clock does not re-credit", []TBOp{
			take(0, "a", 0, 1, 2, true, 9), take(0, "a", 1000, 3, 4, true, 9), take(1, "a", 0, 5, 6, true, 8),
			take(0, "a", 1000, 7, 8, true, 7)}, Ok},
		{"T4 regressed timestamp is illegal", []TBOp{
			take(0, "a", 0, 1, 2, true, 9), take(0, "a", 1000, 3, 4, true, 9), take(1, "a", 0, 5, 6, true, 8),
			take(0, "a", 1000, 7, 8, true, 8)}, Illegal},
		{"unknown outcome may or may not apply", []TBOp{
			{Client: 0, Input: model.TBInput[string]{Kind: model.TBTake, Key: "a", Limits: lim, Cost: 1}, Unknown: true, Call: 1},
			take(1, "a", 0, 3, 4, true, 9)}, Ok},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := CheckTokenBucket(TBHistory{Ops: c.ops}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Result != c.want {
				t.Fatalf("result %s, want %s", rep.Result, c.want)
			}
		})
	}
}

func cr(client int, in model.CrInput[Payload], out model.CrOutput[Payload], call, ret int64) CrOp {
	return CrOp{Client: client, Input: in, Output: out, Call: call, Return: ret}
}

func reserve(h model.HolderID, slot int, epoch uint64) (model.CrInput[Payload], model.CrOutput[Payload]) {
	return model.CrInput[Payload]{Kind: model.CrReserve, Holder: h, Class: model.General},
		model.CrOutput[Payload]{Result: model.OK, Token: model.Token{Slot: slot, Epoch: epoch}}
}

// TestCreditsModelHandHistories pins the credits adapter (C2, C3, C10, C16).
func TestCreditsModelHandHistories(t *testing.T) {
	r1i, r1o := reserve(1, 1, 1)
	r2i, r2o := reserve(2, 2, 2)
	r2slot1i, r2slot1o := reserve(2, 1, 2)
	r2dupi, r2dupo := reserve(2, 2, 1)
	exit1 := model.CrInput[Payload]{Kind: model.CrExit, Holder: 1}
	sweep := model.CrInput[Payload]{Kind: model.CrSweep}
	ok := model.CrOutput[Payload]{OK: true}
	cases := []struct {
		name string
		ops  []CrOp
		want Result
	}{
		{"C2 concurrent reserves take any free slot", []CrOp{cr(0, r2i, r2o, 1, 4), cr(1, r1i, r1o, 2, 3)}, Ok},
		{"C2 sequential reserve may claim slot 2 first", []CrOp{cr(0, r2i, r2o, 1, 2), cr(1, r1i, r1o, 3, 4)}, Ok},
		{"C16 two reservers win one slot", []CrOp{cr(0, r1i, r1o, 1, 4), cr(1, r2slot1i, r2slot1o, 2, 3)}, Illegal},
		{"C3 epoch issued twice", []CrOp{cr(0, r1i, r1o, 1, 2), cr(1, r2dupi, r2dupo, 3, 4)}, Illegal},
		{"C10 sweep frees an exited holder's row", []CrOp{cr(0, r1i, r1o, 1, 2), cr(0, exit1, ok, 3, 4),
			cr(1, sweep, model.CrOutput[Payload]{OK: true, Count: 1}, 5, 6)}, Ok},
		{"C10 sweep cannot free a live holder's row", []CrOp{cr(0, r1i, r1o, 1, 2),
			cr(1, sweep, model.CrOutput[Payload]{OK: true, Count: 1}, 5, 6)}, Illegal},
		{"sweep overlapping the exit may free the row", []CrOp{cr(0, r1i, r1o, 1, 2), cr(0, exit1, ok, 3, 6),
			cr(1, sweep, model.CrOutput[Payload]{OK: true, Count: 1}, 4, 5)}, Ok},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := CheckCredits(CrHistory{Ops: c.ops}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Result != c.want {
				t.Fatalf("result %s (%s), want %s", rep.Result, rep.Detail, c.want)
			}
		})
	}
}

// TestSettledUnknownIsBounded: an unknown operation the backend settled
// (ErrSettled) took effect within its interval or never, and the checker
// holds it to that; an unsettled one may take effect at any later point. An
// enqueue of unknown outcome at [3, 4], a take of its token at [5, 6] that
// finds nothing and one at [7, 8] that finds the payload: legal only if the
// enqueue took effect after 6, which a settled enqueue cannot.
func TestSettledUnknownIsBounded(t *testing.T) {
	ri, ro := reserve(1, 1, 1)
	tok := ro.Token
	enq := model.CrInput[Payload]{Kind: model.CrEnqueue, Holder: 1, Token: tok, Payload: "p", NowMs: 1}
	take := model.CrInput[Payload]{Kind: model.CrTake, Token: tok}
	history := func(settled bool) CrHistory {
		e := cr(0, enq, model.CrOutput[Payload]{}, 3, 4)
		e.Unknown, e.Settled = true, settled
		return CrHistory{Ops: []CrOp{cr(0, ri, ro, 1, 2), e,
			cr(1, take, model.CrOutput[Payload]{}, 5, 6),
			cr(1, take, model.CrOutput[Payload]{OK: true, Payload: "p"}, 7, 8)}}
	}
	for _, c := range []struct {
		settled bool
		want    Result
	}{{false, Ok}, {true, Illegal}} {
		rep, err := CheckCredits(history(c.settled), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Result != c.want {
			t.Errorf("settled %v: %s (%s), want %s", c.settled, rep.Result, rep.Detail, c.want)
		}
	}
	// Settled, it may still never have run: a take that finds nothing
	// after it is legal.
	h := history(true)
	h.Ops = h.Ops[:3]
	if rep, err := CheckCredits(h, Options{}); err != nil || rep.Result != Ok {
		t.Errorf("a settled unknown enqueue that never ran: %v, %v; want Ok", rep.Result, err)
	}
	// A settled operation's interval must be one.
	bad := history(true)
	bad.Ops[1].Return = 2
	if _, err := CheckCredits(bad, Options{}); err == nil || !strings.Contains(err.Error(), "return") {
		t.Errorf("a settled operation returning before its call: %v, want an error naming return", err)
	}
}

// TestIllegalWritesFiles checks that an Illegal verdict writes the
// visualization and the raw history, and that the history loads back.
func TestIllegalWritesFiles(t *testing.T) {
	dir := t.TempDir()
	h := TBHistory{Seed: 7, Ops: []TBOp{take(0, "a", 0, 1, 4, true, 9), take(1, "a", 0, 2, 3, true, 9)},
		Marks: []Mark{{Tag: "clock", At: 2, Text: "clock 0ms"}}}
	rep, err := CheckTokenBucket(h, Options{Dir: dir, Name: "tb"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result != Illegal || rep.HTMLPath != filepath.Join(dir, "tb.html") || rep.JSONPath != filepath.Join(dir, "tb.json") {
		t.Fatalf("report %+v", rep)
	}
	back, err := LoadHistory(rep.JSONPath)
	if err != nil || back.TokenBucket == nil || len(back.TokenBucket.Ops) != 2 || back.TokenBucket.Seed != 7 {
		t.Fatalf("LoadHistory: %+v, %v", back, err)
	}
	if _, err := CheckCredits(CrHistory{Ops: []CrOp{cr(0, model.CrInput[Payload]{Kind: model.CrSnapshot}, model.CrOutput[Payload]{}, 1, 2)}}, Options{}); err == nil ||
		!strings.Contains(err.Error(), "input.kind") {
		t.Fatalf("snapshot in a history: err %v, want an error naming input.kind", err)
	}
}

// TestIllegalVerdictFirst: the verdict on an Illegal history whose files
// are written comes from porcupine's plain search, which stops at the
// first failing partition, not from the verbose search the visualization
// is drawn from, which searches every partition to its end. Key a's two
// takes cannot both leave 9 tokens; key b's 40 takes are legal, and each of
// b's model steps sleeps 10 ms, so a search of b to its end takes at least
// 400 ms. The check must report Illegal (T11) in less (Report.CheckTime
// times the verdict's search alone), and still write the visualization.
func TestIllegalVerdictFirst(t *testing.T) {
	ops := []TBOp{take(0, "a", 0, 1, 4, true, 9), take(1, "a", 0, 2, 3, true, 9)}
	const bSteps, stepSleep = 40, 10 * time.Millisecond
	for i := range int64(bSteps) {
		ops = append(ops, take(2, "b", 1000*i, 10+2*i, 11+2*i, true, 9))
	}
	m := TokenBucketModel()
	step := m.Step
	m.Step = func(state, input, output any) (bool, any) {
		if input.(model.TBInput[string]).Key == "b" {
			time.Sleep(stepSleep)
		}
		return step(state, input, output)
	}
	rep, err := checkTokenBucket(TBHistory{Ops: ops}, Options{Dir: t.TempDir(), Timeout: 5 * time.Second}, m)
	if err != nil || rep.Result != Illegal || rep.Invariant != "T11" || rep.HTMLPath == "" {
		t.Fatalf("%+v, %v", rep, err)
	}
	if full := bSteps * stepSleep; rep.CheckTime >= full {
		t.Fatalf("the verdict took %v: as long as a search of key b to its end (%v), so it waited for the verbose search", rep.CheckTime, full)
	}
}
