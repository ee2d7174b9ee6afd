package limiters

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// The properties of spec/limiters.md, by ID.
const (
	PropBound      = "L1" // admission bound
	PropRefusal    = "L2" // no spurious refusal
	PropPacer      = "L3" // pacer window bound
	PropLinearizes = "L4" // linearizable against the library's own sequential behaviour
)

// PropName is the short name of a property ID, for tables.
func PropName(id string) string {
	switch id {
	case PropBound:
		return "L1 bound"
	case PropRefusal:
		return "L2 no spurious refusal"
	case PropPacer:
		return "L3 pacer"
	case PropLinearizes:
		return "L4 linearizable"
	}
	return id
}

// Origins are the instants a workload's clock offsets count from: readings
// are stored as nanoseconds after the origin, so that instants no int64 of
// Unix nanoseconds can hold (the zero time.Time, year 1) are still exact.
var Origins = map[string]time.Time{
	"2026":        time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	"unix-epoch":  time.Unix(0, 0).UTC(),
	"zero-time":   {},
	"negative":    time.Unix(-1<<31, 0).UTC(), // 1901, a negative Unix time
	"before-zero": time.Time{}.Add(-time.Hour),
}

// Origin returns the named origin, or an error naming the field and the
// rule.
func Origin(name string) (time.Time, error) {
	if name == "" {
		name = "2026"
	}
	t, ok := Origins[name]
	if !ok {
		return time.Time{}, fmt.Errorf("limiters: origin %q must be one of 2026, unix-epoch, zero-time, negative, before-zero", name)
	}
	return t, nil
}

// Params are a limiter's promise: burst b and rate r (per second); for a
// pacer, its slack. ResolutionNs is the library's clock resolution: every
// reading may be off by that much. TickNs is how far an injected clock moves
// on every reading (0: it moves only when the workload idles or the limiter
// sleeps).
type Params struct {
	Burst        float64 `json:"burst"`
	Rate         float64 `json:"rate"` // per second; +Inf allowed (JSON: "Inf" via RateText)
	RateText     string  `json:"rate_text,omitempty"`
	Slack        int     `json:"slack,omitempty"`
	Origin       string  `json:"origin,omitempty"`
	TickNs       int64   `json:"tick_ns,omitempty"`
	ResolutionNs int64   `json:"resolution_ns,omitempty"`
}

// Fix restores Rate from RateText after JSON decoding (JSON has no +Inf).
func (p *Params) Fix() {
	if p.RateText == "Inf" {
		p.Rate = math.Inf(1)
	}
}

// MarshalJSON writes an infinite rate as rate_text "Inf" (JSON has no
// +Inf); UnmarshalJSON reads it back.
func (p Params) MarshalJSON() ([]byte, error) {
	type plain Params
	q := plain(p)
	if math.IsInf(q.Rate, 1) {
		q.Rate, q.RateText = 0, "Inf"
	}
	return json.Marshal(q)
}

// UnmarshalJSON implements json.Unmarshaler (see MarshalJSON).
func (p *Params) UnmarshalJSON(data []byte) error {
	type plain Params
	var q plain
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	*p = Params(q)
	p.Fix()
	return nil
}

// finite maps ±Inf and NaN to the largest finite float of the same sign
// (NaN to 0), for JSON, which has no infinities.
func finite(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return x
}

// Step is one step of a deterministic workload: a call of Cost at clock
// offset AtNs (for libraries that take the time as an argument), or, for
// libraries that read an injected clock, Idle nanoseconds of the clock
// moving with no call (Op "idle") or a call at whatever the clock says (Op
// "call", AtNs unused).
type Step struct {
	Op   string  `json:"op"` // "call" or "idle"
	AtNs int64   `json:"at_ns,omitempty"`
	Cost float64 `json:"cost,omitempty"`
	Idle int64   `json:"idle_ns,omitempty"`
}

// Event is one call as the properties see it. LoNs ≤ HiNs bound the clock
// reading the library judged the call at (equal when the caller passed the
// reading); RetNs is when a pacer's call returned (the time Take reported).
// All are nanoseconds after the workload's origin.
type Event struct {
	Client int     `json:"client"`
	Step   int     `json:"step"`
	Cost   float64 `json:"cost"`
	LoNs   int64   `json:"lo_ns"`
	HiNs   int64   `json:"hi_ns"`
	OK     bool    `json:"ok"`
	RetNs  int64   `json:"ret_ns,omitempty"`
	// CallSeq and RetSeq stamp a concurrent call's interval on the
	// recording's one time base (linearizability.Stamps); zero in a
	// sequential history, whose order is the events' order.
	CallSeq int64 `json:"call_seq,omitempty"`
	RetSeq  int64 `json:"ret_seq,omitempty"`
}

// Workload is one run against a library: Seq steps run in order by one
// goroutine (deterministic, replayable step by step), or, when Clients > 0,
// a concurrent run on the real clock, seeded.
type Workload struct {
	Name   string   `json:"name"`
	Hunts  string   `json:"hunts"` // the bug class it looks for
	Params Params   `json:"params"`
	Steps  []Step   `json:"steps,omitempty"`
	Props  []string `json:"props"`
	// Concurrent runs.
	Clients int  `json:"clients,omitempty"`
	PerCli  int  `json:"per_client,omitempty"`
	Yield   bool `json:"yield,omitempty"`   // yield between reading the clock and calling
	IdleMs  int  `json:"idle_ms,omitempty"` // idle after the first half, then the second half at once
}

// Concurrent reports whether w runs many goroutines on the real clock.
func (w Workload) Concurrent() bool { return w.Clients > 0 }
