package rewrite

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	syncImport   = `tgsync_ "github.com/tollgate/tollgate/explore/sync"`
	rtImport     = `tgrt_ "github.com/tollgate/tollgate/explore/rt"`
	testFilename = "/src/x.go"
)

var fileTests = []struct {
	name  string
	src   string
	want  string   // the output; "" means unchanged
	notes []string // "line:col what", with " !" when unsupported
}{
	{
		name: "atomic import",
		src: `package p

import "sync/atomic"

var n atomic.Int64
`,
		want: `package p

import "github.com/tollgate/tollgate/explore/atomic"

var n atomic.Int64
`,
	},
	{
		name: "atomic import with a name",
		src: `package p

import (
	"fmt"
	a "sync/atomic"
)

func F(n *a.Int64) { fmt.Println(n.Load()) }
`,
		want: `package p

import (
	"fmt"
	a "github.com/tollgate/tollgate/explore/atomic"
)

func F(n *a.Int64) { fmt.Println(n.Load()) }
`,
	},
	{
		name: "atomic dot import",
		src: `package p

import . "sync/atomic"

var n Int64
`,
		notes: []string{"3:8 dot import of sync/atomic: its atomics are not explored !"},
	},
	{
		name: "atomic blank import",
		src: `package p

import _ "sync/atomic"
`,
		notes: []string{"3:8 blank import of sync/atomic !"},
	},
	{
		name: "sync twins",
		src: `package p

import "sync"

type T struct {
	mu   sync.Mutex
	rw   sync.RWMutex
	once sync.Once
	wg   sync.WaitGroup
}

var f = sync.OnceFunc(func() {})
var v = sync.OnceValue(func() int { return 1 })
var vs = sync.OnceValues(func() (int, error) { return 1, nil })
`,
		want: `package p; import (` + syncImport + `)

import _ "sync"

type T struct {
	mu   tgsync_.Mutex
	rw   tgsync_.RWMutex
	once tgsync_.Once
	wg   tgsync_.WaitGroup
}

var f = tgsync_.OnceFunc(func() {})
var v = tgsync_.OnceValue(func() int { return 1 })
var vs = tgsync_.OnceValues(func() (int, error) { return 1, nil })
`,
	},
	{
		name: "sync imported under another name",
		src: `package p

import s "sync"

var mu s.Mutex
`,
		want: `package p; import (` + syncImport + `)

import _ "sync"

var mu tgsync_.Mutex
`,
	},
	{
		name: "sync kept for Locker, Pool and Map twinned",
		src: `package p

import "sync"

var mu sync.Mutex
var m sync.Map
var pool sync.Pool
var l sync.Locker = &mu
`,
		want: `package p; import (` + syncImport + `)

import "sync"

var mu tgsync_.Mutex
var m tgsync_.Map
var pool tgsync_.Pool
var l sync.Locker = &mu
`,
	},
	{
		name: "sync.Cond",
		src: `package p

import "sync"

type T struct {
	mu sync.Mutex
	c  *sync.Cond
}

func New() *T {
	t := &T{}
	t.c = sync.NewCond(&t.mu)
	return t
}
`,
		want: `package p; import (` + syncImport + `; ` + rtImport + `)

import _ "sync"

type T struct {
	mu tgsync_.Mutex
	c  *tgsync_.Cond
}

func New() *T {
	t := &T{}
	tgrt_.Store(&t.c , tgsync_.NewCond(&t.mu))
	return t
}
`,
	},
	{
		name: "sync shadowed by a parameter and a local",
		src: `package p

import "sync"

type locks struct{ Mutex sync.Mutex }

var mu sync.Mutex

func F(sync locks) {
	sync.Mutex.Lock()
}

func G() {
	sync := locks{}
	sync.Mutex.Lock()
}
`,
		want: `package p; import (` + syncImport + `)

import _ "sync"

type locks struct{ Mutex tgsync_.Mutex }

var mu tgsync_.Mutex

func F(sync locks) {
	sync.Mutex.Lock()
}

func G() {
	sync := locks{}
	sync.Mutex.Lock()
}
`,
	},
	{
		name: "time twins",
		src: `package p

import "time"

func F() time.Duration {
	start := time.Now()
	time.Sleep(time.Millisecond)
	_ = time.Until(start)
	return time.Since(start)
}
`,
		want: `package p; import (` + rtImport + `)

import "time"

func F() time.Duration {
	start := tgrt_.Now()
	tgrt_.Sleep(time.Millisecond)
	_ = tgrt_.Until(start)
	return tgrt_.Since(start)
}
`,
	},
	{
		name: "time left unused",
		src: `package p

import (
	"fmt"
	clock "time"
)

var now = clock.Now

func F() { fmt.Println(now()) }
`,
		want: `package p; import (` + rtImport + `)

import (
	"fmt"
	_ "time"
)

var now = tgrt_.Now

func F() { fmt.Println((*tgrt_.PlainLoad(&now))()) }
`,
	},
	{
		name: "timers",
		src: `package p

import "time"

func F(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	tk := time.NewTicker(d)
	tk.Stop()
	time.AfterFunc(d, func() {})
	_ = time.After(d)
	_ = time.Tick(d)
}
`,
		want: `package p; import (` + rtImport + `)

import "time"

func F(d time.Duration) {
	t := tgrt_.NewTimer(d)
	defer tgrt_.TimerStop(t)
	tk := tgrt_.NewTicker(d)
	tgrt_.TickerStop(tk)
	tgrt_.AfterFunc(d, func() {})
	_ = tgrt_.After(d)
	_ = tgrt_.Tick(d)
}
`,
	},
	{
		name: "timer methods, contexts, reflect.Select",
		src: `package p

import (
	"context"
	"reflect"
	"time"
)

type S struct{ t *time.Timer }

func F(s *S, ctx context.Context, d time.Duration) error {
	s.t.Reset(d)
	f := s.t.Stop
	g := (*time.Ticker).Stop
	_, _ = f, g
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	context.AfterFunc(c, func() {})
	reflect.Select(nil)
	tk := time.NewTicker(d)
	tk.Reset(2 * d)
	var v time.Timer
	v.Stop()
	return context.Cause(c)
}
`,
		want: `package p; import (` + rtImport + `)

import (
	"context"
	"reflect"
	"time"
)

type S struct{ t *time.Timer }

func F(s *S, ctx context.Context, d time.Duration) error {
	tgrt_.TimerReset((*tgrt_.PlainLoad(&s.t)), d)
	f := tgrt_.TimerStopFunc((*tgrt_.PlainLoad(&s.t)))
	g := tgrt_.TickerStop
	_, _ = f, g
	c, cancel := tgrt_.WithTimeout(ctx, d)
	defer cancel()
	tgrt_.ContextAfterFunc(c, func() {})
	tgrt_.Unsupported("x.go:19", "reflect.Select"); reflect.Select(nil)
	tk := tgrt_.NewTicker(d)
	tgrt_.TickerReset(tk, 2 * d)
	var v time.Timer
	tgrt_.Unsupported("x.go:23", "(*time.Timer).Stop of a time.Timer that is not a *time.Timer (a value, or one embedded)"); v.Stop()
	return tgrt_.Cause(c)
}
`,
		notes: []string{"19:2 reflect.Select !", "23:2 (*time.Timer).Stop of a time.Timer that is not a *time.Timer (a value, or one embedded) !"},
	},
	{
		name: "runtime traps",
		src: `package p

import "runtime"

func F() {
	runtime.Gosched()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runtime.Goexit()
}
`,
		want: `package p; import (` + rtImport + `)

import "runtime"

func F() {
	tgrt_.Unsupported("x.go:6", "runtime.Gosched"); runtime.Gosched()
	tgrt_.Unsupported("x.go:7", "runtime.LockOSThread"); runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tgrt_.Unsupported("x.go:9", "runtime.Goexit"); runtime.Goexit()
}
`,
		notes: []string{"6:2 runtime.Gosched !", "7:2 runtime.LockOSThread !", "9:2 runtime.Goexit !"},
	},
	{
		name: "channels and go statements",
		src: `package p

func F(ch chan int, done chan struct{}) int {
	go func() {
		ch <- 1
	}()
	v := <-ch
	close(done)
	c2 := make(chan int, 1)
	m := make(map[int]int)
	_ = m
	return v + len(c2)
}
`,
		want: `package p; import (` + rtImport + `)

func F(ch chan int, done chan struct{}) int {
	tgrt_.Go("src/x.go:4", func() func() { tgrt_f := func() {
		tgrt_.Send((*tgrt_.PlainLoad(&ch)) )( 1)
	}; return func() { tgrt_f() } }())
	v := tgrt_.Recv((*tgrt_.PlainLoad(&ch)))
	tgrt_.Close(done)
	c2 := make(chan int, 1)
	m := make(map[int]int)
	_ = m
	return v + tgrt_.Len(c2)
}
`,
		notes: []string{},
	},
	{
		name: "one trap a statement",
		src: `package p

func F(a, b chan int) int {
	return <-a + <-b
}
`,
		want: `package p; import (` + rtImport + `)

func F(a, b chan int) int {
	return tgrt_.Recv(a) + tgrt_.Recv(b)
}
`,
		notes: []string{},
	},
	{
		name: "select",
		src: `package p

func F(a chan int, b chan int, x int) int {
	select {
	case v := <-a:
		return v
	case b <- x:
		b <- 2
		return 0
	}
}
`,
		want: `package p; import (` + rtImport + `)

func F(a chan int, b chan int, x int) int {
	switch tgrt_s56 := tgrt_.NewSelect(2, false, "src/x.go:4"); { default: select {
	case v := <-tgrt_.SelRecv(tgrt_s56, a):
		return v
	case tgrt_.SelSend(tgrt_s56, b) <- tgrt_.SelValue(tgrt_s56, x):
		tgrt_.Send(b )( 2)
		return 0
	}}
}
`,
		notes: []string{},
	},
	{
		name: "switch case and else if",
		src: `package p

func F(a chan int, x int) int {
	switch x {
	case <-a:
		return 1
	case 2:
		return <-a
	}
	if x > 0 {
		return 0
	} else if v, ok := <-a; ok {
		return v
	}
	return 0
}
`,
		want: `package p; import (` + rtImport + `)

func F(a chan int, x int) int {
	switch x {
	case tgrt_.Recv(a):
		return 1
	case 2:
		return tgrt_.Recv(a)
	}
	if x > 0 {
		return 0
	} else if v, ok := tgrt_.Recv2(a); ok {
		return v
	}
	return 0
}
`,
		notes: []string{},
	},
	{
		name: "labeled select",
		src: `package p

func F(a chan int) {
L:
	select {
	case <-a:
		break L
	}
}
`,
		want: `package p; import (` + rtImport + `)

func F(a chan int) {
L:
	switch tgrt_s36 := tgrt_.NewSelect(1, false, "src/x.go:5"); { default: select {
	case <-tgrt_.SelRecv(tgrt_s36, a):
		break L
	}}
}
`,
		notes: []string{},
	},
	{
		name: "package level",
		src: `package p

var ch = make(chan int)

var f = func() { ch <- 1 }
`,
		want: `package p; import (` + rtImport + `)

var ch = make(chan int)

var f = func() { tgrt_.Send((*tgrt_.PlainLoad(&ch)) )( 1) }
`,
		notes: []string{},
	},
	{
		name: "package clause after a build constraint",
		src: `//go:build linux

// Package p is documented.
package p // a comment

import "sync"

var mu sync.Mutex
`,
		want: `//go:build linux

// Package p is documented.
package p; import (` + syncImport + `) // a comment

import _ "sync"

var mu tgsync_.Mutex
`,
	},
	{
		name: "nothing to change",
		src: `package p

import (
	"fmt"
	"sync"
)

func F(ch chan int) {
	close := func(chan int) {}
	close(ch)
	var l sync.Locker
	fmt.Println(l)
}
`,
	},
	{
		name: "plain stores that may reach shared memory",
		src: `package p

var hits int

type T struct {
	n    int
	xs   []int
	done bool
}

func (t *T) F(p *int, i int) {
	local := 0
	local = 1
	t.n = local
	t.xs[i] = 2
	*p = 3
	hits++
	t.n += 4
	_ = i
	if t.done = true; t.done {
		return
	}
}
`,
		want: `package p; import (` + rtImport + `)

var hits int

type T struct {
	n    int
	xs   []int
	done bool
}

func (t *T) F(p *int, i int) {
	local := 0
	local = 1
	*tgrt_.PlainWrite(&t.n) = local
	*tgrt_.PlainWrite(&(*tgrt_.PlainLoad(&t.xs))[i]) = 2
	*tgrt_.PlainWrite(&*p) = 3
	*tgrt_.PlainWrite(tgrt_.PlainLoad(&hits))++
	*tgrt_.PlainWrite(tgrt_.PlainLoad(&t.n)) += 4
	_ = i
	if *tgrt_.PlainWrite(&t.done) = true; (*tgrt_.PlainLoad(&t.done)) {
		return
	}
}
`,
	},
	{
		name: "dot import of sync",
		src: `package p

import . "sync"

var mu Mutex
`,
		notes: []string{"3:8 dot import of sync: its uses are not rewritten !"},
	},
}

func TestFile(t *testing.T) {
	for _, tt := range fileTests {
		t.Run(tt.name, func(t *testing.T) {
			out, notes, changed, err := File(testFilename, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.src
			}
			if got := string(out); got != want {
				t.Errorf("output:\n%s\nwant:\n%s", got, want)
			}
			if changed != (tt.want != "") {
				t.Errorf("changed = %v, want %v", changed, tt.want != "")
			}
			if got := noteStrings(notes); !slices.Equal(got, tt.notes) {
				t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.notes, "\n"))
			}
			checkLines(t, tt.src, out)
		})
	}
}

// noteStrings renders notes as the tests write them.
func noteStrings(notes []Note) []string {
	var s []string
	for _, n := range notes {
		line := strings.TrimPrefix(n.Pos, testFilename+":") + " " + n.What
		if n.Unsupported {
			line += " !"
		}
		s = append(s, line)
	}
	return s
}

// checkLines checks that out parses, has as many lines as src, and that
// every identifier of src other than a rewritten import's name is on the
// same line in out.
func checkLines(t *testing.T, src string, out []byte) {
	t.Helper()
	if a, b := strings.Count(src, "\n"), bytes.Count(out, []byte("\n")); a != b {
		t.Errorf("%d lines, want %d", b, a)
	}
	skip := map[string]bool{"sync": true, "time": true, "s": true, "clock": true, syncName: true, rtName: true, "Unsupported": true,
		"PlainLoad": true, "PlainWrite": true, "Store": true, "MapRead": true, "MapWrite": true, "LoadElems": true,
		"Go": true, "Send": true, "Recv": true, "Recv2": true, "Close": true, "Len": true, "LenSend": true, "Range": true,
		"Next": true, "V": true, "NewSelect": true, "SelRecv": true, "SelSend": true, "SelValue": true,
		"close": true, "len": true, "true": true, "false": true, "context": true, "Stop": true, "Reset": true,
		"TimerStop": true, "TimerReset": true, "TickerStop": true, "TickerReset": true, "AfterFunc": true, "ContextAfterFunc": true,
		"TimerStopFunc": true, "Ticker": true, "Timer": true}
	before := identLines(t, []byte(src), skip)
	after := identLines(t, out, skip)
	if !slices.Equal(before, after) {
		t.Errorf("identifiers moved:\n%v\nwant\n%v", after, before)
	}
}

// identLines lists the identifiers of src not in skip, each with its
// line.
func identLines(t *testing.T, src []byte, skip map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, testFilename, src, parser.ParseComments)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, src)
	}
	var ids []string
	ast.Inspect(f, func(n ast.Node) bool {
		if _, ok := n.(*ast.ImportSpec); ok {
			return false
		}
		if id, ok := n.(*ast.Ident); ok && !skip[id.Name] && !strings.HasPrefix(id.Name, "tgrt_") {
			ids = append(ids, id.Name+"@"+strconv.Itoa(fset.Position(id.Pos()).Line))
		}
		return true
	})
	return ids
}

func TestFileSyntaxError(t *testing.T) {
	if _, _, _, err := File(testFilename, []byte("package p\n\nfunc {")); err == nil {
		t.Fatal("File of a file that does not parse: no error")
	}
}

// TestFileKeepsLines rewrites every construct at once in a file with
// several on a line, and checks each identifier's line.
func TestFileKeepsLines(t *testing.T) {
	src := `// A file with many edits.
package p

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

type T struct { mu sync.Mutex; n atomic.Int64; wg sync.WaitGroup }

func (t *T) Run(ch chan int) {
	t.mu.Lock(); defer t.mu.Unlock(); start := time.Now(); go t.Run(ch); ch <- 1; v := <-ch
	select { case <-ch: default: }; time.Sleep(time.Since(start)); runtime.Gosched(); _ = v
	func() { close(ch) }()
}
`
	out, notes, changed, err := File(testFilename, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Fatal("not changed")
	}
	checkLines(t, src, out)
	if len(notes) != 1 {
		t.Errorf("%d notes, want 1 (runtime.Gosched):\n%s", len(notes), strings.Join(noteStrings(notes), "\n"))
	}
	// Undoing the edits line by line gives the source back.
	undo := strings.NewReplacer(
		"; import ("+syncImport+"; "+rtImport+")", "",
		`"github.com/tollgate/tollgate/explore/atomic"`, `"sync/atomic"`,
		`_ "sync"`, `"sync"`,
		`_ "time"`, `"time"`,
		"tgrt_.", "time.",
		"tgsync_.", "sync.",
	)
	trap := regexp.MustCompile(`tgrt_\.Unsupported\("x\.go:[0-9]+", "[A-Za-z. ]+"\); `)
	load := regexp.MustCompile(`\(\*tgrt_\.PlainLoad\(&(\w+)\)\)`)
	channels := []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`tgrt_\.Go\("[^"]*", func\(\) func\(\) \{ tgrt_f, tgrt_a0 := ([\w.]+), (\w+); return func\(\) \{ tgrt_f\(tgrt_a0\) \} \}\(\)\)`), "go $1($2)"},
		{regexp.MustCompile(`tgrt_\.Send\((\w+) \)\( (\w+)\)`), "$1 <- $2"},
		{regexp.MustCompile(`tgrt_\.Recv\((\w+)\)`), "<-$1"},
		{regexp.MustCompile(`switch tgrt_s\d+ := tgrt_\.NewSelect\([^)]*\); \{ default: select \{`), "select {"},
		{regexp.MustCompile(`tgrt_\.SelRecv\(tgrt_s\d+, (\w+)\)`), "$1"},
		{regexp.MustCompile(`default: \}\}`), "default: }"},
		{regexp.MustCompile(`tgrt_\.Close\(`), "close("},
	}
	srcLines := strings.Split(src, "\n")
	for i, line := range strings.Split(string(out), "\n") {
		line = load.ReplaceAllString(line, "$1")
		for _, c := range channels {
			line = c.re.ReplaceAllString(line, c.with)
		}
		if got := undo.Replace(trap.ReplaceAllString(line, "")); got != srcLines[i] {
			t.Errorf("line %d: %s\nundone: %s\nwant:   %s", i+1, line, got, srcLines[i])
		}
	}
	if got := strings.Count(string(out), "tgrt_.Unsupported("); got != 1 {
		t.Errorf("%d traps, want 1:\n%s", got, out)
	}
}
