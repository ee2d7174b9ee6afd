package limiters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// bucket is a hand-written AllowN-at-time limiter for the child's tests:
// with stale set it stores a stale reading, as x/time/rate does.
type bucket struct{ stale bool }

func (bucket) Module() string { return "example.com/bucket" }

func (bucket) Workloads(bool) []Workload {
	var steps []Step
	for i := range 100 {
		at := int64(1000 * msNs)
		if i%2 == 1 {
			at = 0
		}
		steps = append(steps, Step{Op: "call", AtNs: at, Cost: 1})
	}
	return []Workload{{Name: "stale", Params: Params{Burst: 5, Rate: 10}, Steps: steps, Props: []string{PropBound, PropRefusal}}}
}

func (b bucket) RunSteps(p Params, steps []Step) ([]Event, error) {
	tokens, last := p.Burst, int64(math.MinInt64)
	var evs []Event
	for i, s := range steps {
		if last != math.MinInt64 && s.AtNs > last {
			tokens = math.Min(p.Burst, tokens+p.Rate*float64(s.AtNs-last)/1e9)
		}
		if last == math.MinInt64 || s.AtNs > last || b.stale {
			last = s.AtNs
		}
		ok := tokens >= s.Cost
		if ok {
			tokens -= s.Cost
		}
		evs = append(evs, Event{Step: i, Cost: s.Cost, LoNs: s.AtNs, HiNs: s.AtNs, OK: ok})
	}
	return evs, nil
}

func (bucket) RunConcurrent(Workload, uint64, string) ([]Event, *Lin, error) { return nil, nil, nil }

func runChild(t *testing.T, a Adapter, args ...string) []Result {
	t.Helper()
	var out, errb bytes.Buffer
	if rc := child(a, args, &out, &errb); rc != 0 {
		t.Fatalf("child %v: exit %d: %s", args, rc, errb.String())
	}
	var rs []Result
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// A limiter that stores stale readings breaks L1; the violation is shrunk
// to a handful of steps, written, and replays from its file. The fixed
// limiter keeps both properties.
func TestChildFindsShrinksAndReplays(t *testing.T) {
	dir := t.TempDir()
	rs := runChild(t, bucket{stale: true}, "-dir", dir)
	if len(rs) != 2 || rs[0].Prop != PropBound || rs[0].Verdict != Violated || rs[1].Verdict != Holds {
		t.Fatalf("stale bucket: %+v, want L1 violated and L2 holding", rs)
	}
	c, err := ReadCex(rs[0].Cex)
	if err != nil {
		t.Fatal(err)
	}
	// b=5, r=10/s over [0, 1 s]: 15 allowed; 16 admitted calls is the least
	// that breaks it, and each stale pair needs both readings.
	if len(c.Steps) == 0 || len(c.Steps) >= 100 || c.Original != 100 || c.Finding.Holds {
		t.Fatalf("counterexample: %d steps (from %d), finding %+v", len(c.Steps), c.Original, c.Finding)
	}
	rep := runChild(t, bucket{stale: true}, "-mode", "replay", "-cex", rs[0].Cex)
	if rep[0].Verdict != Violated {
		t.Fatalf("replay: %+v, want the violation again", rep[0])
	}
	rep = runChild(t, bucket{}, "-mode", "replay", "-cex", rs[0].Cex)
	if rep[0].Verdict != Holds {
		t.Fatalf("replay on the fixed bucket: %+v, want it to hold", rep[0])
	}
	for _, r := range runChild(t, bucket{}, "-dir", dir) {
		if r.Verdict != Holds {
			t.Fatalf("fixed bucket: %+v", r)
		}
	}
}

func TestChildBadInput(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := child(bucket{}, []string{"-workload", "nope"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "nope") {
		t.Fatalf("unknown workload: exit %d, %q", rc, errb.String())
	}
	if rc := child(bucket{}, []string{"-mode", "fly"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "mode") {
		t.Fatalf("bad mode: exit %d, %q", rc, errb.String())
	}
}

// A recorded concurrent violation keeps only its worst window, which still
// breaks the bound.
func TestWindowOfKeepsTheViolation(t *testing.T) {
	p := Params{Burst: 2, Rate: 1}
	var evs []Event
	for i := range 10 {
		evs = append(evs, Event{Cost: 1, LoNs: int64(i) * 1000 * msNs, HiNs: int64(i) * 1000 * msNs, OK: true, CallSeq: int64(2*i + 1), RetSeq: int64(2*i + 2)})
	}
	for i := range 4 { // four at 20 s
		evs = append(evs, Event{Cost: 1, LoNs: 20_000 * msNs, HiNs: 20_000 * msNs, OK: true, CallSeq: int64(30 + 2*i), RetSeq: int64(31 + 2*i)})
	}
	f := CheckBound(p, evs)
	if f.Holds {
		t.Fatal("no violation to keep")
	}
	keep, g := windowOf(PropBound, p, f, evs)
	if len(keep) != 4 || g.Holds {
		t.Fatalf("windowOf kept %d calls (%+v), want the 4 at 20 s still failing", len(keep), g)
	}
}

// infBucket refuses everything: with an infinite rate every refusal is
// spurious, and the ideal level (+Inf) and the rate must still encode.
type infBucket struct{ bucket }

func (infBucket) Workloads(bool) []Workload {
	p := Params{Burst: 0, Rate: math.Inf(1)}
	return []Workload{{Name: "inf", Params: p, Steps: []Step{{Op: "call", Cost: 1}, {Op: "call", AtNs: msNs, Cost: 1}}, Props: []string{PropBound, PropRefusal}}}
}

func (infBucket) RunSteps(_ Params, steps []Step) ([]Event, error) {
	var evs []Event
	for i, s := range steps {
		evs = append(evs, Event{Step: i, Cost: s.Cost, LoNs: s.AtNs, HiNs: s.AtNs})
	}
	return evs, nil
}

func TestChildInfiniteRate(t *testing.T) {
	rs := runChild(t, infBucket{}, "-dir", t.TempDir())
	if len(rs) != 2 || rs[0].Verdict != NA || rs[1].Verdict != Violated {
		t.Fatalf("%+v, want L1 n/a and L2 violated", rs)
	}
	c, err := ReadCex(rs[1].Cex)
	if err != nil || !math.IsInf(c.Params.Rate, 1) {
		t.Fatalf("counterexample: rate %v, %v; want +Inf back", c.Params.Rate, err)
	}
	if rep := runChild(t, infBucket{}, "-mode", "replay", "-cex", rs[1].Cex); rep[0].Verdict != Violated {
		t.Fatalf("replay: %+v", rep[0])
	}
}

// twoBuckets has four workloads, so that shards of it differ.
type twoBuckets struct{ bucket }

func (twoBuckets) Workloads(quick bool) []Workload {
	w := bucket{}.Workloads(quick)[0]
	var ws []Workload
	for _, name := range []string{"a", "b", "c", "d"} {
		w.Name = name
		ws = append(ws, w)
	}
	return ws
}

// The child runs the workloads of its -shard only: the shards of 2 and of
// 3 run each workload once, and a bad -shard is a usage error.
func TestChildShard(t *testing.T) {
	dir := t.TempDir()
	for n := 2; n <= 3; n++ {
		got := map[string]int{}
		for i := 1; i <= n; i++ {
			var out, errb bytes.Buffer
			if rc := child(twoBuckets{}, []string{"-dir", dir, "-shard", fmt.Sprintf("%d/%d", i, n)}, &out, &errb); rc != 0 {
				t.Fatalf("-shard %d/%d: exit %d: %s", i, n, rc, errb.String())
			}
			for line := range strings.Lines(out.String()) {
				var r Result
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				if r.Prop == PropBound {
					got[r.Workload]++
				}
			}
		}
		if len(got) != 4 || got["a"] != 1 || got["b"] != 1 || got["c"] != 1 || got["d"] != 1 {
			t.Errorf("shards of %d ran %v, want each of a, b, c, d once", n, got)
		}
	}
	var out, errb bytes.Buffer
	if rc := child(twoBuckets{}, []string{"-shard", "0/2"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "-shard 0/2") {
		t.Errorf("bad -shard: exit %d, %q", rc, errb.String())
	}
}
