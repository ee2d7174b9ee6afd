package rewrite

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// accessTests are the typed rewrite's forms: each plain access of shared
// memory reported with its address, the rest left alone.
var accessTests = []struct {
	name, src, want string // src and want: a function body's lines
}{
	{"increment through a pointer",
		`func (c *Counter) Inc() int { c.n++; return c.n }`,
		`func (c *Counter) Inc() int { *tgrt_.PlainWrite(tgrt_.PlainLoad(&c.n))++; return (*tgrt_.PlainLoad(&c.n)) }`},
	{"compound assignment",
		`func (c *Counter) Add(d int) { c.n += d; c.n -= 1 }`,
		`func (c *Counter) Add(d int) { *tgrt_.PlainWrite(tgrt_.PlainLoad(&c.n)) += d; *tgrt_.PlainWrite(tgrt_.PlainLoad(&c.n)) -= 1 }`},
	{"store and load",
		`func (c *Counter) Set(v int) int { c.n = v; old := c.n; return old }`,
		`func (c *Counter) Set(v int) int { *tgrt_.PlainWrite(&c.n) = v; old := (*tgrt_.PlainLoad(&c.n)); return old }`},
	{"store after a call",
		`func (c *Counter) Reset() { c.n = c.get() }`,
		`func (c *Counter) Reset() { tgrt_.Store(&c.n , (*tgrt_.PlainLoad(c)).get()) }`},
	{"slice elements",
		`func (c *Counter) Shift(i, j int) { c.xs[i] = c.xs[j] }`,
		`func (c *Counter) Shift(i, j int) { *tgrt_.PlainWrite(&(*tgrt_.PlainLoad(&c.xs))[i]) = (*tgrt_.PlainLoad(&(*tgrt_.PlainLoad(&c.xs))[j])) }`},
	{"array elements of a shared struct, and of a local array",
		`func (c *Counter) Arr(i int) int { c.arr[i]++; var a [2]int; a[0] = 1; return a[i] + c.arr[0] }`,
		`func (c *Counter) Arr(i int) int { *tgrt_.PlainWrite(tgrt_.PlainLoad(&c.arr[i]))++; var a [2]int; a[0] = 1; return a[i] + (*tgrt_.PlainLoad(&c.arr[0])) }`},
	{"pointer targets",
		`func Copy(p, q *int) { *p = *q }`,
		`func Copy(p, q *int) { *tgrt_.PlainWrite(&*p) = (*tgrt_.PlainLoad(&*q)) }`},
	{"package variable",
		`func Hit() int { hits++; x := hits; return x }`,
		`func Hit() int { *tgrt_.PlainWrite(tgrt_.PlainLoad(&hits))++; x := (*tgrt_.PlainLoad(&hits)); return x }`},
	{"captured variable",
		`func Captured() int { n := 0; f := func() { n++ }; f(); return n }`,
		`func Captured() int { n := 0; f := func() { *tgrt_.PlainWrite(tgrt_.PlainLoad(&n))++ }; f(); return (*tgrt_.PlainLoad(&n)) }`},
	{"locals are not shared",
		`func Local() int { var s Counter; s.n = 1; x := s.n; x++; return x }`,
		``},
	{"a local whose address is taken is shared",
		`func Escapes() int { var s Counter; p := &s; s.n = 1; return p.n }`,
		`func Escapes() int { var s Counter; p := &s; *tgrt_.PlainWrite(&s.n) = 1; return (*tgrt_.PlainLoad(&p.n)) }`},
	{"taking an address is no access",
		`func (c *Counter) Addr() *int { return &c.n }`,
		``},
	{"range over a shared slice",
		`func (c *Counter) Sum() (s int) { for _, x := range c.xs { s += x }; for i := range c.xs { s += i }; return s }`,
		`func (c *Counter) Sum() (s int) { for _, x := range tgrt_.LoadElems((*tgrt_.PlainLoad(&c.xs))) { s += x }; for i := range (*tgrt_.PlainLoad(&c.xs)) { s += i }; return s }`},
	{"range over an array copies it",
		`func (c *Counter) SumArr() (s int) { for _, x := range c.arr { s += x }; for i := range c.arr { s += i }; return s }`,
		`func (c *Counter) SumArr() (s int) { for _, x := range (*tgrt_.PlainLoad(&c.arr)) { s += x }; for i := range c.arr { s += i }; return s }`},
	{"method values",
		`func (c *Counter) Methods() (func() int, func()) { return c.get, c.inc }`,
		`func (c *Counter) Methods() (func() int, func()) { return (*tgrt_.PlainLoad(c)).get, c.inc }`},
	{"a method of a shared value field",
		`func (c *Counter) Inner() int { c.in.bump(); return c.in.val() }`,
		`func (c *Counter) Inner() int { c.in.bump(); return (*tgrt_.PlainLoad(&c.in)).val() }`},
	{"struct copies",
		`func (c *Counter) Copies() (Counter, Inner) { v := *c; return v, c.in }`,
		`func (c *Counter) Copies() (Counter, Inner) { v := (*tgrt_.PlainLoad(&*c)); return v, (*tgrt_.PlainLoad(&c.in)) }`},
	{"maps",
		`func (c *Counter) Maps(k string) int { c.m[k] = 1; c.m[k]++; delete(c.m, k); for range c.m {}; return c.m[k] + len(c.m) }`,
		`func (c *Counter) Maps(k string) int { tgrt_.MapWrite((*tgrt_.PlainLoad(&c.m)))[k] = 1; tgrt_.MapWrite((*tgrt_.PlainLoad(&c.m)))[k]++; delete(tgrt_.MapWrite((*tgrt_.PlainLoad(&c.m))), k); for range tgrt_.MapRead((*tgrt_.PlainLoad(&c.m))) {}; return tgrt_.MapRead((*tgrt_.PlainLoad(&c.m)))[k] + len(tgrt_.MapRead((*tgrt_.PlainLoad(&c.m)))) }`},
	{"a local map is still shared memory",
		`func LocalMap() int { m := map[int]int{}; m[1] = 2; return m[1] }`,
		`func LocalMap() int { m := map[int]int{}; tgrt_.MapWrite(m)[1] = 2; return tgrt_.MapRead(m)[1] }`},
	{"len and cap of a slice load its header",
		`func (c *Counter) Len() int { return len(c.xs) + cap(c.xs) + len(c.arr) }`,
		`func (c *Counter) Len() int { return len((*tgrt_.PlainLoad(&c.xs))) + cap((*tgrt_.PlainLoad(&c.xs))) + len(c.arr) }`},
	{"unsafe.Sizeof and constants are no access",
		`func Size(c *Counter) uintptr { const n = len(Counter{}.arr); return unsafe.Sizeof(c.n) + uintptr(n) }`,
		``},
	{"a function field called",
		`func (c *Counter) Call() { c.f(); c.f = nil }`,
		`func (c *Counter) Call() { (*tgrt_.PlainLoad(&c.f))(); *tgrt_.PlainWrite(&c.f) = nil }`},
	{"slicing a shared slice and a local array",
		`func (c *Counter) Slices() []int { var a [3]int; _ = a[1:]; return c.xs[1:] }`,
		`func (c *Counter) Slices() []int { var a [3]int; _ = a[1:]; return (*tgrt_.PlainLoad(&c.xs))[1:] }`},
	{"a pointer method called on a local takes its address",
		`func PtrMethod() int { var in Inner; in.bump(); in.v = 2; return in.v }`,
		`func PtrMethod() int { var in Inner; in.bump(); *tgrt_.PlainWrite(&in.v) = 2; return (*tgrt_.PlainLoad(&in.v)) }`},
	{"select cases",
		`func (c *Counter) Sel(ch chan int) { select { case c.n = <-ch: case ch <- c.n: case v := <-ch: c.n = v } }`,
		`func (c *Counter) Sel(ch chan int) { switch tgrt_s509 := tgrt_.NewSelect(3, false, "src/x.go:27"); { default: select { case *tgrt_.PlainWrite(&c.n) = <-tgrt_.SelRecv(tgrt_s509, ch): case tgrt_.SelSend(tgrt_s509, ch) <- tgrt_.SelValue(tgrt_s509, (*tgrt_.PlainLoad(&c.n))): case v := <-tgrt_.SelRecv(tgrt_s509, ch): *tgrt_.PlainWrite(&c.n) = v }} }`},
	{"an assignment of an interface from a call stays a prefix",
		`func (c *Counter) Err() { c.err = c.fail() }`,
		`func (c *Counter) Err() { *tgrt_.PlainWrite(&c.err) = (*tgrt_.PlainLoad(c)).fail() }`},
}

// accessPrelude declares what accessTests' bodies use.
const accessPrelude = `package p; import "unsafe"; var _ = unsafe.Sizeof(0)

var hits int

type Inner struct{ v int }

func (i *Inner) bump()   { i.v++ }
func (i Inner) val() int { return i.v }

type errT struct{}

func (errT) Error() string { return "" }

type Counter struct {
	n   int
	xs  []int
	arr [4]int
	in  Inner
	m   map[string]int
	f   func()
	err error
}

func (c Counter) get() int    { return c.n }
func (c *Counter) inc()        {}
func (c Counter) fail() errT  { return errT{} }
`

func TestAccesses(t *testing.T) {
	base, _, _, err := File(testFilename, []byte(accessPrelude))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range accessTests {
		t.Run(tt.name, func(t *testing.T) {
			src := accessPrelude + tt.src + "\n"
			out, _, _, err := File(testFilename, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.src
			}
			if got, _ := strings.CutPrefix(string(out), string(base)); got != want+"\n" {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestAccessesCompile builds every form of accessTests, rewritten, with
// the go command: the reports must type-check where they stand.
func TestAccessesCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	src := accessPrelude
	for _, tt := range accessTests {
		src += tt.src + "\n"
	}
	out, _, _, err := File(testFilename, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "x.go")
	if err := os.WriteFile(file, out, 0o666); err != nil {
		t.Fatal(err)
	}
	pkgDir, err := filepath.Abs(filepath.Join("testdata", "compiled"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay.json")
	b, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkgDir, "x.go"): file}})
	if err := os.WriteFile(overlay, b, 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", overlay, "./testdata/compiled")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the rewritten forms do not build: %v\n%s\n%s", err, b, out)
	}
}

// TestAccessesBeforeGenerics: a file of a module older than go1.18 cannot
// call the generic reports: its stores to shared memory get a switch
// point before their statement, as before, and a note says so.
func TestAccessesBeforeGenerics(t *testing.T) {
	src := "package p\n\ntype C struct{ n int }\n\nfunc (c *C) Inc() int { c.n++; return c.n }\n"
	outs, notes, err := Package("p", "1.15", []Source{{testFilename, []byte(src)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "package p; import (" + rtImport + ")\n\ntype C struct{ n int }\n\nfunc (c *C) Inc() int { tgrt_.PlainStore(); c.n++; return c.n }\n"
	if got := string(outs[0].Text); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0].What, "go1.15: its plain accesses are not reported") {
		t.Errorf("notes: %v", notes)
	}
}
