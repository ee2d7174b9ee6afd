package fuzz

import (
	"fmt"
	"math"
	"sort"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/sut"
	"github.com/tollgate/tollgate/model"
)

// TBMachine runs one token-bucket table beside the model
// (spec/tokenbucket.md). Keys are ints.
type TBMachine struct {
	opts  Options
	model model.TBTable[int]
	sut   func(model.TBInput[int]) model.TBOutput // the implementation's Apply
	hist  history[model.TBInput[int]]

	bound   map[int]*model.T5Bound // T5, per key since its last reset
	limits  map[int]model.Limits   // the limits each key was last used with (valid ones)
	nowMs   int64                  // the machine's clock
	touched []int                  // keys with limits, sorted, for Check

	// tamper, when set (tests only), rewrites the implementation's answers.
	tamper func(in model.TBInput[int], out model.TBOutput) model.TBOutput
}

// NewTBMachine returns a machine over an empty model table and a fresh
// implementation table carrying faults.
func NewTBMachine(faults fault.Fault, opts Options) *TBMachine {
	return &TBMachine{
		opts:   opts,
		sut:    sut.NewTokenBucket[int](faults).Apply,
		bound:  map[int]*model.T5Bound{},
		limits: map[int]model.Limits{},
	}
}

func (m *TBMachine) apply(in model.TBInput[int]) (model.TBOutput, string) {
	return guardedApply(m.sut, m.tamper, in)
}

// Step applies in to the implementation and the model, checks the
// properties on the implementation's answer, then (unless PropertiesOnly)
// compares the answer with the model's, bit for bit. A different answer is
// reported under the invariant model.TBDivergence names.
func (m *TBMachine) Step(in model.TBInput[int]) *Failure {
	m.hist.add(in)
	before := m.model.Bucket(in.Key)
	next, want := m.model.Step(in)
	got, perr := m.apply(in)
	if perr != "" {
		return m.hist.fail("panic", perr)
	}
	if f := m.properties(in, before, got); f != nil {
		return f
	}
	if !m.opts.PropertiesOnly && !want.Equal(got) {
		return m.disagree(in, want, got, m.hist.ins[:len(m.hist.ins)-1], "")
	}
	m.model = next
	return nil
}

// disagree reports an answer of the implementation that differs from the
// model's, after the inputs prior, under the invariant it breaks.
func (m *TBMachine) disagree(in model.TBInput[int], want, got model.TBOutput, prior []model.TBInput[int], context string) *Failure {
	return m.hist.fail(model.TBDivergence(prior, in, want, got), fmt.Sprintf("%s%v: the model answers %s, the implementation %s",
		context, in, want.Answer(in.Kind), got.Answer(in.Kind)))
}

func (m *TBMachine) peek(key int, lim model.Limits, nowMs int64) (float64, *Failure) {
	out, perr := m.apply(model.TBInput[int]{Kind: model.TBPeek, Key: key, Limits: lim, NowMs: nowMs})
	if perr != "" {
		return 0, m.hist.fail("panic", "peek: "+perr)
	}
	return out.Tokens, nil
}

// inRange is the range every token count must lie in: finite, 0 ≤ x ≤
// capacity (T1, T6, T8: a smaller capacity clamps what the call sees).
func inRange(x, capacity float64) bool { return x >= 0 && x <= capacity && !math.IsInf(x, 0) }

// properties checks the implementation's answer got to in, from the
// model's bucket before it, against the invariants that hold whatever the
// model answers (checked on every step, with PropertiesOnly or not): resets
// and reclaims update the T5 bounds, invalid arguments are refused by the
// field the model names (T9), and a valid call is judged by its kind.
func (m *TBMachine) properties(in model.TBInput[int], before model.Bucket, got model.TBOutput) *Failure {
	switch in.Kind {
	case model.TBReset:
		delete(m.bound, in.Key) // T5 starts again (T10)
		return nil
	case model.TBResetAll:
		clear(m.bound)
		return nil
	case model.TBReclaim:
		return m.reclaimProperties(in, got)
	}
	argErr := model.CheckLimits(in.Limits, in.Cost, in.Kind != model.TBPeek)
	switch {
	case argErr != nil && got.Invalid != argErr.Field:
		return m.hist.fail("T9", fmt.Sprintf("arguments break %q (%s), but the implementation answered %+v", argErr.Field, argErr.Rule, got))
	case argErr == nil && got.Invalid != "":
		return m.hist.fail("T9", fmt.Sprintf("valid arguments refused: field %q", got.Invalid))
	case argErr != nil:
		return nil
	}
	if _, ok := m.limits[in.Key]; !ok {
		m.touched = append(m.touched, in.Key)
		sort.Ints(m.touched)
	}
	m.limits[in.Key] = in.Limits
	lim := in.Limits
	if in.Kind == model.TBAdmit && !got.OK {
		// T7: a refusal's wait is RetryAfter of the state that refused.
		if w := model.RetryAfter(before, lim, in.Cost, in.NowMs); got.RetryAfterMs != w {
			return m.hist.fail("T7", fmt.Sprintf("admit of %v refused with a wait of %d ms; the bucket that refused gives %d ms", in.Cost, got.RetryAfterMs, w))
		}
	}
	switch in.Kind {
	case model.TBTake, model.TBAdmit:
		return m.takeProperties(in, before, got)
	case model.TBPeek:
		if !inRange(got.Tokens, lim.Capacity) {
			return m.hist.fail("T6", fmt.Sprintf("peek shows %v tokens, outside [0, capacity %v]", got.Tokens, lim.Capacity))
		}
	case model.TBRetryAfter:
		return m.checkRetryAfter(in, got.RetryAfterMs)
	}
	return nil
}

// reclaimProperties checks a reclaim: invalid limits refused by the field
// the model names (T9), a count of buckets forgotten that is not negative
// (T12); and it lets every T5 bound forget what the reclaim may have.
func (m *TBMachine) reclaimProperties(in model.TBInput[int], got model.TBOutput) *Failure {
	if argErr := model.CheckLimits(in.Limits, 0, false); argErr != nil || got.Invalid != "" {
		if argErr == nil || got.Invalid != argErr.Field {
			return m.hist.fail("T9", fmt.Sprintf("reclaim with %v: the model refuses %v, the implementation %q", in.Limits, argErr, got.Invalid))
		}
		return nil
	}
	if got.Reclaimed < 0 {
		return m.hist.fail("T12", fmt.Sprintf("reclaim reported %d buckets forgotten", got.Reclaimed))
	}
	for _, b := range m.bound {
		b.Reclaim(in.Limits, in.NowMs)
	}
	return nil
}

// takeProperties checks a valid take or admit: a refusal only when the
// model's bucket lacks the tokens (T2); an acceptance leaves a count in
// range (T1) that a peek at the same clock shows bit for bit (T1, T3), and
// within the bound on what the key's takes may have taken (T5).
func (m *TBMachine) takeProperties(in model.TBInput[int], before model.Bucket, got model.TBOutput) *Failure {
	lim := in.Limits
	if !got.OK {
		// T2: no refusal while the model has the tokens.
		if have := model.Refill(before, lim, in.NowMs); have >= in.Cost {
			return m.hist.fail("T2", fmt.Sprintf("take of %v refused while the model's bucket holds %v", in.Cost, have))
		}
		return nil
	}
	if !inRange(got.Remaining, lim.Capacity) {
		return m.hist.fail("T1", fmt.Sprintf("take left %v tokens, outside [0, capacity %v]", got.Remaining, lim.Capacity))
	}
	// Fractional tokens survive: the bucket now holds exactly what the
	// take reported, bit for bit, at the same clock (T1, T3).
	p, f := m.peek(in.Key, lim, in.NowMs)
	if f != nil {
		return f
	}
	if math.Float64bits(p) != math.Float64bits(got.Remaining) {
		return m.hist.fail("T1", fmt.Sprintf("take reported %v remaining, but a peek at the same clock shows %v", got.Remaining, p))
	}
	return m.trackBound(in)
}

// trackBound updates and checks T5 after a take the implementation
// committed (model.T5Bound: committed takes only, their clocks included).
func (m *TBMachine) trackBound(in model.TBInput[int]) *Failure {
	b := m.bound[in.Key]
	if b == nil {
		b = &model.T5Bound{}
		m.bound[in.Key] = b
	}
	b.Commit(in.Limits, in.Cost, in.NowMs)
	if b.Exceeded() {
		return m.hist.fail("T5", fmt.Sprintf("key %d %v", in.Key, b))
	}
	return nil
}

// checkRetryAfter is T7, judged on the implementation itself with read-only
// peeks: a take at now+w would succeed, and at now+w-1 it would not.
func (m *TBMachine) checkRetryAfter(in model.TBInput[int], w int64) *Failure {
	lim, cost, now := in.Limits, in.Cost, in.NowMs
	room := int64(model.Never - 1) // the largest real wait (T7)
	if now > 1 {
		room = math.MaxInt64 - now // the largest w with now+w representable
	}
	switch {
	case w < 0:
		return m.hist.fail("T7", fmt.Sprintf("retry_after answered %d < 0", w))
	case w == model.Never:
		// Real waits stop at room, one short of Never (spec T7), so Never
		// is right exactly when even the longest real wait is not enough.
		p, f := m.peek(in.Key, lim, now+room)
		if f != nil {
			return f
		}
		if p < cost {
			return nil
		}
		return m.hist.fail("T7", fmt.Sprintf("retry_after answered Never, but at %d (now + %d) the bucket holds %v ≥ cost %v", now+room, room, p, cost))
	case w > room:
		return m.hist.fail("T7", fmt.Sprintf("retry_after answered %d, past the end of the clock (at most %d)", w, room))
	}
	at, f := m.peek(in.Key, lim, now+w)
	if f != nil {
		return f
	}
	if at < cost {
		return m.hist.fail("T7", fmt.Sprintf("retry_after answered %d ms, but a take of %v at %d would fail: the bucket holds %v", w, cost, now+w, at))
	}
	if w == 0 {
		return nil
	}
	early, f := m.peek(in.Key, lim, now+w-1)
	if f != nil {
		return f
	}
	if early >= cost {
		return m.hist.fail("T7", fmt.Sprintf("retry_after answered %d ms, but a take of %v already succeeds one millisecond earlier (the bucket holds %v)", w, cost, early))
	}
	return nil
}

// Check verifies, for every key used so far with the limits it was last
// used with, that a peek at the machine's clock is in range and (unless
// PropertiesOnly) equals the model's, bit for bit; a difference is reported
// under the invariant model.TBDivergence names for that peek.
func (m *TBMachine) Check() *Failure {
	for _, key := range m.touched {
		lim := m.limits[key]
		in := model.TBInput[int]{Kind: model.TBPeek, Key: key, Limits: lim, NowMs: m.nowMs}
		got, perr := m.apply(in)
		if perr != "" {
			return m.hist.fail("panic", "peek: "+perr)
		}
		if !inRange(got.Tokens, lim.Capacity) {
			return m.hist.fail("T6", fmt.Sprintf("key %d peeks %v tokens at %d, outside [0, capacity %v]", key, got.Tokens, m.nowMs, lim.Capacity))
		}
		if m.opts.PropertiesOnly {
			continue
		}
		if _, want := m.model.Step(in); !want.Equal(got) {
			return m.disagree(in, want, got, m.hist.ins, "after the last operation, ")
		}
	}
	return nil
}

// tbKeys is how many keys the machines use.
const tbKeys = 5

// hour in milliseconds.
const hour = 3600 * 1000

var (
	capacities = []float64{1, 2, 5, 7, 10, 100, 0.5, 3.3}
	rates      = []float64{1, 3, 10, 1000, 0.001, 0.37}
)

// drawLimits picks limits for key: usually the ones it was last used with,
// sometimes new ones (T8: limits may change between calls).
func (m *TBMachine) drawLimits(c chooser, key int) model.Limits {
	if lim, ok := m.limits[key]; ok && c.Intn("same-limits", 4) != 0 {
		return lim
	}
	var lim model.Limits
	if c.Intn("cap-kind", 3) == 0 {
		lim.Capacity = 0.01 + c.Float01("cap")*200
	} else {
		lim.Capacity = capacities[c.Intn("cap-pick", len(capacities))]
	}
	if c.Intn("rate-kind", 3) == 0 {
		lim.RefillPerSecond = 0.001 + c.Float01("rate")*1000
	} else {
		lim.RefillPerSecond = rates[c.Intn("rate-pick", len(rates))]
	}
	return lim
}

// drawCost picks a cost in (0, capacity], now and then an invalid one (T9).
func drawCost(c chooser, capacity float64) float64 {
	switch c.Intn("cost-kind", 16) {
	case 0:
		return []float64{0, -1, math.NaN(), math.Inf(1), capacity * 2, math.Copysign(0, -1)}[c.Intn("bad-cost", 6)]
	case 1, 2, 3:
		return capacity
	case 4, 5, 6, 7:
		return min(1, capacity)
	default:
		return max(c.Float01("cost"), 0.001) * capacity
	}
}

// drawClock is the clock a call carries: usually the machine's, sometimes
// an older reading (a caller whose clock lags, T4).
func (m *TBMachine) drawClock(c chooser) int64 {
	if c.Intn("stale", 5) == 0 {
		return m.nowMs - c.Int64Range("lag", 1, 3000)
	}
	return m.nowMs
}

func (m *TBMachine) drawInput(c chooser, kind model.TBKind) model.TBInput[int] {
	key := c.Intn("key", tbKeys)
	lim := m.drawLimits(c, key)
	in := model.TBInput[int]{Kind: kind, Key: key, Limits: lim, NowMs: m.drawClock(c)}
	if kind != model.TBPeek {
		in.Cost = drawCost(c, lim.Capacity)
	}
	return in
}

// tbActions are the operations the token-bucket machines choose from.
var tbActions = []tbAction{
	{"take", func(m *TBMachine, c chooser) *Failure { return m.Step(m.drawInput(c, model.TBTake)) }},
	{"take-more", func(m *TBMachine, c chooser) *Failure { return m.Step(m.drawInput(c, model.TBTake)) }},
	{"burst", func(m *TBMachine, c chooser) *Failure { // take until refused, at one clock
		in := m.drawInput(c, model.TBTake)
		for range 12 {
			if f := m.Step(in); f != nil {
				return f
			}
			if model.CheckLimits(in.Limits, in.Cost, true) != nil {
				return nil
			}
			if model.Refill(m.model.Bucket(in.Key), in.Limits, in.NowMs) < in.Cost {
				return m.Step(in) // the refusal itself
			}
		}
		return nil
	}},
	{"admit", func(m *TBMachine, c chooser) *Failure { return m.Step(m.drawInput(c, model.TBAdmit)) }},
	{"peek", func(m *TBMachine, c chooser) *Failure { return m.Step(m.drawInput(c, model.TBPeek)) }},
	{"retry_after", func(m *TBMachine, c chooser) *Failure { return m.Step(m.drawInput(c, model.TBRetryAfter)) }},
	{"wait-and-take", func(m *TBMachine, c chooser) *Failure { // ask retry_after, move the clock there, take (T7)
		in := m.drawInput(c, model.TBRetryAfter)
		if f := m.Step(in); f != nil {
			return f
		}
		w := model.RetryAfter(m.model.Bucket(in.Key), in.Limits, in.Cost, in.NowMs)
		if model.CheckLimits(in.Limits, in.Cost, true) != nil || w == model.Never || w > 10*hour {
			return nil
		}
		in.Kind, in.NowMs = model.TBTake, in.NowMs+w
		m.nowMs = max(m.nowMs, in.NowMs)
		return m.Step(in)
	}},
	{"tick", func(m *TBMachine, c chooser) *Failure { // the clock: small steps, standing still, hours, backwards
		switch c.Intn("tick-kind", 6) {
		case 0:
		case 1:
			m.nowMs += c.Int64Range("jump-hours", 1, 48) * hour
		case 2:
			m.nowMs -= c.Int64Range("back", 1, 5000)
		default:
			m.nowMs += c.Int64Range("step", 1, 2000)
		}
		return nil
	}},
	{"reset", func(m *TBMachine, c chooser) *Failure {
		return m.Step(model.TBInput[int]{Kind: model.TBReset, Key: c.Intn("key", tbKeys)})
	}},
	{"reclaim", func(m *TBMachine, c chooser) *Failure { // with one key's limits, at the machine's clock or a lagging one (T12)
		key := c.Intn("key", tbKeys)
		return m.Step(model.TBInput[int]{Kind: model.TBReclaim, Limits: m.drawLimits(c, key), NowMs: m.drawClock(c)})
	}},
	{"reset_all", func(m *TBMachine, c chooser) *Failure {
		if c.Intn("reset-all-roll", 3) != 0 {
			return nil
		}
		return m.Step(model.TBInput[int]{Kind: model.TBResetAll})
	}},
}
