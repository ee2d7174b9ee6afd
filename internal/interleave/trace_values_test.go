package interleave

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// pointeeToy: a word points at a number that changes after a thread read
// the word (thread 1 writes it, then stores a flag). The trace must show what
// thread 0's load saw, 1, not what the number holds when the trace is
// rendered, 2.
type pointeeToy struct {
	word *hooked.Pointer[int]
	flag *hooked.Bool
}

func (p *pointeeToy) threads() int { return 2 }

func (p *pointeeToy) begin(c *controller) []func() {
	v := new(int)
	*v = 1
	p.word, p.flag = new(hooked.Pointer[int]), new(hooked.Bool)
	p.word.Store(v)
	return []func(){
		func() { c.operation(liveNone, func() { p.word.Load() }) },
		func() {
			c.operation(liveNone, func() {
				*p.word.Load() = 2
				p.flag.Store(true)
			})
		},
	}
}

func (p *pointeeToy) end(*controller, bool) (*Failure, string) { return nil, "" }

func (p *pointeeToy) tracer() tracer { return pointeeTracer{p} }

type pointeeTracer struct{ p *pointeeToy }

func (pointeeTracer) observe(*controller, *stepRec) {}

func (t pointeeTracer) word(addr unsafe.Pointer) string {
	if addr == unsafe.Pointer(t.p.word) {
		return "word"
	}
	return "flag"
}

func (pointeeTracer) value(_ unsafe.Pointer, v any) string {
	if n, ok := v.(*int); ok {
		return fmt.Sprintf("→%d", *n)
	}
	return fmt.Sprint(v)
}

func (pointeeTracer) call(t, op int) string { return fmt.Sprintf("op%d", t) }
func (pointeeTracer) ret(t, op int) string  { return "done" }
func (pointeeTracer) setup() []string       { return nil }

// TestTraceShowsValuesAtTheirStep: a traced step renders the values of its
// seam operation when it runs.
func TestTraceShowsValuesAtTheirStep(t *testing.T) {
	p := &pointeeToy{}
	c := newController(p.threads())
	c.install()
	defer c.remove()
	defer c.close()
	sched, err := ParseSchedule("0x2.1x3")
	if err != nil {
		t.Fatal(err)
	}
	r := replay(c, p, sched, DefaultStepCap, "", "pointee")
	if !strings.Contains(r.trace, "load word = →1") || strings.Contains(r.trace, "load word = →2") {
		t.Fatalf("thread 0's load of word should read →1, the value at its step, and thread 1's →1 too (it writes 2 after its load):\n%s", r.trace)
	}
}
