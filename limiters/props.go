package limiters

import (
	"fmt"
	"math"
	"sort"
)

// Finding is what one property check concluded about one history.
type Finding struct {
	Prop string `json:"prop"`
	// Holds is false for a violation. NA is set when the property says
	// nothing about this history (an infinite rate has no bound).
	Holds bool `json:"holds"`
	NA    bool `json:"na,omitempty"`
	// The worst case seen: the admitted cost (L1), the calls returned (L3)
	// or the ideal bucket's level at a refusal (L2), against what the
	// property allows there, tolerance included.
	Seen    float64 `json:"seen"`
	Allowed float64 `json:"allowed"`
	// The window (L1, L3: indices into the events, sorted as the check
	// sorted them; their readings) or the refused call (L2: From = To).
	From   int    `json:"from"`
	To     int    `json:"to"`
	FromNs int64  `json:"from_ns"`
	ToNs   int64  `json:"to_ns"`
	Detail string `json:"detail"`
}

// BoundTol is L1's tolerance: relative float rounding, 1e-9 of the bound,
// plus an absolute 1e-9 token.
func BoundTol(bound float64) float64 { return 1e-9*bound + 1e-9 }

// RefusalTol is L2's tolerance: the ideal bucket must hold at least cost +
// RefusalTol for a refusal to count as spurious.
func RefusalTol(p Params) float64 { return 1e-6*p.Burst + 1e-9 }

// CheckBound checks L1 on events: over every set of admitted calls whose
// readings lie in [t1, t2], the total cost is at most
// b + r·(t2 − t1 + resolution) (+ BoundTol). Readings known only as an
// interval [Lo, Hi] count with the widest span they could have, so a
// reported violation is one whatever the exact readings were. Stale
// readings count like any other: the bound is over the readings callers
// passed, not over the order they arrived in.
func CheckBound(p Params, evs []Event) Finding {
	f := Finding{Prop: PropBound, Holds: true}
	if math.IsInf(p.Rate, 1) {
		f.NA, f.Detail = true, "infinite rate: no bound"
		return f
	}
	idx := admitted(evs)
	sort.SliceStable(idx, func(a, b int) bool { return evs[idx[a]].LoNs < evs[idx[b]].LoNs })
	exact := true
	for _, i := range idx {
		exact = exact && evs[i].LoNs == evs[i].HiNs
	}
	var worst float64
	if exact {
		worst = boundExact(p, evs, idx, &f)
	} else {
		worst = boundWindows(p, evs, idx, &f)
	}
	if len(idx) == 0 {
		f.Detail = "nothing admitted"
		return f
	}
	f.Holds = worst <= 0
	f.Detail = fmt.Sprintf("worst window [%s, %s]: %s admitted, bound b + r·Δ = %s (b=%s, r=%s/s, Δ=%s)",
		fmtNs(f.FromNs), fmtNs(f.ToNs), g(f.Seen), g(f.Allowed), g(p.Burst), g(p.Rate), fmtNs(f.ToNs-f.FromNs))
	return f
}

// boundWindows tries every window [lo_a, max hi of a..b] of the admitted
// calls sorted by lower reading: O(n²), for readings known as intervals.
// It returns the largest excess over the allowed cost and fills f's window.
func boundWindows(p Params, evs []Event, idx []int, f *Finding) float64 {
	worst := math.Inf(-1)
	for a := range idx {
		sum := 0.0
		hi := evs[idx[a]].HiNs
		for b := a; b < len(idx); b++ {
			e := evs[idx[b]]
			sum += e.Cost
			hi = max(hi, e.HiNs)
			span := float64(hi-evs[idx[a]].LoNs) + float64(p.ResolutionNs)
			bound := p.Burst + p.Rate*span/1e9
			allowed := bound + BoundTol(bound)
			if ex := sum - allowed; ex > worst {
				worst = ex
				f.Seen, f.Allowed, f.From, f.To = sum, allowed, idx[a], idx[b]
				f.FromNs, f.ToNs = evs[idx[a]].LoNs, hi
			}
		}
	}
	return worst
}

// boundExact is boundWindows for exact readings in O(n): the excess of
// window [a, b] is (S_b − k·t_b) − (S_{a−1} − k·t_a) − c with S the prefix
// sums of cost, k = r(1 + 1e-9)/1e9 per ns and c the rest of the allowance,
// so the best a for each b is the running minimum of S_{a−1} − k·t_a.
// Calls at the same reading all belong to a window that holds one of them
// (the best a is the first call at its reading, the best b the last).
func boundExact(p Params, evs []Event, idx []int, f *Finding) float64 {
	k := p.Rate * (1 + 1e-9) / 1e9
	bound0 := p.Burst + p.Rate*float64(p.ResolutionNs)/1e9
	c := bound0 + BoundTol(bound0)
	worst := math.Inf(-1)
	best, bestAt := math.Inf(1), 0
	prefix := 0.0
	for b, i := range idx {
		t := evs[i].LoNs
		if v := prefix - k*float64(t-evs[idx[0]].LoNs); b == 0 || t != evs[idx[b-1]].LoNs {
			if v < best {
				best, bestAt = v, b
			}
		}
		prefix += evs[i].Cost
		if b+1 < len(idx) && evs[idx[b+1]].LoNs == t {
			continue
		}
		ex := prefix - k*float64(t-evs[idx[0]].LoNs) - best - c
		if ex > worst {
			worst = ex
			a := idx[bestAt]
			span := float64(t-evs[a].LoNs) + float64(p.ResolutionNs)
			bound := p.Burst + p.Rate*span/1e9
			f.Seen, f.Allowed = prefix-(best+k*float64(evs[a].LoNs-evs[idx[0]].LoNs)), bound+BoundTol(bound)
			f.From, f.To, f.FromNs, f.ToNs = a, i, evs[a].LoNs, t
		}
	}
	return worst
}

// CheckRefusals checks L2 on a sequential history (events in call order):
// an ideal token bucket of burst b and rate r, full at the first reading
// (its upper end), refilled only as the newest reading moves forward (each
// reading's lower end) and charged with every call the library admitted,
// must not have room for a call the library refuses, when that call's
// reading is not older than the newest so far and its cost is at most b.
// Room means cost ≤ level while the ideal level is exact (full, initially
// or after a refill that reached b + RefusalTol, less whole costs), and
// cost + RefusalTol ≤ level once it holds a fraction accrued from elapsed
// time (the library's float rounding may fall short there). A refusal at a
// stale reading is never counted (a bucket may judge it at the newest
// reading, or refuse it). With an infinite rate every refusal counts.
func CheckRefusals(p Params, evs []Event) Finding {
	f := Finding{Prop: PropRefusal, Holds: true}
	if len(evs) == 0 {
		f.Detail = "no calls"
		return f
	}
	level, exact := p.Burst, true
	newest := evs[0].HiNs
	tol := RefusalTol(p)
	spurious := 0
	for i, e := range evs {
		stale := e.LoNs < newest
		if e.LoNs > newest {
			if !math.IsInf(p.Rate, 1) && p.Rate > 0 {
				u := level + p.Rate*float64(e.LoNs-newest)/1e9
				switch {
				case u >= p.Burst+tol:
					level, exact = p.Burst, true
				case u != level:
					level, exact = min(p.Burst, u), false
				}
			}
			newest = e.LoNs
		}
		if math.IsInf(p.Rate, 1) {
			level, exact = math.Inf(1), true
		}
		if e.OK {
			level -= e.Cost
			continue
		}
		if stale || (e.Cost > p.Burst && !math.IsInf(p.Rate, 1)) {
			continue
		}
		need := e.Cost
		if !exact {
			need += tol
		}
		if level >= need {
			spurious++
			if spurious == 1 {
				f.Holds = false
				f.Seen, f.Allowed, f.From, f.To, f.FromNs, f.ToNs = level, need, i, i, e.LoNs, e.HiNs
			}
		}
	}
	if f.Holds {
		f.Detail = "no refusal while the ideal bucket had room"
		return f
	}
	f.Detail = fmt.Sprintf("%d spurious refusal(s); first: call %d (cost %s) at %s refused while the ideal bucket held %s",
		spurious, f.From, g(evs[f.From].Cost), fmtNs(f.FromNs), g(f.Seen))
	return f
}

// CheckPacer checks L3: with R the times the calls returned, no window
// [R_i, R_j] holds more than slack + 1 + r·(R_j − R_i + resolution) returns
// (+ BoundTol).
func CheckPacer(p Params, evs []Event) Finding {
	f := Finding{Prop: PropPacer, Holds: true}
	if len(evs) == 0 {
		f.Detail = "no calls"
		return f
	}
	rs := make([]int64, len(evs))
	for i, e := range evs {
		rs[i] = e.RetNs
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a] < rs[b] })
	worst := math.Inf(-1)
	for a := range rs {
		for b := a; b < len(rs); b++ {
			bound := float64(p.Slack) + 1 + p.Rate*(float64(rs[b]-rs[a])+float64(p.ResolutionNs))/1e9
			allowed := bound + BoundTol(bound)
			if ex := float64(b-a+1) - allowed; ex > worst {
				worst = ex
				f.Seen, f.Allowed, f.From, f.To, f.FromNs, f.ToNs = float64(b-a+1), allowed, a, b, rs[a], rs[b]
			}
		}
	}
	f.Holds = worst <= 0
	f.Detail = fmt.Sprintf("worst window [%s, %s]: %s returns, bound slack + 1 + r·Δ = %s (slack=%d, r=%s/s)",
		fmtNs(f.FromNs), fmtNs(f.ToNs), g(f.Seen), g(f.Allowed), p.Slack, g(p.Rate))
	return f
}

// Check runs the property prop on evs.
func Check(prop string, p Params, evs []Event) (Finding, error) {
	switch prop {
	case PropBound:
		return CheckBound(p, evs), nil
	case PropRefusal:
		return CheckRefusals(p, evs), nil
	case PropPacer:
		return CheckPacer(p, evs), nil
	}
	return Finding{}, fmt.Errorf("limiters: property %q must be one of L1, L2, L3 (L4 is checked by porcupine)", prop)
}

func admitted(evs []Event) []int {
	var idx []int
	for i, e := range evs {
		if e.OK {
			idx = append(idx, i)
		}
	}
	return idx
}

func g(x float64) string { return fmt.Sprintf("%.6g", x) }

func fmtNs(ns int64) string {
	switch a := max(ns, -ns); {
	case a == 0:
		return "0"
	case a < 1e3:
		return fmt.Sprintf("%dns", ns)
	case a < 1e6:
		return fmt.Sprintf("%.6gµs", float64(ns)/1e3)
	case a < 1e9:
		return fmt.Sprintf("%.6gms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.6gs", float64(ns)/1e9)
}
