package interleave

import (
	"fmt"
	"slices"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/model"
)

// Steps of credit-table scenarios.

// TokRef finds a token in what a step sees; false when there is none (the
// reserve that was to make it did not succeed).
type TokRef func(e CrEnv) (model.Token, bool)

func tokOf(o model.CrOutput[string]) (model.Token, bool) {
	return o.Token, o.Result == model.OK && o.Token.Slot != 0 && o.Token.Epoch != 0
}

// Mine is the token of this thread's reserve at step k.
func Mine(k int) TokRef {
	return func(e CrEnv) (model.Token, bool) {
		if k >= len(e.Mine) {
			return model.Token{}, false
		}
		return tokOf(e.Mine[k])
	}
}

// SetupTok is the token of the setup's reserve at step k.
func SetupTok(k int) TokRef {
	return func(e CrEnv) (model.Token, bool) {
		if k >= len(e.Setup) {
			return model.Token{}, false
		}
		return tokOf(e.Setup[k])
	}
}

// Listed is the token of the first row this thread's enqueued() at step k
// listed.
func Listed(k int) TokRef {
	return func(e CrEnv) (model.Token, bool) {
		if k >= len(e.Mine) || len(e.Mine[k].Entries) == 0 {
			return model.Token{}, false
		}
		x := e.Mine[k].Entries[0]
		return model.Token{Slot: x.Slot, Epoch: x.Epoch}, true
	}
}

// Fixed is a fixed token (a stale or foreign one).
func Fixed(slot int, epoch uint64) TokRef {
	return func(CrEnv) (model.Token, bool) { return model.Token{Slot: slot, Epoch: epoch}, true }
}

// A Forgery is a way to forge, from a token the table returned, one it
// never returned: sequential misuse of the API, which pins nothing (C3: a
// token whose epoch names another slot or a generation never handed out
// matches no row), so every operation given it answers as for a stale
// token. The generated scenarios (Systematic) drive each forgery of
// Forgeries into the operations that take a token.
type Forgery string

// The forgeries of a token for slot s at generation g.
const (
	ForgeGen0   Forgery = "gen0"   // s at generation 0, which no reservation carries
	ForgeSlot   Forgery = "slot"   // s, with an epoch naming another slot at g
	ForgeNext   Forgery = "next"   // s at g+1, not yet handed out
	ForgeBeyond Forgery = "beyond" // s at the generation after the last (credits.MaxGen+1)
)

// Forgeries is every Forgery, in the order of the generated names.
var Forgeries = []Forgery{ForgeGen0, ForgeSlot, ForgeNext, ForgeBeyond}

// Forged is the token f forges from the one ref gives. The forgery is of
// the table's epoch (the explorer's tokens are the model's, which names
// the table's epochs in its own numbering, internal/sut.TableEpochs): the
// model token it returns carries ref's model epoch and f under forgedMark,
// an epoch the model never issues, so the model answers as for any token
// that pins nothing, and the explorer's adapter (crRun.apply) hands the
// table ref's reservation's epoch forged by f (forge).
func Forged(f Forgery, ref TokRef) TokRef {
	k := slices.Index(Forgeries, f)
	if k < 0 {
		panic(fmt.Sprintf("explore: no forgery %q", f))
	}
	return func(e CrEnv) (model.Token, bool) {
		tok, ok := ref(e)
		if !ok {
			return tok, false
		}
		tok.Epoch = forgedMark | uint64(k)<<forgedShift | tok.Epoch&(1<<forgedShift-1)
		return tok, true
	}
}

// forgedMark marks a model epoch that Forged made; the forgery's index in
// Forgeries is the bits from forgedShift up, the model epoch forged the
// bits below.
const (
	forgedMark  = 1 << 62
	forgedShift = 56
)

// forgedOf decodes a model epoch Forged made.
func forgedOf(epoch uint64) (f Forgery, modelEpoch uint64, ok bool) {
	if epoch&(1<<63|forgedMark) != forgedMark {
		return "", 0, false
	}
	k := int(epoch&^forgedMark) >> forgedShift
	if k >= len(Forgeries) {
		return "", 0, false
	}
	return Forgeries[k], epoch & (1<<forgedShift - 1), true
}

// forge is f applied to the table's token tok (impl/credits's epochs:
// generation<<credits.SlotBits | slot-1). The forged epoch is checked
// against credits.Generation, the decoding the etcd and Redis tables read
// (C3): the slot forgery must name another slot, every other forgery tok's
// own, or forge panics. Nothing explored reads Generation's answer
// otherwise (the explored table decodes with its own slotOf).
func forge(f Forgery, tok credits.Token) credits.Token {
	gen, _ := credits.Generation(tok.Slot, tok.Epoch)
	out := tok
	switch f {
	case ForgeGen0:
		out.Epoch = credits.Epoch(tok.Slot, 0)
	case ForgeSlot:
		// The epoch of the slot whose index differs in the lowest bit.
		out.Epoch = credits.Epoch((tok.Slot-1)^1+1, gen)
	case ForgeNext:
		out.Epoch = credits.Epoch(tok.Slot, gen+1)
	case ForgeBeyond:
		out.Epoch = credits.Epoch(tok.Slot, credits.MaxGen+1)
	default:
		panic(fmt.Sprintf("explore: no forgery %q", f))
	}
	if _, names := credits.Generation(tok.Slot, out.Epoch); names != (f != ForgeSlot) {
		panic(fmt.Sprintf("explore: the %s forgery of %v is epoch %d, which credits.Generation reads as naming slot %d: %v (C3)", f, tok, out.Epoch, tok.Slot, names))
	}
	return out
}

// Input is a step with a fixed input.
func Input(in model.CrInput[string]) CrStep {
	return func(CrEnv) (model.CrInput[string], bool) { return in, true }
}

// Reserve is reserve(h, c).
func Reserve(h model.HolderID, c model.Class) CrStep {
	return Input(model.CrInput[string]{Kind: model.CrReserve, Holder: h, Class: c})
}

func withTok(kind model.CrKind, h model.HolderID, ref TokRef, payload string, now int64) CrStep {
	return func(e CrEnv) (model.CrInput[string], bool) {
		tok, ok := ref(e)
		return model.CrInput[string]{Kind: kind, Holder: h, Token: tok, Payload: payload, NowMs: now}, ok
	}
}

// Enqueue is enqueue(h, token, payload, now).
func Enqueue(h model.HolderID, ref TokRef, payload string, now int64) CrStep {
	return withTok(model.CrEnqueue, h, ref, payload, now)
}

// Take is take(token).
func Take(ref TokRef) CrStep { return withTok(model.CrTake, 0, ref, "", 0) }

// Finish is finish(token).
func Finish(ref TokRef) CrStep { return withTok(model.CrFinish, 0, ref, "", 0) }

// Release is release(h, token).
func Release(h model.HolderID, ref TokRef) CrStep { return withTok(model.CrRelease, h, ref, "", 0) }

// Sweep, Exit, Close and EnqueuedRows are the other operations
// (EnqueuedRows is not recorded in the history: it is not atomic).
func Sweep() CrStep { return Input(model.CrInput[string]{Kind: model.CrSweep}) }
func Exit(h model.HolderID) CrStep {
	return Input(model.CrInput[string]{Kind: model.CrExit, Holder: h})
}
func Close() CrStep        { return Input(model.CrInput[string]{Kind: model.CrClose}) }
func EnqueuedRows() CrStep { return Input(model.CrInput[string]{Kind: model.CrEnqueued}) }

// When runs step only if cond holds for what it sees.
func When(cond func(e CrEnv) bool, step CrStep) CrStep {
	return func(e CrEnv) (model.CrInput[string], bool) {
		if !cond(e) {
			return model.CrInput[string]{}, false
		}
		return step(e)
	}
}

// Took reports whether this thread's take at step k found its payload.
func Took(k int) func(CrEnv) bool {
	return func(e CrEnv) bool { return k < len(e.Mine) && e.Mine[k].OK }
}

// Token-bucket inputs.

var tbLim = model.Limits{Capacity: 2, RefillPerSecond: 1000} // one token per millisecond

func tbTake(key string, cost float64, now int64) model.TBInput[string] {
	return model.TBInput[string]{Kind: model.TBTake, Key: key, Limits: tbLim, Cost: cost, NowMs: now}
}

// tbAdmit is a take that answers a refusal's wait (model.Admit).
func tbAdmit(key string, cost float64, now int64) model.TBInput[string] {
	return model.TBInput[string]{Kind: model.TBAdmit, Key: key, Limits: tbLim, Cost: cost, NowMs: now}
}

// tbRetryAfter asks for the wait until the bucket covers cost (model.RetryAfter).
func tbRetryAfter(key string, cost float64, now int64) model.TBInput[string] {
	return model.TBInput[string]{Kind: model.TBRetryAfter, Key: key, Limits: tbLim, Cost: cost, NowMs: now}
}

func tbPeek(key string, now int64) model.TBInput[string] {
	return model.TBInput[string]{Kind: model.TBPeek, Key: key, Limits: tbLim, NowMs: now}
}

func tbReset(key string) model.TBInput[string] {
	return model.TBInput[string]{Kind: model.TBReset, Key: key}
}

func tbResetAll() model.TBInput[string] { return model.TBInput[string]{Kind: model.TBResetAll} }

func tbReclaim(now int64) model.TBInput[string] {
	return model.TBInput[string]{Kind: model.TBReclaim, Limits: tbLim, NowMs: now}
}

// Catalogue is the named scenarios, each aimed at one race of
// spec/credits.md or spec/tokenbucket.md.
func Catalogue() []Scenario {
	const (
		h1, h2, h3, h9 model.HolderID = 1, 2, 3, 9
		gen, inl                      = model.General, model.Internal
	)
	return []Scenario{
		CreditsScenario("cr-last-slot",
			"two reservers race for the last free internal slot (C1, C2, C3): one wins it, the other is exhausted unless the winner released it first",
			[]CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl)},
			[]CrStep{Reserve(h1, inl), Release(h1, Mine(0))},
			[]CrStep{Reserve(h2, inl)}),
		CreditsScenario("cr-same-holder-reserves",
			"C1, C3: two reserves of one holder race for the last free internal slot, which that holder released last, so each commits with the 64-bit compare-and-swap of the row's low half: one wins it, the other is exhausted",
			[]CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h1, inl), Release(h1, Mine(5))},
			[]CrStep{Reserve(h1, inl)},
			[]CrStep{Reserve(h1, inl)}),
		CreditsScenario("cr-exhausted-behind-scan",
			"C2: A scans the internal class; B frees slot 27 behind A's scan while C, which read 27 before it was freed, claims 32, the one A has not reached: A sees every slot taken though one was always free, and must not answer exhausted",
			[]CrStep{Reserve(h2, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl)},
			[]CrStep{Reserve(h1, inl)},
			[]CrStep{Release(h2, SetupTok(0))},
			[]CrStep{Reserve(h3, inl)}),
		CreditsScenario("cr-enqueue-vs-sweep",
			"C4, C5, C10: a holder's enqueue races its exit and a sweep; the sweep may free the row only while it is still reserved, and then the enqueue is lost",
			[]CrStep{Reserve(h1, gen)},
			[]CrStep{Enqueue(h1, SetupTok(0), "p", 5)},
			[]CrStep{Exit(h1)},
			[]CrStep{Sweep()}),
		CreditsScenario("cr-enqueue-twice",
			"C4, C5, C16: two goroutines of one holder enqueue the same reservation with different payloads while the owner takes it: exactly one enqueue succeeds, the other answers lost only once the row has left reserved, and the payload taken is the winner's",
			[]CrStep{Reserve(h1, gen)},
			[]CrStep{Enqueue(h1, SetupTok(0), "a", 1)},
			[]CrStep{Enqueue(h1, SetupTok(0), "b", 2), Take(SetupTok(0))}),
		CreditsScenario("cr-enqueue-twice-vs-release",
			"C4, C9, C16: two enqueues of one reservation race its holder's release while the owner takes and finishes the row: the enqueue whose box was installed learns whether it was published or released first, even once the row is free again",
			[]CrStep{Reserve(h1, gen)},
			[]CrStep{Enqueue(h1, SetupTok(0), "a", 1)},
			[]CrStep{Enqueue(h1, SetupTok(0), "b", 2), Take(SetupTok(0)), Finish(SetupTok(0))},
			[]CrStep{Release(h1, SetupTok(0))}),
		CreditsScenario("cr-enqueue-twice-vs-finish",
			"C4, C8, C16: two enqueues of one reservation while the owner finishes the row without taking it (a defensive finish of a listed row): the loser publishes the winner's box, the finish frees the row, and the winner, finding the row free, must learn from its box that it was published",
			[]CrStep{Reserve(h1, gen)},
			[]CrStep{Enqueue(h1, SetupTok(0), "a", 1)},
			[]CrStep{Enqueue(h1, SetupTok(0), "b", 2), Finish(SetupTok(0))}),
		CreditsScenario("cr-take-vs-finish",
			"C6, C8: the owner takes and finishes a row that a second poll listed too and finishes defensively: exactly one finish frees it",
			[]CrStep{Reserve(h1, gen), Enqueue(h1, SetupTok(0), "p", 1)},
			[]CrStep{Take(SetupTok(0)), Finish(SetupTok(0))},
			[]CrStep{Finish(SetupTok(0))}),
		CreditsScenario("cr-stale-token-vs-recycle",
			"C3, C9: a release and an enqueue with the token of a freed reservation race the same holder recycling the slot under a new epoch, and another holder releases the new token: neither may change it",
			[]CrStep{Reserve(h1, inl), Release(h1, SetupTok(0))},
			[]CrStep{Release(h1, SetupTok(0)), Enqueue(h1, SetupTok(0), "stale", 2)},
			[]CrStep{Reserve(h1, inl), Enqueue(h1, Mine(0), "fresh", 3)},
			[]CrStep{Release(h2, Fixed(27, 2))}),
		CreditsScenario("cr-release-vs-enqueue",
			"C4, C9: a holder's release and its enqueue of the same reservation race: exactly one wins the reserved row, and a released row is never taken",
			[]CrStep{Reserve(h1, gen)},
			[]CrStep{Release(h1, SetupTok(0))},
			[]CrStep{Enqueue(h1, SetupTok(0), "p", 1), Take(SetupTok(0))}),
		CreditsScenario("cr-stale-enqueue-vs-fresh",
			"C5, C3: an enqueue that passed the pin check races its holder's release and another holder's reserve, enqueue and take of the recycled slot: the stale box may never replace the fresh one, so the take gets the fresh payload",
			[]CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h1, inl)},
			[]CrStep{Enqueue(h1, SetupTok(5), "stale", 1)},
			[]CrStep{Release(h1, SetupTok(5)), Reserve(h2, inl), Enqueue(h2, Mine(1), "fresh", 2), Take(Mine(1))}),
		CreditsScenario("cr-poll-vs-finish",
			"C6, C8: the owner's list of enqueued rows races the take and finish of the row it lists: an entry is a row the slot held, with its payload, never a payload read after the row moved on",
			[]CrStep{Reserve(h1, gen), Enqueue(h1, SetupTok(0), "p", 1)},
			[]CrStep{EnqueuedRows()},
			[]CrStep{Take(SetupTok(0)), Finish(SetupTok(0))}),
		CreditsScenario("cr-finish-vs-recycle",
			"C5, C8: a finish drops its row's payload while the freed slot, the last internal one, is reserved and enqueued again: the drop may only take the finished generation's box, never the new one",
			[]CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h1, inl), Enqueue(h1, SetupTok(5), "old", 1), Take(SetupTok(5))},
			[]CrStep{Finish(SetupTok(5))},
			[]CrStep{Reserve(h2, inl), Enqueue(h2, Mine(0), "fresh", 2), Take(Mine(0))}),
		CreditsScenario("cr-poll-vs-recycle",
			"C13, C7: the owner's list of enqueued rows runs while a row taken before it began is finished and its slot, the last internal one, is reserved and enqueued again: the list may show the new row under its own token, never the taken row, whose take returned before the list was called",
			[]CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h1, inl), Enqueue(h1, SetupTok(5), "old", 1), Take(SetupTok(5))},
			[]CrStep{EnqueuedRows()},
			[]CrStep{Finish(SetupTok(5)), Reserve(h2, inl), Enqueue(h2, Mine(1), "fresh", 2)}),
		CreditsScenario("cr-poll-vs-close",
			"C11, C15: the owner's poll (enqueued → take → finish) races the table's close and a caller's reserve: after close nothing is taken, finished or reserved",
			[]CrStep{Reserve(h1, gen), Enqueue(h1, SetupTok(0), "p", 1)},
			[]CrStep{EnqueuedRows(), Take(Listed(0)), When(Took(1), Finish(Listed(0)))},
			[]CrStep{Close()},
			[]CrStep{Reserve(h2, gen)}),
		TokenBucketScenario("tb-stale-clocks",
			"T4, T5: two takes on one key with clocks that disagree; the older reading commits after the newer one and must not move the timestamp back",
			nil,
			[]model.TBInput[string]{tbTake("k", 2, 100)},
			[]model.TBInput[string]{tbTake("k", 1, 102), tbTake("k", 1, 102)},
			[]model.TBInput[string]{tbTake("k", 1, 101)}),
		TokenBucketScenario("tb-take-vs-reset",
			"T2, T10: takes race a reset of their key: a take that loaded the bucket before the reset retries from a full one",
			nil,
			[]model.TBInput[string]{tbTake("k", 2, 0)},
			[]model.TBInput[string]{tbTake("k", 1, 0), tbTake("k", 1, 0)},
			[]model.TBInput[string]{tbReset("k")}),
		TokenBucketScenario("tb-take-vs-resets",
			"T2, T10: a take that met its key's dead cell makes the next one, which a second reset kills before the take loads it: the take must find that cell dead too and make another, or its commit lands in a cell no later take finds",
			nil,
			[]model.TBInput[string]{tbTake("k", 2, 0)},
			[]model.TBInput[string]{tbTake("k", 1, 0), tbTake("k", 1, 0)},
			[]model.TBInput[string]{tbReset("k"), tbReset("k")}),
		TokenBucketScenario("tb-take-vs-reset-all",
			"T10, T11: takes on two keys race reset_all, which swaps the whole trie: a take that found its cell in the old trie may commit there and linearizes before the reset",
			nil,
			[]model.TBInput[string]{tbTake("a", 2, 0), tbTake("b", 2, 0)},
			[]model.TBInput[string]{tbTake("a", 1, 0)},
			[]model.TBInput[string]{tbResetAll()},
			[]model.TBInput[string]{tbTake("b", 1, 0)}),
		TokenBucketScenario("tb-reclaim-vs-stale-take",
			"T12, T4, T5: a reclaim forgets a bucket that refilled while a take with an old clock races it: whichever commits first, the old clock is never credited the time the forgotten bucket had accrued",
			nil,
			[]model.TBInput[string]{tbTake("k", 2, 100)},
			[]model.TBInput[string]{tbReclaim(102)},
			[]model.TBInput[string]{tbTake("k", 2, 100), tbTake("k", 1, 102)}),
		TokenBucketScenario("tb-reclaim-vs-new-key",
			"T12, T11: a take makes a new key's cell while a reclaim raises the floor and kills cells: the new bucket is stamped from the floor exactly when the take comes after the reclaim",
			nil,
			nil,
			[]model.TBInput[string]{tbReclaim(5)},
			[]model.TBInput[string]{tbTake("j", 2, 0)},
			[]model.TBInput[string]{tbTake("j", 1, 5)}),
		TokenBucketScenario("tb-reclaim-vs-reset",
			"T10, T12: a reset and a reclaim both kill one key's cell while takes with an old and a new clock make its next one: no bucket is lost, none is stamped behind the floor",
			nil,
			[]model.TBInput[string]{tbTake("k", 1, 0)},
			[]model.TBInput[string]{tbReclaim(3)},
			[]model.TBInput[string]{tbReset("k"), tbTake("k", 2, 0)},
			[]model.TBInput[string]{tbTake("k", 1, 3)}),
		TokenBucketScenario("tb-reclaims-race",
			"T12, T11: two reclaims with different clocks race while one compacts the node both walk: the later reclaim must still judge, and forget, the key the earlier one kept, and a stale take after it must find that key forgotten",
			[]string{"k1", "k2"},
			[]model.TBInput[string]{tbTake("k1", 2, 0), tbTake("k2", 2, 10)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbReclaim(12), tbTake("k2", 2, 11)}),
		TokenBucketScenario("tb-reclaim-compacts",
			"T12, T11: a reclaim forgets the two keys of an inner node and compacts the node away while a take inserts a third key of the same prefix into it and another takes from a forgotten key: no key's bucket may be lost",
			[]string{"k1", "k2", "k3"},
			[]model.TBInput[string]{tbTake("k1", 2, 0), tbTake("k2", 2, 0)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbTake("k3", 1, 2)},
			[]model.TBInput[string]{tbTake("k1", 2, 0)}),
		TokenBucketScenario("tb-chain-appends",
			"T11: two new keys with the hash of a present key's are appended at once to the tail of that key's chain of cells: both appends must land, or a take commits into a cell no later take finds",
			nil,
			[]model.TBInput[string]{tbTake("a", 1, 0)},
			[]model.TBInput[string]{tbTake("b", 1, 0)},
			[]model.TBInput[string]{tbTake("c", 1, 0)}).SameHash("a", "b", "c"),
		TokenBucketScenario("tb-chain-unlink-vs-append",
			"T10, T11: a reset kills the head of a chain and unlinks it while a take appends a new key of the same hash behind it: the unlink must seal the dead cell first, so the append either lands before the seal and moves up with the unlink, or fails and goes elsewhere",
			nil,
			[]model.TBInput[string]{tbTake("a", 2, 0)},
			[]model.TBInput[string]{tbReset("a")},
			[]model.TBInput[string]{tbTake("b", 1, 0)}).SameHash("a", "b"),
		TokenBucketScenario("tb-peek-vs-compact",
			"T6, T12: a peek and a reset look up a live key while a reclaim, which forgot its two neighbours, freezes and compacts their node: a lookup must see through the frozen words to the key's cell",
			[]string{"k1", "k2", "k3"},
			[]model.TBInput[string]{tbTake("k1", 2, 0), tbTake("k2", 2, 0), tbTake("k3", 2, 2)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbPeek("k3", 2), tbReset("k3")}),
		TokenBucketScenario("tb-compact-dead-head",
			"T10, T12: a reset kills the head of a chain after a reclaim froze its node for compaction: the compaction must settle the dead head's next word and keep the live cell behind it",
			nil,
			[]model.TBInput[string]{tbTake("a", 2, 2), tbTake("b", 2, 2), tbTake("c", 2, 0)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbReset("a")}).Hashes(map[string]uint64{"a": 0x21, "b": 0x21, "c": 0x51}),
		TokenBucketScenario("tb-compact-vs-append",
			"T10, T11, T12: a reset kills a chain's only cell while a reclaim compacts its node and a take appends the empty key, of the same hash, behind it: the compaction must seal the dead cell before it drops it, so the append fails and goes to the replacement; and the sealed marker, whose key is the empty one too, must never be left in the trie",
			nil,
			[]model.TBInput[string]{tbTake("a", 2, 2), tbTake("c", 2, 0)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbReset("a")},
			[]model.TBInput[string]{tbTake("", 1, 2)}).Hashes(map[string]uint64{"a": 0x21, "": 0x21, "c": 0x51}),
		TokenBucketScenario("tb-compact-vs-push-down",
			"T11, T12: a reclaim that forgot one of a node's two keys compacts the node while a take of a third key, sharing two levels with the kept key, pushes that key down into a new inner node: the compaction must keep the node (as a copy), never pull the inner node up a level",
			nil,
			[]model.TBInput[string]{tbTake("a", 2, 2), tbTake("c", 2, 0)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbTake("d", 1, 2)}).Hashes(map[string]uint64{"a": 0x321, "d": 0x421, "c": 0x051}),
		TokenBucketScenario("tb-trie-push-down-narrow",
			"T11, T1: three keys whose hashes share the trie's three 16-way levels are inserted at once, two of them sharing the first 4-way level too: the inserts push cells down into 4-way nodes at levels 3 and 4 while the others race them; no key's bucket may be lost",
			nil,
			[]model.TBInput[string]{tbTake("a", 1, 0)},
			[]model.TBInput[string]{tbTake("b", 1, 0)},
			[]model.TBInput[string]{tbTake("c", 1, 0)}).Hashes(map[string]uint64{"a": 0x0321, "b": 0x1321, "c": 0x5321}),
		TokenBucketScenario("tb-compact-narrow-vs-push-down",
			"T11, T12: tb-compact-vs-push-down one level below the 16-way ones: a reclaim compacts a 4-way node while a take pushes the kept key down into a new 4-way node",
			nil,
			[]model.TBInput[string]{tbTake("a", 2, 2), tbTake("c", 2, 0)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbTake("d", 1, 2)}).Hashes(map[string]uint64{"a": 0x1321, "d": 0x5321, "c": 0x0321}),
		TokenBucketScenario("tb-compact-narrow-dead-head",
			"T10, T12: tb-compact-dead-head in a 4-way node: a reset kills the head of a chain after a reclaim froze its 4-way node for compaction",
			nil,
			[]model.TBInput[string]{tbTake("a", 2, 2), tbTake("b", 2, 2), tbTake("c", 2, 0)},
			[]model.TBInput[string]{tbReclaim(2)},
			[]model.TBInput[string]{tbReset("a")}).Hashes(map[string]uint64{"a": 0x1321, "b": 0x1321, "c": 0x2321}),
		TokenBucketScenario("tb-admit-vs-take",
			"T7, T11: an admit is refused on a key emptied at 1 ms while another caller's take at 3 ms commits: the refusal's wait must be RetryAfter of one state the bucket had (2 ms before the take, 3 ms after it), read in one snapshot, never one state's tokens with another's timestamp",
			nil,
			[]model.TBInput[string]{tbTake("k", 2, 0), tbTake("k", 1, 1)},
			[]model.TBInput[string]{tbAdmit("k", 2, 1)},
			[]model.TBInput[string]{tbTake("k", 1, 3)}),
		TokenBucketScenario("tb-take-vs-reclaims",
			"T12: a take finds its key's cell killed by a reclaim that forgot it and makes the next one, which a second reclaim kills (absent, no take committed) before the take loads it: the take must find that cell dead too, or it commits into a cell the reclaim unlinks; the first reclaim's count puts it before the take",
			nil,
			[]model.TBInput[string]{tbTake("k", 2, 0)},
			[]model.TBInput[string]{tbReclaim(5)},
			[]model.TBInput[string]{tbTake("k", 1, 5)},
			[]model.TBInput[string]{tbReclaim(5)}),
		TokenBucketScenario("tb-trie-push-down",
			"T11, T1: three keys whose hashes share the trie's first level are inserted at once: each insert after the first pushes a cell down a level while the others race it; no key's bucket may be lost",
			[]string{"k1", "k2", "k3"},
			nil,
			[]model.TBInput[string]{tbTake("k1", 1, 0), tbTake("k1", 1, 0)},
			[]model.TBInput[string]{tbTake("k2", 1, 0)},
			[]model.TBInput[string]{tbTake("k3", 1, 0)}),
	}
}

// Lookup returns the catalogue scenario of that name, the scenario of a
// directed run (Directed) of that name, or a generated one: a systematic
// scenario (Systematic) or a random one (gen-credits-N, gen-tokenbucket-N:
// Generate with seed N).
func Lookup(name string) (Scenario, bool) {
	if s, ok := searched(name); ok {
		return s, true
	}
	for _, d := range Directed() {
		if d.Scenario.Name == name {
			return d.Scenario, true
		}
	}
	for _, s := range PairRuns() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// searched finds a scenario the default run searches: the catalogue's, a
// generated one, an Owner's or one at the tables' bounds.
func searched(name string) (Scenario, bool) {
	if s, ok := catalogued(name); ok {
		return s, true
	}
	if s, ok := generatedScenario(name); ok {
		return s, true
	}
	for _, s := range slices.Concat(OwnerScenarios(), EdgeScenarios()) {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

func catalogued(name string) (Scenario, bool) {
	for _, s := range Catalogue() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}
