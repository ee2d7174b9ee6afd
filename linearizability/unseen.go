package linearizability

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/tollgate/tollgate/model"
)

// crState is one state of the credit table as the checker tracks it: the
// model's rows, and the reservations of unknown outcome that claimed a slot
// without saying which (unseen).
//
// A reserve whose outcome is unknown may have claimed any free slot of its
// class. Branching on the slot (one state per free slot) multiplied the
// checker's states by up to 26 per such reserve, and a history with a few of
// them in flight at once had tens of thousands of states in one step. So the
// slot is left open: an unseen reservation keeps the set of slots it may
// occupy, which are the slots of its class that were free when it claimed
// and that no reserve has claimed since (a slot claimed while it held its
// own can never have been its slot; one freed since was not free when it
// claimed). The state is possible exactly when the unseen reservations can
// be given distinct slots of their sets (a bipartite matching), and a
// reserve answering exhausted is judged on the model state with them placed
// so. Nothing but a sweep after its holder's exit frees one: no token
// carries its epoch (model.Credits.ReserveUnseen).
type crState struct {
	s      model.Credits[Payload]
	unseen []unseenRes // sorted
}

// unseenRes is a reservation of unknown slot: holder h claimed one of the
// slots of mask (bit n-1 for slot n).
type unseenRes struct {
	holder model.HolderID
	mask   uint32
}

func (a crState) equal(b crState) bool {
	return a.s.Equal(b.s) && slices.Equal(a.unseen, b.unseen)
}

func (a crState) hash() uint64 {
	h := hashCredits(a.s)
	for _, u := range a.unseen {
		h = mix(mix(h, uint64(u.holder)), uint64(u.mask))
	}
	return h
}

// withUnseen returns a with u added (in canonical order), or false when the
// unseen reservations then cannot all be placed.
func (a crState) withUnseen(u unseenRes) (crState, bool) {
	next := slices.Clone(a.unseen)
	i, _ := slices.BinarySearchFunc(next, u, cmpUnseen)
	next = slices.Insert(next, i, u)
	b := crState{s: a.s, unseen: next}
	_, ok := b.placement()
	return b, ok
}

func cmpUnseen(x, y unseenRes) int {
	switch {
	case x.holder != y.holder:
		if x.holder < y.holder {
			return -1
		}
		return 1
	case x.mask != y.mask:
		if x.mask < y.mask {
			return -1
		}
		return 1
	}
	return 0
}

// claimed returns a after a reserve claimed slot n: n leaves every unseen
// reservation's set. It reports false when they then cannot all be placed.
func (a crState) claimed(s model.Credits[Payload], n int) (crState, bool) {
	b := crState{s: s, unseen: a.unseen}
	bit := uint32(1) << (n - 1)
	cloned := false
	for i, u := range a.unseen {
		if u.mask&bit == 0 {
			continue
		}
		if !cloned {
			b.unseen, cloned = slices.Clone(a.unseen), true
		}
		b.unseen[i].mask &^= bit
	}
	if !cloned {
		return b, true
	}
	slices.SortFunc(b.unseen, cmpUnseen)
	_, ok := b.placement()
	return b, ok
}

// placement gives each unseen reservation a distinct slot of its set
// (Kuhn's augmenting paths; there are only a few), or reports false.
func (a crState) placement() ([]int, bool) {
	owner := [model.Slots + 1]int{} // slot → index+1 of the reservation placed there
	slot := make([]int, len(a.unseen))
	var try func(i int, seen *uint32) bool
	try = func(i int, seen *uint32) bool {
		for m := a.unseen[i].mask &^ *seen; m != 0; m &= m - 1 {
			n := bits.TrailingZeros32(m) + 1
			*seen |= 1 << (n - 1)
			if owner[n] == 0 || try(owner[n]-1, seen) {
				owner[n], slot[i] = i+1, n
				return true
			}
		}
		return false
	}
	for i := range a.unseen {
		var seen uint32
		if !try(i, &seen) {
			return nil, false
		}
	}
	return slot, true
}

// witness is the model state with every unseen reservation placed on a slot
// of its set: the state the model judges an exhausted answer on. A closed
// table has no rows to place them on, and answers no_table either way.
func (a crState) witness() model.Credits[Payload] {
	if a.s.Closed() {
		return a.s
	}
	slot, ok := a.placement()
	if !ok {
		panic("linearizability: a credits state whose unseen reservations cannot be placed")
	}
	w := a.s
	for i, u := range a.unseen {
		var claimed bool
		if w, claimed = w.ReserveUnseen(u.holder, slot[i]); !claimed {
			panic("linearizability: an unseen reservation's slot is not free")
		}
	}
	return w
}

// reserveUnknown returns the states a reserve of unknown outcome may leave:
// a as it was (it did not run, or found no free slot), and a with an unseen
// reservation of h on one of the slots of class c that are free now, if
// they can all still be placed.
func (a crState) reserveUnknown(h model.HolderID, c model.Class) []crState {
	next := []crState{a}
	var mask uint32
	first, last := c.SlotRange()
	for n := first; n <= last; n++ {
		if _, ok := a.s.ReserveUnseen(h, n); ok {
			mask |= 1 << (n - 1)
		}
	}
	if mask != 0 {
		if b, ok := a.withUnseen(unseenRes{holder: h, mask: mask}); ok {
			next = append(next, b)
		}
	}
	return next
}

// sweepUnseen returns the states in which one sweep row step freed an
// unseen reservation: those whose holder has exited, as the model's
// SweepSlot judges it on the reservation placed.
func (a crState) sweepUnseen() []crState {
	var next []crState
	for i, u := range a.unseen {
		if i > 0 && u == a.unseen[i-1] {
			continue
		}
		n := bits.TrailingZeros32(u.mask) + 1
		w, ok := a.s.ReserveUnseen(u.holder, n)
		if !ok {
			continue
		}
		if _, freed := w.SweepSlot(n); freed {
			next = append(next, crState{s: a.s, unseen: slices.Delete(slices.Clone(a.unseen), i, i+1)})
		}
	}
	return next
}

func (a crState) describe() string {
	d := DescribeCredits(a.s)
	if len(a.unseen) == 0 {
		return d
	}
	var parts []string
	for _, u := range a.unseen {
		var slots []string
		for m := u.mask; m != 0; m &= m - 1 {
			slots = append(slots, fmt.Sprint(bits.TrailingZeros32(m)+1))
		}
		dead := ""
		if !a.s.Alive(u.holder) {
			dead = "†"
		}
		parts = append(parts, fmt.Sprintf("h%d%s on one of %s", u.holder, dead, strings.Join(slots, ",")))
	}
	return d + " | unknown reserves holding: " + strings.Join(parts, "; ")
}
