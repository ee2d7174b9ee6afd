package fuzz

import (
	"math"

	"pgregory.net/rapid"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/model"
)

// Hook observes each failure as a machine finds it, before the run stops.
// The mutants layers use it to time kills; tests pass nil.
type Hook func(*Failure)

func report(t *rapid.T, hook Hook, f *Failure) {
	if f == nil {
		return
	}
	if hook != nil {
		hook(f)
	}
	t.Fatal(f.Replay())
}

// action is one named step of a machine's mix: it draws its arguments from
// the chooser and applies one or more inputs to the machine.
type action[M any] struct {
	name string
	run  func(m M, c chooser) *Failure
}

type tbAction = action[*TBMachine]

// machine is what the front ends drive: CrMachine and TBMachine.
type machine interface {
	// Check verifies the invariants that hold between operations.
	Check() *Failure
	// applied is the number of operations applied so far.
	applied() int
}

func (m *CrMachine) applied() int { return len(m.hist.ins) }
func (m *TBMachine) applied() int { return len(m.hist.ins) }

// prop is the rapid state machine over acts on a machine from newMachine:
// each action is a rapid action, and the "" action checks the invariants
// after every step.
func prop[M machine](newMachine func() M, acts []action[M], hook Hook) func(*rapid.T) {
	return func(t *rapid.T) {
		m := newMachine()
		actions := make(map[string]func(*rapid.T), len(acts)+1)
		for _, a := range acts {
			run := a.run
			actions[a.name] = func(t *rapid.T) { report(t, hook, run(m, rapidChooser{t})) }
		}
		actions[""] = func(t *rapid.T) { report(t, hook, m.Check()) }
		t.Repeat(actions)
	}
}

// CreditsProp is the credit table's rapid state machine: every action of
// the machine's mix (reserve, fill a class, enqueue, take, finish, drain,
// release, sweep, exit, enqueued, snapshot, bounds, close) applies to the
// implementation built with faults and to the model, and the "" action
// checks the invariants after every step.
func CreditsProp(faults fault.Fault, opts Options, hook Hook) func(*rapid.T) {
	return prop(func() *CrMachine { return NewCrMachine(faults, opts) }, crActions, hook)
}

// TokenBucketProp is the token bucket's rapid state machine (takes, bursts,
// peeks, retry-after, wait-then-take, clock moves, resets).
func TokenBucketProp(faults fault.Fault, opts Options, hook Hook) func(*rapid.T) {
	return prop(func() *TBMachine { return NewTBMachine(faults, opts) }, tbActions, hook)
}

// HostileProp is the token bucket's rapid machine over hostile numbers:
// limits and costs from raw float64 bit patterns and clocks near the int64
// limits.
func HostileProp(faults fault.Fault, opts Options, hook Hook) func(*rapid.T) {
	return prop(func() *TBMachine { return NewTBMachine(faults, opts) }, hostileActions, hook)
}

// MaxInputBytes is the longest prefix of a fuzz input the decoders read;
// the rest is ignored, which keeps every execution short (a few thousand
// operations at most).
const MaxInputBytes = 4096

// RunCreditsBytes decodes data into a credit-table operation sequence (the
// same actions as CreditsProp; the first byte of each picks the action, the
// following ones its arguments) and runs it through a CrMachine, checking
// after every action. Any byte string is a valid input. It returns the
// first violation, or nil.
func RunCreditsBytes(data []byte, faults fault.Fault, opts Options) *Failure {
	_, f := RunCreditsBytesOps(data, faults, opts)
	return f
}

// RunCreditsBytesOps is RunCreditsBytes that also returns how many
// operations the input applied (the reads of the checks between them are not
// counted).
func RunCreditsBytesOps(data []byte, faults fault.Fault, opts Options) (int, *Failure) {
	return runBytes(NewCrMachine(faults, opts), crActions, data)
}

// RunTokenBucketBytes is RunCreditsBytes for the token bucket (the actions
// of TokenBucketProp).
func RunTokenBucketBytes(data []byte, faults fault.Fault, opts Options) *Failure {
	_, f := RunTokenBucketBytesOps(data, faults, opts)
	return f
}

// RunTokenBucketBytesOps is RunTokenBucketBytes that also returns how many
// operations the input applied (the peeks of the checks are not counted).
func RunTokenBucketBytesOps(data []byte, faults fault.Fault, opts Options) (int, *Failure) {
	return runBytes(NewTBMachine(faults, opts), tbActions, data)
}

// RunHostileBytes decodes data into token-bucket operations whose limits,
// costs and clocks are raw bit patterns or their extremes (the actions of
// HostileProp). Every answer must be a clear error (T9) or the model's
// result; tokens must stay finite and within [0, capacity].
func RunHostileBytes(data []byte, faults fault.Fault, opts Options) *Failure {
	_, f := runBytes(NewTBMachine(faults, opts), hostileActions, data)
	return f
}

// runBytes drives m with the actions the bytes of data pick (the first byte
// of each picks the action, the following ones its arguments), checking the
// invariants before the first and after every one. It returns how many
// operations were applied and the first violation, or nil.
func runBytes[M machine](m M, acts []action[M], data []byte) (int, *Failure) {
	c := &byteChooser{b: data[:min(len(data), MaxInputBytes)]}
	if f := m.Check(); f != nil {
		return m.applied(), f
	}
	for !c.Done() {
		a := acts[c.Intn("action", len(acts))]
		if f := a.run(m, c); f != nil {
			return m.applied(), f
		}
		if f := m.Check(); f != nil {
			return m.applied(), f
		}
	}
	return m.applied(), nil
}

// hostileFloats are the float64 values where arithmetic goes wrong first:
// NaNs with payloads, infinities, zeros of both signs, subnormals, the
// extremes of the normal range.
var hostileFloats = []uint64{
	0x7ff8000000000000, // NaN
	0x7ff0000000000001, // signalling NaN with a payload
	0xfff8000000000abc, // negative quiet NaN with a payload
	0x7ff0000000000000, // +Inf
	0xfff0000000000000, // -Inf
	0x0000000000000000, // +0
	0x8000000000000000, // -0
	0x0000000000000001, // smallest subnormal
	0x000fffffffffffff, // largest subnormal
	0x0010000000000000, // smallest normal
	0x7fefffffffffffff, // MaxFloat64
	0xffefffffffffffff, // -MaxFloat64
	0x3ff0000000000000, // 1
	0x3fe0000000000000, // 0.5
	0x3cb0000000000000, // 2^-52
	0x4340000000000000, // 2^53
	0x7e37e43c8800759c, // 1e300
	0x01a56e1fc2f8f359, // 1e-300
}

func hostileFloat(c chooser, label string) float64 {
	if c.Intn(label+"-kind", 3) == 0 {
		return math.Float64frombits(c.Bits(label))
	}
	return math.Float64frombits(hostileFloats[c.Intn(label, len(hostileFloats))])
}

// hostileClock picks a clock near the ends of int64, near zero, raw, or a
// small step from the machine's clock in either direction.
func hostileClock(c chooser, m *TBMachine) int64 {
	switch c.Intn("clock-kind", 6) {
	case 0:
		return math.MaxInt64 - c.Int64Range("from-max", 0, 2000)
	case 1:
		return math.MinInt64 + c.Int64Range("from-min", 0, 2000)
	case 2:
		return int64(c.Bits("clock"))
	case 3:
		return c.Int64Range("near-zero", -2000, 2000)
	default:
		step := c.Int64Range("step", -2000, 2000)
		if s := m.nowMs + step; (step > 0 && s < m.nowMs) || (step < 0 && s > m.nowMs) {
			return m.nowMs // would overflow: stand still
		}
		return m.nowMs + step
	}
}

func hostileInput(m *TBMachine, c chooser, kind model.TBKind) model.TBInput[int] {
	key := c.Intn("key", 3)
	lim, ok := m.limits[key]
	if !ok || c.Intn("new-limits", 2) == 0 {
		lim = model.Limits{Capacity: hostileFloat(c, "cap"), RefillPerSecond: hostileFloat(c, "rate")}
	}
	in := model.TBInput[int]{Kind: kind, Key: key, Limits: lim, NowMs: hostileClock(c, m)}
	if kind != model.TBPeek {
		switch c.Intn("cost-kind", 3) {
		case 0:
			in.Cost = hostileFloat(c, "cost")
		case 1:
			in.Cost = lim.Capacity
		default:
			in.Cost = max(c.Float01("cost"), math.SmallestNonzeroFloat64) * lim.Capacity
		}
	}
	m.nowMs = in.NowMs
	return in
}

var hostileActions = []tbAction{
	{"take", func(m *TBMachine, c chooser) *Failure { return m.Step(hostileInput(m, c, model.TBTake)) }},
	{"take-again", func(m *TBMachine, c chooser) *Failure { return m.Step(hostileInput(m, c, model.TBTake)) }},
	{"peek", func(m *TBMachine, c chooser) *Failure { return m.Step(hostileInput(m, c, model.TBPeek)) }},
	{"retry_after", func(m *TBMachine, c chooser) *Failure { return m.Step(hostileInput(m, c, model.TBRetryAfter)) }},
	{"reset", func(m *TBMachine, c chooser) *Failure {
		return m.Step(model.TBInput[int]{Kind: model.TBReset, Key: c.Intn("key", 3)})
	}},
}
