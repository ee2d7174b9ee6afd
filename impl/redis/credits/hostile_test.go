package credits

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/rconn"
)

// hostile are strings that would break a function that spliced its
// arguments into Lua source, a codec that stopped at a NUL, or a key
// layout that trusted a name.
var hostile = []string{
	"", "'", `"`, "]]", "]=]", "[[", "\x00", "a\x00b", "\x00\x00\x00", "\n", "\r\n", "--",
	"end", "'); redis.call('FLUSHALL'); --", "]] redis.call('FLUSHALL') [[",
	"\") redis.call('DEL', KEYS[1]) (\"", "return redis.call('FLUSHALL')",
	"\xff\xfe\xfd", "ÿ€", "%s%d%n", "\\", "\\0", "1e3", "0x10", "-0", "+1", " 1", "1 ",
	strings.Repeat("9", 40), "nan", "inf",
}

// TestHostilePayloads: payloads of any bytes, and a large one, come back
// byte for byte from Take and Enqueued, and hostile table names keep to
// their own keys.
func TestHostilePayloads(t *testing.T) {
	c := server(t)
	big := strings.Repeat("\x00]]'\n", 1<<20) // 5 MiB
	payloads := append(append([]string{}, hostile...), big)
	names := append([]string{t.Name()}, hostile[1:12]...)
	for i, name := range names {
		tab, err := NewFromClient(ctx, c, name)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		h := leased(t, tab)
		for j, p := range payloads {
			if j == len(payloads)-1 && i > 0 {
				break // the large one in the first table only
			}
			tok := reserve(t, tab, h, General)
			if r := must(tab.EnqueueAt(ctx, int64(i), h, tok, p)); r != OK {
				t.Fatalf("enqueue %q: %v", p, r)
			}
			l := must(tab.Enqueued(ctx))
			if len(l) != 1 || l[0].Payload != p || l[0].Token != tok {
				t.Fatalf("table %q: enqueued lists %d rows, payload %q; want %q", name, len(l), l[0].Payload, p)
			}
			got, ok := must2(tab.Take(ctx, tok))
			if !ok || got != p {
				t.Fatalf("table %q: take returned %q, want %q", name, got, p)
			}
			if !must(tab.Finish(ctx, tok)) {
				t.Fatal("finish")
			}
		}
		if !reflect.DeepEqual(must(tab.Snapshot(ctx)), Snapshot{General: Counts{Free: GeneralSlots}, Internal: Counts{Free: InternalSlots}}) {
			t.Fatalf("table %q not empty", name)
		}
	}
	// Every table kept to its own two keys; beside them only the
	// library's version mark, one for the whole server.
	want := map[string]bool{rconn.VersionMark(library): true}
	for _, name := range names {
		for _, k := range Keys(name) {
			want[k] = true
		}
	}
	got := map[string]bool{}
	for _, k := range must(c.Keys(ctx, "*").Result()) {
		got[k] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
}

// TestHostileArguments: a client calling the functions directly, with
// hostile holder ids, slots, generations, classes and clocks, gets an error
// reply naming the argument, and the table is unchanged.
func TestHostileArguments(t *testing.T) {
	c := server(t)
	tab := open(t, c)
	h := leased(t, tab)
	tok := reserve(t, tab, h, General)
	keys := Keys(tab.Name())
	slot, gen := tokenArgs(tok)
	before := dump(t, c, tab.Name())
	call := func(fn string, args ...any) error {
		return c.FCall(ctx, rconn.FunctionName(fn, source()), keys, args...).Err()
	}
	expect := func(field string, err error) {
		t.Helper()
		var reply goredis.Error
		if !errors.As(err, &reply) || !strings.Contains(err.Error(), "tollgate_cr: "+field) {
			t.Fatalf("error %v, want a server reply naming %s", err, field)
		}
	}
	for _, x := range hostile {
		expect("holder", call("tollgate_cr_reserve", x, "1"))
		expect("holder", call("tollgate_cr_enqueue", x, slot, gen, "1", "p"))
		expect("holder", call("tollgate_cr_release", x, slot, gen))
		expect("holder", call("tollgate_cr_renew", x, "1"))
		expect("holder", call("tollgate_cr_drop", x))
		expect("class", call("tollgate_cr_reserve", h.ID(), x))
		expect("slot", call("tollgate_cr_take", x, gen))
		expect("slot", call("tollgate_cr_finish", x, gen))
		expect("slot", call("tollgate_cr_release", h.ID(), x, gen))
		expect("slot", call("tollgate_cr_enqueue", h.ID(), x, gen, "1", "p"))
		if x != "" && strings.Trim(x, "0123456789") == "" {
			continue // "999…9": a decimal, if too long for a generation or clock it is refused below
		}
		expect("generation", call("tollgate_cr_take", slot, x))
		expect("generation", call("tollgate_cr_finish", slot, x))
		expect("generation", call("tollgate_cr_release", h.ID(), slot, x))
		expect("generation", call("tollgate_cr_enqueue", h.ID(), slot, x, "1", "p"))
		expect("marked_ms", call("tollgate_cr_enqueue", h.ID(), slot, gen, x, "p"))
		expect("now_ms", call("tollgate_cr_sweep", x))
		expect("expiry_ms", call("tollgate_cr_renew", h.ID(), x, "1"))
		expect("now_ms", call("tollgate_cr_renew", h.ID(), "1", x))
	}
	for _, x := range []string{"0", "33", "-1", "01", "1.0", "100"} {
		expect("slot", call("tollgate_cr_take", x, gen))
	}
	for _, x := range []string{"01", "-1", "1000000000000000", "1.5"} {
		expect("generation", call("tollgate_cr_take", slot, x))
	}
	for _, x := range []string{"9223372036854775808", "-9223372036854775809", "00", "-0", "99999999999999999999"} {
		expect("now_ms", call("tollgate_cr_sweep", x))
	}
	// A holder id that differs only in case, or in length, is refused too.
	expect("holder", call("tollgate_cr_release", strings.ToUpper(h.ID()), slot, gen))
	expect("holder", call("tollgate_cr_release", h.ID()+"0", slot, gen))
	expect("holder", call("tollgate_cr_release", h.ID()[:31], slot, gen))
	// 32 bytes, but not all hex: a NUL, a newline or a quote in any place.
	for _, bad := range []string{"\x00", "\n", "'", "]", "G", " "} {
		for _, at := range []int{0, 16, 31} {
			id := h.ID()[:at] + bad + h.ID()[at+1:]
			expect("holder", call("tollgate_cr_release", id, slot, gen))
			expect("holder", call("tollgate_cr_enqueue", id, slot, gen, "1", "p"))
		}
	}
	if !reflect.DeepEqual(before, dump(t, c, tab.Name())) {
		t.Fatal("hostile arguments changed the table")
	}
	if ok := must(tab.Release(ctx, h, tok)); !ok {
		t.Fatal("the holder's own release after the hostile calls")
	}
}
