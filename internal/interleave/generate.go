package interleave

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/tollgate/tollgate/model"
)

// Generated scenarios. The catalogue holds the races someone thought of;
// the generated scenarios hold every race of a fixed shape, so that a bug
// nobody thought of still meets a scenario that drives it:
//
//   - Systematic is a fixed list: every pair of operations of each
//     primitive, one thread each, from every prefix of a short list, each
//     prefix a setup that leaves the words the operations meet in one
//     state (a slot its reserver held last, a bucket full again, a trie
//     node about to be compacted, …); and triples, a third operation (a
//     sweep, a reclaim, a free behind a reserver's scan) that changes
//     what the two meet. Each is named sys-cr-PREFIX-OP-OP or
//     sys-tb-PREFIX-OP-OP (spec/explore.md §10), so a failure replays by
//     name.
//   - Generate makes a random scenario of a seed (gen-credits-N,
//     gen-tokenbucket-N), for the random strategies and for shapes the
//     systematic list does not have (three operations in a thread).
//
// Coverage reports which pairs of operations, from which prefix, met on
// which kind of word in some explored run.

// Holders, classes and keys of the generated scenarios.
const (
	genReserver model.HolderID = 1 // reserves; holds the prefix's slot in "own"
	genHolder   model.HolderID = 2 // holds the prefix's slot in every other prefix
	genRival    model.HolderID = 3 // a second reserver
	genFiller   model.HolderID = 9 // holds the slots the prefix fills
	genClass                   = model.Internal

	genKey   = "k" // the key every keyed operation of the first thread uses
	genOther = "j" // a second key: it shares k's first trie level (or k's whole hash, in a chain)
)

// crPrefix is a state the setup leaves the credit table in: the reservation
// the threads aim at (its holder and token) and the slots around it.
type crPrefix struct {
	name, state string
	setup       []CrStep
	holder      model.HolderID
	tok         TokRef
}

// crPrefixes are the credit-table prefixes. Every one leaves slot 27, the
// first internal slot, in the state it names; a reserve by genReserver
// then claims 27 (own) or the next free slot.
func crPrefixes() []crPrefix {
	h, f := genHolder, genFiller
	return []crPrefix{
		{"own", "slot 27 free, last held by the reserver (its reserve commits with the 64-bit compare-and-swap of the low half); the operations use the released token",
			[]CrStep{Reserve(genReserver, genClass), Release(genReserver, SetupTok(0))}, genReserver, SetupTok(0)},
		{"held", "slot 27 reserved by another holder",
			[]CrStep{Reserve(h, genClass)}, h, SetupTok(0)},
		{"enq", "slot 27 enqueued by another holder",
			[]CrStep{Reserve(h, genClass), Enqueue(h, SetupTok(0), "p", 1)}, h, SetupTok(0)},
		{"proc", "slot 27 taken by the owner (processing)",
			[]CrStep{Reserve(h, genClass), Enqueue(h, SetupTok(0), "p", 1), Take(SetupTok(0))}, h, SetupTok(0)},
		{"last", "slot 27 reserved by another holder, 28–31 by a third: one internal slot (32) left",
			[]CrStep{Reserve(h, genClass), Reserve(f, genClass), Reserve(f, genClass), Reserve(f, genClass), Reserve(f, genClass)}, h, SetupTok(0)},
		{"exited", "slot 27 reserved by a holder that has exited (sweepable)",
			[]CrStep{Reserve(h, genClass), Exit(h)}, h, SetupTok(0)},
	}
}

// crOps are the operations of the credit table the pairs are made of, in
// the order of the names: one model operation each, on the prefix's
// reservation, but for poll, the owner's list of enqueued rows and a take
// of the first one listed; snapshot counts the rows. reserve2 is a reserve
// by a second holder, paired only with reserve. Then a caller's whole life
// on a reservation of its own: call reserves and enqueues, cycle reserves
// and releases, die reserves and exits (its row is for a sweep to free);
// and the owner's drain of the prefix's row, take and finish. A caller in
// the second thread is a second holder.
var crOps = []string{"reserve", "enqueue", "take", "finish", "release", "sweep", "exit", "close", "poll", "snapshot",
	"call", "cycle", "die", "drain"}

// crForeign are the prefix's reservation's operations called by another
// holder than its own (with its token): paired with every operation of
// crOps, not with each other.
var crForeign = []string{"enqueue.x", "release.x"}

// crReadOnly are the operations that change nothing: a pair of them races
// nothing and is not made.
var crReadOnly = map[string]bool{"snapshot": true}

// crOp is the steps of operation op in thread t aimed at p's reservation,
// op's first step being the thread's step at: a caller's later steps and a
// poll's take name the token of op's own first step (Mine(at), Listed(at)),
// so an operation composed after another in one thread ("drain+call") uses
// its own reservation, not the output of the thread's first step.
func crOp(op string, p crPrefix, t, at int) []CrStep {
	switch op {
	case "reserve":
		return []CrStep{Reserve(genReserver, genClass)}
	case "reserve2":
		return []CrStep{Reserve(genRival, genClass)}
	case "enqueue":
		return []CrStep{Enqueue(p.holder, p.tok, fmt.Sprintf("e%d", t), int64(2+t))}
	case "take":
		return []CrStep{Take(p.tok)}
	case "finish":
		return []CrStep{Finish(p.tok)}
	case "release":
		return []CrStep{Release(p.holder, p.tok)}
	case "enqueue.x":
		return []CrStep{Enqueue(foreign(p), p.tok, fmt.Sprintf("x%d", t), int64(2+t))}
	case "release.x":
		return []CrStep{Release(foreign(p), p.tok)}
	case "sweep":
		return []CrStep{Sweep()}
	case "exit":
		return []CrStep{Exit(p.holder)}
	case "close":
		return []CrStep{Close()}
	case "poll":
		return []CrStep{EnqueuedRows(), Take(Listed(at))}
	case "snapshot":
		return []CrStep{Input(model.CrInput[string]{Kind: model.CrSnapshot})}
	case "call":
		h := caller(t)
		return []CrStep{Reserve(h, genClass), Enqueue(h, Mine(at), fmt.Sprintf("c%d", t), int64(4+t))}
	case "cycle":
		h := caller(t)
		return []CrStep{Reserve(h, genClass), Release(h, Mine(at))}
	case "die":
		h := caller(t)
		return []CrStep{Reserve(h, genClass), Exit(h)}
	case "drain":
		return []CrStep{Take(p.tok), Finish(p.tok)}
	}
	if steps, ok := crMoreOp(op, p, at); ok {
		return steps
	}
	if base, forgery, ok := strings.Cut(op, "."); ok && slices.Contains(Forgeries, Forgery(forgery)) {
		tok := Forged(Forgery(forgery), p.tok)
		switch base {
		case "enqueue":
			return []CrStep{Enqueue(p.holder, tok, fmt.Sprintf("f%d", t), int64(2+t))}
		case "take":
			return []CrStep{Take(tok)}
		case "finish":
			return []CrStep{Finish(tok)}
		case "release":
			return []CrStep{Release(p.holder, tok)}
		}
	}
	panic("explore: no generated credit operation " + op)
}

// foreign is a holder that does not hold p's reservation.
func foreign(p crPrefix) model.HolderID {
	if p.holder == genRival {
		return genReserver
	}
	return genRival
}

// caller is the holder of a caller's life in thread t: the reserver, or a
// second holder in the other threads.
func caller(t int) model.HolderID {
	if t == 0 {
		return genReserver
	}
	return genRival
}

// tbPrefix is a state the setup leaves the token-bucket table in, and the
// clock of the operations after it (the first thread's; the second's is a
// millisecond later).
type tbPrefix struct {
	name, state string
	setup       []model.TBInput[string]
	now         int64
	// chain: k and j have one 64-bit hash (a chain of cells); otherwise
	// they share the trie's first level.
	chain bool
	// split: both clocks of the threads forget both keys, so two racing
	// reclaims can split them (see perKeyBound).
	split bool
	// answers: the prefix leaves k's bucket word in a state of its own
	// (absent, emptied, full, dead), and admit and retry_after race the
	// other operations from it (tbAnswers).
	answers bool
	// child0: k's cell is child 0 of the inner node it shares with j, so
	// the node's first word is k's child word (otherwise pinnedHash places
	// them).
	child0 bool
}

// tbPrefixes are the token-bucket prefixes. Capacity 2, one token a
// millisecond: a bucket emptied at 0 is full again at 2.
func tbPrefixes() []tbPrefix {
	k, j := genKey, genOther
	return []tbPrefix{
		{"new", "no key has a cell: the first take of a key inserts it", nil, 0, false, false, true, false},
		{"empty", "k's bucket just emptied (one token back at 1 ms)",
			[]model.TBInput[string]{tbTake(k, 2, 0)}, 1, false, false, true, false},
		{"full", "k's bucket full again at 2 ms: a reclaim forgets it",
			[]model.TBInput[string]{tbTake(k, 2, 0)}, 2, false, false, true, false},
		{"dead", "k's cell killed by a reset and unlinked: its next take makes a new cell",
			[]model.TBInput[string]{tbTake(k, 2, 0), tbReset(k)}, 1, false, false, true, false},
		{"collide", "k and j share an inner node, both full again at 2 ms: a reclaim forgets both and compacts the node away",
			[]model.TBInput[string]{tbTake(k, 2, 0), tbTake(j, 2, 0)}, 2, false, true, false, true},
		{"chain", "j and k have one hash: k's cell is second in j's chain",
			[]model.TBInput[string]{tbTake(j, 2, 0), tbTake(k, 2, 0)}, 1, true, false, false, false},
		{"append", "j and k have one hash and only j has a cell: k's first take appends its cell behind j's, and two at once meet at the chain's tail",
			[]model.TBInput[string]{tbTake(j, 2, 0)}, 1, true, false, false, false},
		{"deadhead", "j and k have one hash and the chain's head, j, is dead: it waits to be unlinked in front of k",
			[]model.TBInput[string]{tbTake(j, 2, 0), tbTake(k, 2, 0), tbReset(j)}, 1, true, false, false, false},
		{"compact", "k and j share an inner node; at 2 ms j is full and k is not (it is at 3 ms): a reclaim at 2 ms forgets j and compacts the node to k's cell, one at 3 ms forgets both",
			[]model.TBInput[string]{tbTake(j, 2, 0), tbTake(k, 1, 2)}, 2, false, false, false, false},
	}
}

// tbOps are the operations of the token-bucket table the pairs are made
// of; peek is the read-only one.
var tbOps = []string{"take", "peek", "reset", "reset_all", "reclaim"}

// tbAnswers are the operations whose answer is computed from the bucket
// word they read, beyond take's yes or no: admit (a take that answers a
// refusal's wait from the state that refused, T7, T11) and retry_after (a
// wait, 0 when the bucket covers the cost; read-only). Each asks for the
// whole capacity, 2, so that the same operation is admitted or refused,
// covered or not, as the prefix's state, its clock and the race leave k's
// bucket. From the prefixes whose state is k's bucket word's (answers),
// each is paired with every operation of tbOps and of tbAnswers, on k, in
// both orders of the threads (so each runs at the prefix's clock and a
// millisecond after it): the operations they race change that word, and a
// refused admit that meets a reset or a reclaim before it reads its wait
// finds the bucket covering the cost and takes again. The trie-shape prefixes are left
// to take and peek, whose walks admit (take's, then load's) and
// retry_after (load's) are: what differs is the arithmetic on the word.
// wait (Table.Wait, wait.go: admits until one takes, sleeping each
// refusal's wait on the run's clock) asks for the capacity too, so that
// from a bucket short of it the wait sleeps, and the other thread's take,
// reset or reclaim can land during the sleep, between its rounds.
var tbAnswers = []string{"admit", "retry_after", "wait"}

// tbSlowLim are the limits of the slow prefix's threads: capacity 2, a
// quarter of a token a millisecond. At the other prefixes' rate, a token a
// millisecond, a take of one token a millisecond after the state it read
// leaves the tokens as they were, so the states before and after it differ
// in the timestamp alone; a word read as one state's tokens and the other's
// timestamp is then one of the two, and an answer computed from it is
// right; and where a commit changes both halves, the refill a mixed word
// counts twice covers the whole wait, so a refused admit takes again. At a
// quarter of a token no clock distance of these scenarios (1 to 3 ms)
// refills a whole token: from k's one token, a take a millisecond later
// changes both halves of the word, leaves a wait of several milliseconds,
// and an answer computed from halves of two states is neither state's.
var tbSlowLim = model.Limits{Capacity: 2, RefillPerSecond: 250}

// tbSlow is the prefix of answers only (tbAnswerPairs), its threads at
// tbSlowLim, its setup at the other prefixes' rate.
var tbSlow = tbPrefix{name: "slow", state: "k's bucket holds one token at 0 ms, and the threads refill it a quarter of a token a millisecond",
	setup: []model.TBInput[string]{tbTake(genKey, 1, 0)}, now: 1, answers: true}

var tbReadOnly = map[string]bool{"peek": true, "retry_after": true}

// tbKeyed are the operations with a key: a pair of them is made twice, on
// one key and on k and j.
var tbKeyed = map[string]bool{"take": true, "peek": true, "reset": true, "admit": true, "retry_after": true, "wait": true}

// tbOp is operation op on key at clock now.
func tbOp(op, key string, now int64) model.TBInput[string] {
	switch op {
	case "take":
		return tbTake(key, 1, now)
	case "admit", "wait": // a wait runs an admit's input (WaitOps)
		return tbAdmit(key, 2, now)
	case "retry_after":
		return tbRetryAfter(key, 2, now)
	case "peek":
		return tbPeek(key, now)
	case "reset":
		return tbReset(key)
	case "reset_all":
		return tbResetAll()
	case "reclaim":
		return tbReclaim(now)
	}
	panic("explore: no generated token-bucket operation " + op)
}

// generated is one systematic scenario and the prefix it starts from.
type generated struct {
	Scenario
	prefix string
	// hold, when set, is why the scenario is held back: made and
	// replayable by name, but not in Systematic, not run and not counted.
	hold string
}

// perKeyBound is the preemption bound of a scenario in which a reclaim
// races operations on two keys, or two reclaims race where both would
// forget two keys: the shapes whose histories only a reclaim taken per key
// explains (spec/tokenbucket.md T11; the whole-table check splits such a
// reclaim into its steps). Within one preemption 11 of the 46 already give
// a history no atomic reclaim explains; at two they took about 30 s of CPU
// more, which the default run's minute cannot hold, and reached no site
// pair that one does not (spec/explore.md, "Held back" no more).
const perKeyBound = 1

// Systematic is the fixed list of systematic scenarios, credit-table ones
// first, in the order of the prefixes, then of the pairs; held-back ones
// (Held) are left out.
func Systematic() []Scenario {
	var out []Scenario
	for _, g := range systematic() {
		if g.hold == "" {
			out = append(out, g.Scenario)
		}
	}
	return out
}

// Held is the systematic scenarios held back, each with why.
func Held() map[string]string {
	out := map[string]string{}
	for _, g := range systematic() {
		if g.hold != "" {
			out[g.Name] = g.hold
		}
	}
	return out
}

// systematic is the systematic list, made once (its scenarios are
// values, never changed).
var systematic = sync.OnceValue(func() []generated {
	return slices.Concat(sysCredits(), cover3(), sysCrRecycle(), sysTokenBucket(), sysTbTrie())
})

// pairs is every unordered pair of ops, a before b in the list's order
// (an operation with itself too), but for two read-only ones.
func pairs(ops []string, readOnly map[string]bool) [][2]string {
	var out [][2]string
	for i, a := range ops {
		for _, b := range ops[i:] {
			if readOnly[a] && readOnly[b] {
				continue
			}
			out = append(out, [2]string{a, b})
		}
	}
	return out
}

// The credit-table races beyond the pairs: a third operation that changes
// the row the other two meet.
var (
	// crTriples are the pairs raced by a sweep as a third thread: the
	// operations on a reserved row, which a sweep frees once its holder
	// has exited (C10, C16).
	crTriples = []string{"reserve", "enqueue", "release", "exit"}
	// crSwept are the operations raced by a caller that dies and then
	// sweeps (die+sweep, one thread): two callers race for a slot, and the
	// sweep after one's exit must free its row (C17).
	crSwept = []string{"reserve", "call", "cycle", "die"}
	// crTwins are the operations raced by two enqueues of the prefix's
	// reservation (two goroutines of its holder): whichever installs its
	// box must learn whether it was published (C4, C16).
	crTwins = []string{"take", "finish", "release"}
	// crTwinsOn is the twin race continued, from the prefixes whose row is
	// reserved by its holder when the threads start (the others refuse
	// both enqueues at their pin check, and nothing continues): for every
	// ordered pair (A, B) of crTwins, the second twin goes on with A on its
	// own thread (enqueue+A) while the third thread runs B. So an operation
	// of the row's life runs on one thread while another, or the first
	// twin's outcome, is still pending on another: the twin whose box was
	// installed may learn its outcome only after the row has moved on
	// twice, by two threads (C4, C6, C8, C16).
	crTwinsOn = map[string]bool{"held": true, "last": true, "exited": true}
	// crBehind are the operations that free a row while two reservers
	// scan the class: the free slot can move behind one reserver's scan
	// (C2).
	crBehind = []string{"release", "finish"}
	// crForgeable are the operations that take a token: each is given
	// every forgery (Forgeries) of the prefix's token, OP.FORGERY, by the
	// reservation's own holder, racing the same operation with the real
	// token. Sequential misuse: a forged token must pin nothing (C3, C12),
	// whatever state its slot is in.
	crForgeable = []string{"enqueue", "take", "finish", "release"}
	// crRecycles are the triples in which the prefix's row is drained and
	// its slot reserved and enqueued again by a caller while a reader
	// lists or counts the rows (from the prefixes with an enqueued row).
	crRecycles = [][]string{{"poll", "drain", "call"}, {"snapshot", "drain", "call"}}
	// crStale are, by prefix, the operations that free the prefix's row
	// (its own path: the owner's finish, the holder's release, a sweep
	// after the holder's exit) and the token operations of crForgeable
	// that pass their pin check on that row (the row in the state each
	// accepts, under its generation). Each such operation, holding what
	// becomes a stale token, races the slot's recycle and the next
	// reservation's life: a second thread frees the row and a caller
	// reserves the slot again and enqueues (FREE+call), a third dies and
	// sweeps (die+sweep, the caller's holder: caller), so that the new
	// reservation's enqueue can lose its row to the sweep while the stale
	// operation still runs on the slot's side data (C3, C5, C10, C16).
	// A stale operation that has not passed its pin check races nothing
	// here (it refuses at once), so the own prefix, whose token is stale
	// before any thread runs, has none.
	//
	// Each is 7 steps at bound 2, 25,000 to 140,000 schedules (spec/explore.md
	// §10). Those run are the ones whose stale operation acts on the slot's
	// box between its pin check and its compare-and-swap on the row: take
	// and finish of an enqueued row (they mark the box published). The
	// others are held back for their cost (heldStale).
	crStale = []struct {
		prefix, free string
		stale        []string
	}{
		{"held", "release", []string{"enqueue", "release"}},
		{"enq", "finish", []string{"take", "finish"}},
		{"proc", "finish", []string{"finish"}},
		{"last", "release", []string{"enqueue", "release"}},
		{"exited", "sweep", []string{"enqueue", "release"}},
	}
)

// heldStale is why a stale-token race (crStale) whose stale operation does
// not act on the slot's box between its pin check and its compare-and-swap
// is held back: its cost. The seven measured 25,000 to 137,000 schedules
// each at bound 2, 430,000 in all (two minutes of CPU), more than the whole
// default run. A release acts on the row word alone, pinned by a lo value
// that never returns; an enqueue's box is generation-guarded (putBox), and
// its stale race with the next reservation is cr-stale-enqueue-vs-fresh's;
// a finish of a processing row reads no box before its compare-and-swap.
const heldStale = "cost: a stale-token race whose stale operation does not mark the slot's box (7 steps, 25,000 to 137,000 schedules at bound 2)"

// crGenerated is the generated scenario of ops from prefix p: one thread
// an op, an op "a+b" being a then b in one thread; it is named
// sys-cr-PREFIX-OP-OP….
func crGenerated(p crPrefix, ops ...string) generated {
	var threads [][]CrStep
	var race []string
	for t, op := range ops {
		var steps []CrStep
		for _, part := range strings.Split(op, "+") {
			steps = append(steps, crOp(part, p, t, len(steps))...)
		}
		threads = append(threads, steps)
		race = append(race, fmt.Sprintf("T%d %s", t, strings.ReplaceAll(op, "+", " then ")))
	}
	name := "sys-cr-" + p.name + "-" + strings.Join(ops, "-")
	return generated{
		Scenario: CreditsScenario(name, "generated: "+p.state+"; "+strings.Join(race, ", "), p.setup, threads...),
		prefix:   p.name}
}

func sysCredits() []generated {
	var out []generated
	for _, p := range crPrefixes() {
		add := func(ops ...string) { out = append(out, crGenerated(p, ops...)) }
		for _, pr := range pairs(crOps, crReadOnly) {
			add(pr[0], pr[1])
			if pr == [2]string{"reserve", "reserve"} {
				add("reserve", "reserve2")
			}
		}
		for _, x := range crForeign {
			for _, op := range crOps {
				add(op, x)
			}
		}
		for _, pr := range pairs(crTriples, nil) {
			add(pr[0], pr[1], "sweep")
		}
		for _, op := range crSwept {
			add("die+sweep", op)
		}
		for _, op := range crTwins {
			add("enqueue", "enqueue", op)
		}
		if crTwinsOn[p.name] {
			for _, a := range crTwins {
				for _, b := range crTwins {
					add("enqueue", "enqueue+"+a, b)
				}
			}
		}
		for _, op := range crBehind {
			add("reserve", op, "reserve2")
		}
		for _, op := range crForgeable {
			for _, f := range Forgeries {
				add(op+"."+string(f), op)
			}
		}
		if p.name == "enq" || p.name == "proc" {
			for _, ops := range crRecycles {
				add(ops...)
			}
		}
		for _, st := range crStale {
			if st.prefix != p.name {
				continue
			}
			for _, op := range st.stale {
				add(op, st.free+"+call", "die+sweep")
				if p.name != "enq" {
					out[len(out)-1].hold = heldStale
				}
			}
		}
	}
	return out
}

// tbTriples are the keyed pairs raced by a reclaim as a third thread.
var tbTriples = []string{"take", "peek", "reset"}

func sysTokenBucket() []generated {
	var out []generated
	for _, p := range tbPrefixes() {
		add := func(ops []string, keys []string) { out = append(out, tbGenerated(p, ops, keys, model.Limits{})) }
		for _, pr := range pairs(tbOps, tbReadOnly) {
			ops := []string{pr[0], pr[1]}
			add(ops, []string{genKey, genKey})
			if tbKeyed[pr[0]] && tbKeyed[pr[1]] {
				add(ops, []string{genKey, genOther})
			}
		}
		for _, pr := range pairs(tbTriples, tbReadOnly) {
			ops := []string{pr[0], pr[1], "reclaim"}
			add(ops, []string{genKey, genKey, ""})
			add(ops, []string{genKey, genOther, ""})
		}
		if p.answers {
			out = append(out, tbAnswerPairs(p, model.Limits{})...)
			out = append(out, tbWaitCancels(p, model.Limits{})...)
		}
	}
	out = append(out, tbAnswerPairs(tbSlow, tbSlowLim)...)
	return append(out, tbWaitCancels(tbSlow, tbSlowLim)...)
}

// tbAnswerPairs are prefix p's pairs with an answer: each operation of
// tbAnswers against every operation of tbOps and of tbAnswers, on k, in
// both orders of the threads; at limits lim when they are set.
func tbAnswerPairs(p tbPrefix, lim model.Limits) []generated {
	var out []generated
	for _, pr := range pairs(slices.Concat(tbOps, tbAnswers), tbReadOnly) {
		a, b := pr[0], pr[1]
		if !slices.Contains(tbAnswers, a) && !slices.Contains(tbAnswers, b) {
			continue
		}
		out = append(out, tbGenerated(p, []string{a, b}, []string{genKey, genKey}, lim))
		if a != b {
			out = append(out, tbGenerated(p, []string{b, a}, []string{genKey, genKey}, lim))
		}
	}
	return out
}

// tbGenerated is the systematic scenario of prefix p whose thread t does
// ops[t] on keys[t] (a reclaim has no key), at p's clock for the first
// thread and a millisecond later for the others, at limits lim when they
// are set (tbLim otherwise); within perKeyBound preemptions where a
// reclaim races operations on two keys.
func tbGenerated(p tbPrefix, ops []string, keys []string, lim model.Limits) generated {
	var threads [][]model.TBInput[string]
	var labels, race []string
	used := map[string]bool{}
	keyed := map[string]bool{} // the keys of the threads' operations
	var waits [][2]int
	for _, in := range p.setup {
		used[in.Key] = true
	}
	for t, op := range ops {
		in := tbOp(op, keys[t], p.now+int64(min(t, 1)))
		if lim != (model.Limits{}) && in.Limits != (model.Limits{}) {
			in.Limits = lim
		}
		if op == "wait" {
			if len(waits) > 0 { // the table has one clock: every wait starts at the first's
				in.NowMs = threads[waits[0][0]][0].NowMs
			}
			waits = append(waits, [2]int{t, 0})
		}
		threads = append(threads, []model.TBInput[string]{in})
		label := op
		if tbKeyed[op] {
			used[keys[t]], keyed[keys[t]] = true, true
			if keys[t] != genKey {
				label += "." + keys[t]
			}
		}
		labels = append(labels, label)
		race = append(race, fmt.Sprintf("T%d %s", t, in))
	}
	name := "sys-tb-" + p.name + "-" + strings.Join(labels, "-")
	both := used[genKey] && used[genOther]
	var collide []string
	if both && !p.chain && !p.child0 {
		collide = []string{genKey, genOther}
	}
	s := TokenBucketScenario(name, "generated: "+p.state+"; "+strings.Join(race, ", "), collide, p.setup, threads...)
	if both && p.chain {
		s = s.SameHash(genOther, genKey)
	}
	if len(waits) > 0 {
		s = s.WaitOps(waits...)
	}
	if both && p.child0 {
		// k and j share the first level, and k's cell is child 0 of the
		// inner node they share: that child word is the node's first
		// word, which every walk through the node loads to tell its kind
		// (impl/tokenbucket/trie.go), so those loads race the writes of
		// k's child word.
		s = s.Hashes(map[string]uint64{genKey: 0x01, genOther: 0x11})
	}
	if reclaims := slices.Index(ops, "reclaim"); reclaims >= 0 && (len(keyed) > 1 || p.split && slices.Index(ops[reclaims+1:], "reclaim") >= 0) {
		s = s.Within(perKeyBound)
	}
	return generated{Scenario: s, prefix: p.name}
}

// generatedScenario finds a systematic scenario by name, or makes the
// random one a gen-credits-N or gen-tokenbucket-N name asks for.
func generatedScenario(name string) (Scenario, bool) {
	if strings.HasPrefix(name, "sys-") {
		for _, g := range systematic() {
			if g.Name == name {
				return g.Scenario, true
			}
		}
		return Scenario{}, false
	}
	for _, p := range []Primitive{Credits, TokenBucket} {
		if rest, ok := strings.CutPrefix(name, "gen-"+string(p)+"-"); ok {
			var seed uint64
			if _, err := fmt.Sscanf(rest, "%d", &seed); err == nil && fmt.Sprint(seed) == rest {
				return Generate(p, seed), true
			}
		}
	}
	return Scenario{}, false
}

// Generate makes a random scenario of the primitive for the random
// strategies: 2–3 threads of 1–3 operations over a small vocabulary that
// makes them contend (the internal class, two keys of one trie level,
// clocks a few milliseconds apart).
//
// A credit thread's holder reserves, uses its token and may reserve again
// once it released it; the setup leaves slot 31 free with thread 0's holder
// its last holder, so thread 0's first reserve takes the returning holder's
// path. A token-bucket thread takes, admits (costs of 1 and 2, which the
// clocks leave covered or not), peeks, asks retry_after and resets, on
// half the seeds a thread also reclaims; the setup empties x and y, which share a trie
// node, at 0 ms, and the clocks run to 3 ms, by which both are full again:
// a reclaim forgets y, or both, and compacts their node.
func Generate(p Primitive, seed uint64) Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	n := 2 + rng.IntN(2)
	name := fmt.Sprintf("gen-%s-%d", p, seed)
	if p == TokenBucket {
		// Half the seeds have one reclaim, in a random place.
		keys := []string{"x", "y"}
		reclaimAt := -1
		if rng.IntN(2) == 0 {
			reclaimAt = rng.IntN(n)
		}
		var threads [][]model.TBInput[string]
		for t := 0; t < n; t++ {
			var ops []model.TBInput[string]
			for k := 1 + rng.IntN(3); k > 0; k-- {
				key := keys[rng.IntN(len(keys))]
				now := int64(rng.IntN(4))
				switch r := rng.IntN(10); {
				case r < 4:
					ops = append(ops, tbTake(key, float64(1+rng.IntN(2)), now))
				case r < 6:
					ops = append(ops, tbAdmit(key, float64(1+rng.IntN(2)), now))
				case r < 7:
					ops = append(ops, tbPeek(key, now))
				case r < 8:
					ops = append(ops, tbRetryAfter(key, float64(1+rng.IntN(2)), now))
				case r < 9:
					ops = append(ops, tbReset(key))
				default:
					ops = append(ops, tbResetAll())
				}
			}
			if t == reclaimAt {
				at := rng.IntN(len(ops) + 1)
				ops = slices.Insert(ops, at, tbReclaim(2+int64(rng.IntN(2))))
			}
			threads = append(threads, ops)
		}
		return TokenBucketScenario(name, "generated", []string{"x", "y"},
			[]model.TBInput[string]{tbTake("x", 2, 0), tbTake("y", 2, 0)}, threads...)
	}
	// Slots 27–29 are holder 9's, 30 is holder 8's and enqueued, 31 was
	// thread 0's holder's and is free, 32 is free.
	setup := []CrStep{Reserve(9, model.Internal), Reserve(9, model.Internal), Reserve(9, model.Internal),
		Reserve(8, model.Internal), Enqueue(8, SetupTok(3), "s", 1),
		Reserve(1, model.Internal), Release(1, SetupTok(5))}
	var threads [][]CrStep
	for t := 0; t < n; t++ {
		h := model.HolderID(t + 1)
		var ops []CrStep
		reserved := -1 // the step of the reserve whose token the thread holds
		for k, nops := 0, 1+rng.IntN(3); k < nops; k++ {
			switch r := rng.IntN(10); {
			case reserved < 0 && r < 5:
				ops, reserved = append(ops, Reserve(h, model.Internal)), k
			case reserved >= 0 && r < 4:
				ops = append(ops, Enqueue(h, Mine(reserved), fmt.Sprintf("p%d", t), int64(k)))
			case reserved >= 0 && r < 6:
				// A release gives the slot back; the holder may reserve
				// again, and then takes its own last slot's path.
				ops, reserved = append(ops, Release(h, Mine(reserved))), -1
			case r < 7:
				ops = append(ops, Take(SetupTok(3)))
			case r < 8:
				ops = append(ops, Finish(SetupTok(3)))
			case r < 9:
				ops = append(ops, Exit(model.HolderID(1+rng.IntN(n))))
			default:
				ops = append(ops, Sweep())
			}
		}
		threads = append(threads, ops)
	}
	return CreditsScenario(name, "generated", setup, threads...)
}
