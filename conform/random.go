package conform

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tollgate/tollgate/model"
)

// Random sequential sessions (suite "random"): operations generated from the
// model's state, sent one at a time, each answer compared with the model's.
// A failing session is shrunk by deleting operations while it still fails.

// session is one generated sequential session of one primitive. For the
// credit table, ref[i] >= 0 says that operation i uses the token that
// operation ref[i] (a reserve) was answered, with slot[i] replacing its
// slot when not 0; it is resolved when the session is replayed, so a shrunk
// session stays meaningful.
type session struct {
	prim    string
	tb      []model.TBInput[string]
	cr      []model.CrInput[string]
	clients []string // credit table: the client issuing cr[i]
	ref     []int
	slot    []int
}

func (s *session) len() int {
	if s.prim == PrimTokenBucket {
		return len(s.tb)
	}
	return len(s.cr)
}

// keep returns the session restricted to the operations where keep is true.
func (s *session) keep(keep func(i int) bool) *session {
	out := &session{prim: s.prim}
	newIdx := map[int]int{}
	for i := 0; i < s.len(); i++ {
		if !keep(i) {
			continue
		}
		if s.prim == PrimTokenBucket {
			out.tb = append(out.tb, s.tb[i])
			continue
		}
		newIdx[i] = len(out.cr)
		r := s.ref[i] // -1: no token; -2: its reserve was deleted before
		if s.ref[i] >= 0 {
			if j, ok := newIdx[s.ref[i]]; ok {
				r = j
			} else {
				r = -2 // its reserve was deleted: the operation is skipped on replay
			}
		}
		out.cr = append(out.cr, s.cr[i])
		out.clients = append(out.clients, s.clients[i])
		out.ref = append(out.ref, r)
		out.slot = append(out.slot, s.slot[i])
	}
	return out
}

var (
	tbKeys       = []string{"k", "j", ":_", "$1"}
	tbCapacities = []float64{1, 2.5, 5, 7, 10}
	tbRates      = []float64{1, 3, 0.1, 10, 1.0 / 3, 7.3, 1000}
	tbCosts      = []float64{1, 0.5, 2, 3.7, 0.1}
)

// genTB generates a token-bucket session of n operations. Each key keeps
// its limits most of the time; the clock mostly moves forward and sometimes
// steps back (T4); a retry_after is often followed by takes at and just
// before the wait it answered (T7). With admit (a driver whose hello lists
// tb.admit), nearly a third of the takes are admits, whose refusal carries
// the wait of the state that refused; the draws are the same either way.
func genTB(r *rand.Rand, n int, admit bool) *session {
	s := &session{prim: PrimTokenBucket}
	var tbl model.TBTable[string]
	lims := map[string]model.Limits{}
	now := r.Int64N(2000)
	for len(s.tb) < n {
		key := tbKeys[r.IntN(len(tbKeys))]
		lim, ok := lims[key]
		if !ok || r.IntN(10) == 0 {
			lim = model.Limits{Capacity: tbCapacities[r.IntN(len(tbCapacities))], RefillPerSecond: tbRates[r.IntN(len(tbRates))]}
			lims[key] = lim
		}
		switch x := r.IntN(10); {
		case x < 7:
			now += r.Int64N(400)
		case x < 9:
			now -= r.Int64N(600)
		}
		cost := tbCosts[r.IntN(len(tbCosts))]
		if r.IntN(4) == 0 {
			cost = lim.Capacity
		}
		in := model.TBInput[string]{Key: key, Limits: lim, Cost: min(cost, lim.Capacity), NowMs: now}
		switch x := r.IntN(100); {
		case x < 50:
			in.Kind = model.TBTake
			if admit && x < 15 {
				in.Kind = model.TBAdmit
			}
		case x < 62:
			in.Kind = model.TBPeek
		case x < 85:
			in.Kind = model.TBRetryAfter
		case x < 88:
			in.Kind = model.TBReset
		case x < 89:
			in.Kind = model.TBResetAll
		case x < 92:
			in.Kind, in.Key, in.Cost = model.TBReclaim, "", 0 // with this key's limits, at this clock (T12)
		default: // an invalid argument (T9)
			in.Kind = model.TBTake
			if r.IntN(8) == 0 {
				in.Kind, in.Key = model.TBReclaim, ""
			}
			switch r.IntN(4) {
			case 0:
				in.Cost = lim.Capacity * 2
			case 1:
				in.Limits.Capacity = math.NaN()
			case 2:
				in.Limits.RefillPerSecond = 0
			default:
				in.Cost = -1
			}
		}
		var out model.TBOutput
		tbl, out = tbl.Step(in)
		s.tb = append(s.tb, in)
		if in.Kind == model.TBRetryAfter && out.Invalid == "" && out.RetryAfterMs > 0 && out.RetryAfterMs < 1<<40 && r.IntN(2) == 0 {
			w := out.RetryAfterMs
			before := in
			before.Kind, before.NowMs = model.TBTake, now+w-1
			at := before
			at.NowMs = now + w
			s.tb = append(s.tb, before, at)
			tbl, _ = tbl.Step(before)
			tbl, _ = tbl.Step(at)
			now += w
		}
	}
	return s
}

var crClients = []string{"a", "b", "c"}

// genCr generates a credit-table session of n operations, keeping the model
// state as it goes so that most tokens are live and some are stale.
func genCr(r *rand.Rand, n int) *session {
	g := &crGen{r: r, s: &session{prim: PrimCredits}, names: &SymbolicEpochs{}, dead: map[string]bool{}, holderOf: map[int]string{}}
	for len(g.s.cr) < n {
		in, client, ok := g.draw(n)
		if !ok {
			continue
		}
		g.add(in, client)
	}
	return g.s
}

// crGen is genCr's state: the session so far, the model stepped through it,
// and what the next operation draws on.
type crGen struct {
	r        *rand.Rand
	s        *session
	st       model.Credits[string]
	names    *SymbolicEpochs
	outs     []*model.CrOutput[string]
	dead     map[string]bool // clients that exited
	reserves []int           // indexes of successful reserves
	holderOf map[int]string  // a successful reserve's index → its client
	now      int64
	// the operation being drawn
	live      []string // clients not exited
	ref, slot int      // the reservation it names (-1: none), and a slot to put in its token (0: the reservation's)
}

// draw draws the next operation and the client issuing it: reserves,
// enqueues, takes, finishes and releases most, of the reservations made so
// far (pickRef); sweeps, exits, listings, snapshots and bounds less; a close
// only late in a session of n. False when the draw fits no operation.
func (g *crGen) draw(n int) (in model.CrInput[string], client string, ok bool) {
	g.live = g.live[:0]
	for _, c := range crClients {
		if !g.dead[c] {
			g.live = append(g.live, c)
		}
	}
	g.ref, g.slot = -1, 0
	live, r := g.live, g.r
	x := r.IntN(100)
	switch {
	case x < 28 && len(live) > 0:
		in, client = g.reserve()
	case x < 45 && len(live) > 0 && g.pickRef():
		in, client = g.enqueue()
	case x < 58 && g.pickRef():
		in.Kind = model.CrTake
	case x < 70 && g.pickRef():
		in.Kind = model.CrFinish
	case x < 78 && len(live) > 0 && g.pickRef():
		in.Kind, client = model.CrRelease, g.holderOrOther(6)
	case x < 83:
		in.Kind = model.CrSweep
	case x < 86 && len(live) > 1:
		in.Kind, client = model.CrExit, live[r.IntN(len(live))]
		g.dead[client] = true
	case x < 92:
		in.Kind = model.CrEnqueued
	case x < 97:
		in.Kind = model.CrSnapshot
	case x < 98:
		in.Kind = model.CrBounds
	case x < 99 && len(g.s.cr) > n*3/4:
		in.Kind = model.CrClose
	default:
		return in, "", false
	}
	return in, client, true
}

// pickRef picks the reservation the operation names: mostly a recent one,
// sometimes any (stale tokens, C3), now and then with another slot in its
// token. False when no reserve has succeeded yet.
func (g *crGen) pickRef() bool {
	if len(g.reserves) == 0 {
		return false
	}
	i := len(g.reserves) - 1 - g.r.IntN(min(len(g.reserves), 4))
	if g.r.IntN(5) == 0 {
		i = g.r.IntN(len(g.reserves))
	}
	g.ref = g.reserves[i]
	if g.r.IntN(12) == 0 {
		g.slot = 1 + g.r.IntN(model.Slots)
	}
	return true
}

// reserve draws a reserve by a live client, of either class.
func (g *crGen) reserve() (model.CrInput[string], string) {
	in := model.CrInput[string]{Kind: model.CrReserve, Class: model.General}
	client := g.live[g.r.IntN(len(g.live))]
	if g.r.IntN(2) == 0 {
		in.Class = model.Internal
	}
	return in, client
}

// enqueue draws an enqueue of the picked reservation, mostly by its
// holder, with a unique payload at a clock that mostly moves forward.
func (g *crGen) enqueue() (model.CrInput[string], string) {
	in := model.CrInput[string]{Kind: model.CrEnqueue}
	client := g.holderOrOther(8)
	g.now += g.r.Int64N(50) - 10
	in.Payload, in.NowMs = fmt.Sprintf("p%d", len(g.s.cr)), g.now
	return in, client
}

// holderOrOther is the picked reservation's holder, or a live client
// instead when the holder exited, or one time in oneIn.
func (g *crGen) holderOrOther(oneIn int) string {
	client := g.holderOf[g.ref]
	if g.dead[client] || g.r.IntN(oneIn) == 0 {
		client = g.live[g.r.IntN(len(g.live))]
	}
	return client
}

// add appends the operation to the session and steps the model to learn
// whether it was a reserve that succeeded.
func (g *crGen) add(in model.CrInput[string], client string) {
	s := g.s
	s.cr = append(s.cr, in)
	s.clients = append(s.clients, client)
	s.ref = append(s.ref, g.ref)
	s.slot = append(s.slot, g.slot)
	in, out := stepResolved(s, len(s.cr)-1, &g.st, &g.outs, g.names)
	if out != nil && in.Kind == model.CrReserve && out.Result == model.OK {
		g.reserves = append(g.reserves, len(s.cr)-1)
		g.holderOf[len(s.cr)-1] = client
	}
}

// stepResolved resolves operation i of s against the outputs so far, steps
// the model state *st with it and appends its output to *outs. An operation
// that cannot be resolved (its reservation never succeeded) gets a nil
// output and leaves the state alone.
func stepResolved(s *session, i int, st *model.Credits[string], outs *[]*model.CrOutput[string], names *SymbolicEpochs) (model.CrInput[string], *model.CrOutput[string]) {
	in, ok := resolve(s, i, *outs, names)
	if !ok {
		*outs = append(*outs, nil)
		return in, nil
	}
	var out model.CrOutput[string]
	*st, out = st.Step(in)
	*outs = append(*outs, &out)
	return in, &out
}

// resolve returns operation i of a credit session with its token and holder
// filled in, or false when the reserve it refers to was deleted or did not
// succeed. outs holds the model outputs of the operations replayed so far
// (nil entries for skipped ones).
func resolve(s *session, i int, outs []*model.CrOutput[string], names *SymbolicEpochs) (model.CrInput[string], bool) {
	in := s.cr[i]
	if s.clients[i] != "" {
		in.Holder, _ = names.Holder(s.clients[i])
	}
	switch r := s.ref[i]; {
	case r == -2:
		return in, false
	case r >= 0:
		if r >= len(outs) || outs[r] == nil || outs[r].Result != model.OK {
			return in, false
		}
		in.Token = outs[r].Token
		if s.slot[i] != 0 {
			in.Token.Slot = s.slot[i]
		}
	}
	return in, true
}

// replay sends a session to the driver on a fresh table and returns the
// first mismatch, or nil. The failure lists the requests in symbolic form and
// names the invariant the differing answer breaks.
func replay(conn *Conn, prefix string, s *session) *CaseFailure {
	run := newCaseRun(conn, prefix, &CaseFailure{})
	names := &SymbolicEpochs{}
	var tbl model.TBTable[string]
	var st model.Credits[string]
	var outs []*model.CrOutput[string]
	if s.prim == PrimTokenBucket {
		for _, in := range s.tb {
			var out model.TBOutput
			tbl, out = tbl.Step(in)
			if !run.step(EncodeTB(in), TBResponse(in, out)) {
				return run.fail
			}
		}
		return nil
	}
	if !run.step(Request{Op: OpNew}, Response{OK: true}) {
		return run.fail
	}
	for i := range s.cr {
		in, out := stepResolved(s, i, &st, &outs, names)
		if out == nil {
			continue
		}
		if !run.step(EncodeCr(in, s.clients[i], names), CrResponse(in, *out, names)) {
			return run.fail
		}
	}
	return nil
}

// shrink deletes operations from a failing session while it keeps failing
// the same way (its first differing answer breaks the same invariant), in
// chunks of halving size (a simple delta debugging), for at most maxTries
// replays. It returns the smallest failing session and its failure.
func shrink(conn *Conn, nextPrefix func() string, s *session, f *CaseFailure, maxTries int) (*session, *CaseFailure, int) {
	tries := 0
	// Everything after the first mismatch is irrelevant.
	cut := len(f.Sent)
	if s.prim == PrimCredits {
		cut-- // the cr.new
	}
	if cut < s.len() {
		s = s.keep(func(i int) bool { return i < cut })
	}
	for chunk := s.len() / 2; chunk >= 1 && tries < maxTries; {
		removed := false
		for start := 0; start < s.len() && tries < maxTries; {
			cand := s.keep(func(i int) bool { return i < start || i >= start+chunk })
			tries++
			cf := replay(conn, nextPrefix(), cand)
			if cf != nil && cf.Driver == nil && cf.Breaks.Invariant == f.Breaks.Invariant {
				s, f, removed = cand, cf, true
				continue
			}
			if cf != nil && cf.Driver != nil {
				return s, f, tries // the driver broke: keep what we have
			}
			start += chunk
		}
		if !removed {
			chunk /= 2
		}
	}
	return s, f, tries
}
