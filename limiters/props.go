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

// CheckBound checks L1 on events: for every set S of admitted calls,
//
//	cost(S) ≤ b + r·(max_{i∈S} newest_i − min_{i∈S} lo_i + resolution)
//
// (+ BoundTol), where newest_i is the newest reading the limiter could have
// been given by the time call i was made (Newest). A stale reading counts
// at its own value at the start of a window and at the newest reading seen
// so far at its end: that is the tightest bound a token bucket can keep
// when readings come out of order (a bucket whose time never goes back, T4,
// keeps it; TestBoundMonotoneBucketKeepsIt), and one that re-credits time
// when a reading goes back does not. Readings known only as an interval
// count with the widest span they could have, so a reported violation is
// one whatever the exact readings were.
func CheckBound(p Params, evs []Event) Finding {
	f := Finding{Prop: PropBound, Holds: true}
	if math.IsInf(p.Rate, 1) {
		f.NA, f.Detail = true, "infinite rate: no bound"
		return f
	}
	newest := Newest(evs)
	idx := admitted(evs)
	if len(idx) == 0 {
		f.Detail = "nothing admitted"
		return f
	}
	byLo := append([]int(nil), idx...)
	sort.SliceStable(byLo, func(a, b int) bool { return evs[byLo[a]].LoNs < evs[byLo[b]].LoNs })
	byNewest := append([]int(nil), idx...)
	sort.SliceStable(byNewest, func(a, b int) bool { return newest[byNewest[a]] < newest[byNewest[b]] })
	worst := math.Inf(-1)
	for a, i := range byLo {
		if a > 0 && evs[byLo[a-1]].LoNs == evs[i].LoNs {
			continue // the same lower end as the window before
		}
		lo := evs[i].LoNs
		sum := 0.0
		for k, j := range byNewest {
			if evs[j].LoNs < lo {
				continue
			}
			sum += evs[j].Cost
			if k+1 < len(byNewest) && newest[byNewest[k+1]] == newest[j] {
				continue // take every call with the same upper end
			}
			span := float64(newest[j]-lo) + float64(p.ResolutionNs)
			bound := p.Burst + p.Rate*span/1e9
			allowed := bound + BoundTol(bound)
			if ex := sum - allowed; ex > worst {
				worst = ex
				f.Seen, f.Allowed, f.From, f.To, f.FromNs, f.ToNs = sum, allowed, i, j, lo, newest[j]
			}
		}
	}
	f.Holds = worst <= 0
	f.Detail = fmt.Sprintf("worst window [%s, %s]: %s admitted, bound b + r·Δ = %s (b=%s, r=%s/s, Δ=%s)",
		fmtNs(f.FromNs), fmtNs(f.ToNs), g(f.Seen), g(f.Allowed), g(p.Burst), g(p.Rate), fmtNs(f.ToNs-f.FromNs))
	return f
}

// Newest returns, for every event, the newest reading the limiter could
// have been given by the time the call was made: for a sequential history
// (no stamps), the largest upper reading of the calls up to and including
// it, in order; for a concurrent one, the largest upper reading of the
// calls that started before it returned (any of them may have committed
// first).
func Newest(evs []Event) []int64 {
	out := make([]int64, len(evs))
	stamped := false
	for _, e := range evs {
		stamped = stamped || e.CallSeq != 0 || e.RetSeq != 0
	}
	if !stamped {
		n := int64(math.MinInt64)
		for i, e := range evs {
			n = max(n, e.HiNs)
			out[i] = n
		}
		return out
	}
	order := make([]int, len(evs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return evs[order[a]].CallSeq < evs[order[b]].CallSeq })
	prefix := make([]int64, len(order)) // max hi over the first k+1 calls by call stamp
	n := int64(math.MinInt64)
	for k, i := range order {
		n = max(n, evs[i].HiNs)
		prefix[k] = n
	}
	for i, e := range evs {
		// the calls with CallSeq <= e.RetSeq
		k := sort.Search(len(order), func(k int) bool { return evs[order[k]].CallSeq > e.RetSeq }) - 1
		out[i] = max(e.HiNs, prefix[max(k, 0)])
	}
	return out
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
