package credits

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	mem "github.com/tollgate/tollgate/impl/credits"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
)

var ctx = context.Background()

// server starts a redis-server for t and returns a client of it.
func server(t *testing.T) *goredis.Client {
	t.Helper()
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// open opens a table named after t on c.
func open(t *testing.T, c *goredis.Client) *Table {
	t.Helper()
	tab, err := NewFromClient(ctx, c, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// must returns v, panicking on err (the server under the test failed: the
// panic fails the test with the call's stack).
func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// must2 is must for a call of two results and an error.
func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// leased returns a holder with a lease until 1<<40 ms + MaxLeaseMs (2004:
// live for every sweep the tests make at 1<<40 or before).
func leased(t *testing.T, tab *Table) *Holder {
	t.Helper()
	h := NewHolder()
	if r := must(tab.RenewAt(ctx, 1<<40, h, MaxLeaseMs)); r != OK {
		t.Fatalf("renew: %v", r)
	}
	return h
}

func reserve(t *testing.T, tab *Table, h *Holder, c Class) Token {
	t.Helper()
	tok, r, err := tab.Reserve(ctx, h, c)
	if err != nil || r != OK {
		t.Fatalf("reserve %v: %v, %v", c, r, err)
	}
	return tok
}

// dump is every field of the table's keys, to show a call wrote nothing.
func dump(t *testing.T, c *goredis.Client, name string) [2]map[string]string {
	t.Helper()
	var d [2]map[string]string
	for i, k := range Keys(name) {
		d[i] = must(c.HGetAll(ctx, k).Result())
	}
	return d
}

func snap(t *testing.T, tab *Table) Snapshot {
	t.Helper()
	return must(tab.Snapshot(ctx))
}

// TestTransitions walks every transition of spec/credits.md §2 and the
// refusals of §3, by invariant.
func TestTransitions(t *testing.T) {
	c := server(t)

	t.Run("C1 C2 lowest free slot of the class, then exhausted", func(t *testing.T) { transitionReserve(t, c) })
	t.Run("C3 epochs unique across slots and reuse; stale tokens pin nothing", func(t *testing.T) { transitionEpochs(t, c) })
	t.Run("C4 C5 C6 C8 enqueue, take, finish", func(t *testing.T) { transitionEnqueueTakeFinish(t, c) })
	t.Run("C9 release only by its holder", func(t *testing.T) { transitionRelease(t, c) })
	t.Run("C10 sweep frees only reserved rows of holders without a lease", func(t *testing.T) { transitionSweep(t, c) })
	t.Run("C11 closed table", func(t *testing.T) { transitionClosed(t, c) })
	t.Run("C13 enqueued by mark then slot", func(t *testing.T) { transitionEnqueuedOrder(t, c) })
}

// transitionReserve is TestTransitions' case "C1 C2 lowest free slot of the class, then exhausted".
func transitionReserve(t *testing.T, c *goredis.Client) {
	tab := open(t, c)
	h := leased(t, tab)
	for n := 1; n <= GeneralSlots; n++ {
		if tok := reserve(t, tab, h, General); tok.Slot != n {
			t.Fatalf("general reservation %d got slot %d", n, tok.Slot)
		}
	}
	if _, r, err := tab.Reserve(ctx, h, General); r != Exhausted || err != nil {
		t.Fatalf("27th general reserve: %v, %v; want exhausted", r, err)
	}
	for n := GeneralSlots + 1; n <= Slots; n++ {
		if tok := reserve(t, tab, h, Internal); tok.Slot != n {
			t.Fatalf("internal reservation got slot %d, want %d", tok.Slot, n)
		}
	}
	if _, r, _ := tab.Reserve(ctx, h, Internal); r != Exhausted {
		t.Fatalf("7th internal reserve: %v", r)
	}
	// A freed slot is the next one handed out.
	if !must(tab.Release(ctx, h, Token{Slot: 5, Epoch: mem.Epoch(5, 1)})) {
		t.Fatal("release of slot 5 refused")
	}
	if tok := reserve(t, tab, h, General); tok.Slot != 5 || tok.Epoch != mem.Epoch(5, 2) {
		t.Fatalf("after freeing slot 5: %+v, want slot 5 generation 2", tok)
	}
}

// transitionEpochs is TestTransitions' case "C3 epochs unique across slots and reuse; stale tokens pin nothing".
func transitionEpochs(t *testing.T, c *goredis.Client) {
	tab := open(t, c)
	h := leased(t, tab)
	seen := map[uint64]bool{}
	for i := 0; i < 300; i++ {
		tok := reserve(t, tab, h, Class(1+i%2))
		if seen[tok.Epoch] || tok.Epoch == 0 {
			t.Fatalf("epoch %d issued twice", tok.Epoch)
		}
		seen[tok.Epoch] = true
		if i%50 != 0 {
			if !must(tab.Release(ctx, h, tok)) {
				t.Fatal("release refused")
			}
		}
	}
	old := reserve(t, tab, h, Internal)
	must(tab.Release(ctx, h, old))
	now := reserve(t, tab, h, Internal)
	if now.Slot != old.Slot {
		t.Fatalf("slot %d not recycled (got %d)", old.Slot, now.Slot)
	}
	before := dump(t, c, tab.Name())
	if r := must(tab.EnqueueAt(ctx, 1, h, old, "stale")); r != Lost {
		t.Fatalf("stale enqueue: %v", r)
	}
	if must(tab.Release(ctx, h, old)) {
		t.Fatal("stale release freed the slot's next reservation")
	}
	if must(tab.Finish(ctx, old)) {
		t.Fatal("stale finish freed a row")
	}
	if _, ok := must2(tab.Take(ctx, old)); ok {
		t.Fatal("stale take took")
	}
	// Epochs that name another slot, or generations never handed out.
	for _, e := range []uint64{mem.Epoch(now.Slot%32+1, 1), mem.Epoch(now.Slot, 1<<40), 1<<63 | now.Epoch, ^uint64(0)} {
		if must(tab.Release(ctx, h, Token{Slot: now.Slot, Epoch: e})) {
			t.Fatalf("epoch %#x freed slot %d", e, now.Slot)
		}
	}
	if after := dump(t, c, tab.Name()); !reflect.DeepEqual(before, after) {
		t.Fatalf("stale tokens changed the table:\n%v\n%v", before, after)
	}
}

// transitionEnqueueTakeFinish is TestTransitions' case "C4 C5 C6 C8 enqueue, take, finish".
func transitionEnqueueTakeFinish(t *testing.T, c *goredis.Client) {
	tab := open(t, c)
	h := leased(t, tab)
	tok := reserve(t, tab, h, General)
	if r := must(tab.EnqueueAt(ctx, 42, h, tok, "p1")); r != OK {
		t.Fatalf("enqueue: %v", r)
	}
	if r := must(tab.EnqueueAt(ctx, 43, h, tok, "p2")); r != Lost {
		t.Fatalf("second enqueue: %v, want lost", r)
	}
	if got := must(tab.Enqueued(ctx)); len(got) != 1 || got[0] != (Entry{Token: tok, MarkedMs: 42, Payload: "p1"}) {
		t.Fatalf("enqueued: %+v", got)
	}
	if must(tab.Release(ctx, h, tok)) {
		t.Fatal("release freed an enqueued row (C9)")
	}
	p, ok := must2(tab.Take(ctx, tok))
	if !ok || p != "p1" {
		t.Fatalf("take: %q %v", p, ok)
	}
	if _, ok := must2(tab.Take(ctx, tok)); ok {
		t.Fatal("second take took (C7)")
	}
	if got := must(tab.Enqueued(ctx)); len(got) != 0 {
		t.Fatalf("a processing row is listed: %+v", got)
	}
	if s := snap(t, tab); s.General != (Counts{Free: 25, Processing: 1}) {
		t.Fatalf("snapshot: %+v", s)
	}
	if !must(tab.Finish(ctx, tok)) || must(tab.Finish(ctx, tok)) {
		t.Fatal("finish must free once, then no-op (C8)")
	}
	// Finish of a row still enqueued (listed twice across polls).
	tok = reserve(t, tab, h, General)
	must(tab.EnqueueAt(ctx, 1, h, tok, "x"))
	if !must(tab.Finish(ctx, tok)) {
		t.Fatal("finish of an enqueued row refused")
	}
	if s := snap(t, tab); s.General != (Counts{Free: 26}) {
		t.Fatalf("snapshot: %+v", s)
	}
	// The row's fields are gone with it (C4: no payload without state);
	// the table's live marker stays.
	if d := dump(t, c, tab.Name())[0]; len(d) != 2 || d["g:1"] != "2" || d["live"] != "1" {
		t.Fatalf("rows hash after finish: %v", d)
	}
}

// transitionRelease is TestTransitions' case "C9 release only by its holder".
func transitionRelease(t *testing.T, c *goredis.Client) {
	tab := open(t, c)
	a, b := leased(t, tab), leased(t, tab)
	tok := reserve(t, tab, a, Internal)
	if must(tab.Release(ctx, b, tok)) {
		t.Fatal("another holder released a's reservation")
	}
	if r := must(tab.EnqueueAt(ctx, 1, b, tok, "b")); r != Lost {
		t.Fatalf("another holder enqueued into a's reservation: %v", r)
	}
	if !must(tab.Release(ctx, a, tok)) || must(tab.Release(ctx, a, tok)) {
		t.Fatal("release must free once")
	}
}

// transitionSweep is TestTransitions' case "C10 sweep frees only reserved rows of holders without a lease".
func transitionSweep(t *testing.T, c *goredis.Client) {
	tab := open(t, c)
	live, gone := leased(t, tab), leased(t, tab)
	kept := reserve(t, tab, live, General)
	r1 := reserve(t, tab, gone, General)
	r2 := reserve(t, tab, gone, General)
	must(tab.EnqueueAt(ctx, 5, gone, r2, "mine"))
	r3 := reserve(t, tab, gone, General)
	must(tab.EnqueueAt(ctx, 6, gone, r3, "taken"))
	must2(tab.Take(ctx, r3))
	if n := must(tab.SweepAt(ctx, 100)); n != 0 {
		t.Fatalf("sweep with every lease running freed %d", n)
	}
	if err := tab.Exit(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := tab.Exit(ctx, gone); err != nil {
		t.Fatal("exiting twice:", err)
	}
	if n := must(tab.SweepAt(ctx, 100)); n != 1 {
		t.Fatalf("sweep freed %d, want 1 (only the reserved row)", n)
	}
	if must(tab.Release(ctx, gone, r1)) {
		t.Fatal("a swept reservation was released")
	}
	if s := snap(t, tab); s.General != (Counts{Free: 23, Reserved: 1, Enqueued: 1, Processing: 1}) {
		t.Fatalf("snapshot: %+v", s)
	}
	if !must(tab.Release(ctx, live, kept)) {
		t.Fatal("the live holder's reservation was swept")
	}
}

// transitionClosed is TestTransitions' case "C11 closed table".
func transitionClosed(t *testing.T, c *goredis.Client) {
	tab := open(t, c)
	h := leased(t, tab)
	res := reserve(t, tab, h, General)
	enq := reserve(t, tab, h, General)
	must(tab.EnqueueAt(ctx, 1, h, enq, "p"))
	other := open(t, c)
	if err := tab.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if !must(tab.Destroyed(ctx)) {
		t.Fatal("Destroyed is false after Destroy")
	}
	if _, r, _ := tab.Reserve(ctx, h, General); r != NoTable {
		t.Fatalf("reserve: %v", r)
	}
	if r := must(tab.EnqueueAt(ctx, 1, h, res, "p")); r != NoTable {
		t.Fatalf("enqueue: %v", r)
	}
	if _, ok := must2(tab.Take(ctx, enq)); ok {
		t.Fatal("take on a closed table")
	}
	if must(tab.Finish(ctx, enq)) || must(tab.Release(ctx, h, res)) {
		t.Fatal("finish or release on a closed table")
	}
	if n := must(tab.SweepAt(ctx, 1<<40)); n != 0 {
		t.Fatal("sweep on a closed table")
	}
	if r := must(tab.RenewAt(ctx, 0, h, 1)); r != NoTable {
		t.Fatalf("renew: %v", r)
	}
	if l := must(tab.Enqueued(ctx)); len(l) != 0 {
		t.Fatal("enqueued on a closed table")
	}
	if s := snap(t, tab); s != (Snapshot{Closed: true}) {
		t.Fatalf("snapshot: %+v", s)
	}
	// Another client of the name sees it destroyed too, a new one cannot
	// open it, and the payload is gone with the table.
	if !must(other.Destroyed(ctx)) {
		t.Fatal("a second Table of the name is live")
	}
	if _, r, _ := other.Reserve(ctx, h, General); r != NoTable {
		t.Fatalf("reserve through another client: %v", r)
	}
	if again, err := NewFromClient(ctx, c, tab.Name()); !errors.Is(err, ErrDestroyed) || again != nil {
		t.Fatalf("NewFromClient on a destroyed name: %v, %v; want ErrDestroyed", again, err)
	}
	if d := dump(t, c, tab.Name()); len(d[1]) != 0 || len(d[0]) != 3 {
		t.Fatalf("keys after close: %v", d)
	}
}

// transitionEnqueuedOrder is TestTransitions' case "C13 enqueued by mark then slot".
func transitionEnqueuedOrder(t *testing.T, c *goredis.Client) {
	tab := open(t, c)
	h := leased(t, tab)
	marks := []int64{7, -3, 7, 1 << 62, -1 << 63, 0, 7}
	for i, m := range marks {
		tok := reserve(t, tab, h, Class(1+i%2))
		must(tab.EnqueueAt(ctx, m, h, tok, fmt.Sprint(i)))
	}
	got := must(tab.Enqueued(ctx))
	var order []string
	for _, e := range got {
		order = append(order, fmt.Sprintf("%d@%d", e.Token.Slot, e.MarkedMs))
	}
	want := "3@-9223372036854775808 27@-3 29@0 1@7 2@7 4@7 28@4611686018427387904"
	if strings.Join(order, " ") != want {
		t.Fatalf("order %v, want %v", order, want)
	}
}

// fcalls is how many FCALLs the server has run.
func fcalls(t *testing.T, c *goredis.Client) string {
	t.Helper()
	info := must(c.Info(ctx, "commandstats").Result())
	for _, l := range strings.Split(info, "\n") {
		if strings.HasPrefix(l, "cmdstat_fcall:") {
			return strings.Fields(strings.ReplaceAll(l, ",", " "))[0]
		}
	}
	return "none"
}

// TestDefectsPanic: the defects of C12 panic before anything is sent.
func TestDefectsPanic(t *testing.T) {
	c := server(t)
	tab := open(t, c)
	h := leased(t, tab)
	good := reserve(t, tab, h, General)
	cases := map[string]func(){
		"nil holder reserve": func() { tab.Reserve(ctx, nil, General) },
		"nil holder enqueue": func() { tab.EnqueueAt(ctx, 0, nil, good, "") },
		"nil holder release": func() { tab.Release(ctx, nil, good) },
		"nil holder renew":   func() { tab.RenewAt(ctx, 0, nil, 1) },
		"nil holder exit":    func() { tab.Exit(ctx, nil) },
		"class 0":            func() { tab.Reserve(ctx, h, 0) },
		"class 3":            func() { tab.Reserve(ctx, h, 3) },
		"slot 0":             func() { tab.Take(ctx, Token{Slot: 0, Epoch: 1}) },
		"slot 33":            func() { tab.Finish(ctx, Token{Slot: 33, Epoch: 1}) },
		"slot -1":            func() { tab.Release(ctx, h, Token{Slot: -1, Epoch: 1}) },
		"epoch 0 enqueue":    func() { tab.EnqueueAt(ctx, 0, h, Token{Slot: 1}, "") },
		"epoch 0 take":       func() { tab.Take(ctx, Token{Slot: 1}) },
		"zero token finish":  func() { tab.Finish(ctx, Token{}) },
		"zero token release": func() { tab.Release(ctx, h, Token{}) },
	}
	before, d := fcalls(t, c), dump(t, c, tab.Name())
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Fatal("no panic")
				} else if !strings.Contains(fmt.Sprint(r), "defect") {
					t.Fatalf("panic %q does not say it is a defect", r)
				}
			}()
			f()
		})
	}
	if after := fcalls(t, c); after != before {
		t.Fatalf("defects sent calls: %s before, %s after", before, after)
	}
	if !reflect.DeepEqual(d, dump(t, c, tab.Name())) {
		t.Fatal("defects changed the table")
	}
}

// TestArgErrors: bad arguments name the field and the rule and send
// nothing.
func TestArgErrors(t *testing.T) {
	c := server(t)
	for _, name := range []string{"", "a{b", "a}b", strings.Repeat("n", 257)} {
		_, err := NewFromClient(ctx, c, name)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Field != "name" {
			t.Fatalf("New(%q): %v, want an *ArgError for name", name, err)
		}
	}
	if _, err := NewFromClient(ctx, goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}), "x"); err == nil || !strings.Contains(err.Error(), "retries") {
		t.Fatalf("New with a retrying client: %v", err)
	}
	tab := open(t, c)
	h := NewHolder()
	before := fcalls(t, c)
	for _, tc := range []struct{ now, ttl int64 }{{0, 0}, {0, -1}, {1 << 62, 1 << 62}, {1<<63 - 1, 1}, {-1 << 63, 1<<63 - 1}, {0, MaxLeaseMs + 1}} {
		_, err := tab.RenewAt(ctx, tc.now, h, tc.ttl)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Field != "ttl_ms" {
			t.Fatalf("RenewAt(%d, %d): %v, want an *ArgError for ttl_ms", tc.now, tc.ttl, err)
		}
	}
	if r := must(tab.RenewAt(ctx, -1<<63, h, MaxLeaseMs)); r != OK {
		t.Fatalf("the longest lease from the earliest clock: %v", r)
	}
	if after := fcalls(t, c); after == before {
		t.Fatal("the calls were not counted")
	}
	for _, id := range []string{"", "00", strings.Repeat("A", 32), strings.Repeat("g", 32), strings.Repeat("0", 33)} {
		if _, err := ParseHolder(id); err == nil {
			t.Fatalf("ParseHolder(%q) accepted", id)
		}
	}
	if p, err := ParseHolder(h.ID()); err != nil || p.ID() != h.ID() {
		t.Fatalf("ParseHolder(ID()): %v %v", p, err)
	}
	if strings.Contains(h.String(), h.ID()) {
		t.Fatal("String reveals the id")
	}
}

// TestLeaseExpiry: a lease runs until now+ttl, exclusive, on the injected
// clock; sweep frees a reservation only once its holder's lease has run
// out; before that the holder's calls succeed, after it they are refused;
// renewing keeps a reservation.
func TestLeaseExpiry(t *testing.T) {
	c := server(t)
	tab := open(t, c)
	h := NewHolder()
	must(tab.RenewAt(ctx, 1000, h, 500)) // until 1500
	a := reserve(t, tab, h, General)
	b := reserve(t, tab, h, General)
	if n := must(tab.SweepAt(ctx, 1499)); n != 0 {
		t.Fatalf("sweep at 1499 freed %d", n)
	}
	must(tab.RenewAt(ctx, 1400, h, 500)) // until 1900
	if n := must(tab.SweepAt(ctx, 1500)); n != 0 {
		t.Fatalf("sweep at 1500 after renewal freed %d", n)
	}
	// Expired, not yet swept: the holder's calls still succeed.
	if r := must(tab.EnqueueAt(ctx, 1950, h, b, "late")); r != OK {
		t.Fatalf("enqueue after expiry, before a sweep: %v", r)
	}
	if n := must(tab.SweepAt(ctx, 1900)); n != 1 {
		t.Fatalf("sweep at 1900 freed %d, want 1", n)
	}
	if d := dump(t, c, tab.Name()); len(d[1]) != 1 || d[1]["live"] == "" {
		t.Fatalf("the expired lease was kept, or the live marker dropped: %v", d[1])
	}
	// After the sweep: refused, and the enqueued row stayed.
	if r := must(tab.EnqueueAt(ctx, 2000, h, a, "too late")); r != Lost {
		t.Fatalf("enqueue after the sweep: %v", r)
	}
	if must(tab.Release(ctx, h, a)) {
		t.Fatal("release after the sweep")
	}
	if l := must(tab.Enqueued(ctx)); len(l) != 1 || l[0].Payload != "late" {
		t.Fatalf("enqueued: %+v", l)
	}
	// Never renewed: swept at any clock.
	stranger := NewHolder()
	reserve(t, tab, stranger, Internal)
	if n := must(tab.SweepAt(ctx, -1<<63)); n != 1 {
		t.Fatalf("a reservation without a lease: sweep freed %d", n)
	}
	// Renewing after expiry makes the holder live again.
	must(tab.RenewAt(ctx, 5000, h, 10))
	c2 := reserve(t, tab, h, General)
	if n := must(tab.SweepAt(ctx, 5009)); n != 0 {
		t.Fatalf("sweep freed %d of a renewed holder", n)
	}
	if !must(tab.Release(ctx, h, c2)) {
		t.Fatal("release by the renewed holder")
	}
	// Expiries beyond 2^53 in magnitude compare exactly (below zero: a
	// clock ahead of the server's by more than MaxClockAheadMs is refused).
	must(tab.RenewAt(ctx, -1<<62, h, 1))
	reserve(t, tab, h, General)
	if n := must(tab.SweepAt(ctx, -1<<62)); n != 0 {
		t.Fatalf("sweep at -2^62 freed a lease that runs until -2^62+1: %d", n)
	}
	if n := must(tab.SweepAt(ctx, -1<<62+1)); n != 1 {
		t.Fatalf("sweep at -2^62+1 freed %d", n)
	}
}

// TestGuessResistance: without the holder's id, no client can enqueue
// into or release its reservation: not another holder, not a guessed id,
// not the id with one bit changed.
func TestGuessResistance(t *testing.T) {
	c := server(t)
	tab := open(t, c)
	owner := leased(t, tab)
	tok := reserve(t, tab, owner, General)
	id := owner.ID()
	raw, _ := hex.DecodeString(id)
	raw[15] ^= 1 // the id with its last bit changed
	flipped := hex.EncodeToString(raw)
	guesses := []string{strings.Repeat("0", 32), strings.Repeat("f", 32), flipped, NewHolder().ID()}
	before := dump(t, c, tab.Name())
	for _, g := range guesses {
		h, err := ParseHolder(g)
		if err != nil {
			t.Fatal(err)
		}
		if r := must(tab.EnqueueAt(ctx, 1, h, tok, "hijack")); r != Lost {
			t.Fatalf("holder %s enqueued into another's reservation: %v", g, r)
		}
		if must(tab.Release(ctx, h, tok)) {
			t.Fatalf("holder %s released another's reservation", g)
		}
	}
	if !reflect.DeepEqual(before, dump(t, c, tab.Name())) {
		t.Fatal("guesses changed the table")
	}
	// Ids are distinct and full-width.
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewHolder().ID()
		if seen[id] || len(id) != 32 {
			t.Fatalf("id %q repeated or short", id)
		}
		seen[id] = true
	}
	if r := must(tab.EnqueueAt(ctx, 1, owner, tok, "mine")); r != OK {
		t.Fatalf("the owner's enqueue: %v", r)
	}
}

// TestGenerationCap: a slot that has handed out MaxGen generations refuses
// to reserve, writing nothing; the last epoch is exact.
func TestGenerationCap(t *testing.T) {
	c := server(t)
	tab := open(t, c)
	h := leased(t, tab)
	rows := Keys(tab.Name())[0]
	must(c.HSet(ctx, rows, "g:1", MaxGen-1).Result())
	tok := reserve(t, tab, h, General)
	if tok.Slot != 1 || tok.Epoch != MaxGen<<5 || tok.Epoch >= 1<<53 {
		t.Fatalf("last generation: %+v", tok)
	}
	must(tab.EnqueueAt(ctx, 1, h, tok, "p"))
	must2(tab.Take(ctx, tok))
	if !must(tab.Finish(ctx, tok)) {
		t.Fatal("finish of the last generation")
	}
	before := dump(t, c, tab.Name())
	_, _, err := tab.Reserve(ctx, h, General)
	if err == nil || !strings.Contains(err.Error(), "last generation") {
		t.Fatalf("reserve past the cap: %v", err)
	}
	if !reflect.DeepEqual(before, dump(t, c, tab.Name())) {
		t.Fatal("the refused reserve wrote")
	}
}

// TestTransport: a call on a closed client was not sent; one whose reply
// never came is unknown, and is never reported as a refusal. The read
// timeout is a second, so that the calls before the pause answer within
// it on a loaded machine (at 50 ms one did not, at a load of 45), and the
// pause ten, so that the release's read times out inside it.
func TestTransport(t *testing.T) {
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr, ReadTimeout: time.Second})
	tab := open(t, c)
	h := leased(t, tab)
	tok := reserve(t, tab, h, General)

	// The server stops answering (CLIENT PAUSE) and the call's read times
	// out: the call was sent, so its outcome is unknown.
	admin := rconn.NewClient(&goredis.Options{Addr: srv.Addr})
	defer admin.Close()
	must(admin.Do(ctx, "CLIENT", "PAUSE", "10000", "WRITE").Result())
	_, err := tab.Release(ctx, h, tok)
	must(admin.Do(ctx, "CLIENT", "UNPAUSE").Result())
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("a release with no reply: %v, want ErrUnknown", err)
	}
	if errors.Is(err, ErrNotSent) {
		t.Fatalf("a sent release reported as not sent: %v", err)
	}
	c.Close()
	if _, _, err := tab.Reserve(ctx, h, General); !errors.Is(err, ErrNotSent) {
		t.Fatalf("reserve on a closed client: %v, want ErrNotSent", err)
	}
}

// TestNewAndReload: New makes a client of its own, which Close
// closes, leaving the table live; a server that lost the library gets it
// again on the next call, which then runs once.
func TestNewAndReload(t *testing.T) {
	srv := redisserver.StartT(t)
	opts := &goredis.Options{Addr: srv.Addr}
	tab, err := New(ctx, opts, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	if opts.MaxRetries != 0 {
		t.Fatal("New changed the caller's options")
	}
	h := leased(t, tab)
	tok := reserve(t, tab, h, Internal)
	admin := rconn.NewClient(opts)
	defer admin.Close()
	must(admin.FunctionFlush(ctx).Result())
	if r := must(tab.EnqueueAt(ctx, 1, h, tok, "after flush")); r != OK {
		t.Fatalf("enqueue after FUNCTION FLUSH: %v", r)
	}
	if s := snap(t, tab); s.Internal.Enqueued != 1 {
		t.Fatalf("snapshot: %+v", s)
	}
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Snapshot(ctx); !errors.Is(err, ErrNotSent) {
		t.Fatalf("a call after Close: %v, want ErrNotSent", err)
	}
	// Close let go of this client only: the table, its reservation and its
	// payload are there for the next client of the name.
	again := must(New(ctx, opts, t.Name()))
	defer again.Close()
	if s := snap(t, again); s.Internal.Enqueued != 1 || must(again.Destroyed(ctx)) {
		t.Fatalf("the table after Close: %+v", s)
	}
}

// serverMs is the server's clock (TIME) in milliseconds.
func serverMs(t *testing.T, c *goredis.Client) int64 {
	t.Helper()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// TestClockAheadIsRefused: a sweep or a renewal whose clock runs more than
// MaxClockAheadMs ahead of the server's frees nothing and writes nothing,
// and says so with ErrClockAhead: no client can free another holder's
// live reservation, without its id, by sweeping from far in the future
// (SweepAt(math.MaxInt64) did, and the victim's enqueue answered lost), nor
// strand its own rows under a lease far past any sweep. A clock within the
// bound is judged as before.
func TestClockAheadIsRefused(t *testing.T) {
	c := server(t)
	tab := open(t, c)
	victim := NewHolder()
	now := serverMs(t, c)
	must(tab.RenewAt(ctx, now, victim, 60_000))
	tok := reserve(t, tab, victim, General)
	before := dump(t, c, tab.Name())
	for _, at := range []int64{math.MaxInt64, now + 3_600_000, now + 2*MaxClockAheadMs} {
		n, err := tab.SweepAt(ctx, at)
		if !errors.Is(err, ErrClockAhead) || n != 0 {
			t.Fatalf("SweepAt(%d), the server at %d: %d, %v; want 0 and ErrClockAhead", at, now, n, err)
		}
		if !strings.Contains(err.Error(), "now_ms") {
			t.Errorf("the refusal does not name now_ms: %v", err)
		}
		r, err := tab.RenewAt(ctx, at-1, NewHolder(), 1)
		if !errors.Is(err, ErrClockAhead) || r != 0 {
			t.Fatalf("RenewAt(%d), the server at %d: %v, %v; want ErrClockAhead", at-1, now, r, err)
		}
	}
	if after := dump(t, c, tab.Name()); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused call wrote: before %v, after %v", before, after)
	}
	if r := must(tab.EnqueueAt(ctx, now, victim, tok, "mine")); r != OK {
		t.Fatalf("the victim's enqueue after the refused sweeps: %v, want OK", r)
	}
	// Within the bound the caller's clock still rules: a sweep a little
	// ahead frees a lease that expired on its clock.
	h := NewHolder()
	must(tab.RenewAt(ctx, now, h, 10))
	reserve(t, tab, h, Internal)
	if n := must(tab.SweepAt(ctx, now+MaxClockAheadMs/2)); n != 1 {
		t.Fatalf("a sweep %d ms ahead, inside the bound, freed %d, want 1", MaxClockAheadMs/2, n)
	}
}

// TestFunctionNamesVersioned: every function of the library is registered
// under its version's name, so a process of another version never runs
// it (rconn.Call).
func TestFunctionNamesVersioned(t *testing.T) {
	if err := rconn.CheckFunctionNames(source()); err != nil {
		t.Fatal(err)
	}
}

// TestLeaseCap: no caller can set a lease that no sweep reaches. RenewAt
// refuses a ttl above MaxLeaseMs, naming ttl_ms; the library refuses, to a
// caller of the function itself, an expiry further past the server's clock
// than MaxClockAheadMs + MaxLeaseMs, naming expiry_ms; neither writes. The
// longest lease allowed is swept once it has run out.
func TestLeaseCap(t *testing.T) {
	c := server(t)
	tab := open(t, c)
	now := serverMs(t, c)
	h := NewHolder()
	before := dump(t, c, tab.Name())
	for _, ttl := range []int64{MaxLeaseMs + 1, math.MaxInt64 - now} {
		r, err := tab.RenewAt(ctx, now, h, ttl)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Field != "ttl_ms" || !strings.Contains(err.Error(), "MaxLeaseMs") || r != 0 {
			t.Fatalf("RenewAt(%d, ttl %d): %v, %v; want an *ArgError naming ttl_ms and MaxLeaseMs", now, ttl, r, err)
		}
	}
	keys := Keys(tab.Name())
	for _, exp := range []int64{math.MaxInt64, now + MaxClockAheadMs + MaxLeaseMs + 60_000} {
		err := c.FCall(ctx, rconn.FunctionName("tollgate_cr_renew", source()), keys, h.ID(), strconv.FormatInt(exp, 10), strconv.FormatInt(now, 10)).Err()
		if err == nil || !strings.Contains(err.Error(), "tollgate_cr: expiry_ms") {
			t.Fatalf("a raw renewal to %d: %v; want an error reply naming expiry_ms", exp, err)
		}
	}
	if after := dump(t, c, tab.Name()); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused renewal wrote: before %v, after %v", before, after)
	}
	// The longest lease allowed: live until it runs out, swept after.
	must(tab.RenewAt(ctx, now, h, MaxLeaseMs))
	reserve(t, tab, h, General)
	if n := must(tab.SweepAt(ctx, now)); n != 0 {
		t.Fatalf("a live lease swept: %d", n)
	}
	// A sweep at the lease's end on a clock the server accepts: run the
	// lease from an hour back instead of waiting an hour.
	must(tab.RenewAt(ctx, now-MaxLeaseMs, h, MaxLeaseMs))
	if n := must(tab.SweepAt(ctx, now)); n != 1 {
		t.Fatalf("a lease of MaxLeaseMs that ran out: swept %d, want 1", n)
	}
}

// TestEvictedStateRefused: opening a table on a server whose
// maxmemory-policy can evict its keys is refused, naming the setting; and a
// table whose keys another application's data evicted after it was opened
// (the policy changed at run time, maxmemory reached) says so, with
// ErrStateLost and nothing written, instead of issuing its epochs again.
func TestEvictedStateRefused(t *testing.T) {
	c := server(t)
	if err := c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFromClient(ctx, c, t.Name()); !errors.Is(err, ErrEvictable) || !strings.Contains(err.Error(), "maxmemory-policy is allkeys-lru") {
		t.Fatalf("New under allkeys-lru: %v, want ErrEvictable naming maxmemory-policy", err)
	}
	must(c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Result())
	tab := open(t, c)
	h := leased(t, tab)
	first := reserve(t, tab, h, General)
	must(tab.Finish(ctx, first)) // the row is free again, at generation 1

	// Another application fills the server, which now evicts any key.
	must(c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Result())
	must(c.ConfigSet(ctx, "maxmemory", "4mb").Result())
	defer c.ConfigSet(ctx, "maxmemory", "0")
	keys := Keys(tab.Name())
	value := strings.Repeat("x", 10_000)
	evicted := false
	for i := 0; i < 100_000 && !evicted; i++ {
		if err := c.Set(ctx, fmt.Sprintf("other:%d", i), value, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			n := must(c.Exists(ctx, keys[0]).Result()) + must(c.Exists(ctx, keys[1]).Result())
			evicted = n < 2
		}
	}
	if !evicted {
		t.Fatal("100,000 writes of 10 kB under maxmemory 4mb evicted neither of the table's keys")
	}
	must(c.ConfigSet(ctx, "maxmemory", "0").Result())
	before := dump(t, c, tab.Name())
	tok, r, err := tab.Reserve(ctx, h, General)
	if !errors.Is(err, ErrStateLost) || !strings.Contains(err.Error(), "evicted") {
		t.Fatalf("reserve after the eviction: %v %v, %v; want ErrStateLost (the epoch of %v would be issued again)", tok, r, err, first)
	}
	for name, err := range map[string]error{
		"sweep":    func() error { _, err := tab.SweepAt(ctx, 0); return err }(),
		"enqueued": func() error { _, err := tab.Enqueued(ctx); return err }(),
		"renew":    func() error { _, err := tab.RenewAt(ctx, 0, h, 1); return err }(),
	} {
		if !errors.Is(err, ErrStateLost) {
			t.Errorf("%s after the eviction: %v, want ErrStateLost", name, err)
		}
	}
	if after := dump(t, c, tab.Name()); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused call wrote: before %v, after %v", before, after)
	}
}
